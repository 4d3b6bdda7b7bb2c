"""The EventBridge Scheduler schedule of a checklist: one AWS cron (or ``at``) expression.

Contract of :func:`schedule_for`: in the checklist's zone (``ScheduleExpressionTimezone``), the
expression fires at or after every window's ``evaluate_at`` and never skips one: in the same
minute when ``evaluate_at`` is minute-aligned, else the next minute. AWS skips cron times that do
not exist on spring-forward day and fires the repeated autumn hour once (taken here to be the
first pass); so when an ``evaluate_at`` falls where a cron time cannot fire, the expression gets
an extra hour or minute that can, and is not exact. In the one case no cron time can fire in
time (an ``evaluate_at`` in the *second* pass of a repeated hour) it fires right after the
repeated hour, the hour's length later. ``exact`` is true only when the expression fires at
``evaluate_at`` instants and nowhere else; otherwise it is the tightest superset found and the
state machine skips firings that close no window (it only judges windows whose ``evaluate_at``
has passed).

How: the evaluation times of day come from the rule's BYHOUR/BYMINUTE/BYSECOND plus the window
and grace, and from simulating windows on every day around the zone's DST changes. The dates
come from the rule's day selection (dateutil, with INTERVAL and COUNT/UNTIL removed) over 32
years, which covers every kind of year; each candidate cron date field is a projection of those
dates, so every candidate covers them, and the one matching the fewest days is chosen; it is
exact when it matches no other day.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from typing import Any, NoReturn
from zoneinfo import ZoneInfo

from dateutil.rrule import DAILY, HOURLY, MONTHLY, WEEKLY, YEARLY, rrule, weekday

from missed_checks.checklists.recurrence import Recurrence, RuleParts, yearly_day_filter
from missed_checks.errors import InvalidInput
from missed_checks.timefmt import to_utc_iso

__all__ = ["ScheduleSpec", "firing_wall_time", "schedule_for", "validate_aws_cron"]

END_MARGIN = timedelta(minutes=2)
"""EndDate is the last ``evaluate_at`` (rounded up to the minute) plus this."""

_REFERENCE_FIRST, _REFERENCE_LAST = date(2001, 1, 1), date(2032, 12, 31)
_COMPARE_FIRST, _COMPARE_LAST = date(2002, 1, 1), date(2031, 12, 31)  # 30 years: every kind of year
_AWS_DOW_NAMES = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")


@dataclass(frozen=True)
class ScheduleSpec:
    """What schedule-sync writes to EventBridge Scheduler for one checklist."""

    expression: str
    timezone: str
    start_date: datetime | None
    end_date: datetime | None
    exact: bool

    def to_dict(self) -> dict[str, str | bool | None]:
        """JSON-ready: dates as UTC ISO strings (``2026-03-02T05:00:00Z``) or None."""
        return {
            "expression": self.expression,
            "timezone": self.timezone,
            "start_date": to_utc_iso(self.start_date) if self.start_date else None,
            "end_date": to_utc_iso(self.end_date) if self.end_date else None,
            "exact": self.exact,
        }


def schedule_for(recurrence: Recurrence) -> ScheduleSpec:
    """The schedule that fires for every window of ``recurrence`` (see the module contract)."""
    first = recurrence.first_window()
    last = recurrence.last_window()
    zone = recurrence.zone
    if last is not None and last.start == first.start:
        wall = firing_wall_time(first.evaluate_at, zone)
        # exact unless the instant is the second pass of a repeated hour: the at() then fires after
        # it, at the first wall time past the repeat (Lord Howe's half-hour fall-back, found by hypothesis)
        fires = wall.replace(tzinfo=zone, fold=0).astimezone(UTC)
        exact = fires == _ceil_minute(first.evaluate_at).astimezone(UTC)
        return ScheduleSpec(f"at({wall:%Y-%m-%dT%H:%M:%S})", recurrence.timezone, None, None, exact)
    firings = _firing_offsets(recurrence)
    days = _DaySelection.of(recurrence)
    shifts = {shift for shift, _ in firings.all}
    date_fields, dates_exact = _date_fields(days, shifts, recurrence)
    minutes = sorted({minute for _, (_, minute) in firings.all})
    hours = sorted({hour for _, (hour, _) in firings.all})
    times_exact = (
        firings.all == firings.nominal
        and len(shifts) == 1
        and len(minutes) * len(hours) == len({tod for _, tod in firings.all})
        and (days.one_time_per_day or len(firings.nominal) == 1)
    )
    expression = f"cron({_join(minutes)} {_join(hours, 24)} {date_fields})"
    validate_aws_cron(expression)
    end_date = None
    if last is not None:
        end_date = _ceil_minute(last.evaluate_at) + END_MARGIN
    return ScheduleSpec(
        expression=expression,
        timezone=recurrence.timezone,
        start_date=_floor_minute(first.evaluate_at),
        end_date=end_date,
        exact=times_exact and dates_exact and days.structurally_exact,
    )


def firing_wall_time(instant: datetime, zone: ZoneInfo) -> datetime:
    """The naive local wall time at which a cron firing must happen for ``instant``.

    ``instant`` rounded up to the minute, on the wall clock of ``zone``. If that wall time is the
    second pass of a repeated (fall-back) hour, which AWS fires only once (on the first pass, before
    ``instant``), the first wall time after the repeated hour that lies at or after it.
    """
    local = _ceil_minute(instant).astimezone(zone)
    wall = local.replace(tzinfo=None, fold=0)
    first_offset, offset = wall.replace(tzinfo=zone, fold=0).utcoffset(), local.utcoffset()
    if local.fold == 1 and first_offset is not None and offset is not None and first_offset != offset:
        wall = wall + (first_offset - offset)
    return wall


# --- times of day ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Firings:
    """(day shift from the occurrence's date, (hour, minute)) of the firings needed."""

    nominal: frozenset[tuple[int, tuple[int, int]]]
    all: frozenset[tuple[int, tuple[int, int]]]


def _start_times(recurrence: Recurrence) -> set[time]:
    parts = recurrence.parts
    hours: Iterable[int] = parts.byhour or ()
    if parts.freq == HOURLY and not parts.byhour:
        step, first = parts.interval, recurrence.dtstart.hour
        hours = {(first + i * step) % 24 for i in range(24)}
    times = {time(h, m, s) for h in hours for m in parts.byminute for s in parts.bysecond}
    times.update(rdate.time() for rdate in recurrence.rdates)
    return times


def _firing_offsets(recurrence: Recurrence) -> _Firings:
    """Nominal firings (no DST change near) and every firing a DST change can require."""
    zone = recurrence.zone
    offset = recurrence.evaluation_offset
    anchor = date(2001, 1, 1)  # any date: nominal arithmetic on a naive wall clock
    nominal = set()
    for start in _start_times(recurrence):
        wall = datetime.combine(anchor, start) + timedelta(days=offset.days, seconds=offset.seconds)
        wall = _ceil_minute(wall.replace(tzinfo=UTC)).replace(tzinfo=None)
        nominal.add(((wall.date() - anchor).days, (wall.hour, wall.minute)))
    found = set(nominal)
    reach = offset.days + offset.seconds // 86400 + 2
    for changed_on in _dst_change_dates(zone, _sample_years(recurrence)):
        for start in _start_times(recurrence):
            for back in range(-1, reach + 1):
                day = changed_on - timedelta(days=back)
                window = recurrence.window_from_wall(datetime.combine(day, start))
                wall = firing_wall_time(window.evaluate_at, zone)
                found.add(((wall.date() - day).days, (wall.hour, wall.minute)))
    for rdate in recurrence.rdates:
        wall = firing_wall_time(recurrence.window_at(rdate).evaluate_at, zone)
        found.add(((wall.date() - rdate.date()).days, (wall.hour, wall.minute)))
    return _Firings(frozenset(nominal), frozenset(found))


def _sample_years(recurrence: Recurrence) -> list[int]:
    """Years whose DST rules matter: DTSTART's, the next two, and the zone's current rules
    (2100 follows the zone file's rule for the future)."""
    first = max(recurrence.dtstart.year, 1971)
    return sorted({first, first + 1, first + 2, 2100})


def _dst_change_dates(zone: ZoneInfo, years: Iterable[int]) -> list[date]:
    """Local dates (both sides) on which ``zone``'s UTC offset changes in ``years``."""
    return sorted({day for year in years for day in _changes_in_year(zone, year)})


@lru_cache(maxsize=512)
def _changes_in_year(zone: ZoneInfo, year: int) -> tuple[date, ...]:
    changes: set[date] = set()
    moment = datetime(year, 1, 1, tzinfo=UTC) - timedelta(days=1)
    stop = datetime(year + 1, 1, 1, tzinfo=UTC) + timedelta(days=1)
    while moment < stop:
        after = moment + timedelta(hours=12)
        if moment.astimezone(zone).utcoffset() != after.astimezone(zone).utcoffset():
            changes.add(moment.astimezone(zone).date())
            changes.add(after.astimezone(zone).date())
        moment = after
    return tuple(sorted(changes))


# --- dates -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _DaySelection:
    """The dates a rule's day selection allows in the reference span, with what cron can't see."""

    dates: frozenset[date] | None  # None: every date
    year_step: int | None  # YEARLY (or MONTHLY multiple of 12) INTERVAL, expressed as year/step
    first_year: int
    structurally_exact: bool  # INTERVAL, EXDATE, RDATE fully captured by the date fields
    one_time_per_day: bool  # every selected date has every start time (no BYSETPOS picking times)

    @classmethod
    def of(cls, recurrence: Recurrence) -> _DaySelection:
        parts = recurrence.parts
        freq, interval = parts.freq, parts.interval
        start = recurrence.dtstart.replace(tzinfo=None)
        twin, exact, year_step = _twin(recurrence, parts, start)
        dates = None
        if twin is not None:
            dates = frozenset(moment.date() for moment in twin)
        extra = bool(recurrence.exdates or recurrence.exdate_dates or recurrence.rdates)
        if freq == HOURLY:
            exact = exact and 24 % interval == 0
        one_per_day = not parts.bysetpos
        return cls(dates, year_step, recurrence.dtstart.year, exact and not extra, one_per_day)


def _twin(recurrence: Recurrence, parts: RuleParts, start: datetime) -> tuple[rrule | None, bool, int | None]:
    """(rule over the reference span without INTERVAL/COUNT/UNTIL, INTERVAL captured?, year step)."""
    freq, interval = parts.freq, parts.interval
    twin_start = datetime.combine(_REFERENCE_FIRST, start.time())
    until = datetime.combine(_REFERENCE_LAST, time(23, 59, 59))
    common: dict[str, Any] = {
        "dtstart": twin_start,
        "until": until,
        "wkst": parts.wkst,
        "bysetpos": parts.bysetpos,
        "bymonthday": parts.bymonthday or None,
        "byyearday": parts.byyearday,
        "byweekno": parts.byweekno,
        "byhour": parts.byhour if parts.bysetpos else start.hour,
        "byminute": parts.byminute,
        "bysecond": parts.bysecond,
    }
    weekdays = tuple(weekday(day) for day in parts.weekdays or ()) + tuple(_nweekdays(parts))
    if freq == YEARLY:
        step = interval if interval > 1 else None
        return rrule(YEARLY, bymonth=parts.bymonth, byweekday=weekdays or None, **common), True, step
    if freq == MONTHLY:
        cycle = {(start.month - 1 + i * interval) % 12 + 1 for i in range(12)}
        months = tuple(sorted(cycle & set(parts.bymonth or range(1, 13))))
        step = interval // 12 if interval % 12 == 0 and interval > 12 else None
        exact = 12 % interval == 0 or interval % 12 == 0
        return rrule(MONTHLY, bymonth=months, byweekday=weekdays or None, **common), exact, step
    if freq == WEEKLY and parts.bysetpos:
        return rrule(WEEKLY, bymonth=parts.bymonth, byweekday=weekdays or None, **common), interval == 1, None
    if freq == DAILY and interval % 7 == 0 and not parts.bysetpos:
        weekday_only = set(parts.weekdays or range(7)) & {start.weekday()}
        weekly = rrule(WEEKLY, bymonth=parts.bymonth, byweekday=tuple(weekday_only), **common)
        return weekly, interval == 7, None
    if parts.bysetpos:  # DAILY/HOURLY picking times within a day: every day, not exact
        return None, False, None
    year_filter = yearly_day_filter(parts, twin_start, until)
    return year_filter, interval == 1 or freq == HOURLY, None


def _nweekdays(parts: RuleParts) -> list[weekday]:
    return [weekday(day, n) for day, n in parts.nweekdays or ()]


def _date_fields(days: _DaySelection, shifts: set[int], recurrence: Recurrence) -> tuple[str, bool]:
    """``dom month dow year`` covering every firing date, and whether it matches nothing else."""
    year = _year_field(days, recurrence)
    if days.dates is None:
        return f"* * ? {year}", year != "*" or not days.year_step
    firing_dates = {day + timedelta(days=shift) for day in days.dates for shift in shifts}
    firing_dates.update(
        firing_wall_time(recurrence.window_at(rdate).evaluate_at, recurrence.zone).date()
        for rdate in recurrence.rdates
    )
    if recurrence.rdates or any((d + timedelta(days=s)).year != d.year for d in days.dates for s in shifts):
        year = "*"
    year_exact = year != "*" or not days.year_step
    months = sorted({d.month for d in firing_dates})
    month_field = _join(months, 12)
    wanted = {d for d in firing_dates if _COMPARE_FIRST <= d <= _COMPARE_LAST}
    best: tuple[int, str, bool] | None = None
    for dom, dow, matches in _day_candidates(firing_dates):
        count = sum(1 for d in _compare_span() if d.month in months and matches(d))
        exact = count == len(wanted) and year_exact
        if best is None or count < best[0]:
            best = (count, f"{dom} {month_field} {dow} {year}", exact)
    assert best is not None
    return best[1], best[2]


_Matcher = Callable[[date], bool]

_MAX_LISTED_YEARS = 12


def _year_field(days: _DaySelection, recurrence: Recurrence) -> str:
    """``*``, or the explicit years of a bounded every-n-years rule.

    AWS accepts ``2026/2`` but common validators and evaluators do not, so an interval of years
    is only written out when the rule ends within a few listed years; otherwise ``*`` (a superset).
    """
    last = recurrence.last_window()
    if not days.year_step or last is None:
        return "*"
    years = list(range(days.first_year, last.evaluate_at.year + 1, days.year_step))
    if not years or len(years) > _MAX_LISTED_YEARS or years[-1] > 2199:
        return "*"
    return ",".join(str(year) for year in years)


def _day_candidates(dates: set[date]) -> list[tuple[str, str, _Matcher]]:
    """Cron day fields (dom, dow, predicate), each a superset of ``dates``."""
    doms = {d.day for d in dates}
    dows = {_aws_dow(d) for d in dates}
    candidates: list[tuple[str, str, _Matcher]] = [
        (_join(sorted(doms), 31), "?", lambda d: d.day in doms),
        ("?", _join_dow(sorted(dows)), lambda d: _aws_dow(d) in dows),
    ]
    if all(_is_last_day(d) for d in dates):
        candidates.append(("L", "?", _is_last_day))
    if len(dows) == 1:
        (dow,) = dows
        nths = {(d.day - 1) // 7 + 1 for d in dates}
        if len(nths) == 1:
            (nth,) = nths
            candidates.append(("?", f"{dow}#{nth}", lambda d: _aws_dow(d) == dow and (d.day - 1) // 7 + 1 == nth))
        if all(_is_last_weekday(d) for d in dates):
            candidates.append(("?", f"{dow}L", lambda d: _aws_dow(d) == dow and _is_last_weekday(d)))
    return candidates


@lru_cache(maxsize=1)
def _compare_span_cached() -> tuple[date, ...]:
    count = (_COMPARE_LAST - _COMPARE_FIRST).days + 1
    return tuple(_COMPARE_FIRST + timedelta(days=i) for i in range(count))


def _compare_span() -> tuple[date, ...]:
    return _compare_span_cached()


def _aws_dow(day: date) -> int:
    return day.isoweekday() % 7 + 1  # SUN=1 .. SAT=7


def _is_last_day(day: date) -> bool:
    return (day + timedelta(days=1)).month != day.month


def _is_last_weekday(day: date) -> bool:
    return (day + timedelta(days=7)).month != day.month


# --- rendering -------------------------------------------------------------------------------


def _runs(values: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for value in values:
        if runs and value == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], value)
        else:
            runs.append((value, value))
    return runs


def _join(values: list[int], full: int | None = None, name: Callable[[int], str] = str) -> str:
    """``0,30`` / ``1-5`` / ``MON-FRI`` (each value spelled by ``name``) / ``*`` (when all ``full``
    values are present)."""
    if full is not None and len(values) == full:
        return "*"
    parts = []
    for low, high in _runs(values):
        if high - low >= 2:
            parts.append(f"{name(low)}-{name(high)}")
        else:
            parts.extend(name(v) for v in range(low, high + 1))
    return ",".join(parts)


def _join_dow(values: list[int]) -> str:
    """AWS days of week (1 = SUN) by name: ``MON-FRI``, ``*`` for all seven."""
    return _join(values, 7, lambda day: _AWS_DOW_NAMES[day - 1])


def _ceil_minute(instant: datetime) -> datetime:
    utc = instant.astimezone(UTC)
    floor = utc.replace(second=0, microsecond=0)
    return floor if floor == utc else floor + timedelta(minutes=1)


def _floor_minute(instant: datetime) -> datetime:
    return instant.astimezone(UTC).replace(second=0, microsecond=0)


# --- validation ------------------------------------------------------------------------------

_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_AT = re.compile(r"at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)")
_RATE = re.compile(r"rate\(([1-9]\d*) (minute|minutes|hour|hours|day|days)\)")
_CRON = re.compile(r"cron\(([^()]*)\)")


def validate_aws_cron(expression: str) -> None:
    """Raise :class:`InvalidInput` (field "schedule") unless AWS would accept ``expression``.

    Accepts ``at(yyyy-mm-ddThh:mm:ss)``, ``rate(n unit)`` and ``cron(min hour dom month dow
    year)`` with AWS's rules: day-of-week 1-7 (SUN-SAT), exactly one of day-of-month and
    day-of-week ``?``, ``L``/``W`` only in day-of-month, ``L``/``#`` only in day-of-week and
    alone there (so at most one ``#``), years 1970-2199.
    """
    text = expression.strip() if isinstance(expression, str) else ""
    if match := _AT.fullmatch(text):
        try:
            datetime.fromisoformat(match[1])
        except ValueError:
            _bad(expression, "at() needs a real date and time")
        return
    if _RATE.fullmatch(text):
        singular = text.startswith("rate(1 ")
        if singular != (not text.rstrip(")").endswith("s")):
            _bad(expression, "rate() takes '1 unit' or 'n units'")
        return
    match = _CRON.fullmatch(text)
    if match is None:
        _bad(expression, "expected cron(min hour day-of-month month day-of-week year), at(...) or rate(...)")
    fields = match[1].split(" ")
    if len(fields) != 6:
        _bad(expression, f"cron needs 6 space-separated fields, got {len(fields)}")
    minute, hour, dom, month, dow, year = fields
    if (dom == "?") == (dow == "?"):
        _bad(expression, "exactly one of day-of-month and day-of-week must be '?'")
    _check_common(expression, "minute", minute, 0, 59)
    _check_common(expression, "hour", hour, 0, 23)
    _check_dom(expression, dom)
    _check_common(expression, "month", month, 1, 12, _MONTHS)
    _check_dow(expression, dow)
    _check_common(expression, "year", year, 1970, 2199)


def _bad(expression: str, why: str) -> NoReturn:
    raise InvalidInput("schedule", f"{expression!r} is not a valid EventBridge Scheduler expression: {why}")


def _value(expression: str, name: str, token: str, low: int, high: int, names: tuple[str, ...] = ()) -> int:
    upper = token.upper()
    if upper in names:
        return names.index(upper) + low
    if not token.isdigit() or not low <= int(token) <= high:
        _bad(expression, f"{name} value {token!r} is outside {low}-{high}")
    return int(token)


def _check_common(
    expression: str, name: str, text: str, low: int, high: int, names: tuple[str, ...] = ()
) -> None:
    if text == "*":
        return
    for item in text.split(","):
        base, slash, step = item.partition("/")
        if slash and (not step.isdigit() or int(step) < 1):
            _bad(expression, f"{name} increment in {item!r} must be a positive number")
        if base == "*" and slash:
            continue
        first, dash, second = base.partition("-")
        _value(expression, name, first, low, high, names)
        if dash:
            _value(expression, name, second, low, high, names)


def _check_dom(expression: str, text: str) -> None:
    if text in ("?", "L", "LW"):
        return
    if text.endswith("W"):
        _value(expression, "day-of-month", text[:-1], 1, 31)
        return
    _check_common(expression, "day-of-month", text, 1, 31)


def _check_dow(expression: str, text: str) -> None:
    if text in ("?", "*", "L"):
        return
    if "#" in text:
        day, _, nth = text.partition("#")
        _value(expression, "day-of-week", day, 1, 7, _AWS_DOW_NAMES)
        if "," in text or not nth.isdigit() or not 1 <= int(nth) <= 5:
            _bad(expression, "day-of-week 'd#n' takes one weekday and n in 1-5, alone in the field")
        return
    if text.endswith("L"):
        _value(expression, "day-of-week", text[:-1], 1, 7, _AWS_DOW_NAMES)
        return
    if "/" in text:
        _bad(expression, "day-of-week does not take increments")
    _check_common(expression, "day-of-week", text, 1, 7, _AWS_DOW_NAMES)
