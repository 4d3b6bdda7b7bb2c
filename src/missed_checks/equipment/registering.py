"""The equipment registry's use cases (#31): register, edit, move, retire, read and list equipment,
for a :class:`~missed_checks.permissions.caller.Caller` (``manage`` at the equipment's site to
change it, at both sites to move it; ``read`` to see it: another site's equipment is NotFound,
exactly as unregistered equipment).

A move or a retirement dated ``at`` (default: now) first ends, at ``at``, the equipment's open
assignments it no longer belongs to (a move: those to checklists of the site it leaves; a
retirement: all), through the assignments' own writer, then writes the record. Windows already
judged keep what they were judged with: judged windows and missed checks are records, never
rewritten. Equipment assigned before the registry existed has no record and no site: only an admin
or an unscoped caller sees it, through the assignment and status routes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from missed_checks.equipment.assignments import validate_equipment_id
from missed_checks.equipment.ports import RegistryStore
from missed_checks.equipment.registration import RegisteredEquipment
from missed_checks.errors import InvalidInput, NotFound
from missed_checks.paging import Page, every_item, page_limit
from missed_checks.permissions.authorizing import authorize
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Action
from missed_checks.revisions import ANY, expected_revision
from missed_checks.sites.saving import require_site
from missed_checks.sites.saving import what as site_what
from missed_checks.sites.site import validate_site_id

__all__ = ["RegistryChange", "edit_equipment", "get_equipment", "list_equipment", "move_equipment",
           "register_equipment", "retire_equipment", "what"]


def what(equipment_id: str) -> str:
    return f"equipment {equipment_id!r}"


@dataclass(frozen=True)
class RegistryChange:
    """A record as written, and the checklists whose open assignment of it a move or retirement ended."""

    equipment: RegisteredEquipment
    ended: tuple[str, ...] = ()


def register_equipment(store: RegistryStore, caller: Caller, equipment_id: object, *, name: object, kind: object,
                       site_id: object, attributes: object = None, now: datetime) -> RegisteredEquipment:
    """A new record at ``site_id`` (``manage`` there; the site must exist, InvalidInput ``site_id``);
    Conflict when the id is registered already."""
    equipment_id = validate_equipment_id(equipment_id, "equipment_id")
    site = validate_site_id(site_id)
    authorize(caller, Action.manage, site, what=site_what(site))
    require_site(store, site)
    equipment = RegisteredEquipment.register(equipment_id, name=name, kind=kind, site_id=site,
                                             attributes=attributes, now=now)
    expected_revision(what(equipment_id), store.get_registered(equipment_id), create=True)
    store.write_registered(equipment, expected=None, by=caller.principal)
    return equipment


def _current(store: RegistryStore, caller: Caller, equipment_id: object, action: Action) -> RegisteredEquipment:
    equipment_id = validate_equipment_id(equipment_id, "equipment_id")
    found = store.get_registered(equipment_id)
    if found is None:
        raise NotFound(f"{what(equipment_id)} does not exist")
    authorize(caller, action, found.site_id, what=what(equipment_id))
    return found


def get_equipment(store: RegistryStore, caller: Caller, equipment_id: object) -> RegisteredEquipment:
    """The record with its moves, when the caller may ``read`` at its site."""
    return _current(store, caller, equipment_id, Action.read)


def edit_equipment(store: RegistryStore, caller: Caller, equipment_id: object, if_match: int | None = ANY, *,
                   name: object = None, kind: object = None, attributes: object = None, site_id: object = None,
                   at: datetime | None = None, now: datetime) -> RegistryChange:
    """Another name, kind or attributes (None keeps each), and, with ``site_id`` other than its site,
    a move dated ``at`` (default ``now``; ``manage`` at both sites): one write, only over revision
    ``if_match`` (ANY: any)."""
    current = _current(store, caller, equipment_id, Action.manage)
    expected = expected_revision(what(current.equipment_id), current, if_match=if_match, create=False)
    changed = current.edited(name=name, kind=kind, attributes=attributes, now=now) \
        if (name, kind, attributes) != (None, None, None) else current
    ended: tuple[str, ...] = ()
    if site_id is not None and site_id != current.site_id:
        target = validate_site_id(site_id)
        authorize(caller, Action.manage, target, what=site_what(target))
        require_site(store, target)
        when = now if at is None else at
        changed = changed.moved(target, when, now=now)
        if changed.revision > current.revision + 1:  # edited and moved: one revision
            changed = replace(changed, revision=current.revision + 1)
        ended = _end_assignments(store, caller, current, when, only_site=current.site_id)
    elif changed is current:
        raise InvalidInput("body", "nothing to change: give name, kind, attributes or site_id")
    store.write_registered(changed, expected=expected, by=caller.principal)
    return RegistryChange(changed, ended)


def move_equipment(store: RegistryStore, caller: Caller, equipment_id: object, if_match: int | None = ANY, *,
                   site_id: object, at: datetime | None = None, now: datetime) -> RegistryChange:
    """The equipment at ``site_id`` from ``at`` (default ``now``) on (:func:`edit_equipment`)."""
    if site_id is None:
        raise InvalidInput("site_id", "is missing: give the site the equipment moves to")
    current = _current(store, caller, equipment_id, Action.manage)
    if site_id == current.site_id:
        raise InvalidInput("site_id", f"{what(current.equipment_id)} is at site {current.site_id} already")
    return edit_equipment(store, caller, equipment_id, if_match, site_id=site_id, at=at, now=now)


def retire_equipment(store: RegistryStore, caller: Caller, equipment_id: object, if_match: int | None = ANY, *,
                     at: datetime | None = None, now: datetime) -> RegistryChange:
    """Retired from ``at`` (default ``now``): every open assignment ended at ``at``, the record kept
    with ``retired_at`` (Conflict when retired already)."""
    current = _current(store, caller, equipment_id, Action.manage)
    expected = expected_revision(what(current.equipment_id), current, if_match=if_match, create=False)
    when = now if at is None else at
    changed = current.retired(when, now=now)
    ended = _end_assignments(store, caller, current, when, only_site=None)
    store.write_registered(changed, expected=expected, by=caller.principal)
    return RegistryChange(changed, ended)


def _end_assignments(store: RegistryStore, caller: Caller, equipment: RegisteredEquipment, at: datetime, *,
                     only_site: str | None) -> tuple[str, ...]:
    """End, at ``at``, the equipment's assignments still open then (to checklists of ``only_site``;
    None: every checklist); the checklists whose assignment was ended, by id."""
    ended: list[str] = []
    for assignment in sorted(store.assignments_of_equipment(equipment.equipment_id), key=lambda a: a.checklist_id):
        if assignment.unassigned_at is not None and assignment.unassigned_at <= at:
            continue
        if only_site is not None:
            checklist = store.get_checklist(assignment.checklist_id)
            if checklist is None or checklist.site_id != only_site:
                continue
        if store.unassign_equipment(assignment.checklist_id, [equipment.equipment_id], at, by=caller.principal):
            ended.append(assignment.checklist_id)
    return tuple(ended)


def list_equipment(store: RegistryStore, caller: Caller, site_id: object = None, position: str | None = None,
                   limit: int = 100) -> Page[RegisteredEquipment]:
    """The equipment at ``site_id`` (``read`` there), or, without it, at every site the caller holds
    a role at (every site for an admin or an unscoped caller), by site then id; ``position`` is
    where the page before ended (``<site id> <equipment id>``)."""
    limit = page_limit(limit)
    if site_id is not None:
        site = validate_site_id(site_id)
        authorize(caller, Action.read, site, what=site_what(site))
        sites = [site]
    else:
        held = caller.sites()
        sites = sorted(held) if held is not None else _every_site(store)
    after_site, after_id = _position(position)
    found: list[RegisteredEquipment] = []
    for site in sites:
        if after_site is not None and site < after_site:
            continue
        start = after_id if site == after_site else None
        page = store.list_registered(site, start, limit - len(found))
        found.extend(page.items)
        if len(found) == limit:
            last = found[-1]
            more = page.next_position is not None or site != sites[-1]
            return Page(found, f"{site} {last.equipment_id}" if more else None)
    return Page(found, None)


def _every_site(store: RegistryStore) -> list[str]:
    return [site.site_id for site in every_item(store.list_sites)]


def _position(position: str | None) -> tuple[str | None, str | None]:
    if position is None:
        return None, None
    site, _, equipment_id = position.partition(" ")
    if not equipment_id:
        raise InvalidInput("cursor", "is not a position of this list: pass next_cursor exactly as it was answered")
    return validate_site_id(site, "cursor"), validate_equipment_id(equipment_id, "cursor")
