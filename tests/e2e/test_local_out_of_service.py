"""End to end on the local runtime (issue #23 item 1): equipment out of service for a week across
the change to summer time gets no missed check for exactly the windows the week overlaps, on each of
its checklists (two zones), while the other equipment is missed; a period ended early excuses up to
its new end. Expected dates are written out by hand below.

Berlin changes to summer time on Sunday 29 March 2026, New York on 8 March (before the scenario).
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pytest

from missed_checks.aws.table import ChecklistTable
from missed_checks_local.product.scenario import Scenario, run_scenario

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.filterwarnings("ignore:No application metrics to publish:UserWarning"),
]

SETUP = "2026-03-19T14:00:00Z"
BERLIN = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY"  # 06:00-14:00 Berlin, grace 30 min
NEW_YORK = "DTSTART;TZID=America/New_York:20260302T070000\nRRULE:FREQ=DAILY"  # 07:00-15:00 New York, grace 1 h
EVENTS: list[dict[str, Any]] = [
    {"at": SETUP, "put_checklist": {"id": "berlin", "recurrence": BERLIN, "window": "PT8H", "grace": "PT30M"}},
    {"at": SETUP, "put_checklist": {"id": "new-york", "recurrence": NEW_YORK, "window": "PT8H", "grace": "PT1H"}},
    {"at": SETUP, "assign": {"checklist": "berlin", "equipment": ["fl-01", "fl-02", "fl-03"]}},
    {"at": SETUP, "assign": {"checklist": "new-york", "equipment": ["fl-01", "fl-02"]}},
    # fl-01: Wednesday 25 March 12:00 (winter time) to Wednesday 1 April 09:00 (summer time), Berlin.
    {"at": "2026-03-24T16:00:00Z", "out_of_service": {
        "equipment": "fl-01", "from": "2026-03-25T12:00:00+01:00", "to": "2026-04-01T09:00:00+02:00",
        "reason": "gearbox in the workshop", "by": "j.doe"}},
    # done anyway while out of service: it counts as performed, not excused
    {"at": "2026-03-26T08:00:00Z", "performed": {"checklist": "berlin", "equipment": "fl-01"}},
    # fl-03: out of service from Friday 27 March until further notice, back on Monday 30 March at 14:00 Berlin
    {"at": "2026-03-27T03:00:00Z", "out_of_service": {
        "equipment": "fl-03", "from": "2026-03-27T03:00:00Z", "reason": "flat tyre"}},
    {"at": "2026-03-30T12:00:00Z", "back_in_service": {"equipment": "fl-03", "by": "a.smith"}},
]


def days(first: str, last: str) -> set[str]:
    start, end = date.fromisoformat(first), date.fromisoformat(last)
    return {(start + timedelta(days=n)).isoformat() for n in range((end - start).days + 1)}


@pytest.fixture(scope="module")
def run() -> dict[str, Any]:
    scenario = Scenario.from_dict({"start": "2026-03-19T00:00:00Z", "end": "2026-04-04T00:00:00Z",
                                   "events": EVENTS})
    judged: dict[str, list[dict[str, Any]]] = {}

    def read_windows(runtime: Any) -> None:
        table = ChecklistTable(runtime.stack.table_name)
        for checklist_id in ("berlin", "new-york"):
            judged[checklist_id] = table.judged_windows(checklist_id, scenario.start, scenario.end)
        judged["periods"] = [p.to_dict() for p in table.out_of_service_periods(scenario.start, scenario.end)]

    result = run_scenario(scenario, observe=read_windows)
    return {**result, "judged": judged}


def missed_days(run: dict[str, Any], checklist: str, equipment: str) -> set[str]:
    return {m["window_start"][:10] for m in run["missed"] if (m["checklist"], m["equipment"]) == (checklist, equipment)}


def test_every_window_was_judged_with_no_failure(run: dict[str, Any]) -> None:
    assert run["failed_executions"] == [] and not any(run["dead_letters"].values())
    assert [w["window_start"][:10] for w in run["judged"]["berlin"]] == sorted(days("2026-03-20", "2026-04-03"))
    # New York's 19 March window (11:00-19:00Z) was open when the checklist was created: judged, nobody counted.
    assert [w["window_start"][:10] for w in run["judged"]["new-york"]] == sorted(days("2026-03-19", "2026-04-03"))
    assert run["judged"]["new-york"][0]["equipment_counted"] == 0


def test_the_week_across_the_dst_change_is_excused_on_both_checklists(run: dict[str, Any]) -> None:
    # Berlin windows 25 March (from 12:00 is inside it) to 1 April (to 09:00 is inside it): excused.
    assert missed_days(run, "berlin", "fl-01") == days("2026-03-20", "2026-04-03") - days("2026-03-25", "2026-04-01")
    # New York windows 07:00-15:00 EDT = 11:00-19:00Z: 25 March (from is 11:00Z) to 31 March; on 1 April
    # the period ended at 07:00Z, before the window opened.
    assert missed_days(run, "new-york", "fl-01") == (days("2026-03-20", "2026-04-03")
                                                     - days("2026-03-25", "2026-03-31"))


def test_the_other_equipment_is_missed_every_day(run: dict[str, Any]) -> None:
    assert missed_days(run, "berlin", "fl-02") == days("2026-03-20", "2026-04-03")
    assert missed_days(run, "new-york", "fl-02") == days("2026-03-20", "2026-04-03")


def test_a_period_ended_early_excuses_up_to_its_new_end(run: dict[str, Any]) -> None:
    # 27 March 03:00Z to 30 March 12:00Z: Berlin windows 27-30 March (30 March: 04:00-12:00Z, summer time).
    assert missed_days(run, "berlin", "fl-03") == days("2026-03-20", "2026-04-03") - days("2026-03-27", "2026-03-30")
    [fl03] = [p for p in run["judged"]["periods"] if p["equipment_id"] == "fl-03"]
    assert (fl03["to"], fl03["planned_to"], fl03["ended_by"]) == ("2026-03-30T12:00:00Z", None, "a.smith")


def test_the_judged_windows_count_the_excused_equipment(run: dict[str, Any]) -> None:
    berlin = {w["window_start"][:10]: (w["equipment_counted"], w["performed"], w["missed"], w["excused"])
              for w in run["judged"]["berlin"]}
    assert berlin["2026-03-24"] == (3, 0, 3, 0)
    assert berlin["2026-03-25"] == (3, 0, 2, 1)
    assert berlin["2026-03-26"] == (3, 1, 2, 0)  # fl-01 did it while out of service: performed
    assert berlin["2026-03-28"] == (3, 0, 1, 2)
    assert berlin["2026-03-31"] == (3, 0, 2, 1)
    assert berlin["2026-04-02"] == (3, 0, 3, 0)
    new_york = {w["window_start"][:10]: w["excused"] for w in run["judged"]["new-york"][1:]}
    assert new_york == {day: int(day in days("2026-03-25", "2026-03-31")) for day in days("2026-03-20", "2026-04-03")}
