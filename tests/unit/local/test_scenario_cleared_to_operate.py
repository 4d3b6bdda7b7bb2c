"""A scenario's items, answers and defect resolutions (#33): refused with the file, naming the event
and the field, before anything runs; what parses is what ``checklist put --file``, ``POST /checks``
and ``defect resolve`` take."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest

from missed_checks.checklists.check_item import ItemKind
from missed_checks.errors import InvalidInput
from missed_checks_local.product.scenario import Scenario

RULE = "DTSTART;TZID=Europe/Berlin:20261021T060000\nRRULE:FREQ=DAILY"
AT = "2026-10-20T20:00:00Z"
BRAKES = {"id": "brakes", "label": "Brakes work", "kind": "pass_fail", "critical": True}


def put(**more: Any) -> dict[str, Any]:
    return {"at": AT, "put_checklist": {"id": "fl", "recurrence": RULE, "window": "PT8H", **more}}


def scenario(*events: dict[str, Any]) -> dict[str, Any]:
    return {"start": AT, "end": "2026-10-28T00:00:00Z",
            "events": [put(items=[BRAKES], pre_use=True),
                       {"at": AT, "assign": {"checklist": "fl", "equipment": "FL-1"}}, *events]}


def test_the_bundled_scenario_parses_with_its_items_answers_and_resolutions() -> None:
    text = resources.files("missed_checks_local").joinpath("scenarios", "cleared-to-operate.json").read_text("utf-8")
    parsed = Scenario.from_dict(json.loads(text))
    first = parsed.events[0].args
    assert [item.item_id for item in first["items"]] == ["brakes", "horn", "hydraulic_oil"]
    assert first["items"][2].kind is ItemKind.CHOICE and first["items"][2].failing_choices == ("empty",)
    assert first["pre_use"] is True and first["clear_on_pass"] is False
    assert [e.action for e in parsed.events].count("resolve_defect") == 2
    assert parsed.equipment_ids == ["FL-1", "FL-2", "RT-1"]
    answers = [e.args["answers"] for e in parsed.events if e.action == "performed"]
    assert answers[1] == {"brakes": "fail", "horn": "pass", "hydraulic_oil": "ok"}


def test_a_checklist_without_items_keeps_them_unset() -> None:
    parsed = Scenario.from_dict({"start": AT, "end": "2026-10-28T00:00:00Z", "events": [put()]})
    assert parsed.events[0].args["items"] is None and parsed.events[0].args["pre_use"] is None


@pytest.mark.parametrize(("events", "field", "says"), [
    ([put(items=[{**BRAKES, "kind": "traffic light"}])], "events[2].put_checklist.items[0].kind", "traffic light"),
    ([put(items=[BRAKES, BRAKES])], "events[2].put_checklist.items[1].id", "brakes"),
    ([put(pre_use="yes")], "events[2].put_checklist.pre_use", "true or false"),
    ([put(clear_on_pass=1)], "events[2].put_checklist.clear_on_pass", "true or false"),
    ([{"at": "2026-10-21T05:00:00Z", "performed": {"checklist": "fl", "equipment": "FL-1", "answers": "pass"}}],
     "events[2].performed.answers", "object of answers"),
    ([{"at": "2026-10-21T05:00:00Z", "resolve_defect": {"checklist": "fl", "equipment": "FL-1",
                                                          "found_at": "2026-10-21T06:00:00Z", "note": "ok",
                                                          "by": "sam"}}],
     "events[2].resolve_defect.found_at", "after the event's 'at'"),
    ([{"at": "2026-10-21T05:00:00Z", "resolve_defect": {"checklist": "fl", "equipment": "FL-1",
                                                          "found_at": "2026-10-21T04:00:00Z", "by": "sam"}}],
     "events[2].resolve_defect.note", "required"),
    ([{"at": "2026-10-21T05:00:00Z", "resolve_defect": {"checklist": "crane", "equipment": "FL-1",
                                                          "found_at": "2026-10-21T04:00:00Z", "note": "ok",
                                                          "by": "sam"}}],
     "events[2].resolve_defect.checklist", "no checklist 'crane'"),
])
def test_bad_items_answers_and_resolutions_are_refused_with_the_file(events: list[dict[str, Any]], field: str,
                                                                      says: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        Scenario.from_dict(scenario(*events))
    assert refused.value.field == field and says in refused.value.message


def test_a_run_says_how_many_readiness_changes_and_defects_it_had() -> None:
    from missed_checks_local.product.readiness import readiness_line

    events = [{"readiness": "cleared"}, {"readiness": "unchecked"}, {"readiness": "cleared"},
              {"readiness": "not_cleared"}]
    defects = [{"status": "resolved", "resolved_how": "supervisor"}, {"status": "open", "resolved_how": None},
               {"status": "resolved", "resolved_how": "passing_check"}]
    assert readiness_line(events, defects) == (
        "Readiness changes announced: 4 (2 cleared, 1 not_cleared, 1 unchecked); defects: 3 (1 open, "
        "1 resolved by a supervisor, 1 cleared by a passing check).")
    assert readiness_line([], []) == "Readiness changes announced: 0; defects: 0."
