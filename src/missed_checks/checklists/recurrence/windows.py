"""Occurrence windows: a parsed recurrence's starts resolved on the local clock, with their ends.

Every occurrence becomes an :class:`OccurrenceWindow` ``[start, end)`` with ``end = start +
window`` and ``evaluate_at = end + grace`` (RFC 5545 §3.3.6 durations: days nominal, hours
exact). A local start time in a spring-forward gap is read with the offset before the gap (02:30
becomes 03:30 summer time) and an ambiguous one is the first of the two (§3.3.5). Occurrences
that resolve to the same instant count once.

The local clock is defined here, once, for the whole recurrence (the text's DTSTART, UNTIL,
EXDATE and RDATE are resolved with it too): :func:`resolve_local` reads a naive wall time in a
zone per RFC 5545 §3.3.5, and :func:`add_duration` adds a duration per §3.3.6: weeks and days are
*nominal* (added on the local calendar of the zone, keeping the wall-clock time, then resolved),
hours, minutes and seconds are *exact* elapsed time. So in Europe/Berlin ``P1D`` from
2026-03-28T06:00+01:00 ends 2026-03-29T06:00+02:00 (23 hours later) while ``PT24H`` ends
2026-03-29T07:00+02:00.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta, tzinfo
from functools import cached_property
from itertools import islice
from zoneinfo import ZoneInfo

from dateutil.rrule import rrule, rruleset

from missed_checks.checklists.durations import Duration
from missed_checks.checklists.recurrence.limits import EARLIEST, LAST_YEAR, LATEST, iso
from missed_checks.checklists.recurrence.rule import RuleParts
from missed_checks.errors import InvalidRecurrence, shorten
from missed_checks.timefmt import FIRST_YEAR


def resolve_local(wall: datetime, zone: tzinfo) -> datetime:
    """The instant a naive local wall time denotes in ``zone``, per RFC 5545 §3.3.5.

    A wall time in a spring-forward gap is read with the offset before the gap (02:30 in
    Europe/Berlin on the last Sunday of March becomes 03:30+02:00); an ambiguous wall time in the
    repeated autumn hour is the first of the two (fold=0). The result is expressed in ``zone``.
    """
    if wall.tzinfo is not None:
        raise ValueError("resolve_local takes a naive wall-clock time")
    return wall.replace(tzinfo=zone, fold=0).astimezone(UTC).astimezone(zone)


def add_duration(instant: datetime, duration: Duration, zone: tzinfo | None = None) -> datetime:
    """``instant + duration`` per RFC 5545 §3.3.6, the result expressed in ``zone``.

    Days and weeks are added to the wall-clock date in ``zone`` (default: ``instant``'s own
    zone) and the wall time resolved with :func:`resolve_local`; then hours, minutes and seconds
    are added as exact elapsed time.
    """
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError("add_duration needs a timezone-aware instant")
    target = zone if zone is not None else instant.tzinfo
    local = instant.astimezone(target)
    return _advance(local.replace(tzinfo=None, fold=0), local, duration, target)[1]


@dataclass(frozen=True)
class OccurrenceWindow:
    """One occurrence: on time in ``[start, end)``, late in ``[end, evaluate_at)``.

    All three are aware datetimes in the checklist's zone; ``evaluate_at = end + grace`` is when
    the window may be judged.
    """

    start: datetime
    end: datetime
    evaluate_at: datetime

    def closed_by(self, instant: datetime) -> bool:
        """No check counts in it any more at ``instant`` (its ``end + grace`` has come): it may be judged."""
        return self.evaluate_at <= instant

    def settled_by(self, watermark: datetime) -> bool:
        """It ends at or before the checklist's ``watermark``: judged already, or never to be (it ended
        before the rule took effect). The windows due at an instant are those closed by it and not
        settled by the watermark (:meth:`Recurrence.due_windows`; the report's windows not judged yet)."""
        return self.end <= watermark

    def to_dict(self) -> dict[str, str]:
        """ISO 8601 strings with the UTC offset, e.g. ``2026-03-02T06:00:00+01:00``."""
        return {
            "start": iso(self.start),
            "end": iso(self.end),
            "evaluate_at": iso(self.evaluate_at),
        }

    @classmethod
    def from_dict(cls, data: dict[str, str], zone: tzinfo | None = None) -> OccurrenceWindow:
        """Inverse of :meth:`to_dict`; with ``zone`` the instants are expressed in that zone."""
        values = []
        for key in ("start", "end", "evaluate_at"):
            try:
                value = datetime.fromisoformat(str(data[key]).replace("Z", "+00:00"))
            except (KeyError, ValueError, TypeError) as error:
                raise InvalidRecurrence("window", f"window {key} is missing or not ISO 8601: {error}") from None
            if value.tzinfo is None:
                raise InvalidRecurrence("window", f"window {key} {shorten(data[key])} has no UTC offset")
            if not EARLIEST <= value <= LATEST:
                raise InvalidRecurrence(
                    "window", f"window {key} {shorten(data[key])} is outside {FIRST_YEAR}..{LAST_YEAR}"
                )
            values.append(value.astimezone(zone) if zone is not None else value)
        return cls(*values)


@dataclass(frozen=True)
class DueWindows:
    """Windows due for evaluation, oldest first; ``more`` when the cap cut some off."""

    windows: list[OccurrenceWindow]
    more: bool


@dataclass(frozen=True)
class Recurrence:
    """A parsed, validated checklist recurrence.

    Build it with :func:`~missed_checks.checklists.recurrence.parse_recurrence`.
    """

    text: str
    timezone: str
    zone: ZoneInfo
    dtstart: datetime
    window: Duration
    grace: Duration
    date_only: bool
    until: datetime | None
    count: int | None
    rule: rrule = field(repr=False, compare=False)
    parts: RuleParts = field(repr=False, compare=False)
    rule_set: rruleset = field(repr=False, compare=False)
    """The rule (ending with :data:`LAST_YEAR` when it has no end of its own) and the RDATEs."""
    exdates: tuple[datetime, ...] = ()
    exdate_dates: tuple[date, ...] = ()
    rdates: tuple[datetime, ...] = ()
    closed_dates: frozenset[date] = frozenset()
    """Local dates of the checklist's closure calendars (``closed_on``): an occurrence starting on
    one of them is not due at all, exactly as a date-only EXDATE (:meth:`with_closures`)."""

    def with_closures(self, dates: frozenset[date]) -> Recurrence:
        """This recurrence with the local ``dates`` closed as well (closure calendars)."""
        return replace(self, closed_dates=frozenset(dates)) if dates or self.closed_dates else self

    def has_windows(self) -> bool:
        """False when closures removed every occurrence of a bounded rule."""
        return next(self.iter_windows(self.dtstart - timedelta(days=1)), None) is not None

    @property
    def bounded(self) -> bool:
        """True when the recurrence has a last occurrence (COUNT or UNTIL)."""
        return self.count is not None or self.until is not None

    @property
    def evaluation_offset(self) -> Duration:
        """``window + grace``: how long after a start its window may be judged (nominal + exact)."""
        return self.window + self.grace

    def window_at(self, start: datetime) -> OccurrenceWindow:
        """The window of an occurrence starting at the (aware) instant ``start``."""
        local = start.astimezone(self.zone)
        return self._window(local.replace(tzinfo=None, fold=0), local)

    def window_from_wall(self, wall: datetime) -> OccurrenceWindow:
        """The window of an occurrence whose rule gives the naive local time ``wall``.

        The start is ``wall`` resolved per §3.3.5; the nominal days of window and grace are added
        to the wall-clock value the rule gives (so a daily 02:30 rule whose 02:30 falls into the
        spring-forward gap starts at 03:30 and its P1D window still ends at 02:30 the next day).
        """
        return self._window(wall, resolve_local(wall, self.zone))

    def _window(self, wall: datetime, start: datetime) -> OccurrenceWindow:
        end_wall, end = _advance(wall, start, self.window, self.zone)
        _, evaluate_at = _advance(end_wall, end, self.grace, self.zone)
        return OccurrenceWindow(start, end, evaluate_at)

    def iter_occurrences(self, after: datetime) -> Iterator[tuple[datetime, datetime]]:
        """(nominal wall time, resolved start) of occurrences starting at or after ``after``."""
        _require_aware(after, "after")
        if after > LATEST:
            return
        floor = max(after, EARLIEST).astimezone(UTC)
        # Iterate from a day earlier: dateutil compares wall times, a resolved start can move.
        previous: datetime | None = None
        for nominal in self.rule_set.xafter(floor.astimezone(self.zone) - timedelta(days=1), inc=True):
            if nominal.year > LAST_YEAR:
                return  # no schedule can fire after LAST_YEAR (a COUNT reaching further ends here)
            wall = nominal.replace(tzinfo=None)
            start = resolve_local(wall, self.zone)
            if previous is not None and start <= previous:
                continue  # two local times resolving to the same instant count once
            previous = start
            if start.astimezone(UTC) < floor or self._excluded(start):
                continue
            yield wall, start

    def iter_windows(self, after: datetime) -> Iterator[OccurrenceWindow]:
        """Windows whose start is at or after ``after``, oldest first (possibly endless)."""
        for wall, start in self.iter_occurrences(after):
            yield self._window(wall, start)

    def windows_after(self, instant: datetime, limit: int) -> list[OccurrenceWindow]:
        """The first ``limit`` windows starting at or after ``instant``."""
        return list(islice(self.iter_windows(instant), max(limit, 0)))

    def windows(self, start: datetime, end: datetime) -> list[OccurrenceWindow]:
        """Every window whose start is in ``[start, end)``, oldest first."""
        _require_aware(end, "end")
        stop = min(end, LATEST).astimezone(UTC)
        found = []
        for window in self.iter_windows(start):
            if window.start.astimezone(UTC) >= stop:
                break
            found.append(window)
        return found

    def due_windows(self, watermark: datetime, instant: datetime, limit: int) -> DueWindows:
        """Windows with ``evaluate_at <= instant`` and ``end > watermark``, oldest first.

        At most ``limit`` (at least 1) are returned; ``more`` says whether further ones are due.
        Starts are searched from ``watermark`` minus the longest a window can last, so the cost
        does not depend on how long ago the watermark is beyond what dateutil itself needs.
        """
        _require_aware(watermark, "watermark")
        _require_aware(instant, "instant")
        cap = max(limit, 1)
        # Clamped to where windows can be: the same answer, and no arithmetic overflows.
        mark = min(max(watermark, EARLIEST), LATEST).astimezone(UTC)
        now = min(max(instant, EARLIEST), LATEST).astimezone(UTC)
        lookback = self.window.longest_elapsed() + timedelta(minutes=1)
        due: list[OccurrenceWindow] = []
        for window in self.iter_windows(mark - lookback):
            if not window.closed_by(now):
                break
            if window.settled_by(mark):
                continue
            if len(due) == cap:
                return DueWindows(due, True)
            due.append(window)
        return DueWindows(due, False)

    def first_window(self) -> OccurrenceWindow:
        """The first occurrence's window (every accepted recurrence has one)."""
        return next(self.iter_windows(self.dtstart - timedelta(days=1)))

    def last_window(self) -> OccurrenceWindow | None:
        """The last occurrence's window, or None when the recurrence never ends."""
        return self._last_window

    def last_evaluate_at(self) -> datetime | None:
        """When the last window may be judged (the schedule's end), None when unbounded."""
        last = self._last_window
        return None if last is None else last.evaluate_at

    @cached_property
    def _last_window(self) -> OccurrenceWindow | None:
        if not self.bounded:
            return None
        last = None
        for last in self.iter_windows(self.dtstart - timedelta(days=1)):  # noqa: B007
            pass
        return last

    def _excluded(self, start: datetime) -> bool:
        return start in self.exdates or start.date() in self.exdate_dates or start.date() in self.closed_dates


def _advance(wall: datetime, instant: datetime, duration: Duration, zone: tzinfo) -> tuple[datetime, datetime]:
    """(wall, instant) plus ``duration``: days on the wall clock ``wall`` (the rule's own, which
    may lie in a gap ``instant`` was moved out of), then exact time (§3.3.6)."""
    if duration.days:
        wall = wall + timedelta(days=duration.days)
        instant = resolve_local(wall, zone)
    if duration.seconds:
        instant = (instant.astimezone(UTC) + duration.exact).astimezone(zone)
        wall = instant.replace(tzinfo=None, fold=0)
    return wall, instant


def _require_aware(value: datetime, name: str) -> None:
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidRecurrence("recurrence", f"{name} must be a timezone-aware datetime, got {value!r}")
