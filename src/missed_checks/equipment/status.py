"""An equipment's status across its checklists (issue #19: "which forklifts are still unchecked, and
until when?"): for each checklist it is assigned to now, the current window (or the next one),
shown in the checklist's own zone, whether it is done, undone or not yet due, when it is due by,
and the open run of misses. No AWS call: the reads go through :class:`StatusReader`.

Definitions:

* the **current window** is the latest window with ``start <= now < end + grace`` (a check still
  counts in it, on time or late); when there is none, the **next** window (``not_due``);
* **done**: a performed check of the equipment on the checklist in ``[start, end + grace)``;
  **undone** otherwise; a paused checklist is ``paused`` (nothing is judged while it is paused);
  a checklist whose recurrence has ended is ``no_window``;
* the **open run of misses**: judged windows of the last :data:`MISS_LOOKBACK`, newest first, each
  with a missed check of the equipment, up to the first judged window without one.

Beside them, the equipment's live **readiness** (#33, :func:`readiness_for`): computed from the table
as it is now (:func:`missed_checks.readiness.watching.readiness_now`), which the stored, announced
state follows within seconds (docs/readiness.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from missed_checks.checklists.checklist import Checklist, Status
from missed_checks.checklists.recurrence import OccurrenceWindow, Recurrence
from missed_checks.checklists.recurrence.limits import iso
from missed_checks.equipment.assignments import Assignment
from missed_checks.performed_checks.performed_check import counting_windows, timeliness
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Action
from missed_checks.readiness.ports import ReadinessReader
from missed_checks.readiness.readiness import Readiness
from missed_checks.readiness.watching import readiness_now
from missed_checks.reporting.report import MissedRecord
from missed_checks.timefmt import parse_instant, to_utc_iso

MISS_LOOKBACK = timedelta(days=92)
"""How far back the open run of misses is followed (a run longer than that reads "at least")."""


class StatusReader(Protocol):
    def assignments_of_equipment(self, equipment_id: str) -> list[Assignment]:
        """The equipment's assignments on every checklist."""
        ...

    def get_checklist(self, checklist_id: str) -> Checklist | None: ...

    def performed_checks_of_equipment(self, equipment_id: str, low: str, until: str) -> list[tuple[str, str]]:
        """(checklist id, performed_at UTC ISO) of its checks performed in ``[low, until]``."""
        ...

    def judged_windows_of(self, checklist_id: str, start: datetime, end: datetime) -> list[OccurrenceWindow]:
        """The checklist's judged windows that started in ``[start, end)``."""
        ...

    def missed_records_of_equipment(self, equipment_id: str, checklist_ids: Iterable[str], start: datetime,
                                    end: datetime) -> list[tuple[str, MissedRecord]]:
        """(checklist id, missed check) of the equipment on these checklists, windows started in ``[start, end)``."""
        ...


@dataclass(frozen=True)
class ChecklistStatus:
    checklist: Checklist
    zone_name: str
    state: str
    window: OccurrenceWindow | None
    performed_at: datetime | None
    open_misses: int
    misses_since: datetime | None

    def to_dict(self) -> dict[str, Any]:
        window = None
        if self.window is not None:
            window = {"start": iso(self.window.start), "end": iso(self.window.end), "due_by": iso(self.window.end),
                      "late_until": iso(self.window.evaluate_at)}
        zone = self.window.start.tzinfo if self.window is not None else None
        return {
            "checklist_id": self.checklist.checklist_id, "name": self.checklist.name, "timezone": self.zone_name,
            "state": self.state, "window": window,
            "performed_at": iso(self.performed_at.astimezone(zone)) if self.performed_at and zone else None,
            "open_misses": {"count": self.open_misses,
                            "since": iso(self.misses_since.astimezone(zone)) if self.misses_since and zone else None},
        }


def current_or_next_window(rule: Recurrence, now: datetime) -> OccurrenceWindow | None:
    """The latest window with ``start <= now < evaluate_at``, else the first starting after now
    (None when the recurrence has ended)."""
    current = counting_windows(rule, now)  # the windows a check done now would count in
    return current[-1] if current else next(rule.iter_windows(now), None)


def status_of(reader: StatusReader, equipment_id: str, now: datetime) -> list[ChecklistStatus]:
    """The equipment's status on every checklist it is assigned to at ``now``, by checklist id."""
    assigned = sorted((a for a in reader.assignments_of_equipment(equipment_id) if a.assigned_at_instant(now)),
                      key=lambda a: a.checklist_id)
    if not assigned:
        return []
    low = now - MISS_LOOKBACK
    performed: dict[str, list[datetime]] = {}
    for checklist_id, at in reader.performed_checks_of_equipment(equipment_id, to_utc_iso(low), to_utc_iso(now)):
        performed.setdefault(checklist_id, []).append(parse_instant(at, "performed_at"))
    statuses = []
    for assignment in assigned:
        checklist = reader.get_checklist(assignment.checklist_id)
        if checklist is None:
            continue
        rule = checklist.parsed()
        window = current_or_next_window(rule, now)
        done_at = None
        if window is not None:
            done_at = max((at for at in performed.get(checklist.checklist_id, [])
                           if timeliness(at, window.start, window.end, window.evaluate_at) is not None), default=None)
        if checklist.status == Status.PAUSED:
            state = "paused"
        elif window is None:
            state = "no_window"
        elif window.start > now:
            state = "not_due"
        else:
            state = "done" if done_at else "undone"
        count, since = _open_misses(reader, equipment_id, checklist.checklist_id, low, now)
        statuses.append(ChecklistStatus(checklist, rule.timezone, state, window, done_at, count, since))
    return statuses


def status_for(reader: StatusReader, caller: Caller, equipment_id: str, now: datetime) -> list[ChecklistStatus]:
    """:func:`status_of` on the checklists at the sites where ``caller`` may ``read`` (#31): what
    ``GET /equipment/{id}/status`` and the web app's equipment page show."""
    return [s for s in status_of(reader, equipment_id, now) if caller.may(Action.read, s.checklist.site_id)]


def readiness_for(reader: ReadinessReader, caller: Caller, equipment_id: str, now: datetime) -> Readiness | None:
    """The equipment's live readiness, for a caller who may ``read`` at its site (None otherwise): what
    ``GET /equipment/{id}/status`` shows beside the checklists."""
    readiness = readiness_now(reader, equipment_id, now)
    return readiness if caller.may(Action.read, readiness.site_id) else None


def _open_misses(reader: StatusReader, equipment_id: str, checklist_id: str, low: datetime,
                 now: datetime) -> tuple[int, datetime | None]:
    judged = sorted((to_utc_iso(w.start) for w in reader.judged_windows_of(checklist_id, low, now)), reverse=True)
    missed = {m.window_start for _, m in reader.missed_records_of_equipment(equipment_id, [checklist_id], low, now)}
    count, since = 0, None
    for start in judged:
        if start not in missed:
            break
        count, since = count + 1, parse_instant(start, "window_start")
    return count, since
