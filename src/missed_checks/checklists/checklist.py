"""Checklists: a routine on equipment with a recurrence, time zone, window and grace."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from missed_checks import identifiers, keys
from missed_checks.checklists.closure_calendar import ClosureCalendar, closed_dates, validate_closed_on
from missed_checks.checklists.recurrence import Recurrence, parse_recurrence
from missed_checks.errors import InvalidInput, InvalidRecurrence, describe
from missed_checks.notifications.notification import NotifySettings
from missed_checks.timefmt import parse_instant, to_utc_iso

_PK_PREFIX = keys.checklist_pk("")
_MAX_REVISION = 10**15  # far beyond any number of edits; bounds the conversion of a hand-written number

# The fields that decide the schedule and the windows: a change to any of them is a
# "recurrence change" (the watermark jumps forward, the schedule is replaced).
RULE_FIELDS = ("recurrence", "timezone", "window", "grace")


class Status(StrEnum):
    ACTIVE = "ACTIVE"
    PAUSED = "PAUSED"


def validate_checklist_id(checklist_id: object, field: str = "id") -> str:
    """Schedule names allow ``[0-9a-zA-Z-_.]{1,64}``; the schedule is named after the checklist id
    (:data:`missed_checks.identifiers.KINDS`)."""
    return identifiers.KINDS["checklist id"].validate(checklist_id, field)


@dataclass(frozen=True)
class Checklist:
    checklist_id: str
    recurrence: str
    """The rule fields hold what the item holds: a hand-edited item may carry a number here, which
    :meth:`parsed` refuses (InvalidRecurrence naming the field) rather than reading it as text."""
    name: str = ""
    timezone: str | None = None
    window: str | None = None
    grace: str | None = None
    status: Status = Status.ACTIVE
    created_at: datetime | None = None
    updated_at: datetime | None = None
    evaluated_until: datetime | None = None
    """Advanced only by the evaluation (CloseWindow), forward only."""
    effective_from: datetime | None = None
    """When the current rule took effect: creation, the last rule change or the last resume.
    Written only by edits, so an edit can never move the evaluation's watermark back."""
    revision: int = 0
    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    # -- closure calendars (#23 item 2) --
    closed_on: tuple[str, ...] = ()
    """Ids of the closure calendars whose dates close this checklist's windows (as EXDATEs)."""
    closures: Mapping[str, ClosureCalendar | None] | None = field(default=None, compare=False)
    """The ``closed_on`` calendars as read with the checklist (None: not read, e.g. a checklist
    built from a file; a calendar that does not exist maps to None)."""
    # notifications (#18): who is told of reminders, missed windows and escalations
    notify: NotifySettings | None = None

    def parsed(self) -> Recurrence:
        """The recurrence engine's view, with the closed dates of its calendars when they were read
        (:attr:`closures`); raises InvalidRecurrence naming the bad field."""
        recurrence = parse_recurrence(self.recurrence, timezone=self.timezone, window=self.window, grace=self.grace)
        if not self.closed_on or self.closures is None:
            return recurrence
        return recurrence.with_closures(self.closed_dates())

    def closed_dates(self) -> frozenset[date]:
        """Every date the read calendars close; InvalidRecurrence naming ``closed_on[i]`` for one
        that does not exist (deleted around the tools: its dates are unknown, so nothing is judged)."""
        closures = self.closures or {}
        calendars = []
        for index, calendar_id in enumerate(self.closed_on):
            calendar = closures.get(calendar_id)
            if calendar is None:
                raise InvalidRecurrence(f"closed_on[{index}]", f"no calendar {calendar_id!r}; put it again "
                                        f"(missed-checks calendar put {calendar_id} ...) or drop it from closed_on")
            calendars.append(calendar)
        return closed_dates(calendars)

    def judged_by(self) -> dict[str, Any]:
        """What a judged window records it was judged by: the rule and, per closure calendar, the
        revision whose dates applied (``missed-checks calendar show ID --revision N`` shows them)."""
        judged: dict[str, Any] = dict(self.rule())
        if self.closed_on and self.closures is not None:
            judged["closed_on"] = {calendar_id: calendar.revision for calendar_id in self.closed_on
                                   if (calendar := self.closures.get(calendar_id)) is not None}
        return judged

    def rule(self) -> dict[str, str | None]:
        return {name: getattr(self, name) for name in RULE_FIELDS}

    @property
    def watermark(self) -> datetime | None:
        """Windows ending at or before this instant are never judged (again): the later of what the
        evaluation judged and when the current rule took effect."""
        candidates = [t for t in (self.evaluated_until, self.effective_from, self.created_at) if t is not None]
        return max(candidates) if candidates else None

    def with_changes(self, **changes: Any) -> Checklist:
        return replace(self, **changes)

    # -- table item ---------------------------------------------------------------------
    def to_item(self) -> dict[str, Any]:
        item: dict[str, Any] = {
            **keys.checklist_key(self.checklist_id),
            "type": "checklist",
            "gsi2pk": keys.CHECKLISTS_INDEX_PK,
            "gsi2sk": self.checklist_id,
            "checklist_id": self.checklist_id,
            "name": self.name,
            "recurrence": self.recurrence,
            "status": self.status.value,
            "revision": self.revision,
        }
        if self.closed_on:  # closure calendars (#23 item 2)
            item["closed_on"] = list(self.closed_on)
        for name in ("timezone", "window", "grace"):
            value = getattr(self, name)
            if value:
                item[name] = value
        for name in ("created_at", "updated_at", "evaluated_until", "effective_from"):
            value = getattr(self, name)
            if value is not None:
                item[name] = to_utc_iso(value)
        if self.notify is not None and not self.notify.is_empty:  # notifications (#18)
            item["notify"] = self.notify.to_dict()
        return item

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> Checklist:
        """Read a table item, tolerating a hand-edited one: whatever its attributes, the only error
        is :class:`InvalidInput` naming the attribute (a missing recurrence, an instant that is not
        one, a revision that is not a whole number). The rule fields are kept as they are (an empty
        string counts as absent) so that :meth:`parsed` judges them, types included."""

        def instant(name: str) -> datetime | None:
            value = item.get(name)
            return None if value is None or value == "" else parse_instant(value, name)

        def rule_field(name: str) -> Any:
            value = item.get(name)
            return None if value is None or value == "" else value

        if item.get("recurrence") is None or item.get("recurrence") == "":
            raise InvalidInput("recurrence", "the checklist item has no recurrence attribute")
        status_value = item.get("status")
        if status_value is None or status_value == "":
            status_value = Status.ACTIVE.value
        try:
            status = Status(status_value.upper() if isinstance(status_value, str) else status_value)
        except (ValueError, TypeError):
            raise InvalidInput("status", f"{describe(status_value)} is not ACTIVE or PAUSED") from None
        name = item.get("name")
        known = {"pk", "sk", "type", "gsi2pk", "gsi2sk", "checklist_id", "name", "recurrence", "status",
                 "revision", "timezone", "window", "grace", "created_at", "updated_at", "evaluated_until",
                 "effective_from", "closed_on"}
        notify = _notify_of(item)  # notifications (#18)
        if notify is not None:
            known = {*known, "notify"}
        return cls(
            checklist_id=_checklist_id_of(item),
            name=name if isinstance(name, str) else "" if name is None else str(name),
            recurrence=item["recurrence"],
            timezone=rule_field("timezone"),
            window=rule_field("window"),
            grace=rule_field("grace"),
            status=status,
            created_at=instant("created_at"),
            updated_at=instant("updated_at"),
            evaluated_until=instant("evaluated_until"),
            effective_from=instant("effective_from"),
            revision=revision_of(item),
            closed_on=validate_closed_on(item.get("closed_on")),
            extra={k: v for k, v in item.items() if k not in known},
            notify=notify,
        )


def revision_of(item: dict[str, Any]) -> int:
    """The item's ``revision`` (0 when absent); InvalidInput when it is not a whole number >= 0.

    Every conditional write of the checklist compares it, so a value that cannot be written back
    as the same number (a string, a fraction) is refused rather than rounded.
    """
    value = item.get("revision")
    if value is None:
        return 0
    if (isinstance(value, bool) or not isinstance(value, int | Decimal)
            or (isinstance(value, Decimal) and not value.is_finite())
            or not 0 <= value <= _MAX_REVISION or value != int(value)):
        raise InvalidInput("revision", f"is {describe(value)}, not a whole number >= 0")
    return int(value)


def _checklist_id_of(item: dict[str, Any]) -> str:
    """The id the item's key names (the schedule and every evaluation use it, so a hand-edited
    ``checklist_id`` attribute cannot point them at another checklist)."""
    pk = item.get("pk")
    if isinstance(pk, str) and pk.startswith(_PK_PREFIX) and len(pk) > len(_PK_PREFIX):
        return pk.removeprefix(_PK_PREFIX)
    attribute = item.get("checklist_id")
    if not isinstance(attribute, str) or not attribute:
        raise InvalidInput("checklist_id", f"the item has no checklist key (pk {describe(pk)})")
    return attribute


# -- notifications (#18) ------------------------------------------------------------------------------
def _notify_of(item: dict[str, Any]) -> NotifySettings | None:
    """The item's ``notify`` block; None when absent, or when a hand edit made it unreadable (it then
    stays in ``extra`` as it is, and the notifier tells nobody until it is fixed)."""
    value = item.get("notify")
    if value is None:
        return None
    try:
        return NotifySettings.parse(value, window=None)
    except InvalidInput:
        return None
