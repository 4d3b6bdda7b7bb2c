"""Reading defects for a caller (#33): one defect, or a page of them, at the sites where the caller
may ``read``. Another site's defect is :class:`NotFound`, exactly as a missing one."""

from __future__ import annotations

import re
from typing import Protocol

from missed_checks.defects.defect import Defect, DefectStatus
from missed_checks.defects.ports import DefectReader
from missed_checks.equipment.assignments import validate_equipment_id
from missed_checks.errors import InvalidInput, NotFound, describe, shorten
from missed_checks.paging import Page, every_item, page_limit
from missed_checks.permissions.authorizing import authorize, visible
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Action
from missed_checks.sites.ports import SiteStore
from missed_checks.sites.site import validate_site_id
from missed_checks.timefmt import to_utc_iso

_DEFECT_ID = re.compile(r"D-[0-9a-f]{16}")
_NO_SITE = "-"
"""A position's site part for the defects of equipment at no site."""


class DefectListing(DefectReader, SiteStore, Protocol):
    """What listing defects reads: the defects, and the sites (for an admin listing every site)."""


def validate_defect_id(value: object, field: str = "defect_id") -> str:
    """``D-`` and 16 hex digits (:func:`missed_checks.defects.defect.defect_id_of`); InvalidInput otherwise."""
    if not isinstance(value, str) or _DEFECT_ID.fullmatch(value) is None:
        shown = shorten(value) if isinstance(value, str) else describe(value)
        raise InvalidInput(field, f"{shown} is not a defect id (D- and 16 hex digits, such as D-3f9a0c1b2d4e5f60)")
    return value


def what(defect_id: str) -> str:
    return f"defect {defect_id!r}"


def get_defect(store: DefectReader, caller: Caller, defect_id: object, *, action: Action = Action.read) -> Defect:
    """The defect, when ``caller`` may do ``action`` at its site; NotFound when it does not exist or
    is at a site the caller holds no role at, Forbidden when the role there lacks ``action``."""
    defect_id = validate_defect_id(defect_id)
    defect = store.get_defect(defect_id)
    if defect is None:
        raise NotFound(f"{what(defect_id)} does not exist")
    authorize(caller, action, defect.site_id, what=what(defect_id))
    return defect


def list_defects(store: DefectListing, caller: Caller, *, site_id: object = None, equipment_id: object = None,
                 status: DefectStatus | None = None, position: str | None = None,
                 limit: int = 100) -> Page[Defect]:
    """A page of defects, oldest found first, of ``status`` only when given: of ``equipment_id`` (those
    at sites the caller may read, at ``site_id`` only when given), else at ``site_id`` (``read`` there:
    NotFound for a site the caller holds no role at), else at every site the caller holds a role at
    (an admin's or an unscoped caller's: every site, and equipment at none first), site by site.
    ``position``: where the page before ended (its ``next_position``), at most ``limit`` (1-1000)."""
    limit = page_limit(limit)
    site = None if site_id is None else validate_site_id(site_id, "site")
    if site is not None:
        authorize(caller, Action.read, site, what=f"site {site!r}")
    if equipment_id is not None:
        equipment = validate_equipment_id(equipment_id, "equipment")
        found = [d for d in store.defects_of_equipment(equipment, status)
                 if visible(caller, d.site_id) and (site is None or d.site_id == site)]
        after = [d for d in found if position is None or _key(d) > position]
        return Page(after[:limit], _key(after[limit - 1]) if len(after) > limit else None)
    sites: list[str | None]
    if site is not None:
        sites = [site]
    else:
        held = caller.sites()
        sites = [*sorted(held)] if held is not None else [None, *(s.site_id for s in every_item(store.list_sites))]
    after_site, after_key = _position(position)
    defects: list[Defect] = []
    for index, each in enumerate(sites):
        name = each or _NO_SITE
        if after_site is not None and name < after_site:  # "-" (no site) sorts before every site id
            continue
        start = after_key if name == after_site else None
        page = store.defects_of_site(each, status, start, limit - len(defects))
        defects.extend(page.items)
        if len(defects) == limit:
            more = page.next_position is not None or index < len(sites) - 1
            return Page(defects, f"{name} {_key(defects[-1])}" if more else None)
    return Page(defects, None)


def _key(defect: Defect) -> str:
    """A defect's place in a list: when it was found, then its id (the indexes' order)."""
    return f"{to_utc_iso(defect.found_at)}#{defect.defect_id}"


def _position(position: str | None) -> tuple[str | None, str | None]:
    if position is None:
        return None, None
    site, _, key = position.partition(" ")
    if not key or "#" not in key:
        raise InvalidInput("cursor", "is not a position of this list: pass next_cursor exactly as it was answered")
    return site, key
