"""Write bursts spread over partition keys (#30): one DynamoDB partition takes at most 1,000 write
units a second, so no key may take a window's missed checks (or a fleet's performed checks) whole.

The embedded table is metered (``missed_checks_local.testing.metering.Meter``) with the simulated
clock standing still: a whole burst counts in one second, the most AWS could be asked for."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from missed_checks.aws.table import ChecklistTable, keys
from missed_checks.aws.table.notifications import NotifierTable
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.checklists.saving import save_checklist
from missed_checks.equipment.assignments import SHARD_COUNT, shard_of
from missed_checks.evaluation.judging import judge_shards
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks_local.testing.metering import Meter

RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
WINDOW = OccurrenceWindow(datetime(2026, 3, 2, 5, 0, tzinfo=UTC), datetime(2026, 3, 2, 13, 0, tzinfo=UTC),
                          datetime(2026, 3, 2, 13, 30, tzinfo=UTC))
JUDGED_AT = datetime(2026, 3, 2, 13, 30, tzinfo=UTC)
PARTITION_LIMIT = 1_000
"""Write units one DynamoDB partition takes in a second."""


def test_a_window_of_100000_equipment_puts_at_most_1000_missed_or_performed_checks_on_any_key():
    equipment = [f"eq-{n:06d}" for n in range(100_000)]
    start = "2026-03-02T05:00:00Z"
    missed = Counter(keys.missed_key("forklift", start, e)["pk"] for e in equipment)
    performed = Counter(keys.performed_key("forklift", e, "2026-03-02T06:00:00Z")["pk"] for e in equipment)
    for per_key in (missed, performed):
        assert len(per_key) == keys.WRITE_PARTITIONS == 128
        assert max(per_key.values()) <= PARTITION_LIMIT  # 846: all 100,000 missed, in one second
    # a shard's equipment lies in that shard's partitions, so a task judging a shard reads eight
    assert all(keys.write_partition(e) % SHARD_COUNT == shard_of(e) for e in equipment[:5_000])
    assert keys.missed_key("forklift", start, "eq-000007") == keys.missed_key("forklift", start, "eq-000007")


@pytest.fixture
def table(local_stack):
    table = ChecklistTable(local_stack.table_name)
    save_checklist(table, "forklift", recurrence=RULE, window="PT8H", grace="PT30M", now=T0, by="tests")
    return table


def test_a_judged_window_spreads_its_missed_checks_over_every_partition_and_every_read_finds_each_once(table):
    equipment = [f"eq-{n:06d}" for n in range(2_000)]
    table.assign_equipment("forklift", equipment, at=T0, by="tests")
    table.record_performed_checks([PerformedCheck("forklift", e, WINDOW.start + timedelta(hours=1))
                                   for e in equipment[::2]], recorded_at=T0)
    missed = sorted(equipment[1::2])
    with Meter(clock=JUDGED_AT.timestamp) as usage:  # the clock stands still: one second
        counts = judge_shards(table, "forklift", WINDOW, range(SHARD_COUNT), "execution-1", lambda: JUDGED_AT)
    assert (counts.counted, counts.missed, counts.recorded) == (2_000, 1_000, 1_000)

    per_key = usage.partition_keys_written(table.name, "MISSED#forklift#")
    assert len(per_key) == keys.WRITE_PARTITIONS and sum(per_key.values()) == 1_000
    # spread by a hash: 21 on the fullest key, under three times the mean (the old key took all 1,000)
    assert max(per_key.values()) <= 3 * 1_000 / keys.WRITE_PARTITIONS
    hottest = usage.hottest_partition()  # of the table and its indexes: the conditional puts, in one second
    assert hottest is not None and hottest.units == max(per_key.values())

    # a second judging of the window writes nothing: the keys are the same, the puts conditional
    assert judge_shards(table, "forklift", WINDOW, range(SHARD_COUNT), "execution-2", lambda: JUDGED_AT).recorded == 0

    start, end = WINDOW.start, WINDOW.start + timedelta(days=1)
    items = table.missed_checks_of_checklist("forklift", start, end)
    assert [item["equipment_id"] for item in items] == missed  # each once, in key order
    assert table.missed_equipment_of_window("forklift", WINDOW.start) == missed
    notifier = NotifierTable(table.name)
    assert notifier.missed_by_window("forklift", start, start) == {"2026-03-02T05:00:00Z": set(missed)}
    assert [r.equipment_id for r in table.missed_records_of_checklist("forklift", start, end)] == missed

    paged, after = [], None
    while True:  # 97 at a time: pages cut inside partitions and across them
        page, after = table.missed_checks_page(start, end, limit=97, checklist_id="forklift", after=after)
        paged.extend(item["equipment_id"] for item in page)
        if after is None:
            break
    assert paged == missed

    table.dismiss_missed_check("forklift", WINDOW.start, missed[5], reason="sold", by="ops", at=JUDGED_AT)
    assert [item["equipment_id"] for item in table.missed_checks_of_checklist("forklift", start, end)
            if item.get("dismissal")] == [missed[5]]
    performed = table.performed_checks_of_checklist("forklift", start, end)
    assert sorted(check.equipment_id for check in performed) == sorted(equipment[::2])
    assert notifier.performed_by("forklift", start, WINDOW.evaluate_at, recorded_by=JUDGED_AT) == set(equipment[::2])
