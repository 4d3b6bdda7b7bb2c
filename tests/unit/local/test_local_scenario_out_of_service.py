"""Scenario events ``out_of_service`` and ``back_in_service`` (issue #23 item 1): validated like the
other events, errors naming the event and the field."""

from __future__ import annotations

from datetime import timedelta

import pytest

from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.errors import InvalidInput
from missed_checks_local.product.scenario import Scenario

RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"
AT = "2026-03-02T00:00:00Z"
SETUP = [{"at": AT, "put_checklist": {"id": "fl", "recurrence": RULE, "window": "PT8H"}},
         {"at": AT, "assign": {"checklist": "fl", "equipment": ["fl-01", "fl-02"]}}]
WEEK = {"equipment": "fl-01", "from": "2026-03-23T06:00:00+01:00", "to": "2026-03-30T06:00:00+02:00",
        "reason": "gearbox"}


def scenario(*events: dict) -> dict:
    return {"start": AT, "end": "2026-04-06T00:00:00Z", "events": [*SETUP, *events]}


def test_a_period_and_its_early_end_parse() -> None:
    parsed = Scenario.from_dict(scenario({"at": "2026-03-20T09:00:00Z", "out_of_service": WEEK},
                                         {"at": "2026-03-20T09:00:00Z", "out_of_service": {
                                             **WEEK, "equipment": "fl-02", "to": None, "by": "j.doe"}},
                                         {"at": "2026-03-25T09:00:00Z", "back_in_service": {"equipment": "fl-02"}}))
    week, open_ended, back = parsed.events[2:]
    assert isinstance(week.args, OutOfServicePeriod)
    assert (week.args.equipment_id, week.args.end - week.args.start) == ("fl-01", timedelta(hours=7 * 24 - 1))
    assert (week.args.recorded_by, week.args.recorded_at) == ("scenario", week.at)
    assert (open_ended.args.end, open_ended.args.recorded_by) == (None, "j.doe")
    assert back.args == {"equipment": "fl-02", "by": "scenario"}


@pytest.mark.parametrize(("event", "field"), [
    ({"out_of_service": {**WEEK, "to": "2026-03-23T06:00:00+01:00"}}, "events[2].out_of_service.to"),
    ({"out_of_service": {**WEEK, "to": "2026-03-22T06:00:00+01:00"}}, "events[2].out_of_service.to"),
    ({"out_of_service": {**WEEK, "to": "next week"}}, "events[2].out_of_service.to"),
    ({"out_of_service": {**WEEK, "from": "2026-03-23T06:00:00"}}, "events[2].out_of_service.from"),
    ({"out_of_service": {**WEEK, "colour": "red"}}, "events[2].out_of_service.colour"),
    ({"out_of_service": {**WEEK, "equipment": "bad id!"}}, "events[2].out_of_service.equipment"),
    ({"out_of_service": {**WEEK, "equipment": "fl-99"}}, "events[2].out_of_service.equipment"),  # never assigned
    ({"out_of_service": {**WEEK, "reason": ""}}, "events[2].out_of_service.reason"),
    ({"out_of_service": {k: v for k, v in WEEK.items() if k != "from"}}, "events[2].out_of_service.from"),
    ({"out_of_service": "fl-01"}, "events[2].out_of_service"),
    ({"back_in_service": {"equipment": "fl-01", "at": AT}}, "events[2].back_in_service.at"),
    ({"back_in_service": {"equipment": "fl-99"}}, "events[2].back_in_service.equipment"),
    ({"back_in_service": {}}, "events[2].back_in_service.equipment"),
])
def test_a_bad_event_names_its_field(event: dict, field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        Scenario.from_dict(scenario({"at": "2026-03-20T09:00:00Z", **event}))
    assert caught.value.field == field


def test_equipment_must_be_assigned_before_the_event() -> None:
    early = {"at": "2026-03-01T09:00:00Z", "out_of_service": WEEK}
    with pytest.raises(InvalidInput, match="not assigned to any checklist") as caught:
        Scenario.from_dict({**scenario(), "start": "2026-03-01T00:00:00Z", "events": [early, *SETUP]})
    assert caught.value.field == "events[0].out_of_service.equipment"


def test_what_the_table_would_refuse_when_played_is_refused_before_anything_runs() -> None:
    """Found by the generated scenarios (tests/unit/local/test_scenario_properties.py): back_in_service
    with no period in effect, or a period overlapping an earlier one, were accepted and failed the
    run half way; they are refused with the file, naming the event and field."""
    week = {"at": "2026-03-20T09:00:00Z", "out_of_service": WEEK}
    cases = [
        ([{"at": "2026-03-20T09:00:00Z", "back_in_service": {"equipment": "fl-01"}}],
         "events[2].back_in_service.equipment", "not out of service at 2026-03-20T09:00:00+00:00"),
        ([week, {"at": "2026-03-31T09:00:00Z", "back_in_service": {"equipment": "fl-01"}}],  # the week is over
         "events[3].back_in_service.equipment", "not out of service"),
        ([week, {"at": "2026-03-21T09:00:00Z", "out_of_service": {**WEEK, "from": "2026-03-29T00:00:00Z",
                                                                  "reason": "other"}}],
         "events[3].out_of_service.from", "already out of service"),
        ([week, {"at": "2026-03-23T05:00:00Z", "back_in_service": {"equipment": "fl-01"}}],  # at its very start
         "events[3].at", "is not after the period's from"),
    ]
    for events, field, says in cases:
        with pytest.raises(InvalidInput) as caught:
            Scenario.from_dict(scenario(*events))
        assert (caught.value.field, says in caught.value.message) == (field, True), caught.value
    # the same period twice is a re-run (nothing new), and ended early it can be recorded again after
    Scenario.from_dict(scenario(week, {**week, "at": "2026-03-21T09:00:00Z"},
                                {"at": "2026-03-24T09:00:00Z", "back_in_service": {"equipment": "fl-01"}},
                                {"at": "2026-03-25T09:00:00Z",
                                 "out_of_service": {**WEEK, "from": "2026-03-26T00:00:00Z", "reason": "again"}}))
