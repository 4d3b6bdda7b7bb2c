"""A scenario's ``performed`` check is recorded as ``POST /checks`` records one
(missed_checks.performed_checks.recording.record_checks), so a file is refused before anything runs,
naming the event and the field, when that use case would refuse the check: its checklist deleted,
its equipment not assigned to the checklist at ``performed_at``."""

from __future__ import annotations

import pytest

from missed_checks.errors import InvalidInput
from missed_checks_local.product.scenario import Scenario

RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"
AT = "2026-03-02T00:00:00Z"
SETUP = [{"at": AT, "put_checklist": {"id": "fl", "recurrence": RULE, "window": "PT8H"}},
         {"at": AT, "put_checklist": {"id": "crane", "recurrence": RULE, "window": "PT8H"}},
         {"at": "2026-03-02T05:00:00Z", "assign": {"checklist": "fl", "equipment": ["fl-01"]}}]


def scenario(*events: dict) -> dict:
    return {"start": AT, "end": "2026-03-09T00:00:00Z", "events": [*SETUP, *events]}


def performed(at: str, checklist: str = "fl", equipment: str = "fl-01", **more: str) -> dict:
    return {"at": at, "performed": {"checklist": checklist, "equipment": equipment, **more}}


def test_checks_by_assigned_equipment_are_accepted() -> None:
    parsed = Scenario.from_dict(scenario(
        performed("2026-03-02T06:10:00Z"),
        {"at": "2026-03-03T12:00:00Z", "unassign": {"checklist": "fl", "equipment": ["fl-01"]}},
        performed("2026-03-03T13:00:00Z", performed_at="2026-03-03T11:00:00Z"),  # done while still assigned
        {"at": "2026-03-04T05:00:00Z", "assign": {"checklist": "fl", "equipment": ["fl-01"]}},
        performed("2026-03-04T06:00:00Z")))
    assert [e.action for e in parsed.events].count("performed") == 3


@pytest.mark.parametrize(("events", "field", "says"), [
    ([performed("2026-03-02T06:10:00Z", equipment="fl-02")], "events[3].performed.equipment", "not assigned"),
    ([performed("2026-03-02T06:10:00Z", checklist="crane")], "events[3].performed.equipment", "not assigned"),
    ([performed("2026-03-02T06:10:00Z", performed_at="2026-03-02T04:59:59Z")], "events[3].performed.equipment",
     "not assigned"),
    ([{"at": "2026-03-03T12:00:00Z", "unassign": {"checklist": "fl", "equipment": ["fl-01"]}},
      performed("2026-03-03T12:30:00Z")], "events[4].performed.equipment", "not assigned"),
    ([{"at": "2026-03-03T12:00:00Z", "delete_checklist": "fl"}, performed("2026-03-03T12:30:00Z",
                                                                          performed_at="2026-03-03T11:00:00Z")],
     "events[4].performed.checklist", "not after deleting it"),
])
def test_a_check_record_checks_would_refuse_is_refused_before_anything_runs(events: list[dict], field: str,
                                                                             says: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        Scenario.from_dict(scenario(*events))
    assert refused.value.field == field and says in refused.value.message
