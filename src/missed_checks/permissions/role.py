"""Roles and actions: the one table of who may do what (``ALLOWED``), printed by docs/access.md.

``admin`` is global (every site); the other roles are held per site, one role at a site. An action
names a group of routes and use cases (see :data:`ACTION_COVERS`); a role's actions are the same at
every site it holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from types import MappingProxyType

from missed_checks.errors import InvalidInput, describe, shorten

__all__ = ["ACTION_COVERS", "ALLOWED", "SITE_ROLES", "Action", "Role", "markdown_table", "parse_role"]


class Role(StrEnum):
    operator = "operator"
    supervisor = "supervisor"
    site_manager = "site_manager"
    auditor = "auditor"
    admin = "admin"


class Action(StrEnum):
    read = "read"
    record = "record"
    read_records = "read_records"
    supervise = "supervise"
    manage = "manage"
    read_management = "read_management"
    administer = "administer"


ACTION_COVERS: Mapping[Action, str] = MappingProxyType({
    Action.read: "read sites, equipment (registry, status and readiness), checklists (and their preview, items and "
                 "assignments), closure calendars, defects",
    Action.record: "record performed checks",
    Action.read_records: "read missed checks, the report, out-of-service periods, the notification log",
    Action.supervise: "dismiss missed checks; record, end and cancel out-of-service periods; resolve defects",
    Action.manage: "create, edit, pause, resume and delete checklists; register, edit, move and retire equipment; "
                   "assign equipment; manage closure calendars and digest subscriptions",
    Action.read_management: "read digest subscriptions and the audit trail",
    Action.administer: "create and edit sites; manage grants",
})

ALLOWED: Mapping[Role, frozenset[Action]] = MappingProxyType({
    Role.operator: frozenset({Action.read, Action.record}),
    Role.supervisor: frozenset({Action.read, Action.record, Action.read_records, Action.supervise}),
    Role.site_manager: frozenset({Action.read, Action.record, Action.read_records, Action.supervise, Action.manage,
                                  Action.read_management}),
    Role.auditor: frozenset({Action.read, Action.read_records, Action.read_management}),
    Role.admin: frozenset(Action),
})
"""The one table: each role's actions (at the sites it holds; ``admin``'s at every site)."""

SITE_ROLES: tuple[Role, ...] = (Role.site_manager, Role.supervisor, Role.auditor, Role.operator)
"""The roles held at a site, most to least: when the token's groups give one site two roles, the
first of them here is the one taken (a grant record, which names one role a site, decides instead)."""


def parse_role(value: object, field: str) -> Role:
    """A site role's name (``operator``, ``supervisor``, ``site_manager``, ``auditor``); InvalidInput
    naming ``field`` otherwise (``admin`` is not a site role: it is every site's)."""
    if isinstance(value, str):
        try:
            role = Role(value)
        except ValueError:
            pass
        else:
            if role in SITE_ROLES:
                return role
        shown = shorten(value)
    else:
        shown = describe(value)
    names = ", ".join(role.value for role in SITE_ROLES)
    raise InvalidInput(field, f"{shown} is not a site role: give one of {names} (admin is global, not per site)")


def markdown_table() -> str:
    """Roles x actions as a Markdown table (the one docs/access.md shows; a test keeps them equal)."""
    roles = list(Role)
    lines = ["| action | what it covers | " + " | ".join(role.value for role in roles) + " |",
             "|---|---|" + "---|" * len(roles)]
    for action in Action:
        cells = " | ".join("yes" if action in ALLOWED[role] else "-" for role in roles)
        lines.append(f"| `{action.value}` | {ACTION_COVERS[action]} | {cells} |")
    return "\n".join(lines) + "\n"
