"""Checklists, their equipment and performed checks: the use cases of the ``checklist``, ``equipment``
and ``check`` commands, as the operator (every site: :meth:`Caller.operator`) or the person ``--as``
names. Each is the product's own use case (:mod:`missed_checks.checklists.previewing`,
:mod:`~missed_checks.checklists.managing`, :mod:`missed_checks.equipment.assigning`), the same the
management API calls, handed the stack's table."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from missed_checks.checklists import managing, previewing
from missed_checks.checklists.checklist import Checklist
from missed_checks.checklists.managing import ChecklistState
from missed_checks.checklists.previewing import Preview
from missed_checks.checklists.recurrence import Recurrence
from missed_checks.equipment import assigning
from missed_checks.equipment.assignments import Assignment
from missed_checks.errors import InvalidInput, NotFound
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks.performed_checks.recording import Problem, Recorded, Row, record_checks, refusals
from missed_checks.permissions.caller import Caller
from missed_checks_ops.principal import cli_principal
from missed_checks_ops.target import StackTarget

__all__ = ["ChecklistState", "Preview"]  # the commands' documents


def validate_rule(recurrence: str, timezone: str | None, window: str | None, grace: str | None) -> Recurrence:
    """The recurrence engine's verdict; raises InvalidRecurrence naming the field."""
    return previewing.validate_rule(recurrence, timezone, window, grace)


def preview(rule: Recurrence, now: datetime, count: int = 5) -> Preview:
    """The next windows and the schedule (:func:`missed_checks.checklists.previewing.preview`)."""
    return previewing.preview(rule, now, count)


# -- the checklists of a stack: missed_checks.checklists.managing, as ``caller`` ----------------------
def get_checklist(target: StackTarget, checklist_id: str, field: str = "checklist_id",
                  caller: Caller | None = None) -> Checklist:
    """The checklist, or :class:`NotFound` (the operator sees every site's)."""
    return managing.get_checklist(target.table(), caller or Caller.operator(cli_principal()), checklist_id,
                                  field=field)


def site_defaults(target: StackTarget, spec: Mapping[str, Any]) -> dict[str, Any]:
    """The spec of a checklist at a site (``site_id``, which must exist) with the site's zone when it
    names none (:func:`missed_checks.checklists.managing.with_site_defaults`)."""
    return managing.with_site_defaults(target.table(), spec)


def list_checklists(target: StackTarget, caller: Caller) -> list[Checklist]:
    return managing.list_checklists(target.table(), caller)


def checklist_state(target: StackTarget, caller: Caller, checklist_id: str, now: datetime) -> ChecklistState:
    return managing.checklist_state(target.table(), caller, checklist_id, now)


def put_checklist(target: StackTarget, caller: Caller, spec: Mapping[str, Any], now: datetime, *,
                  validated: bool = False) -> str:
    """Write one checklist spec; returns ``created`` or ``updated``. ``validated``: the caller has
    checked the rule with :func:`validate_rule` (the recurrence engine is not run a second time)."""
    written = managing.put_checklist(target.table(), caller, spec, now, validated=validated)
    return "created" if written.revision == 1 and written.created_at == now else "updated"


def delete_checklist(target: StackTarget, caller: Caller, checklist_id: str) -> None:
    """Delete the checklist; its assignments are ended and kept, its performed and missed checks stay;
    :class:`NotFound`."""
    managing.delete_checklist(target.table(), caller, checklist_id)


def pause_checklist(target: StackTarget, caller: Caller, checklist_id: str, now: datetime) -> Checklist:
    return managing.pause_checklist(target.table(), caller, checklist_id, now)


def resume_checklist(target: StackTarget, caller: Caller, checklist_id: str, now: datetime) -> Checklist:
    return managing.resume_checklist(target.table(), caller, checklist_id, now)


# -- equipment: missed_checks.equipment.assigning -------------------------------------------------------
def named_checklist(target: StackTarget, caller: Caller, checklist_id: str, option: str = "checklist") -> Checklist:
    """The checklist an option names (``--checklist ID``), or InvalidInput naming ``option``: an id
    that names no checklist (or one at a site the caller holds no role at) is a usage error (a typo,
    most often), said before anything is written."""
    try:
        return managing.get_checklist(target.table(), caller, checklist_id, field=option)
    except NotFound:
        raise InvalidInput(option, f"there is no checklist with id {checklist_id!r}: check --{option} (missed-checks "
                                   "checklist list shows every checklist); nothing was written") from None


def change_assignments(target: StackTarget, caller: Caller, checklist_id: str, equipment_ids: Sequence[str],
                       at: datetime, *, assign: bool, progress: Callable[[int], None] | None = None) -> int:
    """Assign (or unassign) equipment from ``at`` on; returns how many changed."""
    table = target.table()
    return assigning.change_assignments(table, table, caller, checklist_id, equipment_ids, at, assign=assign,
                                        progress=progress, field="checklist")


def equipment_of(target: StackTarget, caller: Caller, checklist_id: str) -> tuple[Checklist, list[Assignment]]:
    """The checklist and every assignment it ever had, by equipment id (one Query)."""
    return assigning.equipment_of(target.table(), caller, checklist_id)


# -- performed checks (through the record-a-check use case, missed_checks.performed_checks.recording) ---------
def record_check(target: StackTarget, check: PerformedCheck, now: datetime, recorded_by: str,
                 caller: Caller | None = None) -> Recorded:
    """Record one performed check (as ``caller``: ``record`` at the checklist's site; None: the
    operator); :class:`NotFound` when its checklist does not exist, else
    :class:`missed_checks.performed_checks.recording.ChecksRefused` naming the field (nothing written):
    an answer the checklist's items in force do not take names ``answers.<item id>`` (#33)."""
    table = target.table()
    get_checklist(target, check.checklist_id)
    return record_checks(table, [Row(check)], now=now, recorded_by=recorded_by, caller=caller)


def refused_checks(target: StackTarget, rows: Sequence[Row], now: datetime) -> list[Problem]:
    """Why each of ``rows`` would be refused (nothing written): to name them with a file's unreadable rows."""
    return refusals(target.table(), rows, now) if rows else []


def import_checks(target: StackTarget, rows: Sequence[Row], now: datetime, recorded_by: str,
                  progress: Callable[[int], None] | None = None) -> Recorded:
    """Write performed checks in chunks once every row passed (every refused row is named in
    :class:`missed_checks.performed_checks.recording.ChecksRefused` and nothing is written)."""
    return record_checks(target.table(), rows, now=now, recorded_by=recorded_by, progress=progress)
