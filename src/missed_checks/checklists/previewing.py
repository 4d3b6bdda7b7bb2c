"""Previewing a checklist rule: what it will do, shown before it is written (its next windows in the
checklist's local time, the DST shifts among them, the closed dates of its closure calendars, and
the schedule it gets, exact or a superset). Writes nothing.

The operator's ``checklist put`` / ``checklist show`` and the management API's ``POST
/checklists/preview`` (:mod:`missed_checks.api.routes.checklists`) both preview this way; the API's
caller must be allowed to ``read`` at the site it names (:func:`preview_at_site`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from missed_checks.checklists.ports import ChecklistStore
from missed_checks.checklists.recurrence import OccurrenceWindow, Recurrence, parse_recurrence
from missed_checks.checklists.schedule_expression import schedule_for
from missed_checks.errors import InvalidInput
from missed_checks.permissions.authorizing import authorize
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Action
from missed_checks.timefmt import to_utc_iso

HORIZONS = (timedelta(days=40), timedelta(days=400), timedelta(days=366 * 5))
MAX_WINDOWS = 100
"""The most windows a preview shows (the API's ``windows`` is refused above it)."""


@dataclass(frozen=True)
class WindowShown:
    """One window of a preview, in the checklist's zone, with why it is not at the usual local time."""

    window: OccurrenceWindow
    nominal: datetime
    """The local wall time the rule gives (naive): the start differs when it falls into a DST gap."""
    shift: str | None
    """Why this window is marked (a DST change since the previous one, a start moved out of a gap, a
    window spanning a change), None when it is as usual."""

    def to_dict(self) -> dict[str, Any]:
        return {**self.window.to_dict(), "utc_offset": _offset(self.window.start),
                "start_utc": to_utc_iso(self.window.start), "dst_shift": self.shift}


@dataclass(frozen=True)
class Preview:
    windows: list[OccurrenceWindow]
    expression: str
    timezone: str
    exact: bool
    start_date: datetime | None
    end_date: datetime | None
    shown: tuple[WindowShown, ...] = ()
    closed_dates: tuple[date, ...] = ()
    """The closure calendars' dates from today (local) to the last window shown: no window starts on them."""

    def to_dict(self) -> dict[str, Any]:
        """The command line's document (``checklist put`` / ``show``): windows and schedule."""
        return {
            "next_windows": [w.to_dict() for w in self.windows],
            "schedule": {
                "expression": self.expression,
                "timezone": self.timezone,
                "exact": self.exact,
                "start_date": to_utc_iso(self.start_date) if self.start_date else None,
                "end_date": to_utc_iso(self.end_date) if self.end_date else None,
            },
        }

    def to_detail(self) -> dict[str, Any]:
        """The API's document: each window in local time with its UTC offset and DST mark, the closed
        dates, and whether the schedule is exact or a superset (the evaluation skips the firings that
        close no window)."""
        document = self.to_dict()
        document["next_windows"] = [w.to_dict() for w in self.shown]
        document["closed_dates"] = [d.isoformat() for d in self.closed_dates]
        document["dst_shifts"] = sum(1 for w in self.shown if w.shift)
        document["schedule"]["kind"] = "exact" if self.exact else "superset"
        return document


def validate_rule(recurrence: str, timezone: str | None, window: str | None, grace: str | None) -> Recurrence:
    """The recurrence engine's verdict; raises InvalidRecurrence naming the field."""
    return parse_recurrence(recurrence, timezone=timezone, window=window, grace=grace)


def next_windows(rule: Recurrence, now: datetime, count: int) -> list[OccurrenceWindow]:
    """The next ``count`` windows starting at or after ``now`` (fewer when the rule ends)."""
    for horizon in HORIZONS:
        windows = rule.windows(now, now + horizon)
        if len(windows) >= count:
            break
    return list(windows[:count])


def preview(rule: Recurrence, now: datetime, count: int = 5) -> Preview:
    """The next windows and the schedule; with closure calendars (``rule.closed_dates``) the
    schedule is never exact (cron cannot leave dates out), as
    :func:`missed_checks.checklists.schedule.desired_schedule`."""
    if rule.closed_dates and not rule.has_windows():
        raise InvalidInput("closed_on", "its calendars close every window of the rule: nothing would ever be due")
    spec = schedule_for(rule)
    windows = next_windows(rule, now, count)
    shown = tuple(_marked(rule, now, windows))
    last = windows[-1].start.astimezone(rule.zone).date() if len(windows) == count and windows else None
    today = now.astimezone(rule.zone).date()
    closed = tuple(sorted(d for d in rule.closed_dates if d >= today and (last is None or d <= last)))
    return Preview(windows, spec.expression, spec.timezone, spec.exact and not rule.closed_dates, spec.start_date,
                   spec.end_date, shown, closed)


def preview_at_site(caller: Caller, site_id: str | None, rule: Recurrence, now: datetime, count: int = 5) -> Preview:
    """:func:`preview` for a caller allowed to ``read`` at ``site_id`` (the site the checklist would
    belong to; NotFound for a site the caller holds no role at)."""
    if site_id is None and not caller.everywhere:
        raise InvalidInput("site_id", "give the site the checklist would belong to (its calendars, its time zone)")
    authorize(caller, Action.read, site_id, what=f"site {site_id!r}")
    if not 0 <= count <= MAX_WINDOWS:
        raise InvalidInput("windows", f"is {count}: give 0 to {MAX_WINDOWS}")
    return preview(rule, now, count)


def closures_of(store: ChecklistStore, closed_on: Sequence[str], site_id: str | None,
                field: str = "closed_on") -> frozenset[date]:
    """The closed dates of the calendars ``closed_on`` names, for a rule previewed at ``site_id``: each
    must exist and be of that site or of none (InvalidInput ``closed_on[1]: no calendar 'x'``, the
    same for another site's calendar, which is never confirmed to exist)."""
    calendars = store.get_calendars(closed_on) if closed_on else {}
    dates: set[date] = set()
    for index, calendar_id in enumerate(closed_on):
        calendar = calendars.get(calendar_id)
        if calendar is None or calendar.site_id not in (None, site_id):
            raise InvalidInput(f"{field}[{index}]", f"no calendar {calendar_id!r}"
                                                    + (f" at site {site_id}" if site_id else ""))
        dates.update(calendar.dates)
    return frozenset(dates)


def _marked(rule: Recurrence, now: datetime, windows: list[OccurrenceWindow]) -> Iterable[WindowShown]:
    """Each window with its nominal wall time and DST mark: a UTC offset that differs from the
    previous window's (the first: from now's), a start the zone moved off the rule's wall time (a
    spring-forward gap), a window whose end is at another offset than its start."""
    if not windows:
        return
    nominal = {start: wall for wall, start in _occurrences(rule, now, windows[-1].start)}
    previous = _offset(now.astimezone(rule.zone))
    for window in windows:
        wall = nominal.get(window.start, window.start.replace(tzinfo=None))
        offset = _offset(window.start)
        marks = []
        if wall != window.start.replace(tzinfo=None):
            marks.append(f"starts at {window.start.strftime('%H:%M')} local instead of {wall.strftime('%H:%M')}: "
                         f"{wall.strftime('%H:%M')} does not exist on {wall.date().isoformat()} in {rule.timezone}")
        if offset != previous:
            marks.append(f"the UTC offset changes from {previous} to {offset} before this window")
        if _offset(window.end) != offset:
            elapsed = window.end.astimezone(UTC) - window.start.astimezone(UTC)  # same zone: naive subtraction
            marks.append(f"the UTC offset changes from {offset} to {_offset(window.end)} during this window (it "
                         f"ends at {window.end.strftime('%H:%M')} local, {elapsed} after it starts)")
        previous = offset
        yield WindowShown(window, wall, "; ".join(marks) or None)


def _occurrences(rule: Recurrence, now: datetime, last: datetime) -> Iterable[tuple[datetime, datetime]]:
    for wall, start in rule.iter_occurrences(now):
        if start > last:
            return
        yield wall, start


def _offset(instant: datetime) -> str:
    offset = instant.utcoffset() or timedelta(0)
    sign = "-" if offset < timedelta(0) else "+"
    minutes = abs(int(offset.total_seconds())) // 60
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"
