"""People in the loop (#18), end to end on the local runtime: reminders, missed alerts and
escalations of several checklists, compared with a list worked out by hand from the timeline.

The timeline (UTC; Berlin is UTC+1, New York UTC-5 in these days):

* ``forklift-daily``: 06:00-14:00 Berlin (05:00-13:00Z), 30 min grace (judged 13:30Z), reminder
  two hours before the end (11:00Z, second chance 11:10Z), escalation after 2 consecutive misses.
  FL-1 is done every morning. FL-2 is never done and is unassigned on the 3rd at 12:00Z, before
  that window ends. FL-3 is done late on the 2nd (13:15Z, inside the grace: late, not missed, but
  after the reminder), not at all on the 3rd and 4th, on time on the 5th.
* ``dock-doors``: 08:00-12:00 New York (13:00-17:00Z), no grace, reminder an hour before (16:00Z);
  D-1 is never done; paused from the 3rd 00:00Z to the 4th 20:00Z (after that window closed).
* ``crane-check``: misses every day but tells nobody (no ``notify``).

By hand:

* 2nd: forklift reminder lists FL-2, FL-3 (FL-1 done at 06:00Z; FL-3's late check comes after);
  judged: only FL-2 missed (FL-3 was late). Dock: reminder D-1, missed D-1 (its first miss).
* 3rd: forklift reminder FL-2, FL-3 (FL-2's unassignment is still in the future at 11:00Z);
  judged: FL-3 missed (FL-2 no longer counts: unassigned before the window ended). FL-3's run is
  1 (the 2nd was late, not missed). Dock paused: no reminder, and the window is never judged.
* 4th: forklift reminder FL-3 only (FL-2 unassigned); FL-3 missed again: its run reaches 2, one
  escalation to the boss naming FL-3. Dock still paused.
* 5th: forklift: everything done before 11:00Z, no reminder, nothing missed. Dock: reminder and
  missed alert for D-1, and its run of judged windows (2nd, 5th: the paused ones were never
  judged) reaches 2: one escalation.
"""

from __future__ import annotations

from typing import Any

import pytest

from missed_checks_local.product.scenario import Scenario, run_scenario

pytestmark = [pytest.mark.e2e, pytest.mark.filterwarnings("ignore:No application metrics to publish:UserWarning")]

FORKLIFT = {"id": "forklift-daily", "name": "Forklift pre-use check", "window": "PT8H", "grace": "PT30M",
            "recurrence": "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY",
            "notify": {"to": ["crew@example.com"], "remind_before": ["PT2H"], "escalate_to": ["boss@example.com"],
                       "escalate_after": 2}}
DOCK = {"id": "dock-doors", "window": "PT4H",
        "recurrence": "DTSTART;TZID=America/New_York:20260302T080000\nRRULE:FREQ=DAILY",
        "notify": {"to": ["dock@example.com"], "remind_before": ["PT1H"], "escalate_to": ["ops@example.com"],
                   "escalate_after": 2}}
CRANE = {"id": "crane-check", "window": "PT2H", "recurrence": "DTSTART:20260302T090000Z\nRRULE:FREQ=DAILY"}
SCENARIO = {
    "start": "2026-03-01T00:00:00Z", "end": "2026-03-06T00:00:00Z",
    "events": [
        {"at": "2026-03-01T12:00:00Z", "put_checklist": FORKLIFT},
        {"at": "2026-03-01T12:00:00Z", "assign": {"checklist": "forklift-daily",
                                                   "equipment": ["FL-1", "FL-2", "FL-3"]}},
        {"at": "2026-03-01T12:00:00Z", "put_checklist": DOCK},
        {"at": "2026-03-01T12:00:00Z", "assign": {"checklist": "dock-doors", "equipment": ["D-1"]}},
        {"at": "2026-03-01T12:00:00Z", "put_checklist": CRANE},
        {"at": "2026-03-01T12:00:00Z", "assign": {"checklist": "crane-check", "equipment": ["C-1"]}},
        *[{"at": f"2026-03-0{day}T06:00:00Z", "performed": {"checklist": "forklift-daily", "equipment": "FL-1"}}
          for day in (2, 3, 4, 5)],
        {"at": "2026-03-02T13:15:00Z", "performed": {"checklist": "forklift-daily", "equipment": "FL-3"}},
        {"at": "2026-03-03T00:00:00Z", "pause_checklist": "dock-doors"},
        {"at": "2026-03-03T12:00:00Z", "unassign": {"checklist": "forklift-daily", "equipment": ["FL-2"]}},
        {"at": "2026-03-04T20:00:00Z", "resume_checklist": "dock-doors"},
        {"at": "2026-03-05T07:00:00Z", "performed": {"checklist": "forklift-daily", "equipment": "FL-3"}},
    ],
}


def note(sent_at: str, kind: str, checklist: str, window_start: str, to: str, *equipment: str) -> dict[str, Any]:
    return {"sent_at": sent_at, "kind": kind, "checklist": checklist, "window_start": window_start, "to": to,
            "equipment": list(equipment)}


F, D = "forklift-daily", "dock-doors"
EXPECTED = [
    note("2026-03-02T11:00:00Z", "reminder", F, "2026-03-02T05:00:00Z", "crew@example.com", "FL-2", "FL-3"),
    note("2026-03-02T13:30:00Z", "missed", F, "2026-03-02T05:00:00Z", "crew@example.com", "FL-2"),
    note("2026-03-02T16:00:00Z", "reminder", D, "2026-03-02T13:00:00Z", "dock@example.com", "D-1"),
    note("2026-03-02T17:00:00Z", "missed", D, "2026-03-02T13:00:00Z", "dock@example.com", "D-1"),
    note("2026-03-03T11:00:00Z", "reminder", F, "2026-03-03T05:00:00Z", "crew@example.com", "FL-2", "FL-3"),
    note("2026-03-03T13:30:00Z", "missed", F, "2026-03-03T05:00:00Z", "crew@example.com", "FL-3"),
    note("2026-03-04T11:00:00Z", "reminder", F, "2026-03-04T05:00:00Z", "crew@example.com", "FL-3"),
    note("2026-03-04T13:30:00Z", "escalation", F, "2026-03-04T05:00:00Z", "boss@example.com", "FL-3"),
    note("2026-03-04T13:30:00Z", "missed", F, "2026-03-04T05:00:00Z", "crew@example.com", "FL-3"),
    note("2026-03-05T16:00:00Z", "reminder", D, "2026-03-05T13:00:00Z", "dock@example.com", "D-1"),
    note("2026-03-05T17:00:00Z", "escalation", D, "2026-03-05T13:00:00Z", "ops@example.com", "D-1"),
    note("2026-03-05T17:00:00Z", "missed", D, "2026-03-05T13:00:00Z", "dock@example.com", "D-1"),
]


@pytest.fixture(scope="module")
def run() -> dict[str, Any]:
    return run_scenario(Scenario.from_dict(SCENARIO))


def test_the_notifications_are_exactly_those_worked_out_by_hand(run: dict[str, Any]) -> None:
    # sent_at to the minute: inside an invocation the simulated clock moves on with the real time
    # the function takes (a cold start may take a second), as a deployed function's would.
    keys = ("kind", "checklist", "window_start", "to", "equipment")
    sent = [{"sent_at": n["sent_at"][:16] + ":00Z", **{k: n[k] for k in keys}} for n in run["notifications"]]
    # within one minute the order is the invocations' (a missed alert and its escalation go out in
    # the same second, in either order under load): compared minute by minute, whatever the order
    def in_order(notes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(notes, key=lambda n: (n["sent_at"], n["checklist"], n["kind"], n["to"]))
    assert in_order(sent) == in_order(EXPECTED)
    assert len({n["notification_id"] for n in run["notifications"]}) == len(EXPECTED)  # none sent twice


def test_the_messages_name_local_times_and_the_runs(run: dict[str, Any]) -> None:
    subjects = {(n["kind"], n["checklist"], n["window_start"]): n["subject"] for n in run["notifications"]}
    assert subjects[("reminder", F, "2026-03-02T05:00:00Z")] == (
        "Reminder: Forklift pre-use check: 2 still to check before Mon 2 Mar 2026 14:00 CET")
    assert subjects[("missed", D, "2026-03-05T13:00:00Z")] == (
        "Missed: dock-doors: 1 not checked (Thu 5 Mar 2026 08:00 EST)")
    assert subjects[("escalation", D, "2026-03-05T13:00:00Z")] == (
        "Escalation: dock-doors: 1 piece(s) of equipment missed 2 times in a row")


def test_misses_of_a_checklist_that_tells_nobody_are_recorded_and_sent_to_no_one(run: dict[str, Any]) -> None:
    assert len([m for m in run["missed"] if m["checklist"] == "crane-check"]) == 4  # the 2nd to the 5th
    assert not [n for n in run["notifications"] if n["checklist"] == "crane-check"]


def test_every_notification_is_recorded_and_nothing_was_dead_lettered(run: dict[str, Any]) -> None:
    assert run["dead_letters"]["NotificationDeadLetterQueue"] == []
    assert run["lambda"]["NotifyFunction"]["error"] == 0
    assert {"_r0.forklift-daily", "_s0.forklift-daily", "_r0.dock-doors", "_s0.dock-doors"} <= set(run["schedules"])
