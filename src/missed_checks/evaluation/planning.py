"""Planning an evaluation: which occurrence windows a firing (or a manual re-run) must judge."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum
from typing import Any

from missed_checks.checklists.checklist import Checklist, JudgedBy, Status
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.equipment.assignments import SHARD_COUNT, shard_batches
from missed_checks.timefmt import to_utc_iso


class Outcome(StrEnum):
    EVALUATE = "EVALUATE"
    NOTHING_DUE = "NOTHING_DUE"
    PAUSED = "PAUSED"
    CHECKLIST_GONE = "CHECKLIST_GONE"


@dataclass(frozen=True)
class Plan:
    checklist_id: str
    instant: datetime
    outcome: Outcome
    reason: str
    windows: tuple[OccurrenceWindow, ...] = ()
    more_due: bool = False
    judged_by: JudgedBy = field(default_factory=JudgedBy)

    def split(self, equipment: int, per_task: int) -> Split:
        """How the windows are judged: all of them by the planning task itself when the fleet times
        the windows fits one task (``per_task`` equipment-windows), else fanned out by the state
        machine, window by window, one task per batch of shards."""
        if equipment * len(self.windows) <= per_task:
            return Split(here=self.windows, fan_out=(), batches=[list(range(SHARD_COUNT))])
        return Split(here=(), fan_out=self.windows, batches=shard_batches(equipment, per_task))

    def to_dict(self, split: Split | None = None) -> dict[str, Any]:
        """The state machine's view: small, JSON-serialisable, readable in the console. ``windows``
        are those the state machine fans out (none when the plan judged them itself; all of them
        when no ``split`` is given)."""
        return {
            "checklist_id": self.checklist_id,
            "instant": to_utc_iso(self.instant),
            "outcome": self.outcome.value,
            "reason": self.reason,
            "windows": [window.to_dict() for window in (split.fan_out if split else self.windows)],
            "batches": split.batches if split and split.fan_out else [],
            "more_due": self.more_due,
        }


@dataclass(frozen=True)
class Split:
    """Which windows the planning task judges itself and which the state machine fans out."""

    here: tuple[OccurrenceWindow, ...]
    fan_out: tuple[OccurrenceWindow, ...]
    batches: list[list[int]]
    """The stored shards each fan-out task judges."""


def plan_evaluation(
    checklist_id: str, checklist: Checklist | None, instant: datetime, max_windows: int, now: datetime,
    claimed: OccurrenceWindow | None = None,
) -> Plan:
    """Every window with ``end + grace <= instant`` and ``end`` after the watermark, oldest first,
    at most ``max_windows`` (``more_due`` says whether more remain for the next run).

    An instant in the future (a typo in a hand-started run) is judged only up to ``now``: a
    window that has not closed is never judged.

    ``claimed`` is a window whose unannounced claim this execution holds (a dead-letter replay was
    handed it: the execution that judged it failed before announcing it). It is judged again
    (nothing is written twice) and so announced, first, when the watermark has passed it already.

    Raises InvalidRecurrence when the checklist's rule cannot be used: the state machine routes
    that to the evaluation dead-letter queue.
    """
    if checklist is None:
        return Plan(checklist_id, instant, Outcome.CHECKLIST_GONE, "the checklist no longer exists")
    if checklist.status is Status.PAUSED:
        return Plan(checklist_id, instant, Outcome.PAUSED, "the checklist is paused")
    recurrence = checklist.parsed()
    watermark = checklist.watermark
    if watermark is None:
        raise ValueError(f"checklist {checklist_id} has neither evaluated_until nor created_at")
    until = min(instant, now)
    note = f" (the instant is in the future: judged up to {to_utc_iso(now)})" if until < instant else ""
    due = recurrence.due_windows(watermark, until, max_windows)
    windows = list(due.windows)
    if claimed is not None and claimed.settled_by(watermark):  # ahead of the watermark it is among the due ones
        windows.insert(0, claimed)
    if not windows:
        return Plan(
            checklist_id, instant, Outcome.NOTHING_DUE,
            f"no occurrence window closed (end + grace) between {to_utc_iso(watermark)} and {to_utc_iso(until)}"
            + note + _closed_note(recurrence.closed_dates, watermark.astimezone(recurrence.zone),
                                  until.astimezone(recurrence.zone)),
            judged_by=checklist.judged_by(),
        )
    again = (f" (and the window starting {to_utc_iso(claimed.start)} again, to announce it)"
             if claimed is not None and windows[0] is claimed else "")
    return Plan(
        checklist_id, instant, Outcome.EVALUATE,
        f"{len(due.windows)} window(s) due" + again + (", more remain for the next run" if due.more else "") + note,
        windows=tuple(windows), more_due=due.more, judged_by=checklist.judged_by(),
    )


def _closed_note(closed: frozenset[date], watermark: datetime, until: datetime) -> str:
    """Closure calendars (#23 item 2): the closed dates in the span, so that a firing on a closed
    date says why nothing was due (``watermark`` and ``until`` on the checklist's clock)."""
    dates = sorted(d for d in closed if watermark.date() <= d <= until.date())
    return f"; closed by the checklist's calendars: {', '.join(d.isoformat() for d in dates)}" if dates else ""
