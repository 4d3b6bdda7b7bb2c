"""Judging occurrence windows: the evaluation's work, shared by the state machine's tasks.

A window is judged in three steps, always in this order:

1. **open** it: the judged-window record gets the window and the rule it is judged by
   (:meth:`ChecklistTable.open_window`), before any of its missed checks exists;
2. **judge equipment shards** (:func:`judge_shards`): per stored shard, one Query of its assignments
   and one of its performed checks in ``[start, end + grace)``, then a conditional put of a missed
   check for every counted piece of equipment without one (re-runs write nothing twice);
3. **close** it (:func:`close_window`): claim the record in a conditional write only one execution
   wins, announce the window once (the winner), then move the watermark forward.

A small fleet is judged whole by one task (:func:`judge_windows`, from PlanEvaluation); a large one
is fanned out by the state machine, one task per batch of shards, then CloseWindow.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

from missed_checks.aws import events
from missed_checks.aws.table import ChecklistTable
from missed_checks.contracts import JudgedWindowDetail, dump, parse
from missed_checks.missed_check import judge, missed_check_item
from missed_checks.recurrence import OccurrenceWindow
from missed_checks.timefmt import to_utc_iso

WRITE_THREADS = 16
"""Conditional puts in flight per task (the clients' connection pool allows 32)."""
MAX_LISTED = 100
"""A window event lists the missed equipment when there are at most this many."""
COUNTS = ("counted", "performed", "missed", "recorded")


def judge_shards(table: ChecklistTable, checklist_id: str, window: OccurrenceWindow, shards: Sequence[int],
                 execution: str, now: Callable[[], datetime]) -> dict[str, Any]:
    """Judge the equipment of ``shards`` for one window; returns the counts (a few bytes, whatever
    the fleet size): ``counted``, ``performed``, ``missed`` and ``recorded`` (written now, not by an
    earlier run)."""
    with ThreadPoolExecutor(max_workers=WRITE_THREADS) as pool:
        judgements = list(pool.map(
            lambda shard: judge(window, table.assignments(checklist_id, shard),
                                table.performed_checks(checklist_id, shard, window.start, window.evaluate_at)),
            shards))
        judged_at = now()
        items = [missed_check_item(checklist_id=checklist_id, equipment_id=equipment_id, window=window,
                                   judged_at=judged_at, execution=execution)
                 for judgement in judgements for equipment_id in judgement.missed]
        recorded = sum(pool.map(table.put_missed_check, items))
    return {
        "shards": list(shards),
        "counted": sum(len(j.counted) for j in judgements),
        "performed": sum(len(j.performed) for j in judgements),
        "missed": sum(len(j.missed) for j in judgements),
        "recorded": recorded,
    }


def window_summary(window: OccurrenceWindow, batches: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The window's totals over its judged batches, as the judged-window record keeps them."""
    return {
        "window_start": to_utc_iso(window.start),
        "window_end": to_utc_iso(window.end),
        "evaluate_at": to_utc_iso(window.evaluate_at),
        "equipment_counted": sum(int(batch.get("counted", 0)) for batch in batches),
        "performed": sum(int(batch.get("performed", 0)) for batch in batches),
        "missed": sum(int(batch.get("missed", 0)) for batch in batches),
        "newly_recorded": sum(int(batch.get("recorded", 0)) for batch in batches),
    }


def window_event(checklist_id: str, window: OccurrenceWindow, summary: Mapping[str, Any], execution: str,
                 missed_equipment: list[str] | None) -> dict[str, Any]:
    """The ``Occurrence window judged`` event's detail (:class:`missed_checks.contracts.JudgedWindowDetail`;
    ``missed_equipment`` left out when not listed)."""
    detail = parse(JudgedWindowDetail, {
        "checklist_id": checklist_id,
        "window_id": f"{checklist_id}#{summary['window_start']}",
        "window": window.to_dict(),
        **{k: summary[k] for k in ("equipment_counted", "performed", "missed", "newly_recorded")},
        "execution": execution,
        "missed_equipment": missed_equipment,
    })
    dumped: dict[str, Any] = dump(detail, omit_none=True)
    return dumped


def close_window(table: ChecklistTable, checklist_id: str, window: OccurrenceWindow,
                 batches: Sequence[Mapping[str, Any]], execution: str, bus_name: str,
                 now: Callable[[], datetime]) -> dict[str, Any]:
    """Claim the judged window, announce it if this execution must (once), advance the watermark.

    Returns the window's outcome for the state machine: ``window_start``, ``window_end``,
    ``missed``, ``newly_recorded``, ``announced`` (this execution holds the claim), ``claimed_by``,
    ``announced_now`` and ``watermark_advanced``."""
    summary = window_summary(window, batches)
    claim = table.claim_window(checklist_id, {**summary, "judged_at": to_utc_iso(now())}, execution)
    if claim.must_announce:
        listed = (table.missed_equipment_of_window(checklist_id, window.start)
                  if summary["missed"] <= MAX_LISTED else None)
        events.publish_window_judged(bus_name, window_event(checklist_id, window, summary, execution, listed))
        table.mark_window_announced(checklist_id, summary["window_start"])
    advanced = table.advance_watermark(checklist_id, window.end)
    return {**{k: summary[k] for k in ("window_start", "window_end", "missed", "newly_recorded")},
            "announced": claim.won, "claimed_by": claim.holder, "announced_by_it": claim.announced,
            "announced_now": claim.must_announce, "watermark_advanced": advanced}


def judge_windows(table: ChecklistTable, checklist_id: str, windows: Sequence[OccurrenceWindow],
                  judged_by: Mapping[str, Any], shards: Sequence[int], execution: str, bus_name: str,
                  now: Callable[[], datetime]) -> list[dict[str, Any]]:
    """Judge whole windows in this task, oldest first: open, judge every shard, close. A failure
    stops at its window, which its error message names (:func:`failed_window`: the dead letter
    says which window to replay); the watermark stays at the last window closed, so a retry
    starts there."""
    outcomes = []
    for window in windows:
        try:
            table.open_window(checklist_id, window, judged_by)
            counts = judge_shards(table, checklist_id, window, shards, execution, now)
            outcomes.append(close_window(table, checklist_id, window, [counts], execution, bus_name, now))
        except Exception as error:
            # Same exception type (the state machine's Retry and Catch rules go by it), its message
            # prefixed with the window: Lambda reports str(error) as the errorMessage.
            error.args = (f"{_window_text(window)}: {error}", *error.args[1:])
            raise
    return outcomes


_FAILED_WINDOW = re.compile(r"window (\S+)\.\.(\S+) \(judged from (\S+)\): ")


def _window_text(window: OccurrenceWindow) -> str:
    text = window.to_dict()
    return f"window {text['start']}..{text['end']} (judged from {text['evaluate_at']})"


def failed_window(error_message: str) -> dict[str, str] | None:
    """The window a failed :func:`judge_windows` names in its error message, as in a window
    dead letter (``start``, ``end``, ``evaluate_at``), or None."""
    match = _FAILED_WINDOW.search(error_message)
    return dict(zip(("start", "end", "evaluate_at"), match.groups(), strict=True)) if match else None
