"""Scenario files with closure calendars (#23 item 2): ``put_calendar`` and ``closed_on`` validated,
every problem naming the event and field."""

from __future__ import annotations

from typing import Any

import pytest

from missed_checks.errors import InvalidInput
from missed_checks_local.product.scenario import Scenario

RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY"


def scenario(*events: dict[str, Any]) -> Scenario:
    return Scenario.from_dict({"start": "2026-03-01T00:00:00Z", "end": "2026-04-01T00:00:00Z", "events": list(events)})


def calendar(at: str, dates: Any, **more: Any) -> dict[str, Any]:
    return {"at": at, "put_calendar": {"id": "site", "dates": dates, **more}}


def checklist(at: str, **more: Any) -> dict[str, Any]:
    return {"at": at, "put_checklist": {"id": "c", "recurrence": RULE, **more}}


def test_a_valid_scenario_keeps_the_dates_sorted_and_the_references() -> None:
    played = scenario(calendar("2026-03-01T00:00:00Z", ["2026-04-03", "2026-03-09", "2026-04-03"]),
                      checklist("2026-03-01T01:00:00Z", closed_on=["site"]), checklist("2026-03-02T00:00:00Z"))
    first, put, edit = played.events
    assert [d.isoformat() for d in first.args["dates"]] == ["2026-03-09", "2026-04-03"]
    assert put.args["closed_on"] == ("site",)
    assert edit.args["closed_on"] is None  # absent: the checklist keeps its calendars


@pytest.mark.parametrize(("events", "field", "says"), [
    ([calendar("2026-03-01T00:00:00Z", ["2026-04-03", "2026-04-04", "2026-04-31"])],
     "events[0].put_calendar.dates[2]", "not a calendar date"),
    ([calendar("2026-03-01T00:00:00Z", "2026-04-03")], "events[0].put_calendar.dates", "not a list"),
    ([calendar("2026-03-01T00:00:00Z", [], colour="red")], "events[0].put_calendar.colour", "unknown field"),
    ([{"at": "2026-03-01T00:00:00Z", "put_calendar": {"id": "bad id", "dates": []}}],
     "events[0].put_calendar.id", "calendar id"),
    ([checklist("2026-03-01T00:00:00Z", closed_on=["site"])], "events[0].put_checklist.closed_on[0]",
     "no calendar 'site'"),
    ([checklist("2026-03-01T00:00:00Z", closed_on=["site"]), calendar("2026-03-02T00:00:00Z", [])],
     "events[0].put_checklist.closed_on[0]", "put_calendar it earlier"),
    ([calendar("2026-03-01T00:00:00Z", []), checklist("2026-03-01T01:00:00Z", closed_on=["site", "site"])],
     "events[1].put_checklist.closed_on[1]", "repeats"),
])
def test_bad_calendar_events_name_the_event_and_field(events: list[dict[str, Any]], field: str, says: str) -> None:
    with pytest.raises(InvalidInput) as error:
        scenario(*events)
    assert error.value.field == field
    assert says in error.value.message
