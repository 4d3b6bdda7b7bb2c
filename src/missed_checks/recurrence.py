"""A checklist's recurrence: RFC 5545 text parsed into occurrence windows.

Input is what calendar tools export::

    DTSTART;TZID=Europe/Berlin:20260105T060000
    RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,FR
    EXDATE;TZID=Europe/Berlin:20260406T060000

``DTSTART`` may also be a floating local time (``20260105T060000``), a UTC time (``...Z``) or a
date (``20260105`` or ``;VALUE=DATE``), with the zone then given separately (``timezone``;
a UTC ``DTSTART`` without one is read in UTC). ``EXDATE`` and ``RDATE`` lines may repeat and carry
several comma-separated values; a date-only ``EXDATE`` removes every occurrence starting on
that local date (holidays). The RRULE's semantics are dateutil's; this module only chooses the
zone, resolves local times and derives windows.

Every occurrence becomes an :class:`OccurrenceWindow` ``[start, end)`` with
``end = start + window`` and ``evaluate_at = end + grace`` (RFC 5545 §3.3.6 durations: days
nominal, hours exact). A local start time in a spring-forward gap is read with the offset before
the gap (02:30 becomes 03:30 summer time) and an ambiguous one is the first of the two (§3.3.5).
Occurrences that resolve to the same instant count once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, tzinfo
from functools import cached_property
from itertools import islice
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dateutil.rrule import DAILY, HOURLY, WEEKLY, YEARLY, rrule, rruleset, rrulestr

from missed_checks.durations import Duration, add_duration, parse_duration, resolve_local
from missed_checks.errors import InvalidRecurrence

__all__ = [
    "MAX_COUNT",
    "DueWindows",
    "OccurrenceWindow",
    "Recurrence",
    "parse_recurrence",
]

MAX_COUNT = 100_000
"""Largest accepted ``COUNT``."""

LAST_YEAR = 2199
"""AWS cron's last year: an ``UNTIL`` after it is rejected (leave UNTIL out for open-ended)."""

_FIRST_OCCURRENCE_HORIZON_YEARS = 8
"""A rule whose first occurrence is further than this from DTSTART is rejected as never occurring."""

_GAP_SAMPLE_YEARS = 2
_GAP_SAMPLE_MAX = 10_000  # more than a year of an hourly rule: both DST changes

_SUPPORTED_FREQS = ("YEARLY", "MONTHLY", "WEEKLY", "DAILY", "HOURLY")
_RRULE_KEYS = {
    "FREQ", "INTERVAL", "COUNT", "UNTIL", "WKST", "BYSETPOS", "BYMONTH", "BYMONTHDAY",
    "BYYEARDAY", "BYWEEKNO", "BYDAY", "BYHOUR", "BYMINUTE", "BYSECOND",
}  # fmt: skip
_LINE = re.compile(r"(?P<name>[A-Za-z-]+)(?P<params>(?:;[^:;=]+=(?:\"[^\"]*\"|[^:;\"]*))*):(?P<value>.*)")
_DATE = re.compile(r"(\d{4})(\d{2})(\d{2})")
_DATE_TIME = re.compile(r"(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(Z?)")
_ORDINAL_DAY = re.compile(r"([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)")
_FORMAT_HINT = (
    "expected RFC 5545 lines such as 'DTSTART;TZID=Europe/Berlin:20260105T060000' and "
    "'RRULE:FREQ=WEEKLY;BYDAY=MO,FR', optionally 'EXDATE'/'RDATE' lines"
)


@dataclass(frozen=True)
class OccurrenceWindow:
    """One occurrence: on time in ``[start, end)``, late in ``[end, evaluate_at)``.

    All three are aware datetimes in the checklist's zone; ``evaluate_at = end + grace`` is when
    the window may be judged.
    """

    start: datetime
    end: datetime
    evaluate_at: datetime

    def to_dict(self) -> dict[str, str]:
        """ISO 8601 strings with the UTC offset, e.g. ``2026-03-02T06:00:00+01:00``."""
        return {
            "start": _iso(self.start),
            "end": _iso(self.end),
            "evaluate_at": _iso(self.evaluate_at),
        }

    @classmethod
    def from_dict(cls, data: dict[str, str], zone: tzinfo | None = None) -> OccurrenceWindow:
        """Inverse of :meth:`to_dict`; with ``zone`` the instants are expressed in that zone."""
        values = []
        for key in ("start", "end", "evaluate_at"):
            try:
                value = datetime.fromisoformat(str(data[key]).replace("Z", "+00:00"))
            except (KeyError, ValueError) as error:
                raise InvalidRecurrence("window", f"window {key} is missing or not ISO 8601: {error}") from None
            if value.tzinfo is None:
                raise InvalidRecurrence("window", f"window {key} {data[key]!r} has no UTC offset")
            values.append(value.astimezone(zone) if zone is not None else value)
        return cls(*values)


@dataclass(frozen=True)
class DueWindows:
    """Windows due for evaluation, oldest first; ``more`` when the cap cut some off."""

    windows: list[OccurrenceWindow]
    more: bool


@dataclass(frozen=True)
class Recurrence:
    """A parsed, validated checklist recurrence. Build it with :func:`parse_recurrence`."""

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
    exdates: tuple[datetime, ...] = ()
    exdate_dates: tuple[date, ...] = ()
    rdates: tuple[datetime, ...] = ()
    _set: rruleset = field(default=None, repr=False, compare=False)  # type: ignore[assignment]

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

    def iter_starts(self, after: datetime) -> Iterator[datetime]:
        """Occurrence starts at or after ``after`` (aware), oldest first, in the checklist's zone."""
        for _, start in self._iter_occurrences(after):
            yield start

    def _iter_occurrences(self, after: datetime) -> Iterator[tuple[datetime, datetime]]:
        """(nominal wall time, resolved start) of occurrences starting at or after ``after``."""
        _require_aware(after, "after")
        floor = after.astimezone(UTC)
        # Iterate from a day earlier: dateutil compares wall times, a resolved start can move.
        previous: datetime | None = None
        for nominal in self._set.xafter(after.astimezone(self.zone) - timedelta(days=1), inc=True):
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
        for wall, start in self._iter_occurrences(after):
            yield self._window(wall, start)

    def windows_after(self, instant: datetime, limit: int) -> list[OccurrenceWindow]:
        """The first ``limit`` windows starting at or after ``instant``."""
        return list(islice(self.iter_windows(instant), max(limit, 0)))

    def windows(self, start: datetime, end: datetime) -> list[OccurrenceWindow]:
        """Every window whose start is in ``[start, end)``, oldest first."""
        _require_aware(end, "end")
        stop = end.astimezone(UTC)
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
        mark, now = watermark.astimezone(UTC), instant.astimezone(UTC)
        lookback = self.window.longest_elapsed() + timedelta(minutes=1)
        due: list[OccurrenceWindow] = []
        for window in self.iter_windows(watermark - lookback):
            if window.evaluate_at.astimezone(UTC) > now:
                break
            if window.end.astimezone(UTC) <= mark:
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
        return start in self.exdates or start.date() in self.exdate_dates


def parse_recurrence(
    text: str,
    *,
    timezone: str | None = None,
    window: str | None = None,
    grace: str | None = None,
) -> Recurrence:
    """Parse and validate a checklist's recurrence, raising :class:`InvalidRecurrence`.

    ``timezone`` is the checklist's IANA zone, needed when DTSTART has no TZID (it must agree
    with a TZID). ``window`` defaults to ``P1D``, ``grace`` to ``PT0S``. Rejected, naming the
    field: garbage lines, a missing DTSTART or RRULE, sub-hourly rules, COUNT above
    :data:`MAX_COUNT`, rules that never occur, unknown zones, bad durations, a zero window, and a
    window (or window + grace) longer than the shortest gap between consecutive occurrences, so
    that a performed check can never count for two windows.
    """
    lines = _content_lines(text)
    dtstart_line = _single(lines, "DTSTART", required=True)
    rrule_line = _single(lines, "RRULE", required=True)
    assert dtstart_line is not None and rrule_line is not None
    zone_name, zone, dtstart, date_only = _parse_dtstart(dtstart_line, timezone)
    window_duration = parse_duration(window, "window", allow_zero=False) if window else Duration(days=1)
    grace_duration = parse_duration(grace, "grace") if grace else Duration()
    parts = _parse_rrule_parts(rrule_line[2])
    until = _until(parts.get("UNTIL"), zone)
    rule = _build_rule(parts, dtstart, until)
    exdates, exdate_dates = _parse_exdates(lines, zone)
    rdates = _parse_rdates(lines, zone)
    rule_set = rruleset(cache=True)
    rule_set.rrule(rule)
    for rdate in rdates:
        rule_set.rdate(rdate)
    recurrence = Recurrence(
        text=text.strip(),
        timezone=zone_name,
        zone=zone,
        dtstart=dtstart,
        window=window_duration,
        grace=grace_duration,
        date_only=date_only,
        until=until,
        count=int(parts["COUNT"]) if "COUNT" in parts else None,
        rule=rule,
        exdates=exdates,
        exdate_dates=exdate_dates,
        rdates=tuple(resolve_local(r.replace(tzinfo=None), zone) for r in rdates),
        _set=rule_set,
    )
    _check_occurs(recurrence)
    _check_windows_fit(recurrence)
    return recurrence


# --- parsing helpers -------------------------------------------------------------------------

_Line = tuple[str, dict[str, str], str]


def _content_lines(text: str) -> list[_Line]:
    if not isinstance(text, str) or not text.strip():
        raise InvalidRecurrence("recurrence", f"is empty; {_FORMAT_HINT}")
    unfolded = re.sub(r"\r?\n[ \t]", "", text.replace("\r\n", "\n"))
    lines: list[_Line] = []
    for raw in unfolded.split("\n"):
        line = raw.strip()
        if not line:
            continue
        match = _LINE.fullmatch(line)
        if match is None:
            raise InvalidRecurrence("recurrence", f"cannot read line {line!r}; {_FORMAT_HINT}")
        name = match["name"].upper()
        if name not in ("DTSTART", "RRULE", "EXDATE", "RDATE"):
            raise InvalidRecurrence(
                "recurrence", f"unsupported line {name!r}; accepted lines are DTSTART, RRULE, EXDATE, RDATE"
            )
        params = {}
        for param in filter(None, match["params"].split(";")):
            key, _, value = param.partition("=")
            params[key.strip().upper()] = value.strip().strip('"')
        lines.append((name, params, match["value"].strip()))
    return lines


def _single(lines: list[_Line], name: str, *, required: bool) -> _Line | None:
    found = [line for line in lines if line[0] == name]
    if len(found) > 1:
        raise InvalidRecurrence("recurrence", f"has {len(found)} {name} lines; give exactly one")
    if not found and required:
        example = "DTSTART;TZID=Europe/Berlin:20260105T060000" if name == "DTSTART" else "RRULE:FREQ=DAILY"
        raise InvalidRecurrence("recurrence", f"has no {name} line; add one such as {example!r}")
    return found[0] if found else None


def _load_zone(name: str, field_name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, TypeError, OSError):
        raise InvalidRecurrence(
            field_name, f"unknown time zone {name!r}; give an IANA zone such as Europe/Berlin or UTC"
        ) from None


def _parse_dtstart(line: _Line, timezone: str | None) -> tuple[str, ZoneInfo, datetime, bool]:
    _, params, value = line
    tzid = params.get("TZID")
    given = timezone.strip() if timezone and timezone.strip() else None
    if given is not None:
        _load_zone(given, "timezone")
    if tzid and given and tzid != given:
        raise InvalidRecurrence(
            "timezone", f"{given!r} conflicts with DTSTART's TZID={tzid}; leave it empty or make them equal"
        )
    parsed, is_date, is_utc = _parse_value(value, "DTSTART", params)
    if tzid and is_utc:
        raise InvalidRecurrence("recurrence", "DTSTART has both a TZID and a UTC 'Z' time; give one")
    zone_name = tzid or given or ("UTC" if is_utc else None)
    if zone_name is None:
        raise InvalidRecurrence(
            "timezone", "is required: DTSTART has no TZID; give an IANA zone such as Europe/Berlin"
        )
    zone = _load_zone(zone_name, "recurrence" if tzid else "timezone")
    if is_utc:
        start = parsed.replace(tzinfo=UTC).astimezone(zone)
    else:
        start = resolve_local(parsed, zone)
    return zone_name, zone, start, is_date


def _parse_value(value: str, name: str, params: dict[str, str]) -> tuple[datetime, bool, bool]:
    """A DATE or DATE-TIME value as a naive datetime, whether it was a date, whether UTC."""
    text = value.strip().upper()
    if params.get("VALUE", "").upper() == "PERIOD" or "/" in text:
        raise InvalidRecurrence("recurrence", f"{name} periods are not supported; give dates or date-times")
    try:
        if match := _DATE_TIME.fullmatch(text):
            numbers = [int(g) for g in match.groups()[:6]]
            return datetime(*numbers), False, bool(match[7])  # type: ignore[misc]
        if match := _DATE.fullmatch(text):
            return datetime(int(match[1]), int(match[2]), int(match[3])), True, False
    except ValueError as error:
        raise InvalidRecurrence("recurrence", f"{name} value {value!r} is not a real date: {error}") from None
    raise InvalidRecurrence(
        "recurrence", f"{name} value {value!r} is not YYYYMMDD, YYYYMMDDTHHMMSS or YYYYMMDDTHHMMSSZ"
    )


def _parse_rrule_parts(value: str) -> dict[str, str]:
    parts: dict[str, str] = {}
    for item in filter(None, value.strip().upper().split(";")):
        key, sep, part = item.partition("=")
        if not sep or not part:
            raise InvalidRecurrence("recurrence", f"RRULE part {item!r} is not NAME=VALUE")
        if key not in _RRULE_KEYS:
            raise InvalidRecurrence("recurrence", f"RRULE part {key!r} is not supported")
        if key in parts:
            raise InvalidRecurrence("recurrence", f"RRULE has {key} twice")
        parts[key] = part
    _check_frequency(parts)
    _check_numbers(parts)
    return parts


def _check_frequency(parts: dict[str, str]) -> None:
    freq = parts.get("FREQ")
    if freq is None:
        raise InvalidRecurrence("recurrence", "RRULE has no FREQ; use FREQ=DAILY, WEEKLY, MONTHLY or YEARLY")
    if freq in ("MINUTELY", "SECONDLY"):
        raise InvalidRecurrence(
            "recurrence", f"FREQ={freq} is sub-hourly; the most frequent rule accepted is FREQ=HOURLY"
        )
    if freq not in _SUPPORTED_FREQS:
        raise InvalidRecurrence("recurrence", f"FREQ={freq} is not one of {', '.join(_SUPPORTED_FREQS)}")
    for key in ("BYMINUTE", "BYSECOND"):
        if len(parts.get(key, "").split(",")) > 1:
            raise InvalidRecurrence(
                "recurrence", f"{key} with several values makes the rule sub-hourly; give a single value"
            )
    if "COUNT" in parts and "UNTIL" in parts:
        raise InvalidRecurrence("recurrence", "RRULE has both COUNT and UNTIL; RFC 5545 allows one of them")


_RANGES = {
    "INTERVAL": (1, 10_000, False),
    "COUNT": (1, MAX_COUNT, False),
    "BYMONTH": (1, 12, False),
    "BYMONTHDAY": (1, 31, True),
    "BYYEARDAY": (1, 366, True),
    "BYWEEKNO": (1, 53, True),
    "BYSETPOS": (1, 366, True),
    "BYHOUR": (0, 23, False),
    "BYMINUTE": (0, 59, False),
    "BYSECOND": (0, 59, False),
}


def _check_numbers(parts: dict[str, str]) -> None:
    for key, (low, high, signed) in _RANGES.items():
        if key not in parts:
            continue
        for item in parts[key].split(","):
            try:
                number = int(item)
            except ValueError:
                raise InvalidRecurrence("recurrence", f"{key}={parts[key]} is not a list of integers") from None
            magnitude = abs(number) if signed else number
            if not low <= magnitude <= high or (not signed and item.startswith(("-", "+"))):
                span = f"{low}..{high}" + (f" or -{high}..-{low}" if signed else "")
                raise InvalidRecurrence("recurrence", f"{key}={item} is out of range; accepted: {span}")
    for item in parts.get("BYDAY", "").split(",") if "BYDAY" in parts else ():
        match = _ORDINAL_DAY.fullmatch(item)
        if match is None or (match[1] is not None and not 1 <= abs(int(match[1])) <= 53):
            raise InvalidRecurrence(
                "recurrence", f"BYDAY value {item!r} is not a weekday such as MO, 1MO or -1FR"
            )


def _until(value: str | None, zone: ZoneInfo) -> datetime | None:
    """UNTIL as an aware instant; floating times are local, a date means the end of that day."""
    if value is None:
        return None
    parsed, is_date, is_utc = _parse_value(value, "UNTIL", {})
    if is_utc:
        until = parsed.replace(tzinfo=UTC).astimezone(zone)
    elif is_date:
        until = resolve_local(parsed + timedelta(days=1), zone) - timedelta(seconds=1)
    else:
        until = resolve_local(parsed, zone)
    if until.year > LAST_YEAR:
        raise InvalidRecurrence(
            "recurrence", f"UNTIL is after {LAST_YEAR}, beyond what schedules can express; leave UNTIL out"
        )
    return until


def _build_rule(parts: dict[str, str], dtstart: datetime, until: datetime | None) -> rrule:
    rendered = ";".join(
        f"{key}={until.astimezone(UTC).strftime('%Y%m%dT%H%M%SZ')}" if key == "UNTIL" and until else f"{key}={val}"
        for key, val in parts.items()
    )
    try:
        rule = rrulestr(f"RRULE:{rendered}", dtstart=dtstart, cache=True)
    except (ValueError, TypeError) as error:
        raise InvalidRecurrence("recurrence", f"RRULE is not valid: {error}") from None
    assert isinstance(rule, rrule)
    return rule


def _values(lines: list[_Line], name: str, zone: ZoneInfo) -> Iterator[tuple[datetime, bool]]:
    """Each value of every ``name`` line as (aware local datetime, is_date)."""
    for _, params, value in (line for line in lines if line[0] == name):
        tzid = params.get("TZID")
        line_zone = _load_zone(tzid, "recurrence") if tzid else zone
        for item in filter(None, value.split(",")):
            parsed, is_date, is_utc = _parse_value(item, name, params)
            if is_utc:
                yield parsed.replace(tzinfo=UTC).astimezone(zone), False
            else:
                yield resolve_local(parsed, line_zone).astimezone(zone), is_date


def _parse_exdates(lines: list[_Line], zone: ZoneInfo) -> tuple[tuple[datetime, ...], tuple[date, ...]]:
    instants, dates = [], []
    for value, is_date in _values(lines, "EXDATE", zone):
        if is_date:
            dates.append(value.date())
        else:
            instants.append(value)
    return tuple(instants), tuple(dates)


def _parse_rdates(lines: list[_Line], zone: ZoneInfo) -> list[datetime]:
    """RDATEs as wall-clock datetimes in ``zone`` (dateutil merges them by wall time)."""
    return [value for value, _ in _values(lines, "RDATE", zone)]


# --- validation ------------------------------------------------------------------------------


def _check_occurs(recurrence: Recurrence) -> None:
    if not recurrence.rdates and _calendar_never_matches(recurrence):
        _never()
    horizon = (recurrence.dtstart + timedelta(days=366 * _FIRST_OCCURRENCE_HORIZON_YEARS)).astimezone(UTC)
    if recurrence.until is not None:
        horizon = min(horizon, recurrence.until.astimezone(UTC))
    bounded = recurrence.rule.replace(until=horizon, count=None)
    probe = rruleset()
    probe.rrule(bounded)
    for rdate in recurrence.rdates:
        probe.rdate(rdate)
    if recurrence.count is not None:
        probe = recurrence._set  # noqa: SLF001 - COUNT bounds it already
    for nominal in probe:
        start = resolve_local(nominal.replace(tzinfo=None), recurrence.zone)
        if not recurrence._excluded(start):  # noqa: SLF001
            return
    _never()


def _calendar_never_matches(recurrence: Recurrence) -> bool:
    """Cheap pre-check: do the day filters of a DAILY/WEEKLY/HOURLY rule match no date at all?

    dateutil walks day by day up to year 9999 when a DAILY rule's filters never match (seconds
    of CPU), so these filters are first tried as a YEARLY rule, which is the same set of dates
    (a superset of the rule's, with INTERVAL ignored) and is walked a year at a time.
    """
    probe = yearly_day_filter(recurrence.rule, recurrence.dtstart.replace(tzinfo=None))
    if probe is None:
        return False
    return probe.after(recurrence.dtstart.replace(tzinfo=None), inc=True) is None


def yearly_day_filter(rule: rrule, dtstart: datetime, until: datetime | None = None) -> rrule | None:
    """A YEARLY rule (naive, interval 1) matching the dates a DAILY/WEEKLY/HOURLY ``rule``'s
    day filters (BYMONTH, BYMONTHDAY, BYDAY, BYYEARDAY, BYWEEKNO) allow, with ``dtstart``'s time.

    None when ``rule`` has another frequency, uses BYSETPOS (which selects per period), or has no
    day filter (every date matches).
    """
    parts = rule_parts(rule)
    if parts["freq"] not in (DAILY, WEEKLY, HOURLY) or parts["bysetpos"]:
        return None
    days = {
        "bymonthday": parts["bymonthday"] or None,
        "byweekday": parts["weekdays"] or None,
        "byyearday": parts["byyearday"] or None,
        "byweekno": parts["byweekno"] or None,
    }
    if all(value is None for value in days.values()):
        if parts["bymonth"] is None:
            return None
        days["bymonthday"] = tuple(range(1, 32))
    return rrule(YEARLY, dtstart=dtstart, until=until, bymonth=parts["bymonth"], wkst=parts["wkst"], **days)


def _never() -> None:
    raise InvalidRecurrence(
        "recurrence",
        f"the rule never occurs (not within {_FIRST_OCCURRENCE_HORIZON_YEARS} years of DTSTART); "
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
    for wall, start in islice(recurrence._iter_occurrences(first), _GAP_SAMPLE_MAX):  # noqa: SLF001
        utc_start = start.astimezone(UTC)
        if previous is not None:
            if utc_start > horizon:
                break
            if utc_start - previous[1].astimezone(UTC) < safe_gap:
                earlier = recurrence._window(*previous)  # noqa: SLF001
                _check_pair(recurrence, earlier, recurrence._window(wall, start))  # noqa: SLF001
        previous = (wall, start)


def _check_pair(recurrence: Recurrence, earlier: OccurrenceWindow, later: OccurrenceWindow) -> None:
    gap = later.start.astimezone(UTC) - earlier.start.astimezone(UTC)
    where = f"{_iso(earlier.start)} and {_iso(later.start)} are {_human(gap)} apart"
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


def _advance(wall: datetime, instant: datetime, duration: Duration, zone: ZoneInfo) -> tuple[datetime, datetime]:
    """(wall, instant) plus ``duration``: days on the wall clock, then exact time (§3.3.6)."""
    if duration.days:
        wall = wall + timedelta(days=duration.days)
        instant = resolve_local(wall, zone)
    if duration.seconds:
        instant = add_duration(instant, Duration(seconds=duration.seconds), zone)
        wall = instant.replace(tzinfo=None, fold=0)
    return wall, instant


def _human(gap: timedelta) -> str:
    hours, rest = divmod(int(gap.total_seconds()), 3600)
    return f"{hours}h{rest // 60:02d}m" if rest else f"{hours}h"


def _require_aware(value: datetime, name: str) -> None:
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidRecurrence("recurrence", f"{name} must be a timezone-aware datetime, got {value!r}")


def _iso(value: datetime) -> str:
    return value.isoformat(timespec="seconds")


def rule_parts(rule: rrule) -> dict[str, Any]:
    """dateutil's normalized BYxxx parts of ``rule`` (defaults from DTSTART filled in).

    dateutil keeps these only as attributes; reading them here keeps the schedule converter from
    re-implementing RFC 5545's defaults. ``weekdays`` are 0=Monday..6=Sunday; ``nweekdays`` are
    ``(weekday, n)`` ordinals (only for MONTHLY/YEARLY).
    """
    return {
        "freq": rule._freq,  # noqa: SLF001
        "interval": rule._interval,  # noqa: SLF001
        "wkst": rule._wkst,  # noqa: SLF001
        "bysetpos": rule._bysetpos,  # noqa: SLF001
        "bymonth": rule._bymonth,  # noqa: SLF001
        "bymonthday": rule._bymonthday + rule._bynmonthday,  # noqa: SLF001
        "byyearday": rule._byyearday,  # noqa: SLF001
        "byweekno": rule._byweekno,  # noqa: SLF001
        "byeaster": rule._byeaster,  # noqa: SLF001
        "weekdays": rule._byweekday,  # noqa: SLF001
        "nweekdays": rule._bynweekday,  # noqa: SLF001
        "byhour": rule._byhour,  # noqa: SLF001
        "byminute": rule._byminute,  # noqa: SLF001
        "bysecond": rule._bysecond,  # noqa: SLF001
        "hourly": rule._freq == HOURLY,  # noqa: SLF001
    }
