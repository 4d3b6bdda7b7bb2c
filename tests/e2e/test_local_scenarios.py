"""End to end on the local runtime: scenarios played through the runner, exact outcomes asserted.

Each scenario runs the real template, state machine and handlers on moto with the simulated
clock, stream and scheduler; the assertions are the fleet report's (the ``report`` command's,
which a local run returns): the exact windows missed, dismissed, done on time and late, and its
rows, checked against the missed-check records the table holds (plus dead letters where the
scenario provokes them).
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pytest

from missed_checks.errors import InvalidInput
from missed_checks_local.product.scenario import Scenario, run_scenario

pytestmark = [
    pytest.mark.e2e,
    # Powertools warns on every invocation that there are no custom metrics to publish.
    pytest.mark.filterwarnings("ignore:No application metrics to publish:UserWarning"),
]


def play(start: str, end: str, events: list[dict[str, Any]]) -> dict[str, Any]:
    return run_scenario(Scenario.from_dict({"start": start, "end": end, "events": events}))


def outcomes_of(run: dict[str, Any], checklist: str, *kinds: str) -> list[Any]:
    return [o for o in run["report"].outcomes if o.checklist_id == checklist and o.outcome in kinds]


def missed_of(run: dict[str, Any], checklist: str) -> set[tuple[str, str, str]]:
    """The report's missed and dismissed windows: exactly the missed-check records in the table."""
    found = {(o.equipment_id, o.window_start, o.window_end) for o in outcomes_of(run, checklist, "missed", "dismissed")}
    recorded = {(m["equipment"], m["window_start"], m["window_end"]) for m in run["missed"]
                if m["checklist"] == checklist}
    assert found == recorded
    return found


def done_of(run: dict[str, Any], checklist: str) -> set[tuple[str, str | None, str, str]]:
    """(equipment, the check that counted, window start, on_time|late) of the report's done windows."""
    return {(o.equipment_id, o.performed_at, o.window_start, o.outcome)
            for o in outcomes_of(run, checklist, "on_time", "late")}


def row_of(run: dict[str, Any], checklist: str, equipment: str) -> tuple[Any, ...]:
    [row] = [r for r in run["report"].rows if (r.checklist_id, r.equipment_id) == (checklist, equipment)]
    return row.expected, row.on_time, row.late, row.missed, row.dismissed, row.pending, row.to_dict()["compliance_pct"]


def daily(equipment: str, first: date, last: date, start: str = "08:00:00", end: str = "10:00:00") -> set:
    """One (equipment, window_start, window_end) per day, UTC windows."""
    days = (first + timedelta(days=n) for n in range((last - first).days + 1))
    return {(equipment, f"{d}T{start}Z", f"{d}T{end}Z") for d in days}


def put(at: str, checklist_id: str, recurrence: str, **fields: Any) -> dict[str, Any]:
    return {"at": at, "put_checklist": {"id": checklist_id, "recurrence": recurrence, **fields}}


DAILY_UTC = "DTSTART;TZID=UTC:20260302T080000\nRRULE:FREQ=DAILY"
SETUP = "2026-03-01T12:00:00Z"


# -- one scenario with a checklist per behaviour -----------------------------------------------------
@pytest.fixture(scope="module")
def lifecycle() -> dict[str, Any]:
    events = [
        # an edit changes the future, never the past
        put(SETUP, "edit", "DTSTART;TZID=Europe/Berlin:20260302T080000\nRRULE:FREQ=WEEKLY;BYDAY=MO", window="PT4H"),
        {"at": SETUP, "assign": {"checklist": "edit", "equipment": ["e-1"]}},
        put(
            "2026-03-04T12:00:00Z",
            "edit",
            "DTSTART;TZID=Europe/Berlin:20260302T080000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TH",
            window="PT6H",
        ),
        # pause and resume: no misses while paused, none back-filled
        put(SETUP, "pause", DAILY_UTC, window="PT2H"),
        {"at": SETUP, "assign": {"checklist": "pause", "equipment": "p-1"}},
        {"at": "2026-03-03T12:00:00Z", "pause_checklist": "pause"},
        {"at": "2026-03-06T12:00:00Z", "resume_checklist": "pause"},
        # unassignment: counted while assigned, not after
        put(SETUP, "unassign", DAILY_UTC, window="PT2H"),
        {"at": SETUP, "assign": {"checklist": "unassign", "equipment": ["u-1", "u-2"]}},
        {"at": "2026-03-04T12:00:00Z", "unassign": {"checklist": "unassign", "equipment": ["u-2"]}},
        # a deleted checklist keeps its history and stops being judged
        put(SETUP, "delete", DAILY_UTC, window="PT2H"),
        {"at": SETUP, "assign": {"checklist": "delete", "equipment": "d-1"}},
        {"at": "2026-03-04T12:00:00Z", "delete_checklist": "delete"},
        # on time, late within grace, after grace
        put(SETUP, "grace", DAILY_UTC, window="PT2H", grace="PT30M"),
        {"at": SETUP, "assign": {"checklist": "grace", "equipment": "g-1"}},
        {"at": "2026-03-02T09:59:59Z", "performed": {"checklist": "grace", "equipment": "g-1"}},
        {"at": "2026-03-03T10:10:00Z", "performed": {"checklist": "grace", "equipment": "g-1"}},
        {"at": "2026-03-04T10:40:00Z", "performed": {"checklist": "grace", "equipment": "g-1"}},
        {"at": "2026-03-05T10:30:00Z", "performed": {"checklist": "grace", "equipment": "g-1"}},
        # recorded later than it was done: counts for the window it was done in
        {
            "at": "2026-03-06T10:20:00Z",
            "performed": {"checklist": "grace", "equipment": "g-1", "performed_at": "2026-03-06T09:00:00Z"},
        },
        # a firing that fails to start the evaluation is caught up by the next one
        put(SETUP, "catch-up", DAILY_UTC, window="PT2H"),
        {"at": SETUP, "assign": {"checklist": "catch-up", "equipment": "c-1"}},
        {"at": "2026-03-03T00:00:00Z", "fail_next_firing": "catch-up"},
        {"at": "2026-03-03T09:00:00Z", "performed": {"checklist": "catch-up", "equipment": "c-1"}},
        # dismissed once its window is judged: this one is asked for before the window closes (10:00),
        # so it waits for its record and is applied at the next event after that (g-1's check at 10:40)
        {"at": "2026-03-04T09:30:00Z", "dismiss": {"checklist": "catch-up", "equipment": "c-1",
                                                   "window_start": "2026-03-04T08:00:00Z", "reason": "in the workshop",
                                                   "by": "j.doe"}},
    ]
    return play("2026-03-01T00:00:00Z", "2026-03-10T00:00:00Z", events)


def test_edit_changes_the_future_not_the_past(lifecycle) -> None:
    assert missed_of(lifecycle, "edit") == {
        ("e-1", "2026-03-02T07:00:00Z", "2026-03-02T11:00:00Z"),  # judged by the old 4-hour rule
        ("e-1", "2026-03-05T07:00:00Z", "2026-03-05T13:00:00Z"),  # the new Thursday, 6 hours
        ("e-1", "2026-03-09T07:00:00Z", "2026-03-09T13:00:00Z"),
    }


def test_pause_has_no_misses_and_resume_does_not_backfill(lifecycle) -> None:
    assert missed_of(lifecycle, "pause") == daily("p-1", date(2026, 3, 2), date(2026, 3, 3)) | daily(
        "p-1", date(2026, 3, 7), date(2026, 3, 9)
    )


def test_unassigned_equipment_stops_counting(lifecycle) -> None:
    assert missed_of(lifecycle, "unassign") == daily("u-1", date(2026, 3, 2), date(2026, 3, 9)) | daily(
        "u-2", date(2026, 3, 2), date(2026, 3, 4)
    )


def test_deleted_checklist_keeps_history_and_loses_its_schedule(lifecycle) -> None:
    assert missed_of(lifecycle, "delete") == daily("d-1", date(2026, 3, 2), date(2026, 3, 4))
    assert "delete" not in lifecycle["schedules"]
    assert {"edit", "pause", "unassign", "grace", "catch-up"} <= set(lifecycle["schedules"])


def test_late_within_grace_counts_and_after_grace_is_missed(lifecycle) -> None:
    assert missed_of(lifecycle, "grace") == daily("g-1", date(2026, 3, 4), date(2026, 3, 5)) | daily(
        "g-1", date(2026, 3, 7), date(2026, 3, 9)
    )
    assert done_of(lifecycle, "grace") == {
        ("g-1", "2026-03-02T09:59:59Z", "2026-03-02T08:00:00Z", "on_time"),
        ("g-1", "2026-03-03T10:10:00Z", "2026-03-03T08:00:00Z", "late"),
        ("g-1", "2026-03-06T09:00:00Z", "2026-03-06T08:00:00Z", "on_time"),
    }
    # 10:40 after a 10:00-10:30 grace, and 10:30 itself (end + grace is exclusive), count for nothing
    recorded = {p["performed_at"] for p in lifecycle["performed"] if p["checklist"] == "grace"}
    assert {"2026-03-04T10:40:00Z", "2026-03-05T10:30:00Z"} <= recorded
    [late] = outcomes_of(lifecycle, "grace", "late")
    assert late.late_by.total_seconds() == 600
    # expected, on time, late, missed, dismissed, pending, compliance
    assert row_of(lifecycle, "grace", "g-1") == (8, 2, 1, 5, 0, 0, 37.5)


def test_failed_firing_lands_in_the_dlq_and_the_next_firing_catches_up(lifecycle) -> None:
    expected = daily("c-1", date(2026, 3, 2), date(2026, 3, 9)) - daily("c-1", date(2026, 3, 3), date(2026, 3, 3))
    assert missed_of(lifecycle, "catch-up") == expected
    assert done_of(lifecycle, "catch-up") == {("c-1", "2026-03-03T09:00:00Z", "2026-03-03T08:00:00Z", "on_time")}
    letters = lifecycle["dead_letters"]["SchedulerDeadLetterQueue"]
    assert [letter["body"]["checklist_id"] for letter in letters] == ["catch-up"]
    assert letters[0]["attributes"]["ERROR_CODE"] == "AccessDeniedException"
    assert lifecycle["firings"]["failed_to_start"] == 1


def test_a_dismissal_waits_for_its_record_and_leaves_compliance(lifecycle) -> None:
    [dismissed] = outcomes_of(lifecycle, "catch-up", "dismissed")
    assert dismissed.window_start == "2026-03-04T08:00:00Z"
    assert (dismissed.dismissal.reason, dismissed.dismissal.by) == ("in the workshop", "j.doe")
    assert dismissed.dismissal.at == "2026-03-04T10:40:00Z"  # applied once the 10:00 firing had written it
    # 8 windows: on time once, dismissed once, missed 6: compliance 1 / (8 - 1)
    assert row_of(lifecycle, "catch-up", "c-1") == (8, 1, 0, 6, 1, 0, 14.29)


def test_the_fleet_total_is_the_sum_of_the_rows(lifecycle) -> None:
    report = lifecycle["report"]
    fleet = report.total
    assert fleet.expected == sum(r.expected for r in report.rows) == len(
        [o for o in report.outcomes if o.outcome not in ("pending", "excused")])
    # every record is in the period
    assert fleet.missed + fleet.recorded_late + fleet.dismissed == len(lifecycle["missed"])
    assert report.checklists["delete"].deleted and report.warnings == [
        "checklist delete no longer exists; its judged windows are counted as they were judged"]


def test_a_dismissal_whose_record_never_comes_fails_the_run() -> None:
    events = [
        put(SETUP, "done", DAILY_UTC + ";COUNT=1", window="PT2H"),
        {"at": SETUP, "assign": {"checklist": "done", "equipment": "x-1"}},
        {"at": "2026-03-02T09:00:00Z", "performed": {"checklist": "done", "equipment": "x-1"}},
        {"at": "2026-03-02T09:30:00Z", "dismiss": {"checklist": "done", "equipment": "x-1",
                                                   "window_start": "2026-03-02T08:00:00Z", "reason": "r", "by": "b"}},
    ]
    with pytest.raises(InvalidInput) as caught:
        play("2026-03-01T00:00:00Z", "2026-03-03T00:00:00Z", events)
    assert caught.value.field == "events[3].dismiss.window_start"
    assert "nothing to dismiss" in caught.value.message


def test_nothing_else_went_wrong(lifecycle) -> None:
    assert lifecycle["failed_executions"] == []
    assert lifecycle["dead_letters"]["EvaluationDeadLetterQueue"] == []
    assert lifecycle["dead_letters"]["ScheduleSyncDeadLetterQueue"] == []
    assert lifecycle["executions"]["by_status"] == {"SUCCEEDED": lifecycle["executions"]["started"]}


# -- daylight saving time in two zones -----------------------------------------------------------
def test_dst_spring_forward_in_berlin_and_new_york() -> None:
    events = [
        put(
            "2026-03-05T12:00:00Z",
            "berlin",
            "DTSTART;TZID=Europe/Berlin:20260323T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
            window="PT8H",
            grace="PT30M",
        ),
        {"at": "2026-03-05T12:00:00Z", "assign": {"checklist": "berlin", "equipment": ["b-1", "b-2"]}},
        # 02:30 does not exist in New York on 2026-03-08: RFC 5545 reads it as 03:30 EDT
        put(
            "2026-03-05T12:00:00Z",
            "new-york",
            "DTSTART;TZID=America/New_York:20260306T023000\nRRULE:FREQ=DAILY;COUNT=5",
            window="PT1H",
            grace="PT30M",
        ),
        {"at": "2026-03-05T12:00:00Z", "assign": {"checklist": "new-york", "equipment": "n-1"}},
    ]
    workdays = [date(2026, 3, 23) + timedelta(days=n) for n in (0, 1, 2, 3, 4, 7, 8)]
    for day in workdays:
        at = f"{day}T05:30:00Z" if day < date(2026, 3, 29) else f"{day}T04:30:00Z"  # 06:30 local
        events.append({"at": at, "performed": {"checklist": "berlin", "equipment": "b-1"}})
    report = play("2026-03-05T00:00:00Z", "2026-04-01T00:00:00Z", events)

    def berlin_window(day: date) -> tuple[str, str]:
        hour = 5 if day < date(2026, 3, 29) else 4  # 06:00 CET, then 06:00 CEST
        return f"{day}T{hour:02d}:00:00Z", f"{day}T{hour + 8:02d}:00:00Z"

    assert missed_of(report, "berlin") == {("b-2", *berlin_window(day)) for day in workdays}
    assert done_of(report, "berlin") == {
        ("b-1", f"{day}T{int(berlin_window(day)[0][11:13]):02d}:30:00Z", berlin_window(day)[0], "on_time")
        for day in workdays
    }
    assert missed_of(report, "new-york") == {
        ("n-1", "2026-03-06T07:30:00Z", "2026-03-06T08:30:00Z"),
        ("n-1", "2026-03-07T07:30:00Z", "2026-03-07T08:30:00Z"),
        ("n-1", "2026-03-08T07:30:00Z", "2026-03-08T08:30:00Z"),  # 03:30 EDT, the gap's reading
        ("n-1", "2026-03-09T06:30:00Z", "2026-03-09T07:30:00Z"),
        ("n-1", "2026-03-10T06:30:00Z", "2026-03-10T07:30:00Z"),
    }
    assert report["failed_executions"] == []


def test_dst_fall_back_in_new_york_judges_the_repeated_hour_once() -> None:
    events = [
        put(
            "2026-10-29T12:00:00Z",
            "nightly",
            "DTSTART;TZID=America/New_York:20261030T013000\nRRULE:FREQ=DAILY;COUNT=4",
            window="PT1H",
            grace="PT30M",
        ),
        {"at": "2026-10-29T12:00:00Z", "assign": {"checklist": "nightly", "equipment": ["n-2", "n-3"]}},
        # 01:45 on 2026-11-01 in its second pass (EST): after the window (the first 01:30, EDT) ended
        {"at": "2026-11-01T06:45:00Z", "performed": {"checklist": "nightly", "equipment": "n-2"}},
    ]
    report = play("2026-10-29T00:00:00Z", "2026-11-03T00:00:00Z", events)
    windows = [
        ("2026-10-30T05:30:00Z", "2026-10-30T06:30:00Z"),
        ("2026-10-31T05:30:00Z", "2026-10-31T06:30:00Z"),
        ("2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z"),  # the first 01:30 (EDT)
        ("2026-11-02T06:30:00Z", "2026-11-02T07:30:00Z"),  # 01:30 EST
    ]
    assert missed_of(report, "nightly") == {("n-3", *w) for w in windows} | {
        ("n-2", *w) for w in windows if w[0] != "2026-11-01T05:30:00Z"
    }
    assert done_of(report, "nightly") == {("n-2", "2026-11-01T06:45:00Z", "2026-11-01T05:30:00Z", "late")}
    assert row_of(report, "nightly", "n-2") == (4, 0, 1, 3, 0, 0, 25.0)
