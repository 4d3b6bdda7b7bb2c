"""Readiness (#33): may this piece of equipment be used now? Pure: no AWS call, no clock.

A piece of equipment is, in this order of precedence (the first that holds wins):

1. ``out_of_service``: an out-of-service period covers now (:mod:`missed_checks.equipment.out_of_service`);
2. ``not_cleared``: a defect (a failed critical item) is open;
3. ``unchecked``: a *pre-use* checklist it is assigned to now has no passing check in its
   **current window**: the latest window whose start is at or before now, still open or not (a
   pre-use check is due before use, so yesterday's window counts until today's starts). A
   *passing* check fails no critical item, performed in ``[that window's start, now]``. A paused
   checklist is skipped, and so is one whose recurrence has ended (its last window closed: nothing
   is asked of the equipment any more);
4. ``cleared`` otherwise (no pre-use checklist, no open defect, not out of service: cleared).

:func:`readiness_of` also says since when (``since``), why in words with times on the site's or
checklist's clock (``reason``), and the next instant it may change by time alone
(``next_change_at``: the next pre-use window's start, an out-of-service period's start or end).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from enum import StrEnum
from typing import Any, Protocol

from missed_checks.checklists.checklist import Checklist, Status
from missed_checks.checklists.recurrence import OccurrenceWindow, Recurrence
from missed_checks.contracts import ReadinessChangedDetail
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.notifications.notification import local_time
from missed_checks.timefmt import to_utc_iso

__all__ = ["PRECEDENCE", "CheckSeen", "OpenDefect", "Readiness", "ReadinessRecord", "State", "current_window",
           "readiness_of"]


class State(StrEnum):
    CLEARED = "cleared"
    NOT_CLEARED = "not_cleared"
    UNCHECKED = "unchecked"
    OUT_OF_SERVICE = "out_of_service"


PRECEDENCE = (State.OUT_OF_SERVICE, State.NOT_CLEARED, State.UNCHECKED, State.CLEARED)
"""The first state that holds wins."""

_LOOKBACKS = (timedelta(days=2), timedelta(days=16), timedelta(days=100), timedelta(days=800))
"""How far back :func:`current_window` looks for the latest window start, widening (a daily rule
finds it in the first, a yearly one in the last; beyond that: from the rule's first window)."""


class FailedItemLike(Protocol):
    @property
    def label(self) -> str: ...


class OpenDefect(Protocol):
    """What readiness reads of an open defect (``missed_checks.defects.defect.Defect``)."""

    @property
    def defect_id(self) -> str: ...

    @property
    def checklist_id(self) -> str: ...

    @property
    def found_at(self) -> datetime: ...

    @property
    def failed_items(self) -> Sequence[FailedItemLike]: ...


@dataclass(frozen=True)
class CheckSeen:
    """A performed check of the equipment as readiness reads it: passing unless a critical item failed."""

    checklist_id: str
    performed_at: datetime
    passed: bool


@dataclass(frozen=True)
class Readiness:
    equipment_id: str
    site_id: str | None
    state: State
    since: datetime | None
    reason: str
    open_defects: tuple[str, ...] = ()
    unchecked_checklists: tuple[str, ...] = ()
    out_of_service_until: datetime | None = None
    next_change_at: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (the status route, the state item's content): instants in UTC ISO."""
        return {
            "equipment_id": self.equipment_id, "site_id": self.site_id, "state": self.state.value,
            "since": _iso(self.since), "reason": self.reason, "open_defects": list(self.open_defects),
            "unchecked_checklists": list(self.unchecked_checklists),
            "out_of_service_until": _iso(self.out_of_service_until), "next_change_at": _iso(self.next_change_at),
        }


def _iso(instant: datetime | None) -> str | None:
    return None if instant is None else to_utc_iso(instant)


def current_window(rule: Recurrence, now: datetime) -> OccurrenceWindow | None:
    """The latest window whose start is at or before ``now`` (still open or not); None before the first."""
    until = now + timedelta(microseconds=1)
    for lookback in _LOOKBACKS:
        found = rule.windows((now - lookback).astimezone(UTC), until)
        if found:
            return found[-1]
    if rule.first_window().start > now:
        return None
    found = rule.windows(rule.first_window().start, until)
    return found[-1] if found else None


@dataclass(frozen=True)
class _PreUse:
    checklist: Checklist
    zone: tzinfo
    window: OccurrenceWindow | None
    next_start: datetime | None
    passed_at: datetime | None


def _pre_use(checklist: Checklist, checks: Sequence[CheckSeen], now: datetime) -> _PreUse | None:
    """The checklist's current window and the passing check in it; None when it asks nothing now
    (paused, or its recurrence has ended and its last window closed)."""
    if checklist.status is Status.PAUSED:
        return None
    rule = checklist.parsed()
    window = current_window(rule, now)
    next_start = next(rule.iter_windows(now + timedelta(microseconds=1)), None)
    upcoming = None if next_start is None else next_start.start
    if window is None:
        return _PreUse(checklist, rule.zone, None, upcoming, None)
    if upcoming is None and window.closed_by(now):
        return None
    passed_at = max((c.performed_at for c in checks if c.checklist_id == checklist.checklist_id and c.passed
                     and window.start <= c.performed_at <= now), default=None)
    return _PreUse(checklist, rule.zone, window, upcoming, passed_at)


def _out_of_service(periods: Iterable[OutOfServicePeriod], now: datetime) -> tuple[datetime, datetime | None,
                                                                                   str] | None:
    """(since, until, reason) of the periods covering now, back to back ones taken together."""
    mine = sorted(periods, key=lambda p: p.start)
    covering = [p for p in mine if p.in_effect_at(now)]
    if not covering:
        return None
    since = min(p.start for p in covering)
    until: datetime | None = now
    while until is not None:  # the end of the period in effect at the last end found, until none is
        extending = next((period for period in mine if period.in_effect_at(until)), None)
        if extending is None:
            break
        until = extending.end
    return since, until, covering[0].reason


def readiness_of(equipment_id: str, site_id: str | None, now: datetime, *,
                 periods: Iterable[OutOfServicePeriod] = (), open_defects: Iterable[OpenDefect] = (),
                 pre_use: Iterable[Checklist] = (), checks: Iterable[CheckSeen] = (),
                 zone: tzinfo | None = None) -> Readiness:
    """The equipment's readiness at ``now``.

    ``periods``: its out-of-service periods (others' are ignored); ``open_defects``: its open
    defects; ``pre_use``: the pre-use checklists it is assigned to at ``now``; ``checks``: its
    performed checks (at least those since the oldest current window started); ``zone``: the
    site's clock for the reason's times (None: the first pre-use checklist's, else UTC)."""
    periods = [p for p in periods if p.equipment_id == equipment_id]
    seen = list(checks)
    states = [s for s in (_pre_use(c, seen, now) for c in sorted(pre_use, key=lambda c: c.checklist_id))
              if s is not None]
    clock = zone or (states[0].zone if states else UTC)
    boundaries = [b for p in periods for b in (p.start, p.end) if b is not None and b > now]
    boundaries += [s.next_start for s in states if s.next_start is not None and s.next_start > now]
    next_change = min(boundaries, default=None)
    defects = sorted(open_defects, key=lambda d: (d.found_at, d.defect_id))
    defect_ids = tuple(d.defect_id for d in defects)
    unchecked = [s for s in states if s.window is not None and s.passed_at is None]
    unchecked_ids = tuple(s.checklist.checklist_id for s in unchecked)

    def readiness(state: State, since: datetime | None, reason: str, until: datetime | None = None) -> Readiness:
        return Readiness(equipment_id, site_id, state, since, reason, defect_ids, unchecked_ids, until, next_change)

    covering = _out_of_service(periods, now)
    if covering is not None:
        since, until, why = covering
        back = f"until {local_time(until, clock)}" if until else "until further notice"
        return readiness(State.OUT_OF_SERVICE, since,
                         f"out of service since {local_time(since, clock)} {back}: {why}", until)
    if defects:
        return readiness(State.NOT_CLEARED, defects[0].found_at, _defects_reason(defects, clock))
    if unchecked:
        since = min(s.window.start for s in unchecked if s.window is not None)
        parts = [f"{s.checklist.checklist_id} (window opened {local_time(s.window.start, s.zone)})"
                 for s in unchecked if s.window is not None]
        return readiness(State.UNCHECKED, since, "no passing pre-use check yet in the current window of "
                         + ", ".join(parts))
    passed = [s for s in states if s.passed_at is not None]
    if passed:
        since = max(s.passed_at for s in passed if s.passed_at is not None)
        parts = [f"{s.checklist.checklist_id} at {local_time(s.passed_at, s.zone)}"
                 for s in passed if s.passed_at is not None]
        return readiness(State.CLEARED, since, "cleared to operate: pre-use check passed (" + ", ".join(parts) + ")")
    return readiness(State.CLEARED, None, "cleared to operate: no open defect and no pre-use check due")


def _defects_reason(defects: Sequence[OpenDefect], clock: tzinfo) -> str:
    def one(defect: OpenDefect) -> str:
        failed = ", ".join(item.label for item in defect.failed_items) or "a critical item"
        return (f"{defect.defect_id} ({failed} failed on {defect.checklist_id} at "
                f"{local_time(defect.found_at, clock)})")
    head = "not cleared to operate: open " + ("defect " if len(defects) == 1 else f"defects ({len(defects)}) ")
    return head + ("; ".join(one(d) for d in defects) if len(defects) <= 3
                   else "; ".join(one(d) for d in defects[:3]) + f" and {len(defects) - 3} more")


@dataclass(frozen=True)
class ReadinessRecord:
    """An equipment's stored readiness: the last change (``sequence``), what it was before, when it
    changed, and whether its event has gone out (``announced``)."""

    readiness: Readiness
    sequence: int
    previous: State | None
    changed_at: datetime
    announced: bool
    recheck_at: datetime | None = None
    """When the equipment's recheck schedule fires (None: it has none)."""

    @property
    def change_id(self) -> str:
        return f"{self.readiness.equipment_id}#{self.sequence}"

    def detail(self) -> ReadinessChangedDetail:
        """The ``Equipment readiness changed`` event's detail of this change (the same on every re-announcement)."""
        r = self.readiness
        return ReadinessChangedDetail(
            equipment_id=r.equipment_id, site_id=r.site_id, readiness=r.state.value,
            previous=None if self.previous is None else self.previous.value, since=_iso(r.since), reason=r.reason,
            sequence=self.sequence, change_id=self.change_id, changed_at=to_utc_iso(self.changed_at),
            open_defects=list(r.open_defects), unchecked_checklists=list(r.unchecked_checklists),
            out_of_service_until=_iso(r.out_of_service_until))

    def to_dict(self) -> dict[str, Any]:
        """As ``GET /sites/{id}/readiness`` lists it: the readiness last announced, and its change."""
        return {**self.readiness.to_dict(), "sequence": self.sequence,
                "previous": None if self.previous is None else self.previous.value,
                "changed_at": to_utc_iso(self.changed_at), "announced": self.announced}
