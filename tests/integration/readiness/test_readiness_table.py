"""Readiness's state items and recheck schedules in the template's own table and schedule group (#33):
the conditional write on ``sequence``, the site listing (ByPeriod ``SITE#<site>#READINESS``), the
equipment's checks with their findings, and the one-time ``at()`` schedule replaced, then deleted."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from missed_checks.aws.scheduler import RecheckSchedules
from missed_checks.aws.table import keys
from missed_checks.aws.table.base import serialize
from missed_checks.aws.table.readiness import ReadinessItems
from missed_checks.readiness.readiness import Readiness, ReadinessRecord, State
from missed_checks.readiness.watching import recheck_schedule_name

T0 = datetime(2026, 3, 4, 5, 30, tzinfo=UTC)


@pytest.fixture
def table(local_stack) -> ReadinessItems:
    return ReadinessItems(local_stack.table_name)


def record(equipment_id: str, state: State, sequence: int, site_id: str | None = "north") -> ReadinessRecord:
    readiness = Readiness(equipment_id, site_id, state, T0, f"{state.value} because", ("D-1",) if
                          state is State.NOT_CLEARED else (), (), None, T0 + timedelta(days=1))
    return ReadinessRecord(readiness, sequence, None if sequence == 1 else State.CLEARED, T0, announced=False)


def test_a_change_is_written_once_per_sequence_and_read_back(table):
    first = record("FL-1", State.CLEARED, 1)
    assert table.write_readiness(first, expected_sequence=None)
    assert not table.write_readiness(first, expected_sequence=None)  # a second writer of the first state
    assert table.readiness_record("FL-1") == first
    second = record("FL-1", State.NOT_CLEARED, 2)
    assert not table.write_readiness(second, expected_sequence=2)  # stale
    assert table.write_readiness(second, expected_sequence=1)
    assert not table.mark_announced("FL-1", 1)
    assert table.mark_announced("FL-1", 2)
    table.note_recheck("FL-1", T0 + timedelta(days=1))
    stored = table.readiness_record("FL-1")
    assert stored is not None and stored.announced and stored.recheck_at == T0 + timedelta(days=1)
    assert stored.readiness == second.readiness and stored.previous is State.CLEARED
    table.note_recheck("FL-1", None)
    assert table.readiness_record("FL-1").recheck_at is None  # type: ignore[union-attr]
    table.note_recheck("FL-9", T0)  # no item: nothing written
    assert table.readiness_record("FL-9") is None


def test_a_sites_readiness_is_listed_by_equipment_a_page_at_a_time(table):
    for n in range(5):
        table.write_readiness(record(f"FL-{n}", State.CLEARED, 1), expected_sequence=None)
    table.write_readiness(record("FL-south", State.CLEARED, 1, "south"), expected_sequence=None)
    first = table.readiness_of_site("north", None, 3)
    assert [r.readiness.equipment_id for r in first.items] == ["FL-0", "FL-1", "FL-2"]
    rest = table.readiness_of_site("north", first.next_position, 3)
    assert [r.readiness.equipment_id for r in rest.items] == ["FL-3", "FL-4"] and rest.next_position is None


def test_a_check_passes_unless_a_critical_item_failed(table):
    def check(checklist: str, at: datetime, failed: list[dict]) -> None:
        performed = at.strftime("%Y-%m-%dT%H:%M:%SZ")
        item = {**keys.performed_key(checklist, "FL-1", performed), "type": "performed_check",
                "gsi1pk": keys.equipment_pk("FL-1"), "gsi1sk": keys.performed_index_sk(performed, checklist),
                "checklist_id": checklist, "equipment_id": "FL-1", "performed_at": performed,
                "failed_items": failed or None}
        table.client.put_item(TableName=table.name, Item=serialize(item))

    check("daily", T0, [{"item_id": "brakes", "critical": True}])
    check("daily", T0 + timedelta(minutes=1), [{"item_id": "mirror", "critical": False}])
    check("weekly", T0 + timedelta(minutes=2), [])
    check("daily", T0 + timedelta(hours=2), [])  # after until
    seen = table.checks_seen("FL-1", T0, T0 + timedelta(minutes=2))
    assert [(c.checklist_id, c.passed) for c in seen] == [("daily", False), ("daily", True), ("weekly", True)]


def test_the_recheck_schedule_is_one_time_replaced_and_deleted(local_stack):
    scheduler = RecheckSchedules(local_stack.schedule_group, "arn:aws:lambda:us-east-1:123456789012:function:r",
                                 "arn:aws:iam::123456789012:role/r", "arn:aws:sqs:us-east-1:123456789012:dlq")
    scheduler.plan_recheck("FL-1", T0)
    scheduler.plan_recheck("FL-1", T0 + timedelta(hours=1))  # replaced, not a second schedule
    client = scheduler.client
    found = client.get_schedule(Name=recheck_schedule_name("FL-1"), GroupName=local_stack.schedule_group)
    assert found["ScheduleExpression"] == "at(2026-03-04T06:30:00)"
    assert found["ScheduleExpressionTimezone"] == "UTC" and found["ActionAfterCompletion"] == "DELETE"
    assert json.loads(found["Target"]["Input"]) == {"kind": "recheck", "equipment_id": "FL-1"}
    scheduler.plan_recheck("FL-1", None)
    scheduler.plan_recheck("FL-1", None)  # none there: nothing to do
    names = [s["Name"] for s in client.list_schedules(GroupName=local_stack.schedule_group)["Schedules"]]
    assert recheck_schedule_name("FL-1") not in names
