"""Reading the audit trail, per object and per site, for a caller who may (``read_management``).

An object's trail is answered at the site of its newest entry (where it is now, or was when it was
deleted): a caller with no role there gets NotFound, as for an object that does not exist; a role
without ``read_management`` gets Forbidden. Entries made while the object was at another site (a
piece of equipment moved) are shown only to a caller who may read that site's trail too. A site's
trail is the changes of every object at that site, in the order they were made.
"""

from __future__ import annotations

from missed_checks.audit_trails.audit_entry import AuditEntry, validate_kind
from missed_checks.audit_trails.ports import AuditReader
from missed_checks.errors import InvalidInput, describe
from missed_checks.paging import Page, page_limit
from missed_checks.permissions.authorizing import authorize
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Action

MAX_POSITION_CHARS = 1024


def trail_of(store: AuditReader, caller: Caller, kind: str, object_id: str, position: str | None = None,
             limit: int = 100) -> Page[AuditEntry]:
    """The changes of one object (``kind`` one of ``audit_entry.KINDS``), oldest first, ``limit`` a
    page from after ``position`` (a page's ``next_position``). NotFound when the caller may not see
    it, or nothing was ever recorded of it and the caller is scoped to sites."""
    kind = validate_kind(kind)
    if not isinstance(object_id, str) or not object_id or len(object_id) > MAX_POSITION_CHARS:
        raise InvalidInput("id", f"is {describe(object_id)}: give the id of the object whose trail you want")
    limit = page_limit(limit)
    latest = store.latest_audit_entry(kind, object_id)
    authorize(caller, Action.read_management, latest.site_id if latest else None, what=f"{kind} {object_id}")
    page = store.object_trail(kind, object_id, _position(position), limit)
    shown = [e for e in page.items if caller.may(Action.read_management, e.site_id)]
    return Page(shown, page.next_position)


def site_trail(store: AuditReader, caller: Caller, site_id: str | None, position: str | None = None,
               limit: int = 100) -> Page[AuditEntry]:
    """The changes of every object at ``site_id`` (None: objects with no site, for an admin or an
    unscoped caller), oldest first, ``limit`` a page from after ``position``."""
    limit = page_limit(limit)
    authorize(caller, Action.read_management, site_id, what=f"site {site_id}" if site_id else "objects with no site")
    return store.site_trail(site_id, _position(position), limit)


def _position(position: str | None) -> str | None:
    """A page's position as given back (None or empty: the first page)."""
    if position is None or position == "":
        return None
    if not isinstance(position, str) or len(position) > MAX_POSITION_CHARS or not position.isprintable():
        raise InvalidInput("cursor", f"is {describe(position)}: pass next_cursor as the previous page answered it")
    return position
