"""People in the loop: who a checklist tells (its ``notify`` block) and what one notification is.

A :class:`Notification` is one message to one recipient: its ``kind`` (``reminder``, ``missed``,
``escalation``, ``digest``, ``defect``), the checklist and window it is about, the equipment it names, and its
text, with every time in the checklist's own zone. Its :attr:`Notification.notification_id` is
deterministic (kind, checklist, window, occasion, recipient): the record written under it with a
conditional put (``missed_checks.aws.table.notifications``) is what makes retries, duplicate
firings, replays and concurrent executions send it once. ``occasion`` tells apart two
notifications of one kind about one window: the lead of a reminder (``PT1H``), the period of a
digest; it is empty for the others.

Domain only: no AWS calls (the channels are :class:`missed_checks.evaluation.ports.NotificationChannel`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import Any

from missed_checks.checklists.durations import Duration, parse_duration
from missed_checks.checklists.recurrence import Recurrence
from missed_checks.errors import InvalidInput, MissedChecksError, describe, shorten

__all__ = [
    "FIRING_TOLERANCE", "MAX_LEADS", "MAX_RECIPIENTS", "Kind", "Notification", "NotificationRejected", "NotifySettings",
    "earliest_lead", "listed",
    "local_time", "notification_id",
    "validate_address",
]

MAX_RECIPIENTS = 20
"""Addresses in ``to`` and in ``escalate_to`` each: a checklist tells its crew and their lead, not a
mailing list (SES takes at most 50 per message; more is a distribution list's job)."""
MAX_LEADS = 3
"""Reminders per window (each lead is an EventBridge Scheduler schedule of its own)."""
MAX_ESCALATE_AFTER = 1000
_MAX_ADDRESS_CHARS = 254  # RFC 5321's limit on a path
# A pragmatic address check (what SES accepts): a local part of atext and dots, a domain of
# labels with a dot, no spaces, no display name.
_ADDRESS = re.compile(
    r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
    r"@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$"
)
_NOTIFY_KEYS = ("to", "remind_before", "escalate_to", "escalate_after")

FIRING_TOLERANCE = timedelta(minutes=1)
"""How late after its time a schedule's firing may come: EventBridge Scheduler's cron resolves
minutes (a reminder instant with seconds fires at the next whole minute) and fires inside the
minute of its time. A reminder must fire, at the latest, this long before its window closes."""


class Kind(StrEnum):
    REMINDER = "reminder"
    MISSED = "missed"
    ESCALATION = "escalation"
    DIGEST = "digest"
    DEFECT = "defect"
    """A failed critical item opened a defect (#33): sent at once, once (``occasion``: the defect id)."""


def validate_address(value: object, field_name: str) -> str:
    """An e-mail address (``name@example.com``), or InvalidInput naming ``field_name``."""
    if not isinstance(value, str):
        raise InvalidInput(field_name, f"is {describe(value)}, not an e-mail address such as lead@example.com")
    text = value.strip()
    if len(text) > _MAX_ADDRESS_CHARS or not _ADDRESS.match(text):
        raise InvalidInput(field_name, f"{shorten(value)} is not an e-mail address (expected e.g. lead@example.com)")
    return text


def validate_addresses(value: object, field_name: str, *, required: bool = False) -> tuple[str, ...]:
    """E-mail addresses: one (a string) or a list of up to :data:`MAX_RECIPIENTS`, each as
    :func:`validate_address` (a bad one named ``field[2]``; when ``required``, a lone one ``field``);
    repeats (case aside) kept once, in the order given. ``None`` is none unless ``required``, which
    also refuses an empty list (a digest goes somewhere; a notify block may tell nobody)."""
    if value is None and not required:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or (required and not value):
        raise InvalidInput(field_name, f"is {describe(value)}: give an e-mail address, or a list of them" if required
                           else f"is {describe(value)}, not a list of e-mail addresses")
    if len(value) > MAX_RECIPIENTS:
        raise InvalidInput(field_name, f"has {len(value)} addresses; at most {MAX_RECIPIENTS} "
                                       "(send to a distribution list for more)")
    found: list[str] = []
    for index, item in enumerate(value):
        address = validate_address(item, field_name if required and len(value) == 1 else f"{field_name}[{index}]")
        if address.lower() not in (a.lower() for a in found):
            found.append(address)
    return tuple(found)


def _nominal_seconds(duration: Duration) -> int:
    return duration.days * 86400 + duration.seconds


@dataclass(frozen=True)
class NotifySettings:
    """A checklist's ``notify`` block: who hears of it, and when."""

    to: tuple[str, ...] = ()
    """Told of reminders and missed windows: the people who do the check, or their lead."""
    remind_before: tuple[str, ...] = ()
    """Leads before a window closes (canonical ISO 8601 durations, ``PT1H``), each a reminder."""
    escalate_to: tuple[str, ...] = ()
    """Told when the same equipment is missed ``escalate_after`` judged windows in a row."""
    escalate_after: int | None = None

    @property
    def is_empty(self) -> bool:
        return not (self.to or self.escalate_to)

    def leads(self) -> tuple[Duration, ...]:
        return tuple(parse_duration(lead, "notify.remind_before") for lead in self.remind_before)

    def to_dict(self) -> dict[str, Any]:
        """The JSON (and table) form: every key, lists as lists."""
        return {"to": list(self.to), "remind_before": list(self.remind_before), "escalate_to": list(self.escalate_to),
                "escalate_after": self.escalate_after}

    @classmethod
    def parse(cls, value: object, window: Recurrence | Duration | None, field_name: str = "notify") -> NotifySettings:
        """Read and validate a ``notify`` object (as a file, the command line or the table gives it)
        for the checklist's rule, ``window`` (its window alone, or None, checks less): a lead must be shorter
        than the window, and long enough that its reminder fires before the window closes
        (:func:`earliest_lead`). Raises InvalidInput naming the field: ``notify.to[1]``,
        ``notify.remind_before[0]``, ``notify.escalate_after``."""
        if value is None:
            return cls()
        if not isinstance(value, Mapping):
            raise InvalidInput(field_name, f"is {describe(value)}, not an object with to, remind_before, "
                                           "escalate_to and escalate_after")
        unknown = sorted(str(key) for key in value if key not in _NOTIFY_KEYS)
        if unknown:
            if not unknown[0].strip():  # a key of no name: the field is the block itself
                raise InvalidInput(field_name, f"has a setting with no name ({unknown[0]!r}): expected one of "
                                               f"{', '.join(_NOTIFY_KEYS)}")
            raise InvalidInput(f"{field_name}.{unknown[0]}", f"is not a notify setting (expected one of "
                                                             f"{', '.join(_NOTIFY_KEYS)})")
        to = validate_addresses(value.get("to"), f"{field_name}.to")
        escalate_to = validate_addresses(value.get("escalate_to"), f"{field_name}.escalate_to")
        leads = _leads(value.get("remind_before"), window, f"{field_name}.remind_before")
        escalate_after = _escalate_after(value.get("escalate_after"), f"{field_name}.escalate_after")
        if leads and not to:
            raise InvalidInput(f"{field_name}.to", "is empty, but remind_before asks for reminders: give the "
                                                   "addresses they go to")
        if escalate_to and escalate_after is None:
            raise InvalidInput(f"{field_name}.escalate_after", "is missing: say after how many consecutive "
                                                               "missed windows escalate_to is told (1 or more)")
        if escalate_after is not None and not escalate_to:
            raise InvalidInput(f"{field_name}.escalate_to", "is empty, but escalate_after is set: give the "
                                                            "addresses escalations go to")
        return cls(to=to, remind_before=leads, escalate_to=escalate_to, escalate_after=escalate_after)


def earliest_lead(rule: Recurrence) -> Duration:
    """The shortest lead (``remind_before``) whose reminder fires before the windows of ``rule``
    close. A reminder's schedule fires at ``end - lead`` rounded up to the whole minute (cron's
    resolution), and up to :data:`FIRING_TOLERANCE` after that; so for windows ending ``s`` seconds
    past a minute, a lead of at least one minute and ``s`` seconds. Every window of a rule ends at
    the same few second-of-minute values (its starts' seconds, BYSECOND and RDATEs, plus the
    window's): the latest of them decides."""
    starts = {*rule.parts.bysecond, rule.dtstart.second, *(r.second for r in rule.rdates)}
    latest = max((second + rule.window.seconds) % 60 for second in starts)
    return Duration(seconds=int(FIRING_TOLERANCE.total_seconds()) + latest)


def _leads(value: object, rule: Recurrence | Duration | None, field_name: str) -> tuple[str, ...]:
    window = rule.window if isinstance(rule, Recurrence) else rule
    earliest = earliest_lead(rule) if isinstance(rule, Recurrence) else None
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple):
        raise InvalidInput(field_name, f"is {describe(value)}, not a list of durations such as [\"PT1H\"]")
    if len(value) > MAX_LEADS:
        raise InvalidInput(field_name, f"has {len(value)} leads; at most {MAX_LEADS} reminders per window")
    leads: list[str] = []
    for index, item in enumerate(value):
        where = f"{field_name}[{index}]"
        lead = parse_duration(item, where, allow_zero=False)
        if window is not None and _nominal_seconds(lead) >= _nominal_seconds(window):
            raise InvalidInput(where, f"{item!r} is not shorter than the window ({window}): a reminder must "
                                      "come after the window opens")
        if earliest is not None and _nominal_seconds(lead) < _nominal_seconds(earliest):
            raise InvalidInput(where, f"{item!r} is too short for the reminder to go out before the window closes: "
                                      "its schedule fires on whole minutes (end - lead, rounded up) and up to a "
                                      f"minute after that; the earliest lead that fires in time is {earliest}")
        if str(lead) not in leads:
            leads.append(str(lead))
    return tuple(sorted(leads, key=lambda text: _nominal_seconds(parse_duration(text, field_name)), reverse=True))


def _escalate_after(value: object, field_name: str) -> int | None:
    if value is None:
        return None
    if (isinstance(value, bool) or not isinstance(value, int | Decimal)
            or (isinstance(value, Decimal) and not value.is_finite()) or value != int(value)):
        raise InvalidInput(field_name, f"is {describe(value)}, not a whole number of windows (1 or more)")
    count = int(value)
    if count < 1:
        raise InvalidInput(field_name, f"is {count}; it must be 1 or more (escalate at the N-th consecutive miss)")
    if count > MAX_ESCALATE_AFTER:
        raise InvalidInput(field_name, f"is {count}; at most {MAX_ESCALATE_AFTER}")
    return count


def notification_id(kind: Kind | str, checklist_id: str, window_start: str | None, occasion: str,
                    recipient: str) -> str:
    """The deterministic id of one notification: the same inputs, the same id, on every machine."""
    text = "|".join((str(kind), checklist_id, window_start or "", occasion, recipient.lower()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def local_time(instant: datetime, zone: Any) -> str:
    """``Mon 2 Mar 2026 06:00 CET``: an instant as a person reads it, on the checklist's clock."""
    local = instant.astimezone(zone)
    return f"{local:%a} {local.day} {local:%b %Y %H:%M} {local.tzname()}"


@dataclass(frozen=True)
class Notification:
    """One message to one recipient."""

    kind: Kind
    checklist_id: str
    window_start: str | None
    """The window's start (UTC ISO), when the notification is about one window."""
    recipient: str
    equipment: tuple[str, ...]
    """The equipment it names (sorted)."""
    subject: str
    body: str
    occasion: str = ""
    """What tells apart two notifications of one kind, checklist and window (a reminder's lead)."""
    details: Mapping[str, Any] = field(default_factory=dict, compare=False)
    """Kind-specific facts for tools (an escalation's runs), JSON-ready."""
    html: str = field(default="", compare=False, repr=False)
    """The digest (#18): the e-mail's HTML part, beside ``body`` as its text part. Left out of
    :meth:`to_dict` (events, records and dead letters stay small; a replay rebuilds it)."""

    @property
    def notification_id(self) -> str:
        return notification_id(self.kind, self.checklist_id, self.window_start, self.occasion, self.recipient)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (the EventBridge event's detail, the dead letter, the record's content)."""
        return {
            "notification_id": self.notification_id,
            "kind": self.kind.value,
            "checklist_id": self.checklist_id,
            "window_start": self.window_start,
            "occasion": self.occasion,
            "to": self.recipient,
            "equipment": list(self.equipment),
            "subject": self.subject,
            "body": self.body,
            "details": dict(self.details),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], field_name: str = "notification") -> Notification:
        """Read :meth:`to_dict`'s form back (a dead letter being replayed); InvalidInput naming the field."""
        def text(name: str, optional: bool = False) -> Any:
            value = data.get(name)
            if value is None and optional:
                return None
            if not isinstance(value, str):
                raise InvalidInput(f"{field_name}.{name}", f"is {describe(value)}, not a string")
            return value

        try:
            kind = Kind(str(data.get("kind")))
        except ValueError:
            raise InvalidInput(f"{field_name}.kind", f"is {describe(data.get('kind'))}, not one of "
                                                     f"{', '.join(k.value for k in Kind)}") from None
        equipment = data.get("equipment") or []
        if not isinstance(equipment, list) or not all(isinstance(e, str) for e in equipment):
            raise InvalidInput(f"{field_name}.equipment", "is not a list of equipment ids")
        details = data.get("details") or {}
        notification = cls(kind=kind, checklist_id=text("checklist_id"), window_start=text("window_start", True),
                           recipient=validate_address(data.get("to"), f"{field_name}.to"), equipment=tuple(equipment),
                           subject=text("subject"), body=text("body"), occasion=text("occasion", True) or "",
                           details=details if isinstance(details, Mapping) else {})
        claimed = data.get("notification_id")
        if claimed is not None and claimed != notification.notification_id:
            raise InvalidInput(f"{field_name}.notification_id", "does not match the notification's kind, checklist, "
                                                                "window and recipient")
        return notification


def listed(equipment: Sequence[str], limit: int = 50) -> str:
    """The equipment as lines of a message, at most ``limit`` then how many more."""
    lines = [f"  - {equipment_id}" for equipment_id in equipment[:limit]]
    if len(equipment) > limit:
        lines.append(f"  ... and {len(equipment) - limit} more")
    return "\n".join(lines)


class NotificationRejected(MissedChecksError):
    """A channel refused the notification for good (a rejected address, an unverified sender):
    retrying cannot help; it goes to the notification dead-letter queue."""
