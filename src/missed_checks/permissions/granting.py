"""Grants' use cases (#31): read, list, put and delete the roles an admin gives a principal (a
person's user name or an IAM caller's ARN). Admins only (``administer``, every site's): anyone
else is Forbidden."""

from __future__ import annotations

from datetime import datetime

from missed_checks.errors import InvalidInput, NotFound, describe
from missed_checks.paging import Page, page_limit
from missed_checks.permissions.authorizing import authorize_everywhere
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.grant import Grant, parse_grant_roles, validate_principal
from missed_checks.permissions.ports import GrantManagement, GrantStore
from missed_checks.permissions.role import Action
from missed_checks.revisions import ANY, expected_revision

__all__ = ["delete_grant", "get_grant", "list_grants", "put_grant", "what"]


def what(principal: str) -> str:
    return f"grant of {principal!r}"


def get_grant(store: GrantStore, caller: Caller, principal: object) -> Grant:
    """The grant of ``principal``; NotFound when there is none."""
    principal = validate_principal(principal)
    authorize_everywhere(caller, Action.administer, what=f"reading the {what(principal)}")
    grant = store.get_grant(principal)
    if grant is None:
        raise NotFound(f"{what(principal)} does not exist")
    return grant


def list_grants(store: GrantStore, caller: Caller, position: str | None = None, limit: int = 100) -> Page[Grant]:
    """Grants in principal order after ``position`` (the last principal of the page before)."""
    authorize_everywhere(caller, Action.administer, what="listing grants")
    if position is not None:
        position = validate_principal(position, "cursor")
    return store.list_grants(position, page_limit(limit))


def put_grant(store: GrantManagement, caller: Caller, principal: object, *, roles: object, admin: object = False,
              now: datetime, if_match: int | None = ANY, create: bool | None = None) -> Grant:
    """Give ``principal`` exactly ``roles`` (``{"<site id>": "<role>"}``, every site existing) and
    ``admin``; returns the grant as written. ``if_match``: only over that revision (412 otherwise);
    ``create`` True: a new grant only (Conflict when one exists), False: an existing one only."""
    principal = validate_principal(principal)
    authorize_everywhere(caller, Action.administer, what=f"changing the {what(principal)}")
    parsed = parse_grant_roles(roles)
    if not isinstance(admin, bool):
        raise InvalidInput("admin", f"is {describe(admin)}: give true or false")
    missing = sorted(site_id for site_id in parsed if store.get_site(site_id) is None)
    if missing:
        raise InvalidInput(f"roles.{missing[0]}", f"there is no site {missing[0]!r}: an admin creates it first "
                                                  "(POST /sites)")
    current = store.get_grant(principal)
    expected = expected_revision(what(principal), current, if_match=if_match, create=create)
    grant = Grant(principal=principal, roles=parsed, admin=admin, revision=(expected or 0) + 1, updated_at=now,
                  updated_by=caller.principal)
    store.write_grant(grant, expected=expected, by=caller.principal)
    return grant


def delete_grant(store: GrantStore, caller: Caller, principal: object, if_match: int | None = ANY) -> None:
    """Delete the grant (its principal keeps only what its token's groups give, or, an IAM caller,
    becomes unscoped again); NotFound when there is none, 412 when not at ``if_match``."""
    principal = validate_principal(principal)
    authorize_everywhere(caller, Action.administer, what=f"deleting the {what(principal)}")
    expected = expected_revision(what(principal), store.get_grant(principal), if_match=if_match, create=False)
    store.remove_grant(principal, expected=expected, by=caller.principal)

