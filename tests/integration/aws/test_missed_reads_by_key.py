"""Reads of a checklist's missed checks (#32): by key when the candidates are few, else only the write
partitions its equipment can be in.

A missed check exists only for a window whose record the evaluation opened first and a piece of
equipment assigned to the checklist (its assignment item is kept for good), so
:meth:`WindowItems.missed_records_of_checklist` reads the window records and the assignments (a Query
each) and BatchGets those keys, instead of one Query per write partition (``keys.WRITE_PARTITIONS``);
above ``MISSED_KEYS_READ`` candidates it queries the partitions of the assigned equipment alone
(``keys.write_partition`` of each), every one for a checklist without assignment items. A page of
missed checks (:meth:`WindowItems.missed_checks_page`: ``GET /missed``, the web app's Missed checks
page, ``missed list``) merges those partitions alone. Every path answers the same records, in the same
order, as one Query of every partition. The report reads the performed checks in the write partitions its
checklist's equipment is in alone (a check is recorded only for assigned equipment), the same report
as reading every partition."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from missed_checks.aws.table import ChecklistTable, keys, windows
from missed_checks.aws.table.windows import MissedPosition, missed_partitions, missed_record_of
from missed_checks.checklists.checklist import JudgedBy
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.checklists.saving import save_checklist
from missed_checks.equipment.assignments import SHARD_COUNT
from missed_checks.evaluation.judging import judge_shards
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks.reporting import fleet_report
from missed_checks.reporting.fleet_report import build_report
from missed_checks.reporting.report import MissedRecord

RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
DAYS = [OccurrenceWindow(datetime(2026, 3, 2 + day, 5, 0, tzinfo=UTC), datetime(2026, 3, 2 + day, 13, 0, tzinfo=UTC),
                         datetime(2026, 3, 2 + day, 13, 30, tzinfo=UTC)) for day in range(3)]
"""Three daily windows, 2 to 4 March."""
EQUIPMENT = [f"FL-{n}" for n in range(1, 7)]
START, END = datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 3, 10, tzinfo=UTC)
PARTITIONS = sorted({keys.write_partition(e) for e in [*EQUIPMENT, "FL-late"]})
"""The write partitions the fixture's seven pieces of equipment are in."""


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
    requests.clear()  # no window record in the range: the partitions of the assigned equipment are read
    assert table.missed_records_of_checklist("forklift", END, END + timedelta(days=1)) == []
    assert requests["BatchGetItem"] == 0 and requests["Query"] == 2 + len(PARTITIONS)


def test_above_the_bound_the_partitions_of_the_assigned_equipment_are_queried(
        table: ChecklistTable, requests: Counter[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(windows, "MISSED_KEYS_READ", 3 * 7 - 1)  # one key fewer than the candidates
    records = table.missed_records_of_checklist("forklift", START, END)
    assert requests["BatchGetItem"] == 0 and requests["Query"] == 2 + len(PARTITIONS)  # assignments, windows
    assert records == by_queries(table, START, END) and len(records) == 12
    monkeypatch.setattr(windows, "MISSED_KEYS_READ", 6)  # more equipment than that: every partition
    requests.clear()
    assert table.missed_records_of_checklist("forklift", START, END) == records
    assert requests["Query"] == 1 + keys.WRITE_PARTITIONS


def test_a_checklist_without_assignment_items_is_read_by_its_partitions(
        table: ChecklistTable, requests: Counter[str]) -> None:
    assert table.missed_records_of_checklist("no-such-checklist", START, END) == []
    assert requests["BatchGetItem"] == 0 and requests["Query"] == 1 + keys.WRITE_PARTITIONS


def pages(table: ChecklistTable, limit: int, checklist_id: str | None = "forklift",
          start: datetime = START, end: datetime = END) -> list[list[dict[str, Any]]]:
    """Every page of :meth:`WindowItems.missed_checks_page`, ``limit`` a page, following its positions."""
    found, after = [], None
    while True:
        page, after = table.missed_checks_page(start, end, limit=limit, checklist_id=checklist_id, after=after)
        found.append(page)
        if after is None:
            return found


def test_a_page_merges_only_the_assigned_equipments_partitions_with_the_same_items_in_the_same_order(
        table: ChecklistTable, requests: Counter[str]) -> None:
    assert missed_partitions("forklift", [*EQUIPMENT, "FL-late"]) == [keys.missed_pk("forklift", p) for p in PARTITIONS]
    assert missed_partitions("forklift", None) == keys.missed_pks("forklift")  # not known: every partition
    every = table.missed_checks_of_checklist("forklift", START, END)  # the old read: all 128 partitions
    assert len(every) == 12
    requests.clear()
    first, after = table.missed_checks_page(START, END, limit=25, checklist_id="forklift")
    assert first == every and after is None
    assert dict(requests) == {"Query": 1 + len(PARTITIONS)}  # the assignments, then one Query a partition
    for limit in (1, 2, 5, 11, 12):  # pages cut inside partitions and across them, positions in between
        paged = pages(table, limit)
        assert [item for page in paged for item in page] == every, limit
        assert all(len(page) == limit for page in paged[:-1])
    one_day = (DAYS[1].start, DAYS[2].start)
    assert [item for page in pages(table, 3, start=one_day[0], end=one_day[1]) for item in page] == \
        table.missed_checks_of_checklist("forklift", *one_day)
    fleet = [item for page in pages(table, 5, checklist_id=None) for item in page]  # month by month, the same
    assert fleet == table.missed_checks_of_fleet(START, END)


def test_a_page_after_a_position_reads_on_from_it_in_the_assigned_partitions(
        table: ChecklistTable, requests: Counter[str]) -> None:
    every = table.missed_checks_of_checklist("forklift", START, END)
    requests.clear()
    page, after = table.missed_checks_page(START, END, limit=4, checklist_id="forklift",
                                           after=MissedPosition(None, "forklift", str(every[3]["sk"])))
    assert page == every[4:8] and after == MissedPosition(None, "forklift", str(every[7]["sk"]))
    assert requests["Query"] <= 1 + 2 * len(PARTITIONS) < keys.WRITE_PARTITIONS  # first pages, some read on


def test_a_page_of_a_checklist_without_assignment_items_merges_every_partition(
        table: ChecklistTable, requests: Counter[str]) -> None:
    assert table.missed_checks_page(START, END, limit=10, checklist_id="no-such-checklist") == ([], None)
    assert dict(requests) == {"Query": 1 + keys.WRITE_PARTITIONS}


def test_the_report_reads_the_performed_checks_of_its_equipments_partitions_alone_and_reports_the_same(
        table: ChecklistTable, monkeypatch: pytest.MonkeyPatch) -> None:
    queried: list[str] = []

    def partition(params: dict[str, Any], **_: Any) -> None:
        key = params.get("ExpressionAttributeValues", {}).get(":pk", {}).get("S", "")
        if key.startswith("PERFORMED#"):
            queried.append(key)

    table.client.meta.events.register("provide-client-params.dynamodb.Query", partition)
    now = END + timedelta(days=1)
    report = build_report(table, START, END, now=now, detail=True)
    assert sorted(queried) == [keys.performed_pk("forklift", partition) for partition in PARTITIONS]  # one each

    every = fleet_report._performed_shards  # the read before: every partition of every shard of the checklist
    monkeypatch.setattr(fleet_report, "_performed_shards", lambda pool, reader, checklist_id, equipment, low, high:
                        every(pool, reader, checklist_id, None if equipment else set(), low, high))
    queried.clear()
    assert build_report(table, START, END, now=now, detail=True).to_dict() == report.to_dict()
    assert len(queried) == keys.WRITE_PARTITIONS
    assert report.total.on_time == 6 and report.total.missed == 11 and report.total.dismissed == 1
