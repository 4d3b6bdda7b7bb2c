"""Managing checklists: reading, listing, creating and editing, pausing, resuming and deleting them,
for a :class:`~missed_checks.permissions.caller.Caller` at the checklist's site.

The one door: the operator's ``checklist`` commands (as :meth:`Caller.operator`, every site, or as
the person ``--as`` names) and the management API's ``/checklists`` routes
(:mod:`missed_checks.api.routes.checklists`) both call these. Each use case finds the checklist,
authorizes the caller at its site (another site's checklist is :class:`NotFound`, exactly as a
missing one; a role that may see it but not change it is :class:`Forbidden`), then writes. An edit
given ``if_match`` (the revision it was made on) is written only at that revision: the write itself
is conditional on it, and a stale one is :class:`PreconditionFailed` carrying the current ETag.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from missed_checks.checklists.check_item import ItemList
from missed_checks.checklists.checklist import Checklist, Status, validate_checklist_id
from missed_checks.checklists.ports import ChecklistListing, ChecklistManagement, ItemLists
from missed_checks.checklists.previewing import closures_of
from missed_checks.checklists.saving import item_fields, save_checklist, zone_at
from missed_checks.errors import InvalidInput, NotFound
from missed_checks.paging import Page, page_after
from missed_checks.permissions.authorizing import at_sites, authorize, authorize_listing
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Action
from missed_checks.revisions import at_revision, expected_revision
from missed_checks.sites.ports import SiteReader
from missed_checks.sites.saving import require_site


@dataclass(frozen=True)
class ChecklistState:
    """A checklist as ``checklist show`` presents it: the item, and how much equipment it has now."""

    checklist: Checklist
    assigned: int
    unassigned: int


def what(checklist_id: str) -> str:
    return f"checklist {checklist_id!r}"


def get_checklist(store: ChecklistListing, caller: Caller, checklist_id: str, *, action: Action = Action.read,
                  field: str = "checklist_id") -> Checklist:
    """The checklist, when ``caller`` may do ``action`` at its site; NotFound when it does not exist
    or is at a site the caller holds no role at, Forbidden when the role there lacks ``action``."""
    checklist_id = validate_checklist_id(checklist_id, field)
    checklist = store.get_checklist(checklist_id)
    if checklist is None:
        raise NotFound(f"{what(checklist_id)} does not exist")
    authorize(caller, action, checklist.site_id, what=what(checklist_id))
    return checklist


def list_checklists(store: ChecklistListing, caller: Caller, site_id: str | None = None) -> list[Checklist]:
    """Every checklist at the caller's sites (``site_id``: at that site only, NotFound when the caller
    holds no role there, as for a site that does not exist), by id."""
    if site_id is not None:
        authorize(caller, Action.read, site_id, what=f"site {site_id!r}")
    return sorted(at_sites(caller, Action.read, store.list_checklists(), _site, site_id), key=lambda c: c.checklist_id)


def scope_of(store: ChecklistListing, caller: Caller, action: Action,
             site_id: str | None = None) -> frozenset[str] | None:
    """The ids of the checklists ``caller`` may do ``action`` to (at ``site_id`` only, when given), for
    a list or a report to keep only theirs; None: every checklist, deleted ones' records included (an
    admin or an unscoped caller naming no site). A deleted checklist has no site any more: only such
    callers see its records. A site the caller holds no role at is NotFound, one where their role
    lacks ``action`` Forbidden, and so is a caller whose roles allow it nowhere."""
    authorize_listing(caller, action, site_id, what="checklists")
    if caller.everywhere and site_id is None:
        return None
    return frozenset(c.checklist_id for c in at_sites(caller, action, store.list_checklists(), _site, site_id))


def checklists_page(store: ChecklistManagement, caller: Caller, site_id: str | None, position: str | None,
                    limit: int) -> Page[Checklist]:
    """One page of :func:`list_checklists`: those after ``position`` (the last id of the page before)."""
    return page_after(list_checklists(store, caller, site_id), lambda c: c.checklist_id, position, limit)


def with_site_defaults(sites: SiteReader, spec: Mapping[str, Any]) -> dict[str, Any]:
    """The spec of a checklist at a site (``site_id``, which must exist: InvalidInput naming it) with
    the site's time zone when the spec names none (no ``timezone`` and no TZID on DTSTART)."""
    spec = dict(spec)
    if spec.get("site_id") is None:
        return spec
    spec["timezone"] = zone_at(require_site(sites, spec["site_id"]), spec.get("timezone"), spec.get("recurrence"))
    return spec


class ItemListReader(ChecklistListing, ItemLists, Protocol):
    pass


def checklist_items(store: ItemListReader, caller: Caller, checklist_id: str,
                    revision: int | None = None) -> ItemList | None:
    """A revision of the checklist's items (#33; None: the current one), when ``caller`` may read the
    checklist; None when it never had items. NotFound for a revision it never had."""
    checklist = get_checklist(store, caller, checklist_id)
    wanted = checklist.items_revision if revision is None else revision
    if wanted == 0 and revision is None:
        return None
    found = store.item_list(checklist.checklist_id, wanted)
    if found is None:
        raise NotFound(f"{what(checklist.checklist_id)} has no revision {wanted} of its items "
                       f"(its current one is {checklist.items_revision})")
    return found


def checklist_state(store: ChecklistManagement, caller: Caller, checklist_id: str, now: datetime) -> ChecklistState:
    checklist = get_checklist(store, caller, checklist_id)
    assignments = store.assignments(checklist.checklist_id)
    assigned = sum(1 for a in assignments if a.unassigned_at is None or a.unassigned_at > now)
    return ChecklistState(checklist, assigned, len(assignments) - assigned)


def put_checklist(store: ChecklistManagement, caller: Caller, spec: Mapping[str, Any], now: datetime, *,
                  validated: bool = False, if_match: int | None = None, create: bool | None = None) -> Checklist:
    """Create or edit the checklist ``spec`` describes (id, recurrence, name, timezone, window, grace,
    closed_on, notify, site_id, and #33's items, pre_use, clear_on_pass: left out, the checklist's
    are kept); returns it as written. ``create``: True refuses an existing one
    (Conflict), False a missing one (NotFound), None takes either (the command line's put).
    ``validated``: the caller has checked the rule (the recurrence engine is not run a second time).

    A new checklist needs ``manage`` at the site it names; an edit ``manage`` at the checklist's own
    site (its site never changes: naming another one is refused by the save)."""
    checklist_id = validate_checklist_id(str(spec.get("id") or ""), "id")
    found = item_fields(spec)  # what a check finds (#33): refused naming items[i].field before any read
    current = store.get_checklist(checklist_id)
    if current is not None:
        authorize(caller, Action.manage, current.site_id, what=what(checklist_id))
    expected_revision(what(checklist_id), current, if_match=if_match, create=create)
    if current is None:
        site_id = spec.get("site_id")
        if site_id is None and not caller.everywhere:  # only an admin or the operator makes one without a site
            raise InvalidInput("site_id", f"give the site {what(checklist_id)} belongs to (one you manage)")
        authorize(caller, Action.manage, site_id, what=f"site {site_id!r}")
    if not caller.everywhere and spec.get("closed_on"):
        # another site's calendar is refused as a missing one (never confirmed to exist), as the preview does
        closures_of(store, list(spec["closed_on"]), current.site_id if current is not None else spec.get("site_id"))
    return at_revision(what(checklist_id), if_match, _revision_now(store, checklist_id), lambda: save_checklist(
        store, checklist_id, recurrence=str(spec["recurrence"]), now=now, name=spec.get("name") or "",
        timezone=spec.get("timezone"), window=spec.get("window"), grace=spec.get("grace"), validate=not validated,
        closed_on=list(spec.get("closed_on") or ()),  # a put replaces the rule whole: none named, none kept
        notify=spec.get("notify"),  # notifications (#18): a NotifySettings, or None to keep the checklist's
        site_id=spec.get("site_id"), if_match=if_match, by=caller.principal, **found))


def delete_checklist(store: ChecklistManagement, caller: Caller, checklist_id: str, *,
                     if_match: int | None = None) -> None:
    """Delete the checklist; its assignments are ended and kept, its performed and missed checks stay.
    NotFound; with ``if_match``, only at that revision (PreconditionFailed)."""
    checklist = get_checklist(store, caller, checklist_id, action=Action.manage)
    if not at_revision(what(checklist.checklist_id), if_match, _revision_now(store, checklist.checklist_id),
                       lambda: store.delete_checklist(
            checklist.checklist_id, expected_revision=if_match, by=caller.principal)):
        raise NotFound(f"{what(checklist.checklist_id)} does not exist")


def pause_checklist(store: ChecklistManagement, caller: Caller, checklist_id: str, now: datetime, *,
                    if_match: int | None = None) -> Checklist:
    """Pause: its schedule is disabled, windows closing while paused are never judged. A paused one
    stays as it is (nothing written)."""
    return _set_status(store, caller, checklist_id, Status.PAUSED, now, if_match)


def resume_checklist(store: ChecklistManagement, caller: Caller, checklist_id: str, now: datetime, *,
                     if_match: int | None = None) -> Checklist:
    """Resume; the rule takes effect again now, so the pause is never back-filled."""
    return _set_status(store, caller, checklist_id, Status.ACTIVE, now, if_match)


def _set_status(store: ChecklistManagement, caller: Caller, checklist_id: str, status: Status, now: datetime,
                if_match: int | None) -> Checklist:
    current = get_checklist(store, caller, checklist_id, action=Action.manage)
    expected_revision(what(current.checklist_id), current, if_match=if_match)
    if current.status is status:
        return current
    changes: dict[str, Any] = {"status": status, "updated_at": now, "revision": current.revision + 1}
    if status is Status.ACTIVE:
        changes["effective_from"] = now
    updated = current.with_changes(**changes)
    at_revision(what(current.checklist_id), if_match, _revision_now(store, current.checklist_id),
                lambda: store.write_checklist(updated, current, {}, by=caller.principal))
    return updated


def _revision_now(store: ChecklistManagement, checklist_id: str) -> Callable[[], int | None]:
    def revision() -> int | None:
        checklist = store.get_checklist(checklist_id)
        return None if checklist is None else checklist.revision
    return revision


def _site(checklist: Checklist) -> str | None:
    return checklist.site_id
