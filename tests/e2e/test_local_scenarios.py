"""End to end on the local runtime: scenarios played through the runner, exact outcomes asserted.

Each scenario runs the real template, state machine and handlers on moto with the simulated
clock, stream and scheduler; the assertions are the exact sets of missed and performed checks
the table holds at the end (plus dead letters where the scenario provokes them).
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pytest

from missed_checks_local.scenario import Scenario, run_scenario

pytestmark = [
    pytest.mark.e2e,
    # Powertools warns on every invocation that there are no custom metrics to publish.
    pytest.mark.filterwarnings("ignore:No application metrics to publish:UserWarning"),
]


def play(start: str, end: str, events: list[dict[str, Any]]) -> dict[str, Any]:
    return run_scenario(Scenario.from_dict({"start": start, "end": end, "events": events}))


def missed_of(report: dict[str, Any], checklist: str) -> set[tuple[str, str, str]]:
    return {
        (m["equipment"], m["window_start"], m["window_end"]) for m in report["missed"] if m["checklist"] == checklist
    }


def performed_of(report: dict[str, Any], checklist: str) -> set[tuple[str, str, str | None, str]]:
    return {
        (p["equipment"], p["performed_at"], p["window_start"], p["timeliness"])
        for p in report["performed"]
        if p["checklist"] == checklist
    }


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
    assert performed_of(lifecycle, "grace") == {
        ("g-1", "2026-03-02T09:59:59Z", "2026-03-02T08:00:00Z", "on_time"),
        ("g-1", "2026-03-03T10:10:00Z", "2026-03-03T08:00:00Z", "late"),
        ("g-1", "2026-03-04T10:40:00Z", None, "no_window"),
        ("g-1", "2026-03-05T10:30:00Z", None, "no_window"),  # end + grace is exclusive
        ("g-1", "2026-03-06T09:00:00Z", "2026-03-06T08:00:00Z", "on_time"),
    }
    rows = {(r["checklist"], r["equipment"]): r for r in lifecycle["summary"]}
    assert rows[("grace", "g-1")] == {
        "checklist": "grace",
        "equipment": "g-1",
        "on_time": 2,
        "late": 1,
        "missed": 5,
        "compliance_pct": 37.5,
    }


def test_failed_firing_lands_in_the_dlq_and_the_next_firing_catches_up(lifecycle) -> None:
    expected = daily("c-1", date(2026, 3, 2), date(2026, 3, 9)) - daily("c-1", date(2026, 3, 3), date(2026, 3, 3))
    assert missed_of(lifecycle, "catch-up") == expected
    assert performed_of(lifecycle, "catch-up") == {("c-1", "2026-03-03T09:00:00Z", "2026-03-03T08:00:00Z", "on_time")}
    letters = lifecycle["dead_letters"]["SchedulerDeadLetterQueue"]
    assert [letter["body"]["checklist_id"] for letter in letters] == ["catch-up"]
    assert letters[0]["attributes"]["ERROR_CODE"] == "AccessDeniedException"
    assert lifecycle["firings"]["failed_to_start"] == 1


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
    assert performed_of(report, "berlin") == {
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
    assert performed_of(report, "nightly") == {("n-2", "2026-11-01T06:45:00Z", "2026-11-01T05:30:00Z", "late")}
