"""Checklists, their equipment and performed checks: the use cases of the ``checklist``, ``equipment``
and ``check`` commands, and what a checklist rule will do, shown before it is written (its next
windows and its schedule)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from missed_checks.aws.table import NotFound
from missed_checks.checklists.checklist import Checklist, validate_checklist_id
from missed_checks.checklists.recurrence import OccurrenceWindow, Recurrence, parse_recurrence
from missed_checks.checklists.saving import save_checklist
from missed_checks.checklists.schedule_expression import schedule_for
from missed_checks.equipment.assignments import Assignment
from missed_checks.errors import InvalidInput
from missed_checks.evaluation.ports import ChecklistReader
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks.performed_checks.recording import Problem, Recorded, Row, record_checks, refusals
from missed_checks.timefmt import to_utc_iso
from missed_checks_ops.target import StackTarget

CHUNK = 500
"""Equipment ids or performed checks written per request batch (and progress step)."""

HORIZONS = (timedelta(days=40), timedelta(days=400), timedelta(days=366 * 5))


@dataclass(frozen=True)
class Preview:
    windows: list[OccurrenceWindow]
    expression: str
    timezone: str
    exact: bool
    start_date: datetime | None
    end_date: datetime | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "next_windows": [w.to_dict() for w in self.windows],
            "schedule": {
                "expression": self.expression,
                "timezone": self.timezone,
                "exact": self.exact,
                "start_date": to_utc_iso(self.start_date) if self.start_date else None,
                "end_date": to_utc_iso(self.end_date) if self.end_date else None,
            },
        }


def validate_rule(recurrence: str, timezone: str | None, window: str | None, grace: str | None) -> Recurrence:
    """The recurrence engine's verdict; raises InvalidRecurrence naming the field."""
    return parse_recurrence(recurrence, timezone=timezone, window=window, grace=grace)


def next_windows(rule: Recurrence, now: datetime, count: int) -> list[OccurrenceWindow]:
    """The next ``count`` windows starting at or after ``now`` (fewer when the rule ends)."""
    for horizon in HORIZONS:
        windows = rule.windows(now, now + horizon)
        if len(windows) >= count:
            break
    return list(windows[:count])


def preview(rule: Recurrence, now: datetime, count: int = 5) -> Preview:
    """The next windows and the schedule; with closure calendars (``rule.closed_dates``) the
    schedule is never exact (cron cannot leave dates out), as
    :func:`missed_checks.checklists.schedule.desired_schedule`."""
    if rule.closed_dates and not rule.has_windows():
        raise InvalidInput("closed_on", "its calendars close every window of the rule: nothing would ever be due")
    spec = schedule_for(rule)
    return Preview(next_windows(rule, now, count), spec.expression, spec.timezone,
                   spec.exact and not rule.closed_dates, spec.start_date, spec.end_date)


# -- the checklists of a stack ----------------------------------------------------------------------
@dataclass(frozen=True)
class ChecklistState:
    """A checklist as ``checklist show`` presents it: the item, and how much equipment it has now."""

    checklist: Checklist
    assigned: int
    unassigned: int


def get_checklist(target: StackTarget, checklist_id: str, field: str = "checklist_id") -> Checklist:
    """The checklist, or :class:`NotFound`."""
    return require_checklist(target.table(), validate_checklist_id(checklist_id, field))


def require_checklist(table: ChecklistReader, checklist_id: str) -> Checklist:
    checklist = table.get_checklist(checklist_id)
    if checklist is None:
        raise NotFound(f"checklist {checklist_id!r} does not exist")
    return checklist


def list_checklists(target: StackTarget) -> list[Checklist]:
    return target.table().list_checklists()


def checklist_state(target: StackTarget, checklist_id: str, now: datetime) -> ChecklistState:
    table = target.table()
    checklist = require_checklist(table, validate_checklist_id(checklist_id))
    assignments = table.assignments(checklist.checklist_id)
    assigned = sum(1 for a in assignments if a.unassigned_at is None or a.unassigned_at > now)
    return ChecklistState(checklist, assigned, len(assignments) - assigned)


def put_checklist(target: StackTarget, spec: Mapping[str, Any], now: datetime, *, validated: bool = False,
                  by: str) -> str:
    """Write one checklist spec as ``by``; returns ``created`` or ``updated``. ``validated``: the caller has
    checked the rule with :func:`validate_rule` (the recurrence engine is not run a second time)."""
    written = save_checklist(target.table(),
        str(spec["id"]), recurrence=str(spec["recurrence"]), now=now, name=spec.get("name") or "",
        timezone=spec.get("timezone"), window=spec.get("window"), grace=spec.get("grace"), validate=not validated,
        closed_on=list(spec.get("closed_on") or ()),
        notify=spec.get("notify"),  # notifications (#18): a NotifySettings, or None to keep the checklist's
        by=by)
    return "created" if written.revision == 1 and written.created_at == now else "updated"


def delete_checklist(target: StackTarget, checklist_id: str, *, by: str) -> None:
    """Delete the checklist; its assignments are ended and kept, its performed and missed checks stay
    (:meth:`ChecklistTable.delete_checklist`); :class:`NotFound`."""
    if not target.table().delete_checklist(checklist_id, by=by):
        raise NotFound(f"checklist {checklist_id!r} does not exist")


def pause_checklist(target: StackTarget, checklist_id: str, now: datetime, *, by: str) -> Checklist:
    return target.table().pause_checklist(checklist_id, now, by=by)


def resume_checklist(target: StackTarget, checklist_id: str, now: datetime, *, by: str) -> Checklist:
    return target.table().resume_checklist(checklist_id, now, by=by)


# -- equipment ----------------------------------------------------------------------------------------
def named_checklist(target: StackTarget, checklist_id: str, option: str = "checklist") -> Checklist:
    """The checklist an option names (``--checklist ID``), or InvalidInput naming ``option``: an id
    that names no checklist is a usage error (a typo, most often), said before anything is written."""
    checklist = target.table().get_checklist(validate_checklist_id(checklist_id, option))
    if checklist is None:
        raise InvalidInput(option, f"there is no checklist with id {checklist_id!r}: check --{option} "
                                   "(missed-checks checklist list shows every checklist); nothing was written")
    return checklist


def change_assignments(target: StackTarget, checklist_id: str, equipment_ids: Sequence[str], at: datetime, *,
                       assign: bool, progress: Callable[[int], None] | None = None, checked: bool = False,
                       by: str) -> int:
    """Assign (or unassign) equipment from ``at`` on; returns how many changed. Assigning is one call
    (the checklist's assignments are read once, not once per chunk); unassigning goes in chunks.
    ``checked``: the caller found the checklist already (:func:`named_checklist`)."""
    table = target.table()
    if not checked:
        require_checklist(table, checklist_id)
    if assign:
        return table.assign_equipment(checklist_id, equipment_ids, at, progress=progress, by=by)
    table.check_unassignment(checklist_id, equipment_ids, at)  # every chunk's ids, before any is written
    change = table.unassign_equipment
    changed = 0
    for offset in range(0, len(equipment_ids), CHUNK):
        chunk = equipment_ids[offset:offset + CHUNK]
        changed += change(checklist_id, chunk, at, by=by)
        if progress:
            progress(len(chunk))
    return changed


def equipment_of(target: StackTarget, checklist_id: str) -> tuple[Checklist, list[Assignment]]:
    """The checklist and every assignment it ever had, by equipment id (one Query)."""
    table = target.table()
    checklist = require_checklist(table, checklist_id)
    return checklist, sorted(table.assignments(checklist.checklist_id), key=lambda a: a.equipment_id)


# -- performed checks (through the record-a-check use case, missed_checks.performed_checks.recording) ---------
def record_check(target: StackTarget, check: PerformedCheck, now: datetime, recorded_by: str) -> Recorded:
    """Record one performed check; :class:`NotFound` when its checklist does not exist, else
    :class:`missed_checks.performed_checks.recording.ChecksRefused` naming the field (nothing written)."""
    table = target.table()
    require_checklist(table, check.checklist_id)
    return record_checks(table, [Row(check)], now=now, recorded_by=recorded_by)


def refused_checks(target: StackTarget, rows: Sequence[Row], now: datetime) -> list[Problem]:
    """Why each of ``rows`` would be refused (nothing written): to name them with a file's unreadable rows."""
    return refusals(target.table(), rows, now) if rows else []


def import_checks(target: StackTarget, rows: Sequence[Row], now: datetime, recorded_by: str,
                  progress: Callable[[int], None] | None = None) -> Recorded:
    """Write performed checks in chunks once every row passed (every refused row is named in
    :class:`missed_checks.performed_checks.recording.ChecksRefused` and nothing is written)."""
    return record_checks(target.table(), rows, now=now, recorded_by=recorded_by, progress=progress)
