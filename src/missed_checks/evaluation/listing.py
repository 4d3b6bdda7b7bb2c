"""Listing missed checks (#31, #32): which checklists' missed checks a caller with roles reads
(``read_records`` at the checklist's site). ``GET /missed`` of the HTTP API and the web app's
Missed checks page both list them this way: another site's checklist is NotFound, as a missing one,
a role without ``read_records`` Forbidden; the rows read are then kept when their checklist is in the
scope (:func:`in_scope`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from missed_checks.checklists.managing import get_checklist, scope_of
from missed_checks.checklists.ports import ChecklistListing
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Action
from missed_checks.sites.site import validate_site_id

__all__ = ["in_scope", "missed_scope"]

Row = TypeVar("Row", bound=Mapping[str, Any])


def missed_scope(store: ChecklistListing, caller: Caller, checklist_id: str | None,
                 site_id: str | None) -> frozenset[str] | None:
    """The ids of the checklists whose missed checks ``caller`` may read (of ``checklist_id`` when
    given, at ``site_id`` when given); None: every checklist's, deleted ones' included (an admin or
    an unscoped caller naming no site). A checklist named at another site is NotFound, one where the
    role may not read records Forbidden; a deleted checklist's, or one outside ``site_id``, leaves
    the scope empty."""
    scope = scope_of(store, caller, Action.read_records, None if site_id is None else validate_site_id(site_id))
    if checklist_id is not None and scope is not None and checklist_id not in scope:
        get_checklist(store, caller, checklist_id, action=Action.read_records)  # another site's: 404; a weak role: 403
        return frozenset()  # a deleted checklist's (no site any more), or another site's named by site_id
    return scope


def in_scope(rows: Iterable[Row], scope: frozenset[str] | None) -> list[Row]:
    """The ``rows`` (each with a ``checklist_id``) of the checklists in ``scope`` (None: every one)."""
    return [row for row in rows if scope is None or row["checklist_id"] in scope]
