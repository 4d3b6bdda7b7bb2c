"""Out-of-service periods in the template's own table (issue #23 item 1): one Query per window read,
overlap and re-run rules, ending a period early."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from missed_checks.aws.table import ChecklistTable, NotFound
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.errors import InvalidInput

T0 = datetime(2026, 3, 2, 5, 0, tzinfo=UTC)
DAY = timedelta(days=1)


def period(equipment_id: str, start: datetime, end: datetime | None, reason: str = "workshop") -> OutOfServicePeriod:
    return OutOfServicePeriod.create(equipment_id=equipment_id, start=start, end=end, reason=reason,
                                     recorded_by="j.doe", recorded_at=T0)


@pytest.fixture
def table(local_stack) -> ChecklistTable:
    return ChecklistTable(local_stack.table_name)


def test_the_periods_overlapping_a_window_come_from_one_query(table, monkeypatch):
    periods = [period("fl-1", T0 - 10 * DAY, T0 - 5 * DAY),  # over before the window
               period("fl-2", T0 - DAY, T0 + timedelta(hours=1)),  # ends inside it
               period("fl-3", T0 + timedelta(hours=7), None),  # starts inside it, open-ended
               period("fl-4", T0 + timedelta(hours=8), T0 + 2 * DAY),  # starts as it ends
               period("fl-5", T0 - DAY, T0)]  # ends as it starts
    for each in periods:
        assert table.record_out_of_service(each) == (each, True)
    requests: list[dict] = []
    original = table.client.get_paginator

    def counting(operation):
        paginator = original(operation)
        paginate = paginator.paginate

        def recorded(**kwargs):
            requests.append(kwargs)
            return paginate(**kwargs)

        paginator.paginate = recorded
        return paginator

    monkeypatch.setattr(table.client, "get_paginator", counting)
    found = table.out_of_service_periods(T0, T0 + timedelta(hours=8))
    assert [p.equipment_id for p in found] == ["fl-2", "fl-3"]
    assert found[0] == periods[1] and found[1].end is None
    [query] = requests
    assert "IndexName" not in query and query["ConsistentRead"] is True  # the table itself, never a scan
    assert [p.equipment_id for p in table.out_of_service_periods(T0 - 6 * DAY, T0 + 3 * DAY, ["fl-1", "fl-4"])] == [
        "fl-1", "fl-4"]
    assert table.out_of_service_periods(T0, T0 + DAY, []) == []


def test_many_equipment_are_filtered_after_the_query(table):
    for n in range(60):
        table.record_out_of_service(period(f"fl-{n:02d}", T0, None))
    wanted = [f"fl-{n:02d}" for n in range(0, 60, 2)] + [f"other-{n}" for n in range(40)]
    assert [p.equipment_id for p in table.out_of_service_periods(T0, T0 + DAY, wanted)] == [
        f"fl-{n:02d}" for n in range(0, 60, 2)]


def test_recording_the_same_period_again_changes_nothing_and_an_overlapping_one_is_refused(table):
    week = period("fl-1", T0, T0 + 7 * DAY)
    assert table.record_out_of_service(week) == (week, True)
    assert table.record_out_of_service(week) == (week, False)
    with pytest.raises(InvalidInput, match="already out of service from 2026-03-02T05:00:00Z until") as refused:
        table.record_out_of_service(period("fl-1", T0 + 6 * DAY, None, reason="another"))
    assert refused.value.field == "from"
    assert table.record_out_of_service(period("fl-1", T0 + 7 * DAY, None))[1]  # right after it: fine
    assert [(p.start, p.end) for p in table.out_of_service_of_equipment("fl-1")] == [
        (T0, T0 + 7 * DAY), (T0 + 7 * DAY, None)]


def test_ending_a_period_early_keeps_its_planned_end_and_refuses_the_past(table):
    table.record_out_of_service(period("fl-1", T0, T0 + 7 * DAY))
    now = T0 + 2 * DAY
    with pytest.raises(InvalidInput, match="is before now") as refused:
        table.end_out_of_service("fl-1", now - timedelta(hours=1), by="a.smith", now=now)
    assert refused.value.field == "at"
    ended = table.end_out_of_service("fl-1", now, by="a.smith", now=now)
    [stored] = table.out_of_service_of_equipment("fl-1")
    assert stored == ended and (stored.end, stored.planned_end, stored.ended_by) == (now, T0 + 7 * DAY, "a.smith")
    with pytest.raises(NotFound, match=r"not out of service at .* \(its last period ended 2026-03-04T05:00:00Z\)"):
        table.end_out_of_service("fl-1", now + DAY, by="a.smith", now=now + DAY)


def test_an_open_ended_period_is_ended_once(table):
    table.record_out_of_service(period("fl-1", T0, None))
    ended = table.end_out_of_service("fl-1", T0 + DAY, by="ops", now=T0 + DAY)
    assert ended.end == T0 + DAY and ended.planned_end is None
    assert table.out_of_service_periods(T0 + DAY, T0 + 2 * DAY) == []


def test_the_same_period_recorded_by_someone_else_keeps_who_recorded_it_first(table):
    """Audit data is never rewritten: the same period posted later by another person writes
    nothing and answers the first record (its recorded_by and recorded_at)."""
    first = period("fl-1", T0, T0 + 7 * DAY)
    table.record_out_of_service(first)
    later = OutOfServicePeriod.create(equipment_id="fl-1", start=T0, end=T0 + 7 * DAY, reason="workshop",
                                      recorded_by="someone-else", recorded_at=T0 + DAY)
    stored, written = table.record_out_of_service(later)
    assert (written, stored.recorded_by, stored.recorded_at) == (False, "j.doe", T0)
    [kept] = table.out_of_service_of_equipment("fl-1")
    assert (kept.recorded_by, kept.recorded_at) == ("j.doe", T0)


def test_ending_a_period_again_earlier_keeps_the_first_ending_on_record(table):
    """A second early end rewrote the first one's ended_by, ended_at and planned_to: now the first
    plan stays, and each earlier ending is kept as it was recorded."""
    table.record_out_of_service(period("fl-1", T0, T0 + 7 * DAY))
    table.end_out_of_service("fl-1", T0 + 5 * DAY, by="a.smith", now=T0 + DAY)
    again = table.end_out_of_service("fl-1", T0 + 3 * DAY, by="b.jones", now=T0 + 2 * DAY)
    [stored] = table.out_of_service_of_equipment("fl-1")
    assert stored == again
    assert (stored.end, stored.planned_end, stored.ended_by, stored.ended_at) == (
        T0 + 3 * DAY, T0 + 7 * DAY, "b.jones", T0 + 2 * DAY)
    assert stored.earlier_endings == ({"to": "2026-03-07T05:00:00Z", "ended_by": "a.smith",
                                       "ended_at": "2026-03-03T05:00:00Z"},)
    assert (stored.recorded_by, stored.recorded_at) == ("j.doe", T0)
