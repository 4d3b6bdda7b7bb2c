"""The evaluation core's invariants, on the in-memory fake (``tests/fakes.py``): no moto, no stack.

Claim (one claimant per window), announce once, the watermark only forward and written last, and
re-judging that writes nothing new (the claimant's retry keeps its ``newly_recorded``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from missed_checks.checklists.checklist import Checklist
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.contracts import BatchCounts, PlanEvaluationInput, dump, parse
from missed_checks.errors import TransientError
from missed_checks.evaluation.judging import claimed_window, close_window, evaluate, judge_shards, judge_windows
from tests.fakes import InMemoryTable, RecordingAnnouncer

RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY;COUNT=5"
CREATED = datetime(2026, 3, 1, tzinfo=UTC)
NOW = datetime(2026, 3, 9, 12, 0, tzinfo=UTC)
FIRST, SECOND = "arn:execution:first", "arn:execution:second"
ALL_SHARDS = list(range(16))


def clock() -> Callable[[], datetime]:
    return lambda: NOW


def drill(equipment: int = 3, performed: tuple[str, ...] = ("fl-0",)) -> tuple[InMemoryTable, OccurrenceWindow]:
    table = InMemoryTable()
    checklist = Checklist("drill", RULE, window="PT8H", grace="PT30M", created_at=CREATED)
    table.add_checklist(checklist)
    table.assign("drill", [f"fl-{n}" for n in range(equipment)], CREATED)
    monday = checklist.parsed().windows(CREATED, datetime(2026, 3, 3, tzinfo=UTC))[0]
    for equipment_id in performed:
        table.perform("drill", equipment_id, monday.start)
    return table, monday


def judge_monday(table: InMemoryTable, announcer: RecordingAnnouncer, monday: OccurrenceWindow, execution: str):
    counts = judge_shards(table, "drill", monday, ALL_SHARDS, execution, clock())
    return close_window(table, announcer, "drill", monday, [counts], execution, clock())


def test_one_claimant_per_window_the_other_execution_writes_nothing() -> None:
    table, monday = drill()
    announcer = RecordingAnnouncer()
    first = judge_monday(table, announcer, monday, FIRST)
    record = dict(table.windows[("drill", first.window_start)])
    second = judge_monday(table, announcer, monday, SECOND)
    assert (first.announced, first.claimed_by) == (True, FIRST)
    assert (second.announced, second.claimed_by, second.announced_by_it) == (False, FIRST, True)
    assert table.windows[("drill", first.window_start)] == record  # the winner's totals stay
    assert not second.announced_now and second.newly_recorded == 0


def test_a_window_is_announced_once_by_its_claimant() -> None:
    table, monday = drill()
    announcer = RecordingAnnouncer()
    outcomes = [judge_monday(table, announcer, monday, execution) for execution in (FIRST, FIRST, SECOND)]
    assert [o.announced_now for o in outcomes] == [True, False, False]
    [event] = announcer.published
    assert (event.window_id, event.missed, event.missed_equipment) == (
        f"drill#{outcomes[0].window_start}", 2, ["fl-1", "fl-2"])
    assert table.windows[("drill", outcomes[0].window_start)]["announced"] is True


def test_a_claimant_whose_announcement_failed_announces_on_its_retry_and_no_one_else_does() -> None:
    table, monday = drill()
    announcer = RecordingAnnouncer(fail_next=True)
    with pytest.raises(TransientError):
        judge_monday(table, announcer, monday, FIRST)
    assert "drill" not in table.watermarks  # the watermark is written last: not reached
    other = judge_monday(table, announcer, monday, SECOND)
    assert (other.announced, other.announced_by_it, announcer.published) == (False, False, [])
    retry = judge_monday(table, announcer, monday, FIRST)
    assert retry.announced_now and len(announcer.published) == 1


def test_the_watermark_is_written_last_and_only_forward() -> None:
    table, monday = drill()
    outcome = judge_monday(table, RecordingAnnouncer(), monday, FIRST)
    operations = [operation for operation, _ in table.writes]
    assert operations[-1] == "advance_watermark" and operations.count("advance_watermark") == 1
    assert operations.index("mark_window_announced") > operations.index("claim_window")
    assert outcome.watermark_advanced and table.watermarks["drill"] == "2026-03-02T13:00:00Z"
    table.watermarks["drill"] = "2026-03-04T13:00:00Z"  # a later window closed meanwhile
    again = judge_monday(table, RecordingAnnouncer(), monday, FIRST)
    assert not again.watermark_advanced and table.watermarks["drill"] == "2026-03-04T13:00:00Z"


def test_a_failure_before_the_watermark_leaves_the_window_to_be_judged_again() -> None:
    table, monday = drill()
    table.fail_on["advance_watermark"] = TransientError("throttled")
    with pytest.raises(TransientError):
        judge_monday(table, RecordingAnnouncer(), monday, FIRST)
    checklist = table.get_checklist("drill")
    assert checklist is not None and checklist.watermark is not None and checklist.watermark < monday.end


def test_rejudging_writes_nothing_new_and_the_claimants_retry_keeps_newly_recorded() -> None:
    table, monday = drill()
    announcer = RecordingAnnouncer()
    first = judge_monday(table, announcer, monday, FIRST)
    written = list(table.writes)
    counts = judge_shards(table, "drill", monday, ALL_SHARDS, FIRST, clock())
    assert (counts.missed, counts.recorded) == (2, 0)
    retry = close_window(table, announcer, "drill", monday, [counts], FIRST, clock())
    new = table.writes[len(written):]
    assert [operation for operation, _ in new] == ["claim_window"]  # no missed check, event or watermark again
    assert (first.newly_recorded, retry.newly_recorded) == (2, 0)
    assert table.windows[("drill", first.window_start)]["newly_recorded"] == 2
    assert len(table.missed) == 2


def test_a_failed_window_stops_the_run_at_that_window_named_in_the_error() -> None:
    table, monday = drill()
    checklist = table.get_checklist("drill")
    assert checklist is not None
    windows = checklist.parsed().windows(CREATED, datetime(2026, 3, 5, tzinfo=UTC))
    table.fail_on["mark_window_announced"] = TransientError("throttled")
    with pytest.raises(TransientError, match=r"^window 2026-03-02T06:00:00\+01:00\.\."):
        judge_windows(table, RecordingAnnouncer(), "drill", windows, checklist.judged_by(), ALL_SHARDS, FIRST, clock())
    assert "drill" not in table.watermarks and len(table.windows) == 1


def plan_input(execution: str = FIRST) -> PlanEvaluationInput:
    return parse(PlanEvaluationInput, {"input": {"checklist_id": "drill", "instant": "2026-03-09T12:00:00Z"},
                                       "execution": execution})


def test_a_small_fleet_is_judged_whole_by_the_planning_task() -> None:
    table, _ = drill(equipment=3)
    announcer = RecordingAnnouncer()
    answer = evaluate(table, announcer, plan_input(), NOW, claimed=None, max_windows=20, per_task=100, now=clock())
    assert (answer.windows, answer.batches, answer.equipment) == ([], [], 3)
    assert [o.window_start[:10] for o in answer.judged] == ["2026-03-02", "2026-03-03", "2026-03-04", "2026-03-05",
                                                             "2026-03-06"]
    assert [o.missed for o in answer.judged] == [2, 3, 3, 3, 3] and len(announcer.published) == 5
    assert table.watermarks["drill"] == "2026-03-06T13:00:00Z"


def test_a_large_fleet_is_opened_and_fanned_out_in_batches_then_closed_window_by_window() -> None:
    table, _ = drill(equipment=40, performed=())
    announcer = RecordingAnnouncer()
    answer = evaluate(table, announcer, plan_input(), NOW, claimed=None, max_windows=2, per_task=10, now=clock())
    assert answer.judged == [] and answer.more_due and len(answer.windows) == 2
    assert len(answer.batches) == 4 and sorted(s for batch in answer.batches for s in batch) == ALL_SHARDS
    assert len(table.windows) == 2 and not table.missed and announcer.published == []  # opened only
    for window in answer.windows:
        batches: list[BatchCounts] = [judge_shards(table, "drill", window, shards, FIRST, clock())
                                      for shards in answer.batches]
        closed = close_window(table, announcer, "drill", window, batches, FIRST, clock())
        assert (closed.missed, closed.newly_recorded, closed.announced_now) == (40, 40, True)
    assert [event.equipment_counted for event in announcer.published] == [40, 40]
    assert table.watermarks["drill"] == "2026-03-03T13:00:00Z"
    rest = evaluate(table, announcer, plan_input(), NOW, claimed=None, max_windows=2, per_task=10, now=clock())
    assert [w.start.date().isoformat() for w in rest.windows] == ["2026-03-04", "2026-03-05"]


def test_a_replay_handed_the_claim_judges_the_window_again_behind_the_watermark_and_announces_it_once() -> None:
    table, monday = drill()
    announcer = RecordingAnnouncer(fail_next=True)
    with pytest.raises(TransientError):  # FIRST claimed Monday, its event was refused, it failed for good
        judge_monday(table, announcer, monday, FIRST)
    table.watermarks["drill"] = "2026-03-04T13:00:00Z"  # later runs moved on; Monday stays unannounced
    replay = parse(PlanEvaluationInput, {"input": {**dump(plan_input().input), "claimed_window": dump(monday)},
                                         "execution": SECOND})
    assert claimed_window(table, replay) is None  # not handed over yet: SECOND does not hold the claim
    assert table.hand_over_window_claim("drill", monday.start, FIRST, SECOND)
    claimed = claimed_window(table, replay)
    assert claimed == monday
    answer = evaluate(table, announcer, replay, NOW, claimed=claimed, max_windows=20, per_task=100, now=clock())
    assert [o.window_start for o in answer.judged][0] == "2026-03-02T05:00:00Z"
    assert [e.window_id for e in announcer.published].count("drill#2026-03-02T05:00:00Z") == 1
    assert claimed_window(table, replay) is None  # announced now: a second replay judges nothing again
