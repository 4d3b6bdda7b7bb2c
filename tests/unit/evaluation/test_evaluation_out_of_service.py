"""Judging with equipment out of service (issue #23 item 1), on the in-memory fake: an excused
(window, equipment) is never written missed, whatever the batch boundaries; it is counted as
``excused`` in the batch counts, the window's record and its event; the periods are read once per
batch, never per equipment."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from missed_checks.checklists.checklist import Checklist
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.contracts import BatchCounts, JudgedWindowDetail, dump, parse
from missed_checks.equipment.assignments import SHARD_COUNT, shard_batches
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.evaluation.judging import close_window, evaluate, judge_shards
from missed_checks.evaluation.missed_check import judge
from tests.fakes import InMemoryTable, RecordingAnnouncer
from tests.unit.evaluation.test_evaluation_core_invariants import plan_input

RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY;COUNT=5"
CREATED = datetime(2026, 3, 1, tzinfo=UTC)
NOW = datetime(2026, 3, 9, 12, 0, tzinfo=UTC)
EXECUTION = "arn:execution:first"


def clock() -> Callable[[], datetime]:
    return lambda: NOW


def out(equipment_id: str, start: datetime, end: datetime | None) -> OutOfServicePeriod:
    return OutOfServicePeriod.create(equipment_id=equipment_id, start=start, end=end, reason="workshop",
                                     recorded_by="j.doe", recorded_at=CREATED)


def fleet(equipment: int) -> tuple[InMemoryTable, list[OccurrenceWindow]]:
    table = InMemoryTable()
    checklist = Checklist("drill", RULE, window="PT8H", grace="PT30M", created_at=CREATED)
    table.add_checklist(checklist)
    table.assign("drill", [f"fl-{n}" for n in range(equipment)], CREATED)
    return table, list(checklist.parsed().windows(CREATED, datetime(2026, 3, 7, tzinfo=UTC)))


def test_judge_excuses_only_counted_equipment_without_a_check() -> None:
    table, windows = fleet(4)
    monday = windows[0]
    periods = [out("fl-1", monday.start - timedelta(days=1), monday.start + timedelta(minutes=1)),
               out("fl-2", monday.end - timedelta(minutes=1), None),
               out("fl-3", monday.end, None)]  # starts as the window ends: not excused
    table.perform("drill", "fl-2", monday.start)  # done while out of service: performed, not excused
    judgement = judge(monday, table.assignments("drill"), table.performed_checks("drill", 0, monday.start,
                                                                                 monday.evaluate_at)
                      + [c for s in range(1, SHARD_COUNT)
                         for c in table.performed_checks("drill", s, monday.start, monday.evaluate_at)], periods)
    assert judgement.counted == ("fl-0", "fl-1", "fl-2", "fl-3")
    assert (judgement.performed, judgement.missed, judgement.excused) == (("fl-2",), ("fl-0", "fl-3"), ("fl-1",))


def test_an_excused_window_gets_no_missed_check_and_is_counted_in_the_record_and_the_event() -> None:
    table, windows = fleet(3)
    monday, tuesday = windows[0], windows[1]
    table.out_of_service.append(out("fl-1", monday.start + timedelta(hours=2), tuesday.start))
    announcer = RecordingAnnouncer()
    for window in (monday, tuesday):
        counts = judge_shards(table, "drill", window, list(range(SHARD_COUNT)), EXECUTION, clock())
        close_window(table, announcer, "drill", window, [counts], EXECUTION, clock())
    mon, tue = "2026-03-02T05:00:00Z", "2026-03-03T05:00:00Z"
    assert sorted((start, equipment) for (_, start, equipment) in table.missed) == [
        (mon, "fl-0"), (mon, "fl-2"), (tue, "fl-0"), (tue, "fl-1"), (tue, "fl-2")]
    assert [table.windows[("drill", start)]["excused"] for start in (mon, tue)] == [1, 0]
    assert [(e.equipment_counted, e.missed, e.excused, e.missed_equipment) for e in announcer.published] == [
        (3, 2, 1, ["fl-0", "fl-2"]), (3, 3, 0, ["fl-0", "fl-1", "fl-2"])]
    event = dump(announcer.published[0])
    assert event["excused"] == 1 and {"equipment_counted", "performed", "missed", "newly_recorded"} <= set(event)


def test_old_payloads_without_excused_still_parse() -> None:
    counts = parse(BatchCounts, {"shards": [0], "counted": 2, "performed": 1, "missed": 1, "recorded": 1})
    assert counts.excused == 0
    detail = dump(parse(JudgedWindowDetail, {
        "checklist_id": "drill", "window_id": "drill#x", "execution": "e", "equipment_counted": 1, "performed": 1,
        "missed": 0, "newly_recorded": 0,
        "window": {"start": "2026-03-02T05:00:00Z", "end": "2026-03-02T13:00:00Z",
                   "evaluate_at": "2026-03-02T13:30:00Z"}}))
    assert detail["excused"] == 0


@given(
    equipment=st.integers(min_value=1, max_value=60),
    per_task=st.integers(min_value=1, max_value=40),
    out_ids=st.sets(st.integers(min_value=0, max_value=59), max_size=20),
    done_ids=st.sets(st.integers(min_value=0, max_value=59), max_size=20),
    offset_hours=st.integers(min_value=-30, max_value=30),
    length_hours=st.one_of(st.none(), st.integers(min_value=1, max_value=40)),
)
def test_excused_equipment_is_never_written_missed_whatever_the_batches(
        equipment: int, per_task: int, out_ids: set[int], done_ids: set[int], offset_hours: int,
        length_hours: int | None) -> None:
    table, windows = fleet(equipment)
    monday = windows[0]
    start = monday.start + timedelta(hours=offset_hours)
    for n in out_ids:
        table.out_of_service.append(
            out(f"fl-{n}", start, None if length_hours is None else start + timedelta(hours=length_hours)))
    for n in done_ids:
        table.perform("drill", f"fl-{n}", monday.start + timedelta(hours=1))
    batches = shard_batches(equipment, per_task)
    counts = [judge_shards(table, "drill", monday, shards, EXECUTION, clock()) for shards in batches]
    assert table.out_of_service_reads == len(batches)  # once per batch, never per equipment
    excused = {f"fl-{n}" for n in range(equipment)
               if any(p.equipment_id == f"fl-{n}" and p.excuses(monday) for p in table.out_of_service)}
    done = {f"fl-{n}" for n in done_ids if n < equipment}
    missed = {e for (_, _, e) in table.missed}
    assert missed == {f"fl-{n}" for n in range(equipment)} - excused - done
    assert sum(c.excused for c in counts) == len(excused - done)
    assert all(c.counted == c.performed + c.missed + c.excused for c in counts)


def test_a_small_fleet_judged_by_the_planning_task_reads_the_periods_once_per_window() -> None:
    table, windows = fleet(5)
    table.out_of_service.append(out("fl-4", windows[1].start, windows[3].start))  # Tuesday and Wednesday
    announcer = RecordingAnnouncer()
    answer = evaluate(table, announcer, plan_input(), NOW, claimed=None, max_windows=20, per_task=100, now=clock())
    assert [o.missed for o in answer.judged] == [5, 4, 4, 5, 5]
    assert [e.excused for e in announcer.published] == [0, 1, 1, 0, 0]
    assert table.out_of_service_reads == 5
