"""schedule-sync's domain with items written by hand (console, ``aws dynamodb put-item/update-item``):
whatever an item holds, the rule is synced or takes the invalid-rule path (schedule deleted,
``sync_error`` noted, the dead-letter queue told which checklist), never an exception."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest

from missed_checks.aws.table.checklists import checklist_image, checklist_of
from missed_checks.checklists.schedule import Target
from missed_checks.checklists.schedule_sync import Action, ChecklistImage, sync_checklist, takes_effect_at
from missed_checks.errors import InvalidInput, InvalidRecurrence
from tests.fakes import InMemorySchedules, InMemoryTable

NOW = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
TARGET = Target("arn:aws:states:us-east-1:123456789012:stateMachine:sm", "arn:aws:iam::123456789012:role/r",
                "arn:aws:sqs:us-east-1:123456789012:dlq", 10)
RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"


def item(**attributes: Any) -> dict[str, Any]:
    base = {"pk": "CHECKLIST#forklift", "sk": "CHECKLIST", "checklist_id": "forklift", "recurrence": RULE,
            "window": "PT8H", "revision": Decimal(3), "schedule": {"fingerprint": "old", "state": "ENABLED"}}
    return {**base, **attributes}


def sync(stored: dict[str, Any], schedules: InMemorySchedules | None = None,
         ) -> tuple[Any, InMemoryTable, InMemorySchedules, list]:
    table = InMemoryTable(checklist_items={"forklift": stored})
    noted = stored.get("schedule")
    exists = isinstance(noted, Mapping) and bool(noted.get("fingerprint"))  # the item says it was scheduled
    schedules, rejected = schedules or InMemorySchedules(existing={"forklift"} if exists else set()), []
    result = sync_checklist("forklift", table=table, schedules=schedules, target=TARGET, group_name="g", now=NOW,
                            report_rejected=lambda *args: rejected.append(args))
    return result, table, schedules, rejected


@pytest.mark.parametrize(
    ("attributes", "field", "fragment"),
    [
        ({"recurrence": "DTSTART:00010101T000000Z\nRRULE:FREQ=DAILY"}, "recurrence", "outside the years 1970 to 2199"),
        ({"recurrence": "DTSTART:99991231T230000Z\nRRULE:FREQ=DAILY"}, "recurrence", "outside the years 1970 to 2199"),
        ({"window": "PT99999999999999999999H"}, "window", "longer than 366 days"),
        ({"window": Decimal(8)}, "window", "is a number (Decimal('8')), not a duration string"),
        ({"timezone": Decimal(1), "recurrence": "DTSTART:20260302T060000\nRRULE:FREQ=DAILY"}, "timezone",
         "is a number (Decimal('1')), not an IANA zone name"),
        ({"recurrence": Decimal(5)}, "recurrence", "is a number"),
        ({"status": Decimal(1)}, "status", "is not ACTIVE or PAUSED"),
        ({"created_at": "0001-01-01T00:00:00Z"}, "created_at", "outside the years 1970 to 2299"),
        ({"evaluated_until": Decimal(0)}, "evaluated_until", "is a number"),
        ({"revision": "three"}, "revision", "not a whole number"),
        ({"revision": Decimal("1.5")}, "revision", "not a whole number"),
    ],
)
def test_an_unusable_item_takes_the_invalid_rule_path(attributes: dict[str, Any], field: str, fragment: str) -> None:
    result, table, schedules, rejected = sync(item(**attributes))

    assert result.action is Action.INVALID
    assert result.error["field"] == field and fragment in result.error["message"], result.error
    assert schedules.deleted == ["forklift"] and schedules.upserted == []  # the old schedule stops firing
    ((checklist_id, error, revision),) = rejected  # the dead-letter queue hears of it, with the checklist
    assert (checklist_id, error) == ("forklift", result.error)
    (note,) = table.notes
    assert note["error"]["field"] == field and note["schedule"] is None
    assert note["revision"] == revision == (0 if field == "revision" else 3)


def test_the_same_error_on_the_same_revision_is_reported_once() -> None:
    bad = item(recurrence="DTSTART:00010101T000000Z\nRRULE:FREQ=DAILY")
    first, table, _, _ = sync(bad)
    noted = {**bad, "sync_error": {**table.notes[0]["error"], "revision": Decimal(3)}}
    again, _, schedules, rejected = sync(noted)
    assert (first.action, again.action) == (Action.INVALID, Action.SKIPPED)
    assert rejected == [] and schedules.deleted == []


@pytest.mark.parametrize("notes", [{"schedule": "ENABLED"}, {"schedule": Decimal(1)}, {"sync_error": "oops"},
                                   {"sync_error": {"revision": "x", "field": 1}}])
def test_the_sync_notes_edited_into_something_else_are_ignored(notes: dict[str, Any]) -> None:
    result, table, schedules, _ = sync(item(**notes))
    assert result.action is (Action.CREATED if "schedule" in notes else Action.UPDATED)
    assert len(schedules.upserted) == 1 and table.notes[0]["error"] is None


def test_an_item_without_revision_is_adopted_so_the_notes_apply() -> None:
    stored = item(recurrence="DTSTART:00010101T000000Z\nRRULE:FREQ=DAILY")
    del stored["revision"]
    result, table, _, rejected = sync(stored)
    assert result.action is Action.INVALID and table.adopted == 1
    assert table.notes[0]["revision"] == 0 and rejected[0][2] == 0
    _, with_revision, _, _ = sync(item())
    assert with_revision.adopted == 0


def test_an_id_scheduler_cannot_name_still_takes_the_invalid_rule_path() -> None:
    result, table, _, rejected = sync(item(window=Decimal(8)), InMemorySchedules(refuse_names=True))
    assert result.action is Action.INVALID and rejected and table.notes


def test_the_key_names_the_checklist_not_a_hand_edited_attribute() -> None:
    checklist = checklist_of(item(checklist_id="someone-else"))
    assert checklist.checklist_id == "forklift"
    with pytest.raises(InvalidInput, match="checklist_id"):
        checklist_of({"recurrence": RULE})


def test_a_number_stored_as_window_is_named_as_such() -> None:
    checklist = checklist_of(item(window=Decimal(8), grace=""))
    assert checklist.grace is None  # an empty attribute is no attribute
    with pytest.raises(InvalidRecurrence) as caught:
        checklist.parsed()
    assert (caught.value.field, caught.value.message.split(",")[0]) == ("window", "is a number (Decimal('8'))")


# --- when the rule takes effect ------------------------------------------------------------------

RECORDED = datetime(2026, 3, 9, 10, 0, 5, tzinfo=UTC)


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        ({"created_at": "2026-01-01T00:00:00Z", "effective_from": "2026-01-01T00:00:00Z"}, RECORDED),
        ({"created_at": "2026-01-01T00:00:00Z"}, RECORDED),  # no effective_from at all
        ({}, RECORDED),
        ({"effective_from": "yesterday"}, RECORDED),
        ({"effective_from": Decimal(5)}, RECORDED),
        ({"effective_from": "2026-03-09T10:00:05Z"}, None),  # our writer: effective_from = the write
        ({"effective_from": "2026-03-09T11:00:05+01:00"}, None),
        ({"effective_from": "2027-01-01T00:00:00Z"}, None),  # later already: never moved back
    ],
)
def test_an_insert_takes_effect_when_it_reached_the_table(image: dict[str, Any], expected: datetime | None) -> None:
    assert takes_effect_at("INSERT", None, checklist_image({"recurrence": RULE, **image}), RECORDED) == expected


def test_a_hand_edit_of_the_rule_takes_effect_at_the_edit_and_other_records_do_not_move_it() -> None:
    item = {"recurrence": RULE, "effective_from": "2026-01-01T00:00:00Z", "status": "ACTIVE"}
    old = checklist_image(item)

    def changed(**fields: object) -> ChecklistImage | None:  # the stream's new image, read by the adapter
        return checklist_image({**item, **fields})

    assert takes_effect_at("MODIFY", old, changed(window="PT4H"), RECORDED) == RECORDED
    assert takes_effect_at("MODIFY", changed(status="PAUSED"), old, RECORDED) == RECORDED
    assert takes_effect_at("MODIFY", old, changed(window="PT4H", effective_from="2026-03-09T10:00:05Z"),
                           RECORDED) is None  # the writer moved it itself
    assert takes_effect_at("MODIFY", old, changed(name="renamed"), RECORDED) is None
    assert takes_effect_at("REMOVE", old, None, RECORDED) is None
    assert takes_effect_at("INSERT", None, old, None) is None  # no record time: nothing to move to
