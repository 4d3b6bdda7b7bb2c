"""Checklists: a routine on equipment with a recurrence, time zone, window and grace."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from enum import StrEnum
from typing import Any

from missed_checks import identifiers
from missed_checks.checklists.check_item import CheckItem
from missed_checks.checklists.closure_calendar import ClosureCalendar, closed_dates
from missed_checks.checklists.recurrence import Recurrence, parse_recurrence
from missed_checks.errors import InvalidInput, InvalidRecurrence
from missed_checks.notifications.notification import NotifySettings
from missed_checks.timefmt import to_utc_iso

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
class JudgedBy:
    """The rule a window is judged by (:meth:`Checklist.judged_by`), which its judged-window record
    keeps as first written (a later edit never rewrites it): the rule fields as the checklist holds
    them, and per closure calendar the revision whose dates applied (None: no calendar read)."""

    recurrence: str = ""
    timezone: str | None = None
    window: str | None = None
    grace: str | None = None
    closed_on: Mapping[str, int] | None = None
    items_revision: int | None = None
    """The revision of the checklist's items it held when the window was judged (#33; None: it had
    none): ``missed-checks checklist items ID --revision N`` shows them."""


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
    site_id: str | None = None
    """The site the checklist belongs to (#31); None for one made before sites existed. Never changes
    once set (an admin may set it once on a checklist that has none)."""
    # what a check found (#33)
    items: tuple[CheckItem, ...] = ()
    """The questions a check answers (:mod:`missed_checks.checklists.check_item`); the current revision."""
    items_revision: int = 0
    """0: it never had items; raised by one on every put that changes :attr:`items` (each revision is
    kept on record: a check reads by the one in force at its ``performed_at``)."""
    pre_use: bool = False
    """Readiness: its equipment is cleared to operate only once the current window has a check
    passing every critical item."""
    clear_on_pass: bool = False
    """A later check passing every critical item resolves the open defects of its equipment (found
    by this checklist's checks before it)."""

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

    def judged_by(self) -> JudgedBy:
        """What a judged window records it was judged by: the rule and, per closure calendar, the
        revision whose dates applied (``missed-checks calendar show ID --revision N`` shows them)."""
        closed_on = None
        if self.closed_on and self.closures is not None:
            closed_on = {calendar_id: calendar.revision for calendar_id in self.closed_on
                         if (calendar := self.closures.get(calendar_id)) is not None}
        return JudgedBy(self.recurrence, self.timezone, self.window, self.grace, closed_on,
                        self.items_revision or None)

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

    # -- the document form ------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The checklist's own fields as the commands show them and the table adapter stores them
        (:mod:`missed_checks.aws.table.checklists`): instants in UTC ISO, absent ones left out."""
        document: dict[str, Any] = {
            "checklist_id": self.checklist_id,
            "name": self.name,
            "recurrence": self.recurrence,
            "status": self.status.value,
            "revision": self.revision,
        }
        if self.site_id is not None:  # sites (#31)
            document["site_id"] = self.site_id
        if self.closed_on:  # closure calendars (#23 item 2)
            document["closed_on"] = list(self.closed_on)
        for name in ("timezone", "window", "grace"):
            value = getattr(self, name)
            if value:
                document[name] = value
        for name in ("created_at", "updated_at", "evaluated_until", "effective_from"):
            value = getattr(self, name)
            if value is not None:
                document[name] = to_utc_iso(value)
        if self.notify is not None and not self.notify.is_empty:  # notifications (#18)
            document["notify"] = self.notify.to_dict()
        if self.items or self.items_revision:  # what a check found (#33)
            document["items"] = [item.to_dict() for item in self.items]
            document["items_revision"] = self.items_revision
        for flag in ("pre_use", "clear_on_pass"):
            if getattr(self, flag):
                document[flag] = True
        return document


@dataclass(frozen=True)
class ChecklistRecord:
    """A checklist as schedule-sync reads it from storage, whatever a hand edit made of it: the
    checklist, or why it cannot be read, and the sync's own notes as they are stored."""

    has_revision: bool
    """False for a checklist written by hand without one (the sync gives it the one a new one has)."""
    revision: int
    """Its revision; 0 when it has none or it is unreadable (then :attr:`problem` says why)."""
    checklist: Checklist | None
    """None when it cannot be read (:attr:`problem`)."""
    problem: InvalidInput | None = None
    """Why the revision or the checklist cannot be read (naming the attribute)."""
    schedule: object = None
    """The sync's note of the schedule it applied, as stored (anything, after a hand edit)."""
    sync_error: object = None
    """The sync's note of the error it reported, as stored."""
