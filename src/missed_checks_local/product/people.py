"""The people and sites ``local serve`` starts with (#31), so every role can be tried at once.

Two sites, ``north`` (Europe/Berlin) and ``south`` (America/Chicago), made through the product's
use case (:func:`missed_checks.sites.saving.create_site`, by ``local serve``); and in the stack's
user pool ``admin`` (group ``admin``) and, per site, ``operator-<site>``, ``supervisor-<site>``,
``manager-<site>`` and ``auditor-<site>``, each in the group ``<role>@<site>`` (roles operator,
supervisor, site_manager, auditor), all with :data:`LOCAL_PASSWORD` (printed with the addresses).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from missed_checks_local.cognitoidp.users import LocalPeople

if TYPE_CHECKING:
    from missed_checks_local.stack import EmbeddedStack

__all__ = ["LOCAL_PASSWORD", "SITES", "USER_ROLES", "local_people", "serve_started"]

LOCAL_PASSWORD = "Missed-Checks-1"
"""Every local user's password (it passes the template's password policy: 12 or more characters,
lower and upper case, a digit, a symbol)."""
SITES = (("north", "North", "Europe/Berlin"), ("south", "South", "America/Chicago"))
"""(site id, name, time zone) of the sites ``local serve`` creates."""
USER_ROLES = {"operator": "operator", "supervisor": "supervisor", "manager": "site_manager", "auditor": "auditor"}
"""A site's users: ``<prefix>-<site>`` -> the role its group ``<role>@<site>`` grants."""
STARTED_BY = "local serve"
"""Who the sites were made by (the audit trail's ``changed_by``)."""


def local_people() -> LocalPeople:
    groups: dict[str, tuple[str, ...]] = {"admin": ("admin",)}
    for site_id, _name, _zone in SITES:
        for prefix, role in USER_ROLES.items():
            groups[f"{prefix}-{site_id}"] = (f"{role}@{site_id}",)
    return LocalPeople(password=LOCAL_PASSWORD, groups=groups)


def serve_started(stack: EmbeddedStack, now: datetime) -> LocalPeople:
    """The sites made (those that exist are left as they are), and the people to create."""
    from missed_checks.aws.table.sites import SiteItems  # deferred: boto3
    from missed_checks.errors import Conflict
    from missed_checks.permissions.caller import Caller
    from missed_checks.sites.saving import create_site

    store = SiteItems(stack.table_name, stack.client("dynamodb"))
    for site_id, name, zone in SITES:
        try:
            create_site(store, Caller.operator(STARTED_BY), site_id, name=name, timezone=zone, now=now)
        except Conflict:
            pass
    return local_people()
