"""Judging occurrence windows: the evaluation's work, shared by the state machine's tasks.

A window is judged in three steps, always in this order:

1. **open** it: the judged-window record gets the window and the rule it is judged by
   (:meth:`missed_checks.evaluation.ports.WindowRecords.open_window`), before any of its missed checks exists;
2. **judge equipment shards** (:func:`judge_shards`): per stored shard, one Query of its assignments
   and one of its performed checks in ``[start, end + grace)``, and per batch one Query of the
   out-of-service periods overlapping ``[start, end)``; then a conditional put of a missed check for
   every counted piece of equipment without one that is not excused (re-runs write nothing twice);
3. **close** it (:func:`close_window`): claim the record in a conditional write only one execution
   wins, announce the window once (the winner), then move the watermark forward.

A small fleet is judged whole by one task (:func:`judge_windows`, from PlanEvaluation); a large one
is fanned out by the state machine, one task per batch of shards, then CloseWindow.

The work reads and writes through :mod:`missed_checks.evaluation.ports` (the handlers wire the table and the
event bus) and returns the contracts the state machine passes on (:mod:`missed_checks.contracts`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Protocol

from missed_checks.checklists.checklist import JudgedBy
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.contracts import (
    MANUAL,
    BatchCounts,
    CloseWindowOutput,
    JudgedWindowDetail,
    PlanEvaluationInput,
    PlanEvaluationOutput,
    parse,
)
from missed_checks.dead_letters import failed_window_message
from missed_checks.evaluation.missed_check import MissedCheck, judge
from missed_checks.evaluation.planning import Outcome, plan_evaluation
from missed_checks.evaluation.ports import (
    Announcer,
    EquipmentReader,
    EvaluationStore,
    JudgedWindow,
    OutOfServiceReader,
    WindowRecords,
)
from missed_checks.timefmt import to_utc_iso

WRITE_THREADS = 16
"""Conditional puts in flight per task (the clients' connection pool allows 32)."""
MAX_LISTED = 100
"""A window event lists the missed equipment when there are at most this many."""
COUNTS = ("counted", "performed", "missed", "recorded", "excused")


class ShardStore(EquipmentReader, WindowRecords, OutOfServiceReader, Protocol):
    """What judging a batch of shards reads (assignments, performed checks, out-of-service periods) and
    writes (missed checks)."""


def judge_shards(store: ShardStore, checklist_id: str, window: OccurrenceWindow, shards: Sequence[int],
                 execution: str, now: Callable[[], datetime]) -> BatchCounts:
    """Judge the equipment of ``shards`` for one window; returns the counts (a few bytes, whatever
    the fleet size): ``counted``, ``performed``, ``missed``, ``recorded`` (written now, not by an
    earlier run) and ``excused`` (out of service during the window: no missed check)."""
    out_of_service = store.out_of_service_periods(window.start, window.end)  # one Query for the whole batch
    with ThreadPoolExecutor(max_workers=WRITE_THREADS) as pool:
        judgements = list(pool.map(
            lambda shard: judge(window, store.assignments(checklist_id, shard),
                                store.performed_checks(checklist_id, shard, window.start, window.evaluate_at),
                                out_of_service),
            shards))
        judged_at = now()
        missed = [MissedCheck(checklist_id=checklist_id, equipment_id=equipment_id, window=window,
                              judged_at=judged_at, execution=execution)
                  for judgement in judgements for equipment_id in judgement.missed]
        recorded = sum(pool.map(store.put_missed_check, missed))
    return BatchCounts(
        shards=list(shards),
        counted=sum(len(j.counted) for j in judgements),
        performed=sum(len(j.performed) for j in judgements),
        missed=sum(len(j.missed) for j in judgements),
        recorded=recorded,
        excused=sum(len(j.excused) for j in judgements),
    )


def window_judgement(window: OccurrenceWindow, batches: Sequence[BatchCounts], judged_at: datetime) -> JudgedWindow:
    """The window's totals over its judged batches, added up at ``judged_at``."""
    return JudgedWindow(
        window=window,
        equipment_counted=sum(batch.counted for batch in batches),
        performed=sum(batch.performed for batch in batches),
        missed=sum(batch.missed for batch in batches),
        newly_recorded=sum(batch.recorded for batch in batches),
        excused=sum(batch.excused for batch in batches),
        judged_at=judged_at,
    )


def window_event(checklist_id: str, judged: JudgedWindow, execution: str,
                 missed_equipment: list[str] | None) -> JudgedWindowDetail:
    """The ``Occurrence window judged`` event's detail (``missed_equipment`` None when not listed)."""
    return JudgedWindowDetail(
        checklist_id=checklist_id,
        window_id=f"{checklist_id}#{to_utc_iso(judged.window.start)}",
        window=judged.window,
        equipment_counted=judged.equipment_counted,
        performed=judged.performed,
        missed=judged.missed,
        newly_recorded=judged.newly_recorded,
        excused=judged.excused,
        execution=execution,
        missed_equipment=missed_equipment,
    )


def close_window(store: WindowRecords, announcer: Announcer, checklist_id: str, window: OccurrenceWindow,
                 batches: Sequence[BatchCounts], execution: str, now: Callable[[], datetime]) -> CloseWindowOutput:
    """Claim the judged window, announce it if this execution must (once), advance the watermark
    (last, and only forward: a failure before it leaves the window to be judged again).

    ``announced`` says this execution holds the claim, ``announced_by_it`` that the holder had
    announced already, ``announced_now`` that this call published the event."""
    judged = window_judgement(window, batches, now())
    claim = store.claim_window(checklist_id, judged, execution)
    if claim.must_announce:
        listed = (store.missed_equipment_of_window(checklist_id, window.start)
                  if judged.missed <= MAX_LISTED else None)
        announcer.window_judged(window_event(checklist_id, judged, execution, listed))
        store.mark_window_announced(checklist_id, to_utc_iso(window.start))
    advanced = store.advance_watermark(checklist_id, window.end)
    return CloseWindowOutput(
        window_start=to_utc_iso(window.start), window_end=to_utc_iso(window.end), missed=judged.missed,
        newly_recorded=judged.newly_recorded, announced=claim.won, claimed_by=claim.holder,
        announced_by_it=claim.announced, announced_now=claim.must_announce, watermark_advanced=advanced,
    )


def judge_windows(store: EvaluationStore, announcer: Announcer, checklist_id: str,
                  windows: Sequence[OccurrenceWindow], judged_by: JudgedBy, shards: Sequence[int],
                  execution: str, now: Callable[[], datetime]) -> list[CloseWindowOutput]:
    """Judge whole windows in this task, oldest first: open, judge every shard, close. A failure
    stops at its window, which its error message names (the dead letter reads it back as the window
    to replay: :func:`missed_checks.dead_letters.failed_window`); the watermark stays at the last
    window closed, so a retry starts there."""
    outcomes = []
    for window in windows:
        try:
            store.open_window(checklist_id, window, judged_by)
            counts = judge_shards(store, checklist_id, window, shards, execution, now)
            outcomes.append(close_window(store, announcer, checklist_id, window, [counts], execution, now))
        except Exception as error:
            # Same exception type (the state machine's Retry and Catch rules go by it), its message
            # prefixed with the window: Lambda reports str(error) as the errorMessage.
            error.args = (failed_window_message(window, error), *error.args[1:])
            raise
    return outcomes


def claimed_window(store: WindowRecords, task: PlanEvaluationInput) -> OccurrenceWindow | None:
    """The input's ``claimed_window`` if this execution holds its claim and it was not announced."""
    if task.input.claimed_window is None:
        return None
    window = task.input.claimed_window
    holder = store.claim_holder(task.input.checklist_id, window.start)
    return window if holder is not None and holder.execution == task.execution and not holder.announced else None


def evaluate(store: EvaluationStore, announcer: Announcer, task: PlanEvaluationInput, instant: datetime, *,
             claimed: OccurrenceWindow | None, max_windows: int, per_task: int,
             now: Callable[[], datetime]) -> PlanEvaluationOutput:
    """PlanEvaluation's work: plan the windows due at ``instant``; judge them here when the fleet
    times the windows fits one task (``per_task`` equipment-windows), else open each (the rule it is
    judged by, before any missed check of it exists) and leave them to the state machine's fan-out."""
    checklist_id = task.input.checklist_id
    plan = plan_evaluation(checklist_id, store.get_checklist(checklist_id), instant, max_windows, now=now(),
                           claimed=claimed)
    if plan.outcome is not Outcome.EVALUATE:
        return parse(PlanEvaluationOutput, {**plan.to_dict(), "equipment": None, "judged": []})
    equipment = store.count_assignments(checklist_id)
    split = plan.split(equipment, per_task)
    for window in split.fan_out:
        store.open_window(checklist_id, window, plan.judged_by)
    judged = judge_windows(store, announcer, checklist_id, split.here, plan.judged_by, split.batches[0],
                           task.execution or MANUAL, now) if split.here else []
    answer = parse(PlanEvaluationOutput, {**plan.to_dict(split), "equipment": equipment, "judged": []})
    return dataclasses.replace(answer, judged=judged)
