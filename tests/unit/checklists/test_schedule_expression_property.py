"""Property test: the schedule fires for every window, checked by an independent AWS cron evaluator.

The adapter (test code, not src): fire an AWS cron expression the way EventBridge Scheduler does.

aws-croniter evaluates AWS cron in UTC only, so it is run on the *local wall clock* of the
schedule's time zone (wall times tagged UTC), and each wall time is mapped to a real instant with
AWS's DST behaviour: a wall time that does not exist (spring-forward gap) is skipped; a repeated
wall time (fall-back) fires once, on its first pass. StartDate is inclusive, EndDate exclusive.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from aws_cron_expression_validator.validator import AWSCronExpressionValidator
from aws_croniter import AwsCroniter
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from missed_checks.checklists.recurrence import OccurrenceWindow, Recurrence, parse_recurrence
from missed_checks.checklists.schedule_expression import ScheduleSpec, schedule_for
from missed_checks.errors import InvalidRecurrence


def independent_validate(expression: str) -> None:
    """Both independent validators must accept the expression (raise otherwise)."""
    if expression.startswith("at("):
        datetime.strptime(expression, "at(%Y-%m-%dT%H:%M:%S)")
        return
    assert expression.startswith("cron(") and expression.endswith(")"), expression
    fields = expression[5:-1]
    AWSCronExpressionValidator.validate(fields)
    AwsCroniter(fields)


def to_instant(wall: datetime, zone: ZoneInfo) -> datetime | None:
    """The instant AWS fires a wall time at, or None when the wall time does not exist."""
    first_pass = wall.replace(tzinfo=zone, fold=0)
    if first_pass.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != wall:
        return None
    return first_pass.astimezone(UTC)


def firings(spec: ScheduleSpec, start: datetime, end: datetime) -> list[datetime]:
    """UTC minutes in [start, end) at which the schedule fires."""
    zone = ZoneInfo(spec.timezone)
    low, high = start.astimezone(UTC), end.astimezone(UTC)
    if spec.start_date is not None:
        low = max(low, spec.start_date)
    if spec.end_date is not None:
        high = min(high, spec.end_date)
    if spec.expression.startswith("at("):
        wall = datetime.strptime(spec.expression, "at(%Y-%m-%dT%H:%M:%S)")
        instant = to_instant(wall, zone)
        return [instant] if instant is not None and start <= instant < end else []
    cron = AwsCroniter(spec.expression[5:-1])
    wall_low = low.astimezone(zone).replace(tzinfo=None) - timedelta(days=1)
    wall_high = high.astimezone(zone).replace(tzinfo=None) + timedelta(days=1)
    cursor = wall_low.replace(tzinfo=UTC)
    found = []
    while True:
        (following,) = cron.get_next(cursor)
        if following is None:  # aws-croniter gives up on sparse expressions: step on and retry
            cursor += timedelta(days=1)
            if cursor.replace(tzinfo=None) > wall_high:
                break
            continue
        if following.replace(tzinfo=None) > wall_high:
            break
        cursor = following
        instant = to_instant(following.replace(tzinfo=None), zone)
        if instant is not None and low <= instant < high:
            found.append(instant)
    return sorted(set(found))


# --- the contract, checked over a period ------------------------------------------------------


def ceil_minute(instant: datetime) -> datetime:
    utc = instant.astimezone(UTC)
    floor = utc.replace(second=0, microsecond=0)
    return floor if floor == utc else floor + timedelta(minutes=1)


def in_second_pass(instant: datetime, zone: ZoneInfo) -> timedelta | None:
    """The repeated hour's length if ``instant`` (rounded up) is the second pass of a fold."""
    local = ceil_minute(instant).astimezone(zone)
    first, second = local.replace(fold=0).utcoffset(), local.utcoffset()
    if local.fold == 1 and first is not None and second is not None and first != second:
        return first - second
    return None


def check_contract(recurrence: Recurrence, years: int = 2) -> ScheduleSpec:
    """Every window's evaluate_at is met by a firing in its minute (or the next, when not
    minute-aligned); exact schedules fire nowhere else. Returns the spec for further checks."""
    spec = schedule_for(recurrence)
    independent_validate(spec.expression)
    zone = recurrence.zone
    begin = recurrence.dtstart - timedelta(days=1)
    period_end = (recurrence.dtstart + timedelta(days=366 * years)).astimezone(UTC)
    first_few = recurrence.windows_after(begin, 3)  # sparse rules: at least three windows
    period_end = max(period_end, first_few[-1].evaluate_at.astimezone(UTC) + timedelta(minutes=1))
    windows = [w for w in recurrence.windows(begin, period_end) if w.evaluate_at.astimezone(UTC) < period_end]
    assert windows, "an accepted recurrence has windows"
    fired = firings(spec, begin, period_end + timedelta(hours=3))
    fired_set = set(fired)
    for window in windows:
        assert_fired_for(window, fired, fired_set, zone, spec)
    if spec.exact:
        targets = {ceil_minute(w.evaluate_at) for w in windows}
        extra = sorted(f for f in fired_set - targets if f < period_end)
        assert not extra, f"exact {spec.expression} also fires at {extra[:3]}"
    if spec.start_date is not None:
        assert spec.start_date <= windows[0].evaluate_at
    if spec.end_date is not None:
        last = recurrence.last_evaluate_at()
        assert last is not None and last < spec.end_date <= last + timedelta(minutes=3)
    return spec


def assert_fired_for(
    window: OccurrenceWindow, fired: list[datetime], fired_set: set[datetime], zone: ZoneInfo, spec: ScheduleSpec
) -> None:
    target = ceil_minute(window.evaluate_at)
    if target in fired_set:
        return
    fold = in_second_pass(window.evaluate_at, zone)
    later = [f for f in fired if f >= target]
    # AWS fires a repeated hour once, on its first pass: an evaluate_at in the second pass can
    # only be met right after the repeated hour.
    assert fold is not None and later and later[0] <= target + fold, (
        f"{spec.expression} ({spec.timezone}) misses evaluate_at {window.evaluate_at.isoformat()}"
        f" (window {window.start.isoformat()}); next firing {later[0].isoformat() if later else None}"
    )


# --- generated rules --------------------------------------------------------------------------

ZONES = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "UTC"]
DAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
WINDOWS = ["PT30M", "PT1H", "PT2H30M", "PT8H", "PT20H", "PT24H", "P1D", "P1DT2H", "P2D", "P1W"]
GRACES = ["PT0S", "PT0S", "PT15M", "PT30M", "PT1H", "PT45S", "PT3H", "P1D"]


def comma(values: list) -> str:
    return ",".join(str(v) for v in values)


@st.composite
def month_parts(draw: st.DrawFn, freq: str) -> list[str]:
    """BYMONTHDAY / BYDAY (plain, ordinals) / BYSETPOS / BYMONTH parts of a MONTHLY or YEARLY rule."""
    parts: list[str] = []
    shape = draw(st.sampled_from(["plain", "monthday", "ordinal", "setpos", "weekday"]))
    if shape == "monthday":
        days = st.sampled_from([1, 2, 10, 15, 28, 29, 30, 31, -1, -2, -7])
        parts.append("BYMONTHDAY=" + comma(draw(st.lists(days, min_size=1, max_size=3, unique=True))))
    elif shape == "ordinal":
        ordinals = st.tuples(st.sampled_from([1, 2, 3, 4, -1, -2]), st.sampled_from(DAYS))
        chosen = draw(st.lists(ordinals, min_size=1, max_size=2, unique=True))
        parts.append("BYDAY=" + comma([f"{n}{d}" for n, d in chosen]))
    elif shape == "setpos":
        parts.append("BYDAY=" + comma(draw(st.lists(st.sampled_from(DAYS), min_size=1, max_size=5, unique=True))))
        parts.append(f"BYSETPOS={draw(st.sampled_from([1, 2, -1, -2]))}")
    elif shape == "weekday":
        parts.append("BYDAY=" + draw(st.sampled_from(DAYS)))
    if freq == "YEARLY" or draw(st.booleans()):
        months = draw(st.lists(st.integers(1, 12), min_size=1, max_size=3, unique=True))
        if freq == "YEARLY" and shape == "plain":
            months = months[:1]
        parts.append("BYMONTH=" + comma(sorted(months)))
    return parts


@st.composite
def rules(draw: st.DrawFn) -> dict[str, str]:
    freq = draw(st.sampled_from(["DAILY", "WEEKLY", "MONTHLY", "YEARLY"]))
    parts = [f"FREQ={freq}"]
    interval = draw(st.sampled_from([1, 1, 1, 2, 3, 4, 6, 7, 5]))
    if interval > 1:
        parts.append(f"INTERVAL={interval}")
    if freq == "WEEKLY" and draw(st.booleans()):
        parts.append("BYDAY=" + comma(draw(st.lists(st.sampled_from(DAYS), min_size=1, max_size=5, unique=True))))
    if freq in ("MONTHLY", "YEARLY"):
        parts.extend(draw(month_parts(freq)))
    if freq == "DAILY" and draw(st.integers(0, 3)) == 0:
        parts.append("BYDAY=" + comma(draw(st.lists(st.sampled_from(DAYS), min_size=1, max_size=6, unique=True))))
    end = draw(st.sampled_from(["none", "none", "count", "until"]))
    if end == "count":
        parts.append(f"COUNT={draw(st.integers(1, 40))}")
    start = draw(st.dates(date(2025, 1, 1), date(2026, 12, 31)))
    if end == "until":
        until = start + timedelta(days=draw(st.integers(20, 700)))
        parts.append(f"UNTIL={until:%Y%m%d}T120000Z")
    zone = draw(st.sampled_from(ZONES))
    date_only = draw(st.integers(0, 5)) == 0
    if date_only:
        dtstart = f"DTSTART;VALUE=DATE:{start:%Y%m%d}"
        stamp = f"{start:%Y%m%d}"
    else:
        hour = draw(st.sampled_from([0, 1, 2, 3, 6, 9, 12, 17, 22, 23]))
        minute = draw(st.sampled_from([0, 0, 15, 30, 45]))
        second = draw(st.sampled_from([0, 0, 0, 30]))
        stamp = f"{start:%Y%m%d}T{hour:02d}{minute:02d}{second:02d}"
        dtstart = f"DTSTART;TZID={zone}:{stamp}"
    lines = [dtstart, "RRULE:" + ";".join(parts)]
    if draw(st.integers(0, 3)) == 0:
        skipped = start + timedelta(days=draw(st.integers(0, 120)))
        lines.append(f"EXDATE;VALUE=DATE:{skipped:%Y%m%d}")
    return {
        "text": "\n".join(lines),
        "timezone": zone,
        "window": "P1D" if date_only and draw(st.booleans()) else draw(st.sampled_from(WINDOWS)),
        "grace": draw(st.sampled_from(GRACES)),
    }


@settings(suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(rules())
def test_generated_rules_fire_for_every_window(case: dict[str, str]) -> None:
    try:
        recurrence = parse_recurrence(
            case["text"], timezone=case["timezone"], window=case["window"], grace=case["grace"]
        )
    except InvalidRecurrence:
        assume(False)
        return
    check_contract(recurrence)


# --- explicit cases through the same oracle ----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "window", "grace", "exact"),
    [
        ("DTSTART;TZID=Europe/Berlin:20260105T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", "PT8H", "PT30M", True),
        ("DTSTART;TZID=Europe/Berlin:20260301T023000\nRRULE:FREQ=DAILY", "PT8H", None, False),
        ("DTSTART;TZID=Europe/Berlin:20260301T023000\nRRULE:FREQ=DAILY", "P1D", None, False),
        ("DTSTART;TZID=Europe/Berlin:20260901T013000\nRRULE:FREQ=DAILY", "PT1H", "PT30M", False),
        ("DTSTART;TZID=America/New_York:20260101T220000\nRRULE:FREQ=DAILY", "PT4H", None, False),
        ("DTSTART;TZID=Australia/Lord_Howe:20260101T060000\nRRULE:FREQ=DAILY", "PT20H", None, False),
        ("DTSTART;TZID=Australia/Lord_Howe:20260101T013000\nRRULE:FREQ=DAILY", "PT1H", None, False),
        ("DTSTART;TZID=Asia/Kolkata:20260101T093000\nRRULE:FREQ=MONTHLY;INTERVAL=3;BYDAY=1MO", "P1D", None, False),
        ("DTSTART;TZID=UTC:20260315T080000\nRRULE:FREQ=YEARLY", "P1W", None, True),
        ("DTSTART;TZID=Europe/Berlin:20260105T060000\nRRULE:FREQ=HOURLY;INTERVAL=3", "PT1H", None, True),
        ("DTSTART;TZID=Europe/Berlin:20260105T060000\nRRULE:FREQ=MONTHLY;BYMONTHDAY=-1", "P1D", None, True),
    ],
)
def test_dst_and_fleet_cases_through_the_oracle(text: str, window: str, grace: str | None, exact: bool) -> None:
    recurrence = parse_recurrence(text.replace("\\n", "\n"), window=window, grace=grace)
    assert check_contract(recurrence).exact is exact


def test_a_single_window_evaluated_in_the_second_pass_of_a_repeated_half_hour_is_not_exact() -> None:
    """Lord Howe falls back 30 minutes at 02:00 on 6 April 2025: the only window (Sat 5 April 23:00
    LHDT + 2h30 + 30 min grace) is evaluated at 01:30 LHST, the second pass, which an at() cannot name;
    it fires at 02:00 LHST (15:30Z), half an hour after the instant: a superset, never early (hypothesis
    found this rule claimed exact)."""
    recurrence = parse_recurrence(
        "DTSTART;TZID=Australia/Lord_Howe:20250201T230000\nRRULE:FREQ=YEARLY;BYDAY=SA;BYMONTH=1,4;COUNT=1",
        window="PT2H30M", grace="PT30M")
    spec = check_contract(recurrence)
    assert (spec.expression, spec.timezone, spec.exact) == ("at(2025-04-06T02:00:00)", "Australia/Lord_Howe", False)
