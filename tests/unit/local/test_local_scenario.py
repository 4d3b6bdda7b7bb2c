"""Scenario files: validation with errors that name the event and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from missed_checks.errors import InvalidInput
from missed_checks_local.product.scenario import Scenario
from missed_checks_ops.cli.local import load_scenario

RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"
PUT = {"at": "2026-03-02T00:00:00Z", "put_checklist": {"id": "fl", "recurrence": RULE, "window": "PT8H"}}


def scenario(*events: dict, **top: object) -> dict:
    return {"start": "2026-03-02T00:00:00Z", "end": "2026-03-09T00:00:00Z", "events": list(events), **top}


def field_of(data: dict) -> str:
    with pytest.raises(InvalidInput) as caught:
        Scenario.from_dict(data)
    return caught.value.field


def test_valid_scenario_is_sorted_by_time_keeping_file_order_for_ties() -> None:
    parsed = Scenario.from_dict(
        scenario(
            {"at": "2026-03-03T08:00:00Z", "performed": {"checklist": "fl", "equipment": "a"}},
            PUT,
            {"at": "2026-03-02T00:00:00Z", "assign": {"checklist": "fl", "equipment": "a"}},
        )
    )
    assert [(e.index, e.action) for e in parsed.events] == [(1, "put_checklist"), (2, "assign"), (0, "performed")]
    assert parsed.events[1].args == {"checklist": "fl", "equipment": ["a"]}
    assert parsed.events[2].args["performed_at"] == parsed.events[2].at  # defaults to "at"
    assert parsed.checklist_ids == ["fl"]


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"start": "2026-03-02T00:00:00Z", "events": []}, "end"),
        (scenario(surprise=1), "surprise"),
        ({**scenario(), "end": "2026-03-01T00:00:00Z"}, "end"),
        ({**scenario(), "start": "yesterday"}, "start"),
        (scenario({"put_checklist": PUT["put_checklist"]}), "events[0].at"),
        (scenario({"at": "2026-03-02T00:00"}), "events[0].at"),
        (scenario({"at": "2026-04-02T00:00:00Z", "pause_checklist": "fl"}), "events[0].at"),
        (scenario({"at": "2026-03-02T00:00:00Z", "jump": "fl"}), "events[0].jump"),
        (scenario({"at": "2026-03-02T00:00:00Z"}), "events[0]"),
        (scenario(PUT, {"at": "2026-03-02T00:00:00Z", "pause_checklist": "fl", "resume_checklist": "fl"}), "events[1]"),
        (scenario({"at": "2026-03-02T00:00:00Z", "put_checklist": {"id": "fl"}}), "events[0].put_checklist.recurrence"),
        (
            scenario({"at": "2026-03-02T00:00:00Z", "put_checklist": {"id": "bad id!", "recurrence": RULE}}),
            "events[0].put_checklist.id",
        ),
        (
            scenario({"at": "2026-03-02T00:00:00Z", "put_checklist": {"id": "fl", "recurrence": RULE, "colour": 1}}),
            "events[0].put_checklist.colour",
        ),
        (
            scenario(
                {"at": "2026-03-02T00:00:00Z", "put_checklist": {"id": "fl", "recurrence": "RRULE:FREQ=SECONDLY"}}
            ),
            "events[0].put_checklist.recurrence",
        ),
        (
            scenario(
                {"at": "2026-03-02T00:00:00Z", "put_checklist": {"id": "fl", "recurrence": RULE, "window": "8 hours"}}
            ),
            "events[0].put_checklist.window",
        ),
        (
            scenario(PUT, {"at": "2026-03-02T00:00:00Z", "assign": {"checklist": "fl", "equipment": []}}),
            "events[1].assign.equipment",
        ),
        (
            scenario({"at": "2026-03-02T00:00:00Z", "assign": {"checklist": "nope", "equipment": "a"}}),
            "events[0].assign.checklist",
        ),
        (
            scenario(
                PUT,
                {"at": "2026-03-03T00:00:00Z", "delete_checklist": "fl"},
                {"at": "2026-03-04T00:00:00Z", "pause_checklist": "fl"},
            ),
            "events[2].pause_checklist",
        ),
        (
            scenario(
                PUT,
                {
                    "at": "2026-03-03T00:00:00Z",
                    "performed": {"checklist": "fl", "equipment": "a", "performed_at": "2026-03-04T00:00:00Z"},
                },
            ),
            "events[1].performed.performed_at",
        ),
        (
            scenario(PUT, {"at": "2026-03-03T00:00:00Z", "fail_next_firing": {"checklist": "fl", "count": 0}}),
            "events[1].fail_next_firing.count",
        ),
    ],
)
def test_invalid_scenarios_name_the_event_and_field(data: dict, field: str) -> None:
    assert field_of(data) == field


DISMISS = {"checklist": "fl", "equipment": "a", "window_start": "2026-03-02T05:00:00Z", "reason": "in the workshop",
           "by": "j.doe"}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"reason": " "}, "events[1].dismiss.reason"),
        ({"by": None}, "events[1].dismiss.by"),
        ({"window_start": "Monday"}, "events[1].dismiss.window_start"),
        ({"window_start": "2026-03-04T05:00:00Z"}, "events[1].dismiss.window_start"),  # after 'at'
        ({"equipment": "no spaces"}, "events[1].dismiss.equipment"),
        ({"checklist": "nope"}, "events[1].dismiss.checklist"),
        ({"why": "x"}, "events[1].dismiss.why"),
    ],
)
def test_a_dismissal_names_what_is_wrong(change: dict, field: str) -> None:
    event = {"at": "2026-03-03T08:00:00Z", "dismiss": {**DISMISS, **change}}
    assert field_of(scenario(PUT, event)) == field


def test_a_dismissal_may_follow_its_checklist_deletion() -> None:
    parsed = Scenario.from_dict(scenario(PUT, {"at": "2026-03-03T00:00:00Z", "delete_checklist": "fl"},
                                         {"at": "2026-03-03T08:00:00Z", "dismiss": DISMISS}))
    assert parsed.events[-1].args["reason"] == "in the workshop"
    assert parsed.events[-1].args["window_start"].isoformat() == "2026-03-02T05:00:00+00:00"


def test_unvalidated_rule_is_accepted_as_written() -> None:
    parsed = Scenario.from_dict(
        scenario(
            {
                "at": "2026-03-02T00:00:00Z",
                "put_checklist": {"id": "hand-edit", "recurrence": "RRULE:FREQ=SECONDLY", "validate": False},
            }
        )
    )
    assert parsed.events[0].args["validate"] is False


def test_load_scenario_reports_unreadable_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="cannot read"):
        load_scenario(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(InvalidInput, match="not valid JSON"):
        load_scenario(broken)
    good = tmp_path / "week.json"
    good.write_text(json.dumps(scenario(PUT)))
    assert load_scenario(good).name == "week"


def test_bundled_demo_scenario_is_valid() -> None:
    from importlib import resources

    text = resources.files("missed_checks_local").joinpath("scenarios", "demo.json").read_text("utf-8")
    demo = Scenario.from_dict(json.loads(text))
    actions = {event.action for event in demo.events}
    assert {"put_checklist", "assign", "unassign", "performed", "pause_checklist", "resume_checklist",
            "dismiss"} <= actions
    assert any(e.action == "put_checklist" and not e.args["validate"] for e in demo.events)
    assert (demo.end - demo.start).days >= 35
