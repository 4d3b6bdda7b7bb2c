"""Grants: the roles an admin gives a principal (a person's user name or an IAM caller's ARN) by
site, and how they combine with the groups of a person's token into a :class:`Caller`.

A person's roles are the token's groups (the Cognito group ``admin``, and ``<role>@<site id>``
such as ``site_manager@north``) merged with the grant record: for a site named by both the grant
record wins; admin when either says so. An IAM caller with a grant record is scoped by it; one
without is unscoped (its IAM policy is its scope: integrations made before roles keep working).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

from missed_checks import identifiers
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import SITE_ROLES, Role, parse_role
from missed_checks.timefmt import to_utc_iso

__all__ = ["ADMIN_GROUP", "MAX_GRANT_SITES", "Grant", "GroupRoles", "machine_caller", "parse_grant_roles",
           "person_caller", "roles_from_groups", "validate_principal"]

ADMIN_GROUP = "admin"
MAX_GRANT_SITES = 500
"""Sites one grant names at most (keeps the item far under DynamoDB's 400 KB)."""


def validate_principal(value: object, field: str = "principal") -> str:
    return identifiers.KINDS["principal"].validate(value, field)


def validate_site_id(value: object, field: str = "site_id") -> str:
    return identifiers.KINDS["site id"].validate(value, field)


@dataclass(frozen=True)
class Grant:
    """The roles an admin gave ``principal``: one role per site, and whether it is an admin."""

    principal: str
    roles: Mapping[str, Role] = field(hash=False)
    admin: bool = False
    revision: int = 0
    updated_at: datetime | None = None
    updated_by: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "roles", MappingProxyType(dict(self.roles)))

    def to_dict(self) -> dict[str, Any]:
        """As the API shows it."""
        return {"principal": self.principal,
                "roles": {site: role.value for site, role in sorted(self.roles.items())},
                "admin": self.admin, "revision": self.revision,
                "updated_at": to_utc_iso(self.updated_at) if self.updated_at else None,
                "updated_by": self.updated_by}


def parse_grant_roles(value: object, field: str = "roles") -> dict[str, Role]:
    """``{"<site id>": "<role>", ...}`` (a site role each, at most :data:`MAX_GRANT_SITES` sites);
    InvalidInput naming ``roles.<site>`` or ``roles`` otherwise."""
    given = identifiers.small_map(value, field, most=MAX_GRANT_SITES, entries="site ids to roles",
                                  example='{"north": "site_manager"}')
    roles: dict[str, Role] = {}
    for site_id, role in given.items():
        site = validate_site_id(site_id, f"{field} (a site id)")
        roles[site] = parse_role(role, f"{field}.{site}")
    return roles


@dataclass(frozen=True)
class GroupRoles:
    """What a token's groups say: roles by site and whether the person is an admin."""

    roles: Mapping[str, Role]
    admin: bool


def _group_names(claim: object) -> list[str]:
    if claim is None:
        return []
    if isinstance(claim, list | tuple):
        return [name for name in claim if isinstance(name, str)]
    if not isinstance(claim, str):
        return []
    text = claim.strip()
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except ValueError:  # API Gateway's rendering of a list claim: "[admin site_manager@north]"
            return text.strip("[]").replace(",", " ").split()
        return _group_names(parsed)
    return text.replace(",", " ").split()


def roles_from_groups(claim: object) -> GroupRoles:
    """The roles a token's ``cognito:groups`` claim gives: a JSON list, a JSON list in a string, or
    the string API Gateway's JWT authorizer passes on (``"[admin site_manager@north]"``). ``admin``
    makes an admin; ``<role>@<site id>`` a site role (of two roles at one site, the greater by
    :data:`~missed_checks.permissions.role.SITE_ROLES`); any other group is not ours and is ignored."""
    roles: dict[str, Role] = {}
    admin = False
    for name in _group_names(claim):
        if name == ADMIN_GROUP:
            admin = True
            continue
        role_name, at, site_id = name.partition("@")
        if not at or role_name not in {role.value for role in SITE_ROLES} \
                or identifiers.KINDS["site id"].pattern.fullmatch(site_id) is None:
            continue
        role = Role(role_name)
        held = roles.get(site_id)
        if held is None or SITE_ROLES.index(role) < SITE_ROLES.index(held):
            roles[site_id] = role
    return GroupRoles(MappingProxyType(roles), admin)


def person_caller(principal: str, groups: GroupRoles, grant: Grant | None) -> Caller:
    """A signed-in person: the token's groups merged with the grant record (the record wins per site)."""
    roles = dict(groups.roles)
    if grant is not None:
        roles.update(grant.roles)
    return Caller(principal=principal, roles=roles, admin=groups.admin or (grant is not None and grant.admin))


def machine_caller(principal: str, grant: Grant | None) -> Caller:
    """An IAM caller: scoped by its grant record when there is one, else unscoped (its IAM policy is its scope)."""
    if grant is None:
        return Caller(principal=principal, unscoped=True)
    return Caller(principal=principal, roles=grant.roles, admin=grant.admin)
