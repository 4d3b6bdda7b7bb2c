"""Assigning equipment to a checklist (and unassigning it), and reading a checklist's assignments,
for a :class:`~missed_checks.permissions.caller.Caller` at the checklist's site.

The operator's ``equipment assign|unassign|list`` and the management API's
``/checklists/{checklist_id}/equipment`` routes both go through here. Assigning needs ``manage`` at the
checklist's site; when the checklist has a site, every piece of equipment must be registered, not
retired and at that site at ``at`` (InvalidInput naming ``equipment[i]``, nothing written), so a site's
checklist only ever counts that site's equipment. A checklist made before sites existed (no site)
takes any id, as it always did.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from missed_checks.checklists.checklist import Checklist
from missed_checks.checklists.managing import get_checklist
from missed_checks.equipment.assignments import Assignment, validate_equipment_id
from missed_checks.equipment.ports import AssignmentStore, RegistryReader
from missed_checks.errors import InvalidInput
from missed_checks.paging import Page, page_after
from missed_checks.permissions.authorizing import visible
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Action
from missed_checks.timefmt import to_utc_iso

CHUNK = 500
"""Equipment ids unassigned per request batch (and progress step)."""


def change_assignments(store: AssignmentStore, registry: RegistryReader, caller: Caller, checklist_id: str,
                       equipment_ids: Sequence[str], at: datetime, *, assign: bool,
                       progress: Callable[[int], None] | None = None, field: str = "checklist_id") -> int:
    """Assign (or unassign) equipment from ``at`` on; returns how many changed. Assigning is one call
    (the checklist's assignments are read once, not once per chunk); unassigning goes in chunks,
    every chunk's ids checked before any is written."""
    checklist = get_checklist(store, caller, checklist_id, action=Action.manage, field=field)
    ids = [validate_equipment_id(e, f"equipment[{n}]") for n, e in enumerate(equipment_ids)]
    if assign:
        require_at_site(registry, checklist, ids, at, caller)
        return store.assign_equipment(checklist.checklist_id, ids, at, progress=progress, by=caller.principal)
    store.check_unassignment(checklist.checklist_id, ids, at)
    changed = 0
    for offset in range(0, len(ids), CHUNK):
        chunk = ids[offset:offset + CHUNK]
        changed += store.unassign_equipment(checklist.checklist_id, chunk, at, by=caller.principal)
        if progress:
            progress(len(chunk))
    return changed


def require_at_site(registry: RegistryReader, checklist: Checklist, equipment_ids: Sequence[str],
                    at: datetime, caller: Caller) -> None:
    """Every id registered, not retired and at the checklist's site at ``at`` (a checklist with a
    site); InvalidInput naming the first that is not. Equipment at a site the caller may not read is
    answered as equipment that is not registered (``equipment[2]: FL-9 is not registered at site
    north``): another site's equipment is never confirmed to exist, nor where it is; a caller who
    may read there (an admin) is told ``FL-9 is at site south, not north``."""
    site_id = checklist.site_id
    if site_id is None or not equipment_ids:
        return
    registered = registry.registered_equipment(equipment_ids)
    for index, equipment_id in enumerate(equipment_ids):
        field = f"equipment[{index}]"
        found = registered.get(equipment_id)
        where = found.site_at(at) if found is not None else None
        if found is None or where is None or (where != site_id and not visible(caller, where)):
            raise InvalidInput(field, f"{equipment_id} is not registered at site {site_id}: register it there "
                                      "first (POST /equipment), or move it there; nothing was assigned")
        if found.retired_at is not None and found.retired_at <= at:
            raise InvalidInput(field, f"{equipment_id} was retired at {to_utc_iso(found.retired_at)}; nothing was "
                                      "assigned")
        if where != site_id:
            raise InvalidInput(field, f"{equipment_id} is at site {where}, not {site_id}"
                                      f"{'' if where == found.site_id else f' at {to_utc_iso(at)}'}; nothing was "
                                      "assigned")


def equipment_of(store: AssignmentStore, caller: Caller, checklist_id: str) -> tuple[Checklist, list[Assignment]]:
    """The checklist and every assignment it ever had, by equipment id (one Query)."""
    checklist = get_checklist(store, caller, checklist_id)
    return checklist, sorted(store.assignments(checklist.checklist_id), key=lambda a: a.equipment_id)


def assignments_page(store: AssignmentStore, caller: Caller, checklist_id: str, position: str | None,
                     limit: int) -> Page[Assignment]:
    """One page of the checklist's assignments by equipment id, those after ``position``."""
    _, assignments = equipment_of(store, caller, checklist_id)
    return page_after(assignments, lambda a: a.equipment_id, position, limit)
