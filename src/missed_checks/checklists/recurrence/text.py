"""RFC 5545 text read and validated into a dateutil rule, its zone and its extra dates.

Every value is checked here, with an error naming the field, before dateutil sees it; the RRULE's
parts are then handed to :class:`dateutil.rrule.rrule` once, as typed values (the text is not
re-rendered for ``rrulestr``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from dateutil.rrule import DAILY, HOURLY, MONTHLY, WEEKLY, YEARLY, rrule, weekday

from missed_checks import identifiers
from missed_checks.checklists.durations import Duration, parse_duration
from missed_checks.checklists.recurrence.limits import LAST_YEAR, MAX_COUNT, MAX_TEXT_CHARS
from missed_checks.checklists.recurrence.windows import resolve_local
from missed_checks.errors import InvalidInput, InvalidRecurrence, describe, shorten
from missed_checks.timefmt import FIRST_YEAR

_FREQUENCIES = {"YEARLY": YEARLY, "MONTHLY": MONTHLY, "WEEKLY": WEEKLY, "DAILY": DAILY, "HOURLY": HOURLY}
_WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
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
# (smallest, largest, whether negative values count from the end) of each numeric part.
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
_FORMAT_HINT = (
    "expected RFC 5545 lines such as 'DTSTART;TZID=Europe/Berlin:20260105T060000' and "
    "'RRULE:FREQ=WEEKLY;BYDAY=MO,FR', optionally 'EXDATE'/'RDATE' lines"
)

_Line = tuple[str, dict[str, str], str]


@dataclass(frozen=True)
class RecurrenceText:
    """What the text says, validated: the zone, DTSTART, the built rule and the extra dates."""

    text: str
    timezone: str
    zone: ZoneInfo
    dtstart: datetime
    date_only: bool
    window: Duration
    grace: Duration
    until: datetime | None
    rule: rrule
    exdates: tuple[datetime, ...]
    exdate_dates: tuple[date, ...]
    rdates: tuple[datetime, ...]
    """RDATEs as wall-clock datetimes in the zone (dateutil merges them by wall time)."""


def read_text(text: object, timezone: object, window: object, grace: object) -> RecurrenceText:
    """Read and validate the recurrence ``text`` with the checklist's ``timezone``, ``window``
    (``P1D`` when None) and ``grace`` (``PT0S`` when None), in the order the fields are reported."""
    lines = content_lines(text)
    assert isinstance(text, str)  # content_lines refused anything else
    dtstart_line = _single(lines, "DTSTART")
    rrule_line = _single(lines, "RRULE")
    zone_name, zone, dtstart, date_only = _parse_dtstart(dtstart_line, _zone_name(timezone))
    window_duration = Duration(days=1) if window is None else parse_duration(window, "window", allow_zero=False)
    grace_duration = Duration() if grace is None else parse_duration(grace, "grace")
    parts = _parse_rrule_parts(rrule_line[2])
    until = _until(parts.get("UNTIL"), zone)
    rule = _build_rule(parts, dtstart, until)
    exdates, exdate_dates = _parse_exdates(lines, zone)
    return RecurrenceText(
        text=text.strip(),
        timezone=zone_name,
        zone=zone,
        dtstart=dtstart,
        date_only=date_only,
        window=window_duration,
        grace=grace_duration,
        until=until,
        rule=rule,
        exdates=exdates,
        exdate_dates=exdate_dates,
        rdates=tuple(value for value, _ in _values(lines, "RDATE", zone)),
    )


def content_lines(text: object) -> list[_Line]:
    """The unfolded content lines as (NAME, {PARAM: value}, value); only the four we read."""
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


def _single(lines: list[_Line], name: str) -> _Line:
    found = [line for line in lines if line[0] == name]
    if len(found) > 1:
        raise InvalidRecurrence("recurrence", f"has {len(found)} {name} lines; give exactly one")
    if not found:
        example = "DTSTART;TZID=Europe/Berlin:20260105T060000" if name == "DTSTART" else "RRULE:FREQ=DAILY"
        raise InvalidRecurrence("recurrence", f"has no {name} line; add one such as {example!r}")
    return found[0]


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
        return identifiers.zone(name, field_name)
    except InvalidInput:
        raise InvalidRecurrence(
            field_name, f"unknown time zone {shorten(name)}; give an IANA zone such as Europe/Berlin or UTC"
        ) from None


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
            year, month, day, hour, minute, second = (int(group) for group in date_time.groups()[:6])
            parsed = datetime(year, month, day, hour, minute, second)
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
    if freq not in _FREQUENCIES:
        raise InvalidRecurrence("recurrence", f"FREQ={shorten(freq)} is not one of {', '.join(_FREQUENCIES)}")
    for key in ("BYMINUTE", "BYSECOND"):
        if len(parts.get(key, "").split(",")) > 1:
            raise InvalidRecurrence(
                "recurrence", f"{key} with several values makes the rule sub-hourly; give a single value"
            )
    if "COUNT" in parts and "UNTIL" in parts:
        raise InvalidRecurrence("recurrence", "RRULE has both COUNT and UNTIL; RFC 5545 allows one of them")


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


def _rule_arguments(parts: dict[str, str], until: datetime | None) -> dict[str, Any]:
    """:class:`rrule`'s keyword arguments for the RRULE ``parts`` (already checked)."""

    def numbers(key: str) -> tuple[int, ...] | None:
        return tuple(int(item) for item in parts[key].split(",")) if key in parts else None

    if "WKST" in parts and parts["WKST"] not in _WEEKDAYS:
        raise InvalidRecurrence(
            "recurrence", f"WKST={_cut(parts['WKST'])} is not a weekday; use one of {', '.join(_WEEKDAYS)}"
        )
    byweekday = None
    if "BYDAY" in parts:
        byweekday = []
        for item in parts["BYDAY"].split(","):
            match = _ORDINAL_DAY.fullmatch(item)
            assert match is not None  # _check_numbers refused anything else
            byweekday.append(weekday(_WEEKDAYS.index(match[2]), int(match[1]) if match[1] else None))
    return {
        "freq": _FREQUENCIES[parts["FREQ"]],
        "interval": int(parts.get("INTERVAL", "1")),
        "wkst": _WEEKDAYS.index(parts["WKST"]) if "WKST" in parts else None,
        "count": int(parts["COUNT"]) if "COUNT" in parts else None,
        "until": until.astimezone(UTC) if until is not None else None,
        "bysetpos": numbers("BYSETPOS"),
        "bymonth": numbers("BYMONTH"),
        "bymonthday": numbers("BYMONTHDAY"),
        "byyearday": numbers("BYYEARDAY"),
        "byweekno": numbers("BYWEEKNO"),
        "byweekday": byweekday,
        "byhour": numbers("BYHOUR"),
        "byminute": numbers("BYMINUTE"),
        "bysecond": numbers("BYSECOND"),
    }


def _build_rule(parts: dict[str, str], dtstart: datetime, until: datetime | None) -> rrule:
    try:
        return rrule(dtstart=dtstart, cache=True, **_rule_arguments(parts, until))
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as error:
        # dateutil's own verdict on what passed the checks above (e.g. a BYHOUR an HOURLY INTERVAL never reaches)
        raise InvalidRecurrence("recurrence", f"RRULE is not valid: {_cut(str(error), 120)}") from None


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


def _cut(text: str, limit: int = 40) -> str:
    """``text`` for an error message: at most ``limit`` characters, control characters escaped."""
    if not text.isprintable():
        return shorten(text, limit)
    return text if len(text) <= limit else text[: limit - 3] + "..."
