"""Bad input, generated: whatever a user types or a hand edit stores, the answer is a valid result
or one ``InvalidInput`` naming the field, never another exception (OverflowError, AttributeError,
TypeError, ValueError...), and the command line exits 0 or 2 with one line, never a traceback.

The corpus covers RRULE-ish text (random parts, extreme DTSTART/UNTIL/COUNT/INTERVAL, huge BY
lists), durations, zones (non-strings included), checklist items with missing or odd attributes
fed to schedule-sync's domain entry point, and ``missed-checks recurrence windows/schedule``
arguments. Bounded: ~200 examples a test, the file runs in well under a minute.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from missed_checks.aws.table.checklists import checklist_of
from missed_checks.checklists.recurrence import parse_recurrence
from missed_checks.checklists.schedule import Target, desired_schedule
from missed_checks.checklists.schedule_expression import schedule_for
from missed_checks.checklists.schedule_sync import Action, sync_checklist
from missed_checks.errors import InvalidInput
from missed_checks_ops.cli.main import main
from tests.fakes import InMemorySchedules, InMemoryTable

# How many examples: the hypothesis profile (tests/conftest.py); `--hypothesis-profile dev` for a longer hunt.
SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow])
NOW = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
TARGET = Target("arn:aws:states:us-east-1:123456789012:stateMachine:sm", "arn:aws:iam::123456789012:role/r",
                "arn:aws:sqs:us-east-1:123456789012:dlq", 10)

# --- the corpus ---------------------------------------------------------------------------------
# Each value is plausible most of the time and extreme or of the wrong type otherwise, so that
# generated rules get past the first check often enough to exercise what follows it.


def mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any], good_in_ten: int = 7) -> st.SearchStrategy[Any]:
    return st.integers(0, 9).flatmap(lambda n: good if n < good_in_ten else bad)


ZONES = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Pacific/Kiritimati", "Pacific/Pago_Pago",
         "Asia/Kolkata", "UTC"]
odd_values = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30), st.decimals(allow_nan=False, allow_infinity=False),
    st.booleans(), st.lists(st.integers(), max_size=3), st.sets(st.text(max_size=3), max_size=2),
    st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2), st.binary(max_size=4),
)
years = mostly(st.integers(2024, 2030),
               st.one_of(st.sampled_from([1, 1969, 1970, 2044, 2199, 2200, 9999]), st.integers(0, 9999)), 8)


@st.composite
def date_values(draw: st.DrawFn) -> str:
    month = draw(mostly(st.integers(1, 12), st.integers(0, 13), 9))
    day = draw(mostly(st.integers(1, 28), st.integers(0, 32), 8))
    date = f"{draw(years):04d}{month:02d}{day:02d}"
    if draw(st.integers(0, 3)) == 0:
        return date
    hour = draw(mostly(st.integers(0, 23), st.integers(0, 25), 9))
    minute = draw(mostly(st.sampled_from([0, 30]), st.integers(0, 61), 8))
    return f"{date}T{hour:02d}{minute:02d}00" + draw(st.sampled_from(["", "Z"]))


def _number_list(low: int, high: int, plausible: tuple[int, int]) -> st.SearchStrategy[str]:
    def joined(numbers: list[int]) -> str:
        return ",".join(map(str, numbers))

    good = st.lists(st.integers(*plausible), min_size=1, max_size=3, unique=True).map(joined)
    bad = st.one_of(
        st.lists(st.integers(low, high), min_size=1, max_size=8).map(joined),
        st.tuples(st.integers(*plausible), st.integers(25, 40_000)).map(lambda t: ",".join([str(t[0])] * t[1])),
        st.text(max_size=5),
    )
    return mostly(good, bad, 8)


weekdays = mostly(st.sampled_from(["MO", "TU", "WE", "TH", "FR", "SA", "SU"]), st.sampled_from(["XX", "mo", ""]), 9)
ordinals = mostly(st.just(""), st.sampled_from(["1", "-1", "2", "5", "+3", "6", "20", "53", "-53", "54", "0"]), 7)
byday = st.lists(st.tuples(ordinals, weekdays), min_size=1, max_size=4).map(
    lambda items: ",".join(n + d for n, d in items))
rrule_parts = st.fixed_dictionaries({}, optional={
    "INTERVAL": mostly(st.integers(1, 4), st.one_of(st.integers(-1, 10_001), st.sampled_from([10**25, 7, 168]))),
    "COUNT": mostly(st.integers(1, 30), st.one_of(st.integers(-1, 100_001), st.just(10**40)), 6),
    "UNTIL": date_values(),
    "BYMONTH": _number_list(-1, 13, (1, 12)),
    "BYMONTHDAY": _number_list(-32, 32, (-3, 28)),
    "BYYEARDAY": _number_list(-367, 367, (1, 366)),
    "BYWEEKNO": _number_list(-54, 54, (1, 53)),
    "BYSETPOS": _number_list(-367, 367, (-2, 3)),
    "BYHOUR": _number_list(-1, 24, (0, 23)),
    "BYMINUTE": _number_list(0, 60, (0, 59)),
    "BYDAY": byday,
    "WKST": weekdays,
})


@st.composite
def rules(draw: st.DrawFn) -> tuple[str, Any]:
    """(RFC 5545-ish text, the checklist's ``timezone``): mostly coherent, with extreme or wrong
    values, sometimes contradictory or garbage."""
    timezone = draw(zones)
    if draw(st.integers(0, 19)) == 0:
        return draw(st.text(max_size=200)), timezone
    if draw(st.integers(0, 9)) == 0:  # the extremes of the issue, in any zone
        zone = draw(st.sampled_from(ZONES))
        start = draw(st.sampled_from(["00010101T000000Z", "99991231T230000Z", f"TZID={zone}:00010101T000000",
                                      f"TZID={zone}:99991231T230000", f"TZID={zone}:21991231T230000",
                                      f"TZID={zone}:19700101T000000"]))
        rule = draw(st.sampled_from(["FREQ=DAILY", "FREQ=YEARLY;COUNT=3", "FREQ=DAILY;UNTIL=99991231T235959Z",
                                     "FREQ=HOURLY;BYHOUR=" + ",".join(["6"] * 50_000)]))
        return f"DTSTART{';' if start.startswith('TZID') else ':'}{start}\nRRULE:{rule}", None
    if draw(st.integers(0, 9)) < 3:  # a plausible rule, so that what follows parsing is exercised often
        start = f"{draw(st.integers(2024, 2030))}{draw(st.integers(1, 12)):02d}{draw(st.integers(1, 28)):02d}"
        start += draw(st.sampled_from(["", "T060000", "T023000", "T233000"]))
        freq = draw(st.sampled_from(["DAILY", "WEEKLY", "MONTHLY", "YEARLY", "HOURLY"]))
        extra = draw(st.sampled_from(["", ";INTERVAL=2", ";COUNT=5", ";BYDAY=MO,FR", ";BYMONTHDAY=-1",
                                      ";BYSETPOS=-1;BYDAY=MO,TU,WE,TH,FR", ";BYMONTH=2;BYMONTHDAY=29",
                                      ";UNTIL=20270101T000000Z", ";BYHOUR=6,18"]))
        return f"DTSTART;TZID={draw(st.sampled_from(ZONES))}:{start}\nRRULE:FREQ={freq}{extra}", None
    value = draw(date_values())
    if isinstance(timezone, str) and timezone in ZONES and draw(st.integers(0, 9)):
        tzid = None  # a floating DTSTART read in the checklist's zone (or a UTC one)
    else:
        tzid = draw(mostly(st.sampled_from(ZONES), st.sampled_from(["Mars/Olympus", ""]), 9))
        value = value if draw(st.integers(0, 9)) == 0 else value.removesuffix("Z")
    lines = [f"DTSTART{';TZID=' + tzid if tzid is not None else ''}:{value}"]
    freq = draw(mostly(st.sampled_from(["DAILY", "WEEKLY", "MONTHLY", "YEARLY", "HOURLY"]),
                       st.sampled_from(["MINUTELY", "SOMETIMES", ""]), 9))
    parts = draw(rrule_parts)
    if "COUNT" in parts and "UNTIL" in parts and draw(st.integers(0, 9)):
        del parts[draw(st.sampled_from(["COUNT", "UNTIL"]))]
    lines.append("RRULE:" + ";".join([f"FREQ={freq}", *(f"{key}={value}" for key, value in parts.items())]))
    for name in draw(st.lists(st.sampled_from(["EXDATE", "RDATE"]), max_size=2)):
        lines.append(f"{name}:{','.join(draw(st.lists(date_values(), min_size=1, max_size=3)))}")
    if draw(st.integers(0, 9)) == 0:
        draw(st.randoms()).shuffle(lines)
    return "\n".join(lines), timezone


@st.composite
def duration_texts(draw: st.DrawFn) -> str:
    """ISO 8601-ish durations of any magnitude, including the empty ``P``/``PT`` and signed ones."""
    amount = mostly(st.sampled_from(["", "", "1", "8", "30"]), st.one_of(st.integers(0, 400),
                                                                        st.integers(0, 10**25)).map(str))
    date = "".join(f"{n}{unit}" for unit in "WD" if (n := draw(amount)))
    time = "".join(f"{n}{unit}" for unit in "HMS" if (n := draw(amount)))
    sign = draw(mostly(st.just(""), st.sampled_from(["-", "+"]), 9))
    return sign + "P" + date + ("T" + time if time or draw(st.booleans()) else "")


durations = mostly(
    st.one_of(st.none(), st.sampled_from(["PT1H", "PT30M", "PT5M"])),
    st.one_of(st.just(""), duration_texts(), st.sampled_from(["PT99999999999999999999H", "P99999999999999999999W",
                                                             "PT9999999999999999999999S"]),
              st.sampled_from(["P1D", "P366D", "P367D", "PT8784H", "PT99999999999999999999H", "-PT1H", "P1M",
                               "PT0S"]),
              st.text(max_size=40), odd_values),
)
zones = mostly(st.one_of(st.none(), st.sampled_from(ZONES)),
               st.one_of(st.just(""), st.sampled_from(["Mars/Olympus", "../etc/passwd", "x" * 300]),
                         st.text(max_size=40), odd_values), 8)
EXTREMES = [datetime(1, 1, 2, tzinfo=UTC), datetime(1969, 12, 31, tzinfo=UTC), NOW,
            datetime(2199, 12, 31, 23, tzinfo=UTC), datetime(9999, 12, 30, tzinfo=UTC)]


def _only_invalid_input(call: Any, label: str = "") -> Any:
    """The call's result, or None when it raised InvalidInput; anything else fails the test."""
    try:
        result = call()
    except InvalidInput as error:
        assert error.field and error.message
        if label:
            event(f"{label}: InvalidInput {error.field}")
        return None
    if label:
        event(f"{label}: accepted")
    return result


# --- the domain -------------------------------------------------------------------------------


@SETTINGS
@given(rule=rules(), window=durations, grace=durations)
def test_any_rule_is_a_recurrence_or_invalid_input(rule: tuple[str, Any], window: Any, grace: Any) -> None:
    text, timezone = rule
    recurrence = _only_invalid_input(lambda: parse_recurrence(text, timezone=timezone, window=window, grace=grace),
                                     "parse")
    if recurrence is None:
        return
    # Everything schedule-sync and the evaluation then ask of an accepted rule works.
    _only_invalid_input(lambda: schedule_for(recurrence))
    assert recurrence.first_window().start.year <= 2199
    recurrence.last_window()
    for instant in EXTREMES:
        recurrence.windows_after(instant, 3)
        recurrence.due_windows(instant, EXTREMES[-1], 3)
        recurrence.due_windows(EXTREMES[0], instant, 3)
    recurrence.windows(EXTREMES[0], EXTREMES[0] + timedelta(days=1))


# --- schedule-sync's entry point with hand-written items ---------------------------------------


instants = mostly(st.sampled_from(["2026-01-01T00:00:00Z", "2026-03-01T10:00:00+01:00"]),
                  st.one_of(st.sampled_from(["0001-01-01T00:00:00Z", "9999-12-31T23:59:59-05:00", "yesterday",
                                             "1970-01-01T00:00:00Z", "2026-13-01T00:00:00Z", "2026-01-01T00:00:00",
                                             ""]),
                            st.text(max_size=30), odd_values))
items = st.fixed_dictionaries(
    {"pk": st.just("CHECKLIST#hand-made"), "sk": st.just("CHECKLIST")},
    optional={
        "window": durations, "grace": durations,
        "status": mostly(st.sampled_from(["ACTIVE", "PAUSED", "paused"]),
                         st.one_of(st.sampled_from(["DELETED", ""]), odd_values)),
        "revision": mostly(st.integers(0, 5), st.one_of(st.integers(-2, -1), st.just(Decimal("1.5")), odd_values)),
        "checklist_id": mostly(st.just("hand-made"), st.one_of(st.just("other"), odd_values)),
        "name": st.one_of(st.text(max_size=10), odd_values),
        "created_at": instants, "updated_at": instants, "evaluated_until": instants, "effective_from": instants,
        "schedule": st.one_of(st.just({"fingerprint": "x"}), odd_values, st.text(max_size=5)),
        "sync_error": st.one_of(st.just({"field": "recurrence", "message": "m", "revision": Decimal(1)}), odd_values),
    },
)


@SETTINGS
@given(item=items, rule=mostly(rules(), st.tuples(st.one_of(odd_values, st.just("")), zones), 8))
def test_any_checklist_item_syncs_or_takes_the_invalid_rule_path(item: dict[str, Any], rule: tuple[Any, Any]) -> None:
    item = {**item, **{name: value for name, value in zip(("recurrence", "timezone"), rule, strict=True)
                       if value is not None}}
    # The domain: only InvalidInput.
    _only_invalid_input(lambda: desired_schedule(checklist_of(item), "group", NOW), "item")

    table, schedules, rejected = InMemoryTable(checklist_items={"hand-made": item}), InMemorySchedules(), []
    result = sync_checklist("hand-made", table=table, schedules=schedules, target=TARGET, group_name="group",
                            now=NOW, report_rejected=lambda *args: rejected.append(args))

    assert table.adopted == (0 if "revision" in item else 1)
    if result.action is Action.INVALID:
        assert schedules.deleted == ["hand-made"]  # nothing may fire for an unusable rule
        ((checklist_id, error, _),) = rejected
        assert checklist_id == "hand-made" and error == result.error
        assert table.notes[-1]["error"]["field"] == error["field"]
    elif result.action is Action.SKIPPED:
        assert result.error == {k: item["sync_error"][k] for k in ("field", "message")}
    else:
        assert not rejected and result.action in (Action.CREATED, Action.DELETED, Action.UNCHANGED)


# --- the command line ---------------------------------------------------------------------------

cli_instants = st.one_of(st.sampled_from(["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "1969-12-31T23:00:00Z",
                                          "2199-12-31T00:00:00+14:00", "2299-12-31T23:59:59-12:00", "2026-03-01",
                                          "-1", ""]),
                         st.text(max_size=30))
cli_ranges = mostly(st.sampled_from([("2026-03-01T00:00:00Z", "2026-04-01T00:00:00+02:00"),
                                     ("2024-01-01T00:00:00Z", "2030-01-01T00:00:00Z"),
                                     ("0001-01-01T00:00:00Z", "2026-04-01T00:00:00Z"),
                                     ("2026-03-01T00:00:00Z", "9999-12-31T23:59:59-05:00")]),
                    st.tuples(cli_instants, cli_instants))
cli_rules = mostly(rules().map(lambda rule: (rule[0].replace("\n", "\\n"), rule[1])),
                   st.tuples(st.sampled_from(["@/does/not/exist.ics", "@", "@/"]), zones), 9)


@SETTINGS
@given(command=st.sampled_from(["windows", "schedule"]), rule=cli_rules, window=durations, grace=durations,
       limit=mostly(st.none(), st.one_of(st.integers(-3, 100).map(str), st.text(max_size=5))),
       span=cli_ranges)
def test_recurrence_commands_exit_0_or_2_with_one_line(
    command: str, rule: tuple[str, Any], window: Any, grace: Any, limit: str | None, span: tuple[str, str]
) -> None:
    text, timezone = rule
    start, end = span
    argv = ["recurrence", command, f"--recurrence={text}", "--format=json"]
    for name, value in (("--timezone", timezone), ("--window", window), ("--grace", grace)):
        if value is not None:
            argv.append(f"{name}={value}")  # whatever a user could type, str() of odd values included
    if command == "windows":
        argv += [f"--from={start}", f"--to={end}"] + ([f"--limit={limit}"] if limit is not None else [])
    stdout, stderr = io.StringIO(), io.StringIO()
    with redirect_stdout(stdout), redirect_stderr(stderr):
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse's own usage errors
            code = int(exit_.code or 0)
    out, err = stdout.getvalue(), stderr.getvalue()
    event(f"exit {code}")
    assert code in (0, 2), err
    if code == 2:
        assert out == "" and err.count("\n") == 1 and err.endswith("\n"), err
        assert err.startswith("missed-checks"), err
    else:
        assert err == ""
        json.loads(out)


# --- scenario files ------------------------------------------------------------------------------
_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=20,
)
_EVENT_KEYS = st.sampled_from(["at", "put_checklist", "assign", "unassign", "performed", "pause_checklist",
                               "resume_checklist", "delete_checklist", "fail_next_firing", "dismiss",
                               "nonsense"])
_SCENARIOS = st.fixed_dictionaries(
    {},
    optional={
        "start": st.sampled_from(["2026-03-01T00:00:00Z", "0001-01-01T00:00:00Z", "not a time", 5]) | _JSONISH,
        "end": st.sampled_from(["2026-04-01T00:00:00Z", "9999-12-31T23:59:59Z", ""]) | _JSONISH,
        "events": st.lists(st.dictionaries(_EVENT_KEYS, _JSONISH, max_size=3), max_size=4) | _JSONISH,
        "parameters": _JSONISH,
        "faults": st.lists(st.dictionaries(st.sampled_from(["kind", "count", "skip", "hours", "x"]), _JSONISH,
                                           max_size=3), max_size=3) | _JSONISH,
        "extra": _JSONISH,
    },
)


@SETTINGS
@given(_SCENARIOS)
def test_any_scenario_file_is_a_scenario_or_invalid_input(data: dict[str, Any]) -> None:
    from missed_checks_local.product.scenario import Scenario

    _only_invalid_input(lambda: Scenario.from_dict(data))
