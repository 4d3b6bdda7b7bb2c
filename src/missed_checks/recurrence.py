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

Bounds (anything outside raises :class:`InvalidRecurrence`, never another exception): the text
is at most :data:`MAX_TEXT_CHARS` characters; DTSTART, UNTIL, EXDATE and RDATE lie in the years
:data:`FIRST_YEAR` to :data:`LAST_YEAR` (AWS cron's years: no schedule can fire outside them);
occurrences after :data:`LAST_YEAR` are not produced (a COUNT that reaches further ends there);
each BYxxx list has at most as many values as it has distinct ones (24 for BYHOUR); window and
grace are at most ``P366D`` (``missed_checks.durations``); the time zone is a string naming an
IANA zone.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta, tzinfo
from functools import cached_property
from itertools import islice
from math import gcd
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dateutil.rrule import DAILY, HOURLY, MONTHLY, WEEKLY, YEARLY, rrule, rruleset, rrulestr

from missed_checks.durations import Duration, add_duration, parse_duration, resolve_local
from missed_checks.errors import InvalidRecurrence, describe, shorten
from missed_checks.timefmt import FIRST_YEAR

__all__ = [
    "FIRST_YEAR",
    "LAST_YEAR",
    "MAX_COUNT",
    "MAX_TEXT_CHARS",
    "DueWindows",
    "OccurrenceWindow",
    "Recurrence",
    "RuleParts",
    "parse_recurrence",
    "yearly_day_filter",
]

MAX_COUNT = 100_000
"""Largest accepted ``COUNT``."""

LAST_YEAR = 2199
"""AWS cron's last year: DTSTART, UNTIL, EXDATE and RDATE after it are rejected (leave UNTIL out
for open-ended), no occurrence after it is produced, and a rule with no occurrence up to its end
is rejected as never occurring."""

MAX_TEXT_CHARS = 4096
"""Longest recurrence text accepted (about 400 EXDATE dates: enough holidays for a decade)."""

_MAX_ZONE_CHARS = 64  # the longest IANA name is 32

# Iteration never starts earlier than this (no occurrence can: DTSTART is local 1970 or later).
_EARLIEST = datetime(FIRST_YEAR - 1, 12, 30, tzinfo=UTC)
# ... and every window has been judged by this: the last start (end of 2199) plus a P366D window
# and a P366D grace is early January 2202.
_LATEST = datetime(LAST_YEAR + 4, 1, 1, tzinfo=UTC)

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
# How many distinct values each BYxxx list can have: a longer list is refused.
_LIST_SIZES = {
    "BYMONTH": 12, "BYMONTHDAY": 62, "BYYEARDAY": 732, "BYWEEKNO": 106, "BYSETPOS": 732, "BYHOUR": 24,
    "BYDAY": 7 + 7 * 106,
}  # fmt: skip
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
            except (KeyError, ValueError, TypeError) as error:
                raise InvalidRecurrence("window", f"window {key} is missing or not ISO 8601: {error}") from None
            if value.tzinfo is None:
                raise InvalidRecurrence("window", f"window {key} {shorten(data[key])} has no UTC offset")
            if not _EARLIEST <= value <= _LATEST:
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
class RuleParts:
    """The RRULE's parts as the rule applies them, RFC 5545's defaults from DTSTART filled in.

    The same normalisation dateutil applies when it builds the rule (so that code reasoning about
    the rule, such as the schedule converter, need not re-implement the defaults): lists sorted and
    unique; a YEARLY rule without a day filter gets DTSTART's month and day, a MONTHLY one DTSTART's
    day, a WEEKLY one DTSTART's weekday; BYHOUR (except for HOURLY), BYMINUTE and BYSECOND default
    to DTSTART's; an HOURLY rule's BYHOUR keeps only hours its INTERVAL can reach. ``freq`` is one
    of dateutil's ``YEARLY`` .. ``HOURLY``; weekdays are 0=Monday..6=Sunday.
    """

    freq: int
    interval: int
    wkst: int
    bysetpos: tuple[int, ...] | None
    bymonth: tuple[int, ...] | None
    bymonthday: tuple[int, ...]  # positive days first, then negative ones; () when none
    byyearday: tuple[int, ...] | None
    byweekno: tuple[int, ...] | None
    weekdays: tuple[int, ...] | None  # plain weekdays (and, above MONTHLY, ordinals' weekdays)
    nweekdays: tuple[tuple[int, int], ...] | None  # (weekday, n) ordinals, MONTHLY and YEARLY only
    byhour: tuple[int, ...] | None  # None: every hour (HOURLY without BYHOUR)
    byminute: tuple[int, ...]
    bysecond: tuple[int, ...]


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
    parts: RuleParts = field(repr=False, compare=False)
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
        if after > _LATEST:
            return
        floor = max(after, _EARLIEST).astimezone(UTC)
        # Iterate from a day earlier: dateutil compares wall times, a resolved start can move.
        previous: datetime | None = None
        for nominal in self._set.xafter(floor.astimezone(self.zone) - timedelta(days=1), inc=True):
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
        for wall, start in self._iter_occurrences(after):
            yield self._window(wall, start)

    def windows_after(self, instant: datetime, limit: int) -> list[OccurrenceWindow]:
        """The first ``limit`` windows starting at or after ``instant``."""
        return list(islice(self.iter_windows(instant), max(limit, 0)))

    def windows(self, start: datetime, end: datetime) -> list[OccurrenceWindow]:
        """Every window whose start is in ``[start, end)``, oldest first."""
        _require_aware(end, "end")
        stop = min(end, _LATEST).astimezone(UTC)
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
        mark = min(max(watermark, _EARLIEST), _LATEST).astimezone(UTC)
        now = min(max(instant, _EARLIEST), _LATEST).astimezone(UTC)
        lookback = self.window.longest_elapsed() + timedelta(minutes=1)
        due: list[OccurrenceWindow] = []
        for window in self.iter_windows(mark - lookback):
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
    text: object,
    *,
    timezone: object = None,
    window: object = None,
    grace: object = None,
) -> Recurrence:
    """Parse and validate a checklist's recurrence, raising :class:`InvalidRecurrence`.

    ``timezone`` is the checklist's IANA zone, needed when DTSTART has no TZID (it must agree
    with a TZID). ``window`` defaults to ``P1D``, ``grace`` to ``PT0S`` (only when not given:
    an empty string is refused). Rejected, naming the field: garbage lines, a missing DTSTART or
    RRULE, sub-hourly rules, COUNT above :data:`MAX_COUNT`, dates outside
    :data:`FIRST_YEAR`..:data:`LAST_YEAR`, oversized text or BYxxx lists, rules that never occur,
    unknown zones, bad or overlong durations, a zero window, values that are not strings, and a
    window (or window + grace) longer than the shortest gap between consecutive occurrences, so
    that a performed check can never count for two windows. Whatever the arguments, the only
    exception raised is :class:`InvalidRecurrence`.
    """
    lines = _content_lines(text)
    dtstart_line = _single(lines, "DTSTART", required=True)
    rrule_line = _single(lines, "RRULE", required=True)
    assert dtstart_line is not None and rrule_line is not None
    zone_name, zone, dtstart, date_only = _parse_dtstart(dtstart_line, _zone_name(timezone))
    window_duration = Duration(days=1) if window is None else parse_duration(window, "window", allow_zero=False)
    grace_duration = Duration() if grace is None else parse_duration(grace, "grace")
    parts = _parse_rrule_parts(rrule_line[2])
    until = _until(parts.get("UNTIL"), zone)
    rule = _build_rule(parts, dtstart, until)
    exdates, exdate_dates = _parse_exdates(lines, zone)
    rdates = _parse_rdates(lines, zone)
    rule_set = rruleset(cache=True)
    # Without COUNT or UNTIL the rule ends with LAST_YEAR: dateutil would otherwise walk to 9999.
    rule_set.rrule(rule if until is not None or "COUNT" in parts else rule.replace(until=_range_end(zone)))
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
        parts=_rule_parts(parts, dtstart),
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


def _content_lines(text: object) -> list[_Line]:
    if not isinstance(text, str):
        raise InvalidRecurrence("recurrence", f"is {describe(text)}, not RFC 5545 text; {_FORMAT_HINT}")
    if not text.strip():
        raise InvalidRecurrence("recurrence", f"is empty; {_FORMAT_HINT}")
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidRecurrence(
            "recurrence", f"is {len(text)} characters long; at most {MAX_TEXT_CHARS} are accepted"
        )
    unfolded = re.sub(r"\r?\n[ \t]", "", text.replace("\r\n", "\n"))
    lines: list[_Line] = []
    for raw in unfolded.split("\n"):
        line = raw.strip()
        if not line:
            continue
        match = _LINE.fullmatch(line)
        if match is None:
            raise InvalidRecurrence("recurrence", f"cannot read line {shorten(line)}; {_FORMAT_HINT}")
        name = match["name"].upper()
        if name not in ("DTSTART", "RRULE", "EXDATE", "RDATE"):
            raise InvalidRecurrence(
                "recurrence", f"unsupported line {shorten(name)}; accepted lines are DTSTART, RRULE, EXDATE, RDATE"
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


def _zone_name(timezone: object) -> str | None:
    """The checklist's ``timezone``: None when not given; anything but a zone name is refused."""
    if timezone is None:
        return None
    if not isinstance(timezone, str):
        raise InvalidRecurrence(
            "timezone", f"is {describe(timezone)}, not an IANA zone name such as Europe/Berlin"
        )
    if not timezone.strip():
        raise InvalidRecurrence(
            "timezone", "is empty; give an IANA zone such as Europe/Berlin, or leave it out when DTSTART has a TZID"
        )
    return timezone.strip()


def _load_zone(name: str, field_name: str) -> ZoneInfo:
    try:
        if len(name) > _MAX_ZONE_CHARS:
            raise ValueError(name)
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, TypeError, OSError):
        raise InvalidRecurrence(
            field_name, f"unknown time zone {shorten(name)}; give an IANA zone such as Europe/Berlin or UTC"
        ) from None


def _range_end(zone: ZoneInfo) -> datetime:
    """The last instant an occurrence may start: the end of :data:`LAST_YEAR` on the local clock."""
    return datetime(LAST_YEAR, 12, 31, 23, 59, 59, tzinfo=zone)


def _check_year(value: datetime, name: str, raw: str) -> None:
    if value.year > LAST_YEAR and name == "UNTIL":
        raise InvalidRecurrence(
            "recurrence", f"UNTIL is after {LAST_YEAR}, beyond what schedules can express; leave UNTIL out"
        )
    if not FIRST_YEAR <= value.year <= LAST_YEAR:
        raise InvalidRecurrence(
            "recurrence",
            f"{name} {shorten(raw)} is outside the years {FIRST_YEAR} to {LAST_YEAR} (what EventBridge Scheduler's "
            "cron can fire in)",
        )


def _parse_dtstart(line: _Line, given: str | None) -> tuple[str, ZoneInfo, datetime, bool]:
    _, params, value = line
    tzid = params.get("TZID")
    if given is not None:
        _load_zone(given, "timezone")
    if tzid and given and tzid != given:
        raise InvalidRecurrence(
            "timezone", f"{given!r} conflicts with DTSTART's TZID={shorten(tzid)}; leave it empty or make them equal"
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
    _check_year(start, "DTSTART", value)
    return zone_name, zone, start, is_date


def _parse_value(value: str, name: str, params: dict[str, str]) -> tuple[datetime, bool, bool]:
    """A DATE or DATE-TIME value as a naive datetime, whether it was a date, whether UTC."""
    text = value.strip().upper()
    if params.get("VALUE", "").upper() == "PERIOD" or "/" in text:
        raise InvalidRecurrence("recurrence", f"{name} periods are not supported; give dates or date-times")
    date_time, date_only = _DATE_TIME.fullmatch(text), _DATE.fullmatch(text)
    if date_time is None and date_only is None:
        raise InvalidRecurrence(
            "recurrence", f"{name} value {shorten(value)} is not YYYYMMDD, YYYYMMDDTHHMMSS or YYYYMMDDTHHMMSSZ"
        )
    try:
        if date_time is not None:
            parsed = datetime(*(int(g) for g in date_time.groups()[:6]))  # type: ignore[misc]
        else:
            assert date_only is not None
            parsed = datetime(int(date_only[1]), int(date_only[2]), int(date_only[3]))
    except ValueError as error:
        raise InvalidRecurrence("recurrence", f"{name} value {shorten(value)} is not a real date: {error}") from None
    _check_year(parsed, name, value)
    return parsed, date_time is None, date_time is not None and bool(date_time[7])


def _parse_rrule_parts(value: str) -> dict[str, str]:
    parts: dict[str, str] = {}
    for item in filter(None, value.strip().upper().split(";")):
        key, sep, part = item.partition("=")
        if not sep or not part:
            raise InvalidRecurrence("recurrence", f"RRULE part {shorten(item)} is not NAME=VALUE")
        if key not in _RRULE_KEYS:
            raise InvalidRecurrence("recurrence", f"RRULE part {shorten(key)} is not supported")
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
        raise InvalidRecurrence("recurrence", f"FREQ={shorten(freq)} is not one of {', '.join(_SUPPORTED_FREQS)}")
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
    for key, size in _LIST_SIZES.items():
        count = parts[key].count(",") + 1 if key in parts else 0
        if count > size:
            raise InvalidRecurrence(
                "recurrence", f"{key} has {count} values; it has only {size} distinct ones, give each once"
            )
    for key, (low, high, signed) in _RANGES.items():
        if key not in parts:
            continue
        for item in parts[key].split(","):
            try:
                number = int(item)
            except ValueError:
                raise InvalidRecurrence("recurrence", f"{key}={_cut(parts[key])} is not a list of integers") from None
            magnitude = abs(number) if signed else number
            if not low <= magnitude <= high or (not signed and item.startswith(("-", "+"))):
                span = f"{low}..{high}" + (f" or -{high}..-{low}" if signed else "")
                raise InvalidRecurrence("recurrence", f"{key}={_cut(item)} is out of range; accepted: {span}")
    # An ordinal counts within the month for MONTHLY (and YEARLY with BYMONTH): a month has at most
    # 5 of each weekday, and dateutil fails (IndexError) on the months where a larger one overruns.
    in_month = parts.get("FREQ") == "MONTHLY" or (parts.get("FREQ") == "YEARLY" and "BYMONTH" in parts)
    largest = 5 if in_month else 53
    for item in parts.get("BYDAY", "").split(",") if "BYDAY" in parts else ():
        match = _ORDINAL_DAY.fullmatch(item)
        if match is None or (match[1] is not None and not 1 <= abs(int(match[1])) <= largest):
            raise InvalidRecurrence(
                "recurrence",
                f"BYDAY value {shorten(item)} is not a weekday such as MO, 1MO or -1FR"
                + (" (a month has at most 5 of each weekday)" if match is not None and in_month else ""),
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
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as error:
        # dateutil's own verdict on what passed the checks above (e.g. WKST=XX, an empty BYxxx set)
        raise InvalidRecurrence("recurrence", f"RRULE is not valid: {_cut(str(error), 120)}") from None
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
                instant, is_date = parsed.replace(tzinfo=UTC).astimezone(zone), False
            else:
                instant = resolve_local(parsed, line_zone).astimezone(zone)
            _check_year(instant, name, item)
            yield instant, is_date


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
    """Reject a rule without an occurrence up to the end of :data:`LAST_YEAR`.

    The RRULE itself must occur (RDATEs add occurrences to a rule, they do not replace one), and
    so must the whole set once EXDATEs are taken out. Rare rules are fine (29 February on a
    Monday first occurs in 2044); impossible ones are recognised without walking the calendar
    where that is cheap to know (day filters that match no date, a BYSETPOS beyond what a period
    can hold), and any other search ends with :data:`LAST_YEAR` (a second or two at worst).
    """
    if _structurally_never(recurrence):
        _never()
    end = _range_end(recurrence.zone)
    horizon = min(end, recurrence.until) if recurrence.until is not None else end
    probe = recurrence.rule.replace(until=horizon.astimezone(UTC), count=None)
    if probe.after(recurrence.dtstart - timedelta(days=1), inc=True) is None:
        _never()
    if next(recurrence._iter_occurrences(recurrence.dtstart - timedelta(days=1)), None) is None:  # noqa: SLF001
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
    probe = yearly_day_filter(replace(parts, bysetpos=None), start, _range_end(recurrence.zone).replace(tzinfo=None))
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


def yearly_day_filter(parts: RuleParts, dtstart: datetime, until: datetime | None = None) -> rrule | None:
    """A YEARLY rule (naive, interval 1) matching the dates a DAILY/WEEKLY/HOURLY rule's
    day filters (BYMONTH, BYMONTHDAY, BYDAY, BYYEARDAY, BYWEEKNO) allow, with ``dtstart``'s time.

    None when the rule (its ``parts``) has another frequency, uses BYSETPOS (which selects per period), or has no
    day filter (every date matches).
    """
    if parts.freq not in (DAILY, WEEKLY, HOURLY) or parts.bysetpos:
        return None
    days = {
        "bymonthday": parts.bymonthday or None,
        "byweekday": parts.weekdays or None,
        "byyearday": parts.byyearday or None,
        "byweekno": parts.byweekno or None,
    }
    if all(value is None for value in days.values()):
        if parts.bymonth is None:
            return None
        days["bymonthday"] = tuple(range(1, 32))
    return rrule(YEARLY, dtstart=dtstart, until=until, bymonth=parts.bymonth, wkst=parts.wkst, **days)


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


def _cut(text: str, limit: int = 40) -> str:
    """``text`` for an error message: at most ``limit`` characters, control characters escaped."""
    if not text.isprintable():
        return shorten(text, limit)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _human(gap: timedelta) -> str:
    hours, rest = divmod(int(gap.total_seconds()), 3600)
    return f"{hours}h{rest // 60:02d}m" if rest else f"{hours}h"


def _require_aware(value: datetime, name: str) -> None:
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidRecurrence("recurrence", f"{name} must be a timezone-aware datetime, got {value!r}")


def _iso(value: datetime) -> str:
    return value.isoformat(timespec="seconds")


_FREQUENCIES = {"YEARLY": YEARLY, "MONTHLY": MONTHLY, "WEEKLY": WEEKLY, "DAILY": DAILY, "HOURLY": HOURLY}
_WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")


def _rule_parts(parts: dict[str, str], dtstart: datetime) -> RuleParts:
    """The :class:`RuleParts` of the RRULE ``parts`` (already checked) starting at ``dtstart``."""
    freq = _FREQUENCIES[parts["FREQ"]]
    interval = int(parts.get("INTERVAL", "1"))

    def numbers(key: str) -> tuple[int, ...] | None:
        return tuple(sorted({int(item) for item in parts[key].split(",")})) if key in parts else None

    bymonth, monthdays = numbers("BYMONTH"), numbers("BYMONTHDAY")
    plain: set[int] = set()
    ordinals: set[tuple[int, int]] = set()
    for item in parts["BYDAY"].split(",") if "BYDAY" in parts else ():
        match = _ORDINAL_DAY.fullmatch(item)
        assert match is not None  # _check_numbers refused anything else
        day, n = _WEEKDAYS.index(match[2]), int(match[1]) if match[1] else 0
        if not n or freq > MONTHLY:
            plain.add(day)
        else:
            ordinals.add((day, n))
    if not {"BYWEEKNO", "BYYEARDAY", "BYMONTHDAY", "BYDAY"} & parts.keys():
        if freq == YEARLY:
            bymonth = bymonth or (dtstart.month,)
            monthdays = (dtstart.day,)
        elif freq == MONTHLY:
            monthdays = (dtstart.day,)
        elif freq == WEEKLY:
            plain = {dtstart.weekday()}
    byhour = numbers("BYHOUR")
    if byhour is None and freq != HOURLY:
        byhour = (dtstart.hour,)
    elif byhour is not None and freq == HOURLY:  # only the hours an INTERVAL of hours reaches
        step = gcd(interval, 24)
        byhour = tuple(hour for hour in byhour if step == 1 or (hour - dtstart.hour) % step == 0)
    return RuleParts(
        freq=freq,
        interval=interval,
        wkst=_WEEKDAYS.index(parts["WKST"]) if "WKST" in parts else calendar.firstweekday(),
        bysetpos=tuple(int(item) for item in parts["BYSETPOS"].split(",")) if "BYSETPOS" in parts else None,
        bymonth=bymonth,
        bymonthday=tuple(day for day in monthdays or () if day > 0) + tuple(day for day in monthdays or () if day < 0),
        byyearday=numbers("BYYEARDAY"),
        byweekno=numbers("BYWEEKNO"),
        weekdays=tuple(sorted(plain)) or None,
        nweekdays=tuple(sorted(ordinals)) or None,
        byhour=byhour,
        byminute=numbers("BYMINUTE") or (dtstart.minute,),
        bysecond=numbers("BYSECOND") or (dtstart.second,),
    )
