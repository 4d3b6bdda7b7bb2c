"""The one authorization rule every scoped use case applies before it reads or writes.

Another site's object is answered exactly as a missing one (:class:`NotFound`, HTTP 404): a caller
with no role at a site never learns what exists there. A role that may see the object but not do
this to it is :class:`Forbidden` (HTTP 403), naming the role, the site and the action.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from missed_checks.errors import Forbidden, NotFound
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import ACTION_COVERS, Action

T = TypeVar("T")

__all__ = ["at_sites", "authorize", "authorize_everywhere", "authorize_listing", "visible"]


def authorize(caller: Caller, action: Action, site_id: str | None, *, what: str) -> None:
    """Return when ``caller`` may do ``action`` to ``what`` (e.g. ``"checklist forklift-daily"``) at
    ``site_id``; raise NotFound (``"<what> does not exist"``) when the caller holds no role there (or
    the object has no site and the caller is neither admin nor unscoped), Forbidden when its role
    lacks the action."""
    if caller.everywhere:
        return
    role = caller.role_at(site_id)
    if role is None:
        raise NotFound(f"{what} does not exist")
    if not caller.may(action, site_id):
        raise Forbidden(f"{what}: the role {role.value} at site {site_id} does not allow {action.value} "
                        f"({ACTION_COVERS[action]})")


def visible(caller: Caller, site_id: str | None) -> bool:
    """Whether ``caller`` may see an object at ``site_id`` (may ``read`` there)."""
    return caller.may(Action.read, site_id)


def authorize_everywhere(caller: Caller, action: Action, *, what: str) -> None:
    """Return when ``caller`` may do ``action`` at every site (an admin or an unscoped caller): what
    belongs to no one site (creating a site, the grants); Forbidden naming ``what`` otherwise."""
    if not caller.everywhere:
        raise Forbidden(f"{what}: only an admin may {action.value} ({ACTION_COVERS[action]})")


def authorize_listing(caller: Caller, action: Action, site_id: str | None, *, what: str) -> None:
    """Return when ``caller`` may list what ``action`` covers: at ``site_id`` when a list is filtered
    by it (NotFound / Forbidden as :func:`authorize`), else at one site at least (Forbidden naming the
    roles held, none of which allows it). What the list then holds is the caller's to filter."""
    if site_id is not None:
        authorize(caller, action, site_id, what=f"site {site_id!r}")
    elif not caller.everywhere and not any(caller.may(action, site) for site in caller.roles):
        roles = ", ".join(f"{role.value} at {site}" for site, role in sorted(caller.roles.items())) or "no role"
        raise Forbidden(f"{what}: {caller.principal} holds {roles}, none of which allows {action.value} "
                        f"({ACTION_COVERS[action]})")


def at_sites(caller: Caller, action: Action, items: Iterable[T], site_of: Callable[[T], str | None],
             site_id: str | None = None) -> list[T]:
    """The ``items`` at sites where ``caller`` may do ``action`` (at ``site_id`` only, when given), in
    their order: what a list shows the caller."""
    return [item for item in items
            if caller.may(action, site_of(item)) and (site_id is None or site_of(item) == site_id)]
