"""Grants' use cases (#31): admins only; roles at existing sites; If-Match; every write stamped."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from missed_checks.errors import Conflict, Forbidden, InvalidInput, NotFound, PreconditionFailed
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.granting import delete_grant, get_grant, list_grants, put_grant
from missed_checks.permissions.role import Role
from tests.fakes import InMemoryTable

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ADMIN = Caller("root", admin=True)
ARN = "arn:aws:iam::123456789012:role/yard-app"


@pytest.fixture
def table() -> InMemoryTable:
    return InMemoryTable().with_sites("north", "south")


def test_put_get_list_and_delete(table: InMemoryTable) -> None:
    grant = put_grant(table, ADMIN, "ann", roles={"north": "site_manager"}, now=NOW, create=True)
    assert (grant.revision, dict(grant.roles), grant.admin, grant.updated_by) == (1, {"north": Role.site_manager},
                                                                                  False, "root")
    assert get_grant(table, ADMIN, "ann") == grant
    put_grant(table, ADMIN, ARN, roles={}, admin=True, now=NOW)
    page = list_grants(table, ADMIN, None, 1)
    assert [g.principal for g in page.items] == ["ann"] and page.next_position == "ann"
    assert [g.principal for g in list_grants(table, ADMIN, "ann", 5).items] == [ARN]
    changed = put_grant(table, ADMIN, "ann", roles={"south": "auditor"}, now=NOW, if_match=1)
    assert changed.revision == 2 and dict(changed.roles) == {"south": Role.auditor}
    delete_grant(table, ADMIN, "ann", 2)
    with pytest.raises(NotFound, match="^grant of 'ann' does not exist$"):
        get_grant(table, ADMIN, "ann")
    assert [s for s in table.stamped if s[0] == "grant"] == [("grant", "ann", "root"), ("grant", ARN, "root"),
                                                             ("grant", "ann", "root"), ("grant", "ann", "root")]


def test_only_admins_touch_grants(table: InMemoryTable) -> None:
    manager = Caller("mia", roles={"north": Role.site_manager})
    for attempt in (lambda: list_grants(table, manager), lambda: get_grant(table, manager, "mia"),
                    lambda: put_grant(table, manager, "mia", roles={"south": "site_manager"}, now=NOW),
                    lambda: delete_grant(table, manager, "mia")):
        with pytest.raises(Forbidden, match="only an admin may administer"):
            attempt()
    assert not table.grants


def test_stale_and_missing_revisions(table: InMemoryTable) -> None:
    put_grant(table, ADMIN, "ann", roles={"north": "operator"}, now=NOW)
    with pytest.raises(Conflict, match="grant of 'ann' already exists: to change it, send If-Match"):
        put_grant(table, ADMIN, "ann", roles={}, now=NOW, create=True)
    with pytest.raises(PreconditionFailed) as stale:
        put_grant(table, ADMIN, "ann", roles={}, now=NOW, if_match=7)
    assert stale.value.current_etag == '"1"'
    with pytest.raises(PreconditionFailed):
        delete_grant(table, ADMIN, "ann", 3)
    with pytest.raises(NotFound):
        put_grant(table, ADMIN, "bob", roles={}, now=NOW, if_match=1)
    with pytest.raises(NotFound):
        delete_grant(table, ADMIN, "bob")
    assert table.grants["ann"].revision == 1


@pytest.mark.parametrize(("principal", "roles", "admin", "message"), [
    ("ann", {"west": "operator"}, False, r"^roles\.west: there is no site 'west'"),
    ("ann", {"north": "admin"}, False, r"^roles\.north: 'admin' is not a site role"),
    ("ann", "north", False, "^roles: is a string"),
    ("ann", {}, "yes", "^admin: is a string"),
    ("two words", {}, False, "^principal: 'two words' is not a valid principal"),
])
def test_bad_grants_name_the_field(table: InMemoryTable, principal: str, roles: object, admin: object,
                                   message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        put_grant(table, ADMIN, principal, roles=roles, admin=admin, now=NOW)
    assert not table.grants
