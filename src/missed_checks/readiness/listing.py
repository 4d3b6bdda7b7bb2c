"""Listing a site's readiness (#33): the stored state item of each piece of equipment at the site,
what was last announced (``GET /sites/{id}/readiness``), for a caller who may ``read`` there.

A caller with no role at the site gets NotFound, as for a site that does not exist; the page is in
equipment id order, ``limit`` items from after ``cursor`` (a page's ``next_position``).
"""

from __future__ import annotations

from typing import Protocol

from missed_checks.errors import InvalidInput, NotFound, describe
from missed_checks.paging import Page, page_limit
from missed_checks.permissions.authorizing import authorize
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Action
from missed_checks.readiness.readiness import ReadinessRecord
from missed_checks.sites.site import Site, validate_site_id

__all__ = ["MAX_CURSOR_CHARS", "SiteReadinessReader", "site_readiness"]

MAX_CURSOR_CHARS = 200
"""An equipment id, with room to spare: what a page's ``next_position`` is."""


class SiteReadinessReader(Protocol):
    def get_site(self, site_id: str) -> Site | None: ...

    def readiness_of_site(self, site_id: str, position: str | None, limit: int) -> Page[ReadinessRecord]: ...


def site_readiness(store: SiteReadinessReader, site_id: object, *, caller: Caller, limit: object = 100,
                   cursor: object = None) -> Page[ReadinessRecord]:
    """A page of the stored readiness of the equipment at ``site_id``; InvalidInput naming
    ``site_id``, ``limit`` or ``cursor``; NotFound for a site the caller may not see or that does not exist."""
    site = validate_site_id(site_id, "site_id")
    size = page_limit(limit)
    if cursor is not None and cursor != "" and (
            not isinstance(cursor, str) or len(cursor) > MAX_CURSOR_CHARS or not cursor.isprintable()):
        raise InvalidInput("cursor", f"is {describe(cursor)}: pass next_cursor as the previous page answered it")
    authorize(caller, Action.read, site, what=f"site {site}")
    if store.get_site(site) is None:
        raise NotFound(f"site {site} does not exist")
    return store.readiness_of_site(site, cursor or None, size)
