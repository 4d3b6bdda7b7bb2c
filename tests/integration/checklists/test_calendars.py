"""Closure calendars (#23 item 2) and two refusals of #23 item 5 against the template's own table:
references kept in one transaction, refusals that write nothing, schedule-sync re-syncing the
checklists of a calendar whose dates changed, and the ``calendar`` commands."""

from __future__ import annotations

import copy
import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import moto.scheduler.models
import pytest
from boto3.dynamodb.types import TypeSerializer

from missed_checks import clock
from missed_checks.aws.table import ChecklistTable, Conflict, keys
from missed_checks.checklists.saving import save_checklist
from missed_checks.equipment.assignments import shard_of
from missed_checks.errors import InvalidInput

SAMPLE = json.loads((Path(__file__).resolve().parents[3] / "events" / "schedule_sync.json").read_text())
RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY;COUNT=5"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
_serializer = TypeSerializer()


@pytest.fixture
def table(local_stack) -> ChecklistTable:
    return ChecklistTable(local_stack.table_name)


def item_count(table: ChecklistTable) -> int:
    return len(table.client.scan(TableName=table.name)["Items"])


# -- references ---------------------------------------------------------------------------------------
def test_a_checklist_names_calendars_that_exist_and_they_know_it(table):
    table.put_calendar("holidays", [date(2026, 3, 4)], now=T0, description="site", by="tests")
    table.put_calendar("shutdown", [date(2026, 3, 5)], now=T0, by="tests")
    written = save_checklist(table, "c1", recurrence=RULE, window="PT8H", now=T0, closed_on=["holidays", "shutdown"],
                             by="tests")
    assert written.closed_on == ("holidays", "shutdown")
    read = table.get_checklist("c1")
    assert read.closed_on == ("holidays", "shutdown")
    assert [w.start.day for w in read.parsed().windows(T0, T0 + timedelta(days=10))] == [2, 3, 6]
    assert table.get_calendar("holidays").used_by == {"c1"}
    # dropping one calendar releases it; an edit without closed_on keeps the list
    save_checklist(table, "c1", recurrence=RULE, window="PT8H", now=T0, closed_on=["shutdown"], by="tests")
    assert table.get_calendar("holidays").used_by == frozenset()
    save_checklist(table, "c1", recurrence=RULE, window="PT8H", now=T0, name="renamed", by="tests")
    assert table.get_checklist("c1").closed_on == ("shutdown",)
    assert [c.closed_on for c in table.list_checklists()] == [("shutdown",)]


def test_an_unknown_calendar_is_refused_naming_its_position_and_nothing_is_written(table):
    table.put_calendar("holidays", [date(2026, 3, 4)], now=T0, by="tests")
    before = item_count(table)
    with pytest.raises(InvalidInput) as error:
        save_checklist(table, "c1", recurrence=RULE, now=T0, closed_on=["holidays", "x"], by="tests")
    assert error.value.field == "closed_on[1]" and "no calendar 'x'" in error.value.message
    assert item_count(table) == before and table.get_calendar("holidays").used_by == frozenset()


def test_a_calendar_deleted_between_the_read_and_the_write_cancels_the_transaction(table, monkeypatch):
    table.put_calendar("holidays", [date(2026, 3, 4)], now=T0, by="tests")
    read = table.get_calendars
    monkeypatch.setattr(table, "get_calendars", lambda ids: (found := read(list(ids)),
                                                             table.delete_calendar("holidays", by="tests"), found)[-1])
    with pytest.raises(InvalidInput, match=r"closed_on\[0\]: no calendar 'holidays' \(it was deleted meanwhile\)"):
        save_checklist(table, "c1", recurrence=RULE, now=T0, closed_on=["holidays"], by="tests")
    monkeypatch.undo()
    assert table.get_checklist("c1") is None


def test_a_referenced_calendar_cannot_be_deleted_and_the_refusal_names_the_checklists(table):
    table.put_calendar("holidays", [date(2026, 3, 4)], now=T0, by="tests")
    for checklist_id in ("c2", "c1"):
        save_checklist(table, checklist_id, recurrence=RULE, now=T0, closed_on=["holidays"], by="tests")
    with pytest.raises(Conflict, match="referenced by checklist\\(s\\) c1, c2"):
        table.delete_calendar("holidays", by="tests")
    assert table.get_calendar("holidays") is not None
    table.delete_checklist("c1", by="tests")
    save_checklist(table, "c2", recurrence=RULE, now=T0, closed_on=[], by="tests")
    assert table.delete_calendar("holidays", by="tests") is True
    assert table.delete_calendar("holidays", by="tests") is False


def test_every_put_is_a_revision_kept_after_the_calendar_is_gone(table):
    table.put_calendar("holidays", [date(2026, 3, 4)], now=T0,
                       by="tests")
    second = table.put_calendar("holidays", [date(2026, 3, 5), date(2026, 3, 4)], now=T0 + timedelta(days=1),
                                by="tests")
    assert (second.revision, second.dates, second.description) == (2, (date(2026, 3, 4), date(2026, 3, 5)), "")
    table.delete_calendar("holidays", by="tests")
    assert table.calendar_revision("holidays", 1).dates == (date(2026, 3, 4),)
    # continues, never reuses
    assert table.put_calendar("holidays", [], now=T0 + timedelta(days=2), by="tests").revision == 3


def test_each_revision_keeps_who_put_it_and_when_whatever_is_put_later(table):
    """No record loses who made it: each revision's own record holds its author and instant, and a
    later put (by someone else; every put names who, #31) is a new revision that leaves them as they were."""
    table.put_calendar("holidays", [date(2026, 3, 4)], now=T0, by="alice")
    table.put_calendar("holidays", [date(2026, 3, 5)], now=T0 + timedelta(days=1), by="bob")
    third = table.put_calendar("holidays", [date(2026, 3, 6)], now=T0 + timedelta(days=2), by="carol")
    assert [(r.revision, r.updated_by, r.updated_at) for r in
            (table.calendar_revision("holidays", n) for n in (1, 2, 3))] == [
        (1, "alice", T0), (2, "bob", T0 + timedelta(days=1)), (3, "carol", T0 + timedelta(days=2))]
    current = table.get_calendar("holidays")
    assert (current.revision, current.updated_by) == (third.revision, "carol")  # carol's: not bob's
    with pytest.raises(InvalidInput) as refused:
        table.put_calendar("holidays", [], now=T0, by=" \n")
    assert refused.value.field == "by"


def test_a_calendar_edited_concurrently_is_a_conflict(table, monkeypatch):
    table.put_calendar("holidays", [date(2026, 3, 4)], now=T0, by="tests")
    stale = table.get_calendar("holidays")
    table.put_calendar("holidays", [date(2026, 3, 6)], now=T0, by="tests")
    monkeypatch.setattr(table, "get_calendar", lambda calendar_id: stale)
    with pytest.raises(Conflict, match="changed while being written"):
        table.put_calendar("holidays", [date(2026, 3, 9)], now=T0, by="tests")
    monkeypatch.undo()
    assert table.get_calendar("holidays").dates == (date(2026, 3, 6),)


# -- unassignment before the assignment began (#23 item 5) ---------------------------------------------
def test_an_unassignment_before_the_assignment_began_is_refused_and_nothing_written(table):
    save_checklist(table, "c1", recurrence=RULE, now=T0, by="tests")
    table.assign_equipment("c1", ["fl-1"], at=T0, by="tests")
    table.assign_equipment("c1", ["fl-2"], at=T0 + timedelta(days=2), by="tests")
    with pytest.raises(InvalidInput) as error:
        table.unassign_equipment("c1", ["fl-1", "fl-2"], at=T0 + timedelta(days=1), by="tests")
    assert error.value.field == "at" and "fl-2's assignment to c1 began (2026-03-03T09:00:00Z)" in error.value.message
    assert all(a.unassigned_at is None for a in table.assignments("c1"))
    assert table.unassign_equipment("c1", ["fl-1", "fl-2"], at=T0 + timedelta(days=2), by="tests") == 2


def test_the_condition_holds_for_a_writer_that_skips_the_check(table, monkeypatch):
    save_checklist(table, "c1", recurrence=RULE, now=T0, by="tests")
    table.assign_equipment("c1", ["fl-1"], at=T0 + timedelta(days=2), by="tests")
    monkeypatch.setattr(table, "check_unassignment",  # a writer that does not read first
                        lambda checklist_id, ids, at: [keys.assignment_key(checklist_id, shard_of(e), e) for e in ids])
    with pytest.raises(InvalidInput, match="before fl-1's assignment"):
        table.unassign_equipment("c1", ["fl-1"], at=T0, by="tests")
    assert table.assignments("c1")[0].unassigned_at is None


# -- schedule-sync ------------------------------------------------------------------------------------
def calendar_record(table: ChecklistTable, event_name: str, calendar_id: str, old: dict | None, seq: int) -> dict:
    record = copy.deepcopy(SAMPLE["Records"][0])
    record["eventName"], record["eventID"] = event_name, f"calendar-{seq}"
    images = record["dynamodb"]
    images["Keys"] = {"pk": {"S": keys.calendar_pk(calendar_id)}, "sk": {"S": keys.CALENDAR_SK}}
    images["SequenceNumber"] = f"{2000 + seq:028d}"
    images.pop("NewImage", None)
    images.pop("OldImage", None)
    new = table._get(keys.calendar_key(calendar_id))
    if new is not None:
        images["NewImage"] = {k: _serializer.serialize(v) for k, v in new.items()}
    if old is not None:
        images["OldImage"] = {k: _serializer.serialize(v) for k, v in old.items()}
    return record


def test_schedule_sync_follows_a_calendar_change(local_stack, table, monkeypatch):
    clock.set_source(lambda: T0)
    monkeypatch.setattr(moto.scheduler.models, "utcnow", lambda: T0.replace(tzinfo=None))
    try:
        table.put_calendar("holidays", [], now=T0, by="tests")
        save_checklist(table, "c1", recurrence=RULE, window="PT8H", now=T0, closed_on=["holidays"], by="tests")
        runtime = local_stack.lambda_runtime
        scheduler = local_stack.client("scheduler")

        def invoke(record: dict) -> None:
            invocation = runtime.invoke("ScheduleSyncFunction", {"Records": [record]})
            assert invocation.ok and invocation.result == {"batchItemFailures": []}, invocation.error

        insert = copy.deepcopy(SAMPLE["Records"][0])
        insert["dynamodb"]["Keys"] = {"pk": {"S": "CHECKLIST#c1"}, "sk": {"S": "CHECKLIST"}}
        insert["dynamodb"]["NewImage"] = {k: _serializer.serialize(v)
                                          for k, v in table.get_checklist_item("c1").items()}
        insert["eventName"] = "INSERT"
        invoke(insert)
        before = scheduler.get_schedule(Name="c1", GroupName=local_stack.schedule_group)
        # the last of the five windows (6 March) closes: the schedule ends a day earlier
        old = table._get(keys.calendar_key("holidays"))
        table.put_calendar("holidays", [date(2026, 3, 6)], now=T0, by="tests")
        invoke(calendar_record(table, "MODIFY", "holidays", old, 1))
        assert "re-syncing its checklists" in runtime.invocations[-1].logs
        after = scheduler.get_schedule(Name="c1", GroupName=local_stack.schedule_group)
        assert after["EndDate"] == before["EndDate"] - timedelta(days=1)
        assert table.get_checklist_item("c1")["schedule"]["exact"] is False
        # a change of who references it (used_by) alone re-syncs nothing
        old = table._get(keys.calendar_key("holidays"))
        save_checklist(table, "c2", recurrence=RULE, now=T0, closed_on=["holidays"], by="tests")
        calls_before = len(runtime.invocations)
        invoke(calendar_record(table, "MODIFY", "holidays", old, 2))
        assert "re-syncing" not in " ".join(i.logs for i in runtime.invocations[calls_before:])
    finally:
        clock.set_source(None)
