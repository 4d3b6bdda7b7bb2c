"""The report's read of a checklist's missed checks (#32): by key when the candidates are few.

A missed check exists only for a window whose record the evaluation opened first and a piece of
equipment assigned to the checklist, so :meth:`WindowItems.missed_records_of_checklist` reads the
window records and the assignments (a Query each) and BatchGets those keys, instead of one Query per
write partition (``keys.WRITE_PARTITIONS``); above ``MISSED_KEYS_READ`` candidates it queries them all.
Both paths answer the same records, in the same order."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from missed_checks.aws.table import ChecklistTable, keys, windows
from missed_checks.aws.table.windows import missed_record_of
from missed_checks.checklists.checklist import JudgedBy
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.checklists.saving import save_checklist
from missed_checks.equipment.assignments import SHARD_COUNT
from missed_checks.evaluation.judging import judge_shards
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks.reporting.report import MissedRecord

RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
DAYS = [OccurrenceWindow(datetime(2026, 3, 2 + day, 5, 0, tzinfo=UTC), datetime(2026, 3, 2 + day, 13, 0, tzinfo=UTC),
                         datetime(2026, 3, 2 + day, 13, 30, tzinfo=UTC)) for day in range(3)]
"""Three daily windows, 2 to 4 March."""
EQUIPMENT = [f"FL-{n}" for n in range(1, 7)]
START, END = datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 3, 10, tzinfo=UTC)


def at(instant: datetime) -> Callable[[], datetime]:
    """A clock standing still at ``instant``."""
    return lambda: instant


@pytest.fixture
def table(local_stack: Any) -> ChecklistTable:
    """The checklist with six pieces of equipment (a seventh assigned after the windows), its three
    windows judged as the evaluation judges them (each record opened first), one miss dismissed."""
    table = ChecklistTable(local_stack.table_name)
    save_checklist(table, "forklift", recurrence=RULE, window="PT8H", grace="PT30M", now=T0, by="tests")
    table.assign_equipment("forklift", EQUIPMENT, at=T0, by="tests")
    table.assign_equipment("forklift", ["FL-late"], at=T0 + timedelta(days=30), by="tests")
    for day, window in enumerate(DAYS):
        done = EQUIPMENT[day::3]  # a different third of the fleet checked each day
        table.record_performed_checks([PerformedCheck("forklift", e, window.start + timedelta(hours=1)) for e in done],
                                      recorded_at=window.start + timedelta(hours=1))
        table.open_window("forklift", window, JudgedBy())
        judge_shards(table, "forklift", window, range(SHARD_COUNT), f"execution-{day}", at(window.evaluate_at))
    table.dismiss_missed_check("forklift", DAYS[1].start, "FL-1", reason="broken", by="mia", at=DAYS[2].start)
    return table


@pytest.fixture
def requests(table: ChecklistTable) -> Iterator[Counter[str]]:
    """Every request the table's client makes, by operation (pages of a Query each counted)."""
    made: Counter[str] = Counter()

    def count(model: Any, **_: Any) -> None:
        made[model.name] += 1

    table.client.meta.events.register("before-call.dynamodb.*", count)
    yield made
    table.client.meta.events.unregister("before-call.dynamodb.*", count)


def by_queries(table: ChecklistTable, start: datetime, end: datetime) -> list[MissedRecord]:
    """The same read through one Query per write partition."""
    return [missed_record_of(item) for item in table.missed_checks_of_checklist(
        "forklift", start, end, ("checklist_id", "equipment_id", "window_start", "window_end", "dismissal",
                                 "judged_at"))]


def test_a_small_fleets_missed_checks_are_read_by_key_in_a_few_requests_alike(
        table: ChecklistTable, requests: Counter[str]) -> None:
    records = table.missed_records_of_checklist("forklift", START, END)
    assert dict(requests) == {"Query": 2, "BatchGetItem": 1}  # window records, assignments; 3 x 7 keys
    requests.clear()
    assert records == by_queries(table, START, END)
    assert requests["Query"] >= keys.WRITE_PARTITIONS
    assert len(records) == 3 * 4 and [r.equipment_id for r in records[:4]] == ["FL-2", "FL-3", "FL-5", "FL-6"]
    assert [(r.equipment_id, r.window_start) for r in records if r.dismissed] == [("FL-1", "2026-03-03T05:00:00Z")]
    # a range inside: its windows alone, as the Queries answer it
    one_day = (DAYS[1].start, DAYS[2].start)
    assert table.missed_records_of_checklist("forklift", *one_day) == by_queries(table, *one_day)
    assert {r.window_start for r in table.missed_records_of_checklist("forklift", *one_day)} == {"2026-03-03T05:00:00Z"}
    requests.clear()  # no window record in the range: the partitions are read, as before
    assert table.missed_records_of_checklist("forklift", END, END + timedelta(days=1)) == []
    assert requests["BatchGetItem"] == 0 and requests["Query"] == 2 + keys.WRITE_PARTITIONS


def test_above_the_bound_every_write_partition_is_queried(table: ChecklistTable, requests: Counter[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(windows, "MISSED_KEYS_READ", 3 * 7 - 1)  # one key fewer than the candidates
    records = table.missed_records_of_checklist("forklift", START, END)
    assert requests["BatchGetItem"] == 0 and requests["Query"] >= keys.WRITE_PARTITIONS
    assert records == by_queries(table, START, END) and len(records) == 12


def test_a_checklist_without_assignment_items_is_read_by_its_partitions(
        table: ChecklistTable, requests: Counter[str]) -> None:
    assert table.missed_records_of_checklist("no-such-checklist", START, END) == []
    assert requests["BatchGetItem"] == 0 and requests["Query"] == 1 + keys.WRITE_PARTITIONS
