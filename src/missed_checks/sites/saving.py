"""Sites' use cases (#31): create and edit (``administer``: admins only), read and list (``read`` at
the site: a site the caller holds no role at is NotFound, exactly as a missing one)."""

from __future__ import annotations

from datetime import datetime

from missed_checks.errors import InvalidInput, NotFound
from missed_checks.paging import Page, page_limit
from missed_checks.permissions.authorizing import authorize, authorize_everywhere
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Action
from missed_checks.revisions import ANY, expected_revision
from missed_checks.sites.ports import SiteReader, SiteStore
from missed_checks.sites.site import Site, validate_site_id

__all__ = ["create_site", "edit_site", "get_site", "list_sites", "require_site", "what"]


def what(site_id: str) -> str:
    return f"site {site_id!r}"


def create_site(store: SiteStore, caller: Caller, site_id: object, *, name: object, timezone: object,
                now: datetime) -> Site:
    """A new site (Conflict when the id is taken); admins only."""
    authorize_everywhere(caller, Action.administer, what=f"creating {what(str(site_id))}")
    site = Site.create(site_id, name, timezone, now=now)
    expected_revision(what(site.site_id), store.get_site(site.site_id), create=True)
    store.write_site(site, expected=None, by=caller.principal)
    return site


def edit_site(store: SiteStore, caller: Caller, site_id: object, if_match: int | None = ANY, *,
              name: object = None, timezone: object = None, now: datetime) -> Site:
    """The site renamed and/or given another time zone (its checklists keep theirs: the site's is the
    default of new ones); admins only; written only over revision ``if_match`` (ANY: any)."""
    site_id = validate_site_id(site_id)
    authorize(caller, Action.administer, site_id, what=what(site_id))
    current = store.get_site(site_id)
    expected = expected_revision(what(site_id), current, if_match=if_match, create=False)
    assert current is not None and expected is not None  # create=False: NotFound otherwise
    site = current.edited(name=name, timezone=timezone, now=now)
    store.write_site(site, expected=expected, by=caller.principal)
    return site


def require_site(store: SiteReader, site_id: object, field: str = "site_id") -> Site:
    """The site an object being written names (a checklist's, equipment's, a calendar's, a grant's);
    InvalidInput naming ``field`` when it is no site id or no site has it."""
    site_id = validate_site_id(site_id, field)
    site = store.get_site(site_id)
    if site is None:
        raise InvalidInput(field, f"there is no site {site_id!r}: an admin creates it first (POST /sites)")
    return site


def get_site(store: SiteReader, caller: Caller, site_id: object) -> Site:
    """The site, when the caller may ``read`` there; NotFound when it does not exist or is not theirs."""
    site_id = validate_site_id(site_id)
    authorize(caller, Action.read, site_id, what=what(site_id))
    site = store.get_site(site_id)
    if site is None:
        raise NotFound(f"{what(site_id)} does not exist")
    return site


def list_sites(store: SiteStore, caller: Caller, position: str | None = None, limit: int = 100) -> Page[Site]:
    """The caller's sites (every site for an admin or an unscoped caller) in id order, after
    ``position`` (the last site id of the page before), at most ``limit``."""
    limit = page_limit(limit)
    if position is not None:
        position = validate_site_id(position, "cursor")
    sites = caller.sites()
    if sites is None:
        return store.list_sites(position, limit)
    ids = sorted(site_id for site_id in sites if position is None or site_id > position)
    found = [site for site in (store.get_site(site_id) for site_id in ids[:limit]) if site is not None]
    return Page(found, ids[limit - 1] if len(ids) > limit else None)
