"""Opening and clearing defects as checks are recorded (#33): called by
:func:`missed_checks.performed_checks.recording.record_checks` once the checks are written.

* A check whose answers failed a critical item opens its defect: one put conditional on the
  defect's id being free (:func:`missed_checks.defects.defect.defect_id_of`), so a retry, a replay or
  a second writer of the same check finds it on record and leaves it as it is.
* A check passing every critical item of a checklist with ``clear_on_pass`` resolves the open
  defects of that checklist and equipment found before it (``resolved_how="passing_check"``, by the
  check's recorder), each write conditional on the revision read: one resolved meanwhile stays as
  its resolver left it.

Checks are taken in the order they were performed, so in one batch a failing check opens a defect
that a later passing one clears. What is on record decides: a check on record already opens or
clears by the answers it was recorded with (its findings as stored), never by a retry's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from missed_checks.checklists.checklist import Checklist
from missed_checks.defects.defect import Defect, ResolvedHow, defect_id_of
from missed_checks.defects.ports import DefectStore
from missed_checks.errors import Conflict, InvalidInput, NotFound, PreconditionFailed
from missed_checks.performed_checks.answers import Findings
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks.timefmt import to_utc_iso

NOTE_PREFIX = "cleared by a passing check at "


@dataclass(frozen=True)
class CheckFound:
    """A check on record, what it found and who recorded it when (the record's, first writer's)."""

    check: PerformedCheck
    findings: Findings
    recorded_at: datetime
    recorded_by: str | None


@dataclass(frozen=True)
class DefectChanges:
    """Per check (by position in the request), the defect it opened or found open already, and the
    defects it cleared."""

    opened: Mapping[int, tuple[str, ...]]
    closed: Mapping[int, tuple[str, ...]]


def defect_of_check(found: CheckFound, site_id: str | None) -> Defect | None:
    """The defect ``found``'s critical failures open (None: it failed no critical item)."""
    critical = found.findings.critical_failed
    if not critical:
        return None
    check = found.check
    return Defect(defect_id_of(check.checklist_id, check.equipment_id, check.performed_at), check.checklist_id,
                  check.equipment_id, site_id, critical, found.recorded_by, check.performed_at, found.recorded_at)


def clears(checklist: Checklist | None, findings: Findings) -> bool:
    """Whether a check with ``findings`` clears earlier defects of ``checklist``: it allows it
    (``clear_on_pass``) and the check answered items (a revision was in force) failing no critical one."""
    return checklist is not None and checklist.clear_on_pass and findings.items_revision is not None \
        and findings.passed_critical


def local_time(instant: datetime, checklist: Checklist | None) -> str:
    """``2026-03-02 07:10 CET``: on the checklist's clock (UTC when its rule cannot be read)."""
    zone: Any = UTC
    if checklist is not None:
        try:
            zone = checklist.parsed().zone
        except InvalidInput:
            zone = UTC
    local = instant.astimezone(zone)
    return f"{local:%Y-%m-%d %H:%M} {local.tzname()}"


def open_and_clear(store: DefectStore, found: Sequence[CheckFound], checklists: Mapping[str, Checklist | None],
                   *, by: str) -> DefectChanges:
    """Open the defects of ``found``'s critical failures and clear those its passing checks clear
    (see the module); ``by``: whom the writes are stamped by (the request's caller)."""
    opened: dict[int, tuple[str, ...]] = {}
    closed: dict[int, tuple[str, ...]] = {}
    order = sorted(range(len(found)), key=lambda i: (found[i].check.performed_at, i))
    done: set[str] = set()
    for index in order:
        each = found[index]
        checklist = checklists.get(each.check.checklist_id)
        defect = defect_of_check(each, checklist.site_id if checklist is not None else None)
        if defect is not None:
            store.put_defect(defect, by=by)  # False: on record already (a retry, another writer): left as is
            opened[index] = (defect.defect_id,)
        elif clears(checklist, each.findings):
            closed[index] = tuple(_clear(store, each, checklist, by, done))
    return DefectChanges(opened, closed)


def _clear(store: DefectStore, found: CheckFound, checklist: Checklist | None, by: str, done: set[str]) -> list[str]:
    check = found.check
    note = f"{NOTE_PREFIX}{local_time(check.performed_at, checklist)}"
    cleared_by = {"checklist_id": check.checklist_id, "equipment_id": check.equipment_id,
                  "performed_at": to_utc_iso(check.performed_at)}
    ids = []
    for defect in store.defects_of_equipment(check.equipment_id):
        if defect.cleared_by_check == cleared_by:  # this check cleared it before (a retry answers the same)
            ids.append(defect.defect_id)
            continue
        if not defect.is_open or defect.checklist_id != check.checklist_id or defect.found_at >= check.performed_at \
                or defect.defect_id in done:
            continue
        resolved = defect.resolved(by=found.recorded_by or by, at=found.recorded_at, note=note,
                                   how=ResolvedHow.PASSING_CHECK, cleared_by_check=cleared_by)
        try:
            store.resolve_defect_item(resolved, expected=defect.revision, by=by)
        except (PreconditionFailed, Conflict, NotFound):
            continue  # resolved (or changed) meanwhile: its resolver's word stands
        done.add(defect.defect_id)
        ids.append(defect.defect_id)
    return ids
