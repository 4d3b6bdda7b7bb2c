"""Missed checks: judging one occurrence window for a set of equipment, and the durable record."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from missed_checks import keys
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.equipment.assignments import Assignment
from missed_checks.equipment.out_of_service import OutOfServicePeriod, excused_equipment
from missed_checks.performed_checks.performed_check import PerformedCheck, Timeliness, timeliness
from missed_checks.timefmt import to_utc_iso


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


def missed_check_item(
    *,
    checklist_id: str,
    equipment_id: str,
    window: OccurrenceWindow,
    judged_at: datetime,
    execution: str,
) -> dict[str, Any]:
    """The durable record: keyed by (checklist, window start, equipment), so writing it is idempotent.

    It stays under 1 KB (one write unit) and lands in no index: the rule it was judged by is kept
    once per window, on the judged-window record (:func:`judged_window_fields`), which the
    evaluation writes before any of the window's missed checks."""
    start = to_utc_iso(window.start)
    return {
        **keys.missed_key(checklist_id, start, equipment_id),
        "type": "missed_check",
        "checklist_id": checklist_id,
        "equipment_id": equipment_id,
        "window_start": start,
        "window_end": to_utc_iso(window.end),
        "evaluate_at": to_utc_iso(window.evaluate_at),
        "window_local_start": window.start.isoformat(),
        "judged_at": to_utc_iso(judged_at),
        "execution": execution,
    }


def judged_window_fields(checklist_id: str, window: OccurrenceWindow, judged_by: Mapping[str, Any]) -> dict[str, Any]:
    """What the judged-window record holds from the moment its window is first judged: the window,
    the rule it is judged by (kept as first written: later edits never rewrite it), and its entry
    in the fleet's ByPeriod index (one per window, so the fleet report finds every checklist,
    deleted ones included, without an index entry per missed check)."""
    start = to_utc_iso(window.start)
    return {
        "type": "judged_window",
        "checklist_id": checklist_id,
        "window_start": start,
        "window_end": to_utc_iso(window.end),
        "evaluate_at": to_utc_iso(window.evaluate_at),
        "window_local_start": window.start.isoformat(),
        "judged_by": {k: v for k, v in judged_by.items() if v},
        "gsi2pk": keys.fleet_windows_pk(start[:7]),
        "gsi2sk": keys.fleet_windows_sk(start, checklist_id),
    }
