"""Whether a parsed recurrence can be kept: it occurs, and its windows never overlap."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from itertools import islice

from dateutil.rrule import DAILY, HOURLY, MONTHLY, WEEKLY, YEARLY

from missed_checks.checklists.recurrence.limits import LAST_YEAR, iso, range_end
from missed_checks.checklists.recurrence.rule import RuleParts, yearly_day_filter
from missed_checks.checklists.recurrence.windows import OccurrenceWindow, Recurrence
from missed_checks.errors import InvalidRecurrence

_GAP_SAMPLE_YEARS = 2
_GAP_SAMPLE_MAX = 10_000  # more than a year of an hourly rule: both DST changes


def check_feasible(recurrence: Recurrence) -> None:
    """Raise :class:`InvalidRecurrence` unless the recurrence occurs and its windows fit."""
    _check_occurs(recurrence)
    _check_windows_fit(recurrence)


def _check_occurs(recurrence: Recurrence) -> None:
    """Reject a rule without an occurrence up to the end of :data:`LAST_YEAR`.

    The RRULE itself must occur (RDATEs add occurrences to a rule, they do not replace one), and
    so must the whole set once EXDATEs are taken out. Rare rules are fine (29 February on a
    Monday first occurs in 2044); impossible ones are recognised without walking the calendar
    where that is cheap to know (day filters that match no date, a BYSETPOS beyond what a period
    can hold), and any other search ends with :data:`LAST_YEAR` (a second or two at worst).
    """
    if _structurally_never(recurrence):
        _never()
    end = range_end(recurrence.zone)
    horizon = min(end, recurrence.until) if recurrence.until is not None else end
    probe = recurrence.rule.replace(until=horizon.astimezone(UTC), count=None)
    if probe.after(recurrence.dtstart - timedelta(days=1), inc=True) is None:
        _never()
    if next(recurrence.iter_occurrences(recurrence.dtstart - timedelta(days=1)), None) is None:
        _never()


def _structurally_never(recurrence: Recurrence) -> bool:
    """Cheap pre-checks: can the RRULE produce nothing at all?

    dateutil walks period by period when a rule's filters never match (hour by hour for an
    HOURLY rule: minutes of CPU up to 2199), so these impossibilities are recognised first:
    day filters of a DAILY/WEEKLY/HOURLY rule that match no date (tried as a YEARLY rule, the
    same set of dates with INTERVAL ignored, walked a year at a time), a BYSETPOS whose every
    position lies beyond the most occurrences one period (hour, day, week, month, year) can hold,
    and a DAILY/HOURLY INTERVAL of whole weeks with a BYDAY that leaves out DTSTART's weekday.
    """
    parts = recurrence.parts
    if parts.bysetpos and all(abs(position) > _most_per_period(parts) for position in parts.bysetpos):
        return True
    week = {DAILY: 7, HOURLY: 7 * 24}.get(parts.freq)
    if week and parts.interval % week == 0 and recurrence.dtstart.weekday() not in (parts.weekdays or range(7)):
        return True  # whole weeks apart: every occurrence falls on DTSTART's weekday, which BYDAY leaves out
    # BYSETPOS only selects among the dates the day filters allow: without it, the same test.
    start = recurrence.dtstart.replace(tzinfo=None)
    probe = yearly_day_filter(replace(parts, bysetpos=None), start, range_end(recurrence.zone).replace(tzinfo=None))
    return probe is not None and probe.after(start, inc=True) is None


def _most_per_period(parts: RuleParts) -> int:
    """An upper bound of the occurrences one period of the rule holds (what BYSETPOS selects from).

    dateutil's filters are conjunctive, so the smallest capacity of any given day filter bounds
    the days (each BYMONTHDAY value appears at most once a week or month, a weekday at most 5
    times a month and 53 a year, an ordinal weekday once a month).
    """
    freq, per_hour = parts.freq, len(parts.byminute) * len(parts.bysecond)
    if freq == HOURLY:
        return per_hour
    per_day = len(parts.byhour or (0,)) * per_hour
    days = {DAILY: 1, WEEKLY: 7, MONTHLY: 31}.get(freq, 366)
    if freq != DAILY and (parts.weekdays or parts.nweekdays):
        per_weekday = {WEEKLY: 1, MONTHLY: 5}.get(freq, 53)
        per_ordinal = 12 if freq == YEARLY else 1  # with BYMONTH, a YEARLY ordinal counts in each month
        days = min(days, per_weekday * len(parts.weekdays or ()) + per_ordinal * len(parts.nweekdays or ()))
    if freq != DAILY and parts.bymonthday:
        days = min(days, len(parts.bymonthday) * (12 if freq == YEARLY else 1))
    if freq != DAILY and parts.byyearday:
        days = min(days, len(parts.byyearday))
    return days * per_day


def _never() -> None:
    raise InvalidRecurrence(
        "recurrence",
        f"the rule never occurs (not up to the end of {LAST_YEAR}); "
        "check BYMONTH/BYMONTHDAY/BYDAY combinations, INTERVAL, COUNT, UNTIL and EXDATE",
    )


def _check_windows_fit(recurrence: Recurrence) -> None:
    """Reject windows (or window + grace) longer than the gap to the next occurrence.

    Checked over the first two years or 10,000 occurrences (more than a year of an hourly rule), so
    every DST change of the zone is seen. Pairs further apart than window + grace can ever last
    are skipped without computing their windows.
    """
    first = recurrence.dtstart - timedelta(days=1)
    horizon = (recurrence.dtstart + timedelta(days=366 * _GAP_SAMPLE_YEARS)).astimezone(UTC)
    safe_gap = recurrence.evaluation_offset.longest_elapsed()
    previous: tuple[datetime, datetime] | None = None
    for wall, start in islice(recurrence.iter_occurrences(first), _GAP_SAMPLE_MAX):
        utc_start = start.astimezone(UTC)
        if previous is not None:
            if utc_start > horizon:
                break
            if utc_start - previous[1].astimezone(UTC) < safe_gap:
                earlier = recurrence.window_from_wall(previous[0])
                _check_pair(recurrence, earlier, recurrence.window_from_wall(wall))
        previous = (wall, start)


def _check_pair(recurrence: Recurrence, earlier: OccurrenceWindow, later: OccurrenceWindow) -> None:
    gap = later.start.astimezone(UTC) - earlier.start.astimezone(UTC)
    where = f"{iso(earlier.start)} and {iso(later.start)} are {_human(gap)} apart"
    if earlier.end.astimezone(UTC) > later.start.astimezone(UTC):
        hint = " (P1D ends at the same local time next day; PT24H can overlap across DST)"
        raise InvalidRecurrence(
            "window",
            f"{recurrence.window} is longer than the shortest gap between occurrences: {where}; "
            f"windows must not overlap{hint if recurrence.window.seconds else ''}",
        )
    if earlier.evaluate_at.astimezone(UTC) > later.start.astimezone(UTC):
        raise InvalidRecurrence(
            "grace",
            f"window {recurrence.window} + grace {recurrence.grace} is longer than the shortest gap between "
            f"occurrences: {where}; a late check must not fall into the next window, so that a performed "
            "check can never count for two windows",
        )


def _human(gap: timedelta) -> str:
    hours, rest = divmod(int(gap.total_seconds()), 3600)
    return f"{hours}h{rest // 60:02d}m" if rest else f"{hours}h"
