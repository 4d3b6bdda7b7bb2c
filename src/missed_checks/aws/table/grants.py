"""Grant items (#31): ``GRANT#<principal>``, listed through ByPeriod ``GRANTS``; written by revision
(:mod:`.revised`), every write stamped for the audit trail."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from missed_checks.aws.table import keys
from missed_checks.aws.table.revised import RevisedItems, revision_in
from missed_checks.errors import InvalidInput, describe
from missed_checks.paging import Page
from missed_checks.permissions.grant import Grant, parse_grant_roles, validate_principal
from missed_checks.permissions.granting import what
from missed_checks.timefmt import parse_instant, to_utc_iso


class GrantItems(RevisedItems):
    def get_grant(self, principal: str) -> Grant | None:
        item = self._get(keys.grant_key(validate_principal(principal)))
        return None if item is None else grant_of(item)

    def list_grants(self, position: str | None, limit: int) -> Page[Grant]:
        return self._index_page(keys.GRANTS_INDEX_PK, position, limit, grant_of)

    def write_grant(self, grant: Grant, *, expected: int | None, by: str) -> None:
        self._write_revised(grant_item(grant), expected=expected, what=what(grant.principal), by=by)

    def remove_grant(self, principal: str, *, expected: int | None, by: str) -> None:
        self._remove_revised(keys.grant_key(validate_principal(principal)), expected=expected,
                             what=what(principal), by=by)


def grant_item(grant: Grant) -> dict[str, Any]:
    return {**keys.grant_key(grant.principal), "type": "grant", "gsi2pk": keys.GRANTS_INDEX_PK,
            "gsi2sk": grant.principal, "principal": grant.principal,
            "roles": {site: role.value for site, role in grant.roles.items()}, "admin": grant.admin,
            "revision": grant.revision, "updated_at": to_utc_iso(grant.updated_at) if grant.updated_at else None,
            "updated_by": grant.updated_by}


def grant_of(item: Mapping[str, Any]) -> Grant:
    """Read a grant item; a hand-edited one fails with InvalidInput naming the attribute."""
    admin = item.get("admin", False)
    if not isinstance(admin, bool):
        raise InvalidInput("admin", f"is {describe(admin)}, not a boolean")
    updated_at = item.get("updated_at")
    return Grant(principal=validate_principal(item.get("principal")), roles=parse_grant_roles(item.get("roles") or {}),
                 admin=admin, revision=revision_in(item),
                 updated_at=parse_instant(updated_at, "updated_at") if updated_at else None,
                 updated_by=str(item["updated_by"]) if item.get("updated_by") else None)
