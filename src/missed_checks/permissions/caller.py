"""Who is calling: a principal, its roles by site, and whether it is an admin or unscoped."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from missed_checks.permissions.role import ALLOWED, Action, Role

__all__ = ["Caller"]


@dataclass(frozen=True)
class Caller:
    """The caller of a use case.

    ``principal`` is who, as the audit trail and grants name it: an IAM caller's ARN; a person's user
    name (the ``username`` claim of an access token, ``cognito:username`` of an id token, else
    ``sub``); the operator's login for the command line. ``roles`` maps a site id to the role held
    there. ``admin`` may do everything at every site. ``unscoped`` too: an IAM caller with no grant
    record (its IAM policy is its scope) and the operator's command line with the stack's
    credentials.
    """

    principal: str
    roles: Mapping[str, Role] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    admin: bool = False
    unscoped: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "roles", MappingProxyType(dict(self.roles)))

    @classmethod
    def operator(cls, principal: str) -> Caller:
        """The operator's command line acting with the stack's credentials: every site, every action."""
        return cls(principal=principal, unscoped=True)

    @property
    def everywhere(self) -> bool:
        """Every site and every action (admin or unscoped)."""
        return self.admin or self.unscoped

    def role_at(self, site_id: str | None) -> Role | None:
        """The role held at ``site_id`` (``admin`` for an admin), None when none."""
        if self.admin:
            return Role.admin
        if site_id is None:
            return None
        return self.roles.get(site_id)

    def may(self, action: Action, site_id: str | None) -> bool:
        """Whether ``action`` is allowed at ``site_id`` (None: an object made before sites existed,
        which only an admin or an unscoped caller may touch)."""
        if self.everywhere:
            return True
        role = self.role_at(site_id)
        return role is not None and action in ALLOWED[role]

    def sites(self) -> frozenset[str] | None:
        """The sites this caller holds a role at; None for every site (admin or unscoped)."""
        return None if self.everywhere else frozenset(self.roles)
