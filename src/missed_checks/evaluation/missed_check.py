"""Missed checks: judging one occurrence window for a set of equipment, and the durable record
(stored by :mod:`missed_checks.aws.table.windows`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.equipment.assignments import Assignment
from missed_checks.equipment.out_of_service import OutOfServicePeriod, excused_equipment
from missed_checks.performed_checks.performed_check import PerformedCheck, Timeliness, timeliness


@dataclass(frozen=True)
class Judgement:
    """The outcome of judging one window for some equipment."""

    counted: tuple[str, ...]
    """Equipment that counts for the window (assigned before it started, not unassigned before it ended)."""
    performed: tuple[str, ...]
    """Counted equipment with a performed check in ``[start, end + grace)``."""
    missed: tuple[str, ...]
    """Counted equipment without one and not excused, sorted."""
    excused: tuple[str, ...] = ()
    """Counted equipment without one, out of service for some part of ``[start, end)``: no missed
    check. ``counted`` = ``performed`` + ``missed`` + ``excused``."""


class Verdict(StrEnum):
    """How a counted window ended for one piece of equipment, as the evaluation judges it."""

    ON_TIME = Timeliness.ON_TIME.value
    LATE = Timeliness.LATE.value
    EXCUSED = "excused"
    MISSED = "missed"

    @property
    def done(self) -> bool:
        return self in (Verdict.ON_TIME, Verdict.LATE)


def verdict(done: Timeliness | None, excused: bool) -> Verdict:
    """The one definition of a counted window's outcome for one piece of equipment (the evaluation's
    judgement, and the report's outcome of a window without a missed-check record): its best check's
    timeliness when one counts (a check performed while out of service still counts as performed),
    else excused when the equipment was out of service for any part of the window, else missed
    (the report says pending for a window not judged yet)."""
    if done is not None:
        return Verdict(done.value)
    return Verdict.EXCUSED if excused else Verdict.MISSED


def best_timeliness(kinds: Iterable[Timeliness | None]) -> Timeliness | None:
    """Of several checks' timeliness in one window: on time when one was, else late when one was."""
    found = set(kinds)
    return next((kind for kind in (Timeliness.ON_TIME, Timeliness.LATE) if kind in found), None)


def judge(window: OccurrenceWindow, assignments: Iterable[Assignment],
          performed: Iterable[PerformedCheck], out_of_service: Iterable[OutOfServicePeriod] = ()) -> Judgement:
    """Each counted piece of equipment's :func:`verdict`: performed (on time or late), excused or missed."""
    counted = sorted({a.equipment_id for a in assignments if a.counts_for(window.start, window.end)})
    checks: dict[str, list[Timeliness | None]] = {}
    for check in performed:
        checks.setdefault(check.equipment_id, []).append(
            timeliness(check.performed_at, window.start, window.end, window.evaluate_at))
    excused = excused_equipment(window, out_of_service)
    verdicts = {e: verdict(best_timeliness(checks.get(e, ())), e in excused) for e in counted}
    return Judgement(
        counted=tuple(counted),
        performed=tuple(e for e in counted if verdicts[e].done),
        missed=tuple(e for e in counted if verdicts[e] is Verdict.MISSED),
        excused=tuple(e for e in counted if verdicts[e] is Verdict.EXCUSED),
    )


@dataclass(frozen=True)
class MissedCheck:
    """The durable record of one miss: (checklist, window, equipment) identify it, so writing it is
    idempotent; when it was judged and by which execution. The rule it was judged by is kept once per
    window, on the judged-window record the evaluation opens before any of the window's missed checks."""

    checklist_id: str
    equipment_id: str
    window: OccurrenceWindow
    judged_at: datetime
    execution: str
