"""Roles, the caller and the one authorization rule (#31): another site's object is a 404 (NotFound)
whatever the action, a role lacking the action at its own site a 403 (Forbidden); tokens' groups
and grant records merged (the record wins per site)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from missed_checks.errors import Forbidden, InvalidInput, NotFound
from missed_checks.permissions.authorizing import authorize, visible
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.grant import Grant, machine_caller, parse_grant_roles, person_caller, roles_from_groups
from missed_checks.permissions.role import ALLOWED, SITE_ROLES, Action, Role, markdown_table, parse_role

SITES = st.sampled_from(["north", "south", "east", "west", "a.b", "x_1"])


def test_the_table_as_the_issue_states_it() -> None:
    expected = {
        Role.operator: {"read", "record"},
        Role.supervisor: {"read", "record", "read_records", "supervise"},
        Role.site_manager: {"read", "record", "read_records", "supervise", "manage", "read_management"},
        Role.auditor: {"read", "read_records", "read_management"},
        Role.admin: set(Action),
    }
    assert {role: {action.value for action in actions} for role, actions in ALLOWED.items()} == expected
    assert set(ALLOWED) == set(Role)
    # the auditor changes nothing; only admin administers
    assert not ALLOWED[Role.auditor] & {Action.record, Action.supervise, Action.manage, Action.administer}
    assert [role for role in Role if Action.administer in ALLOWED[role]] == [Role.admin]


def test_the_markdown_table_has_a_row_per_action_and_a_column_per_role() -> None:
    lines = markdown_table().splitlines()
    assert len(lines) == 2 + len(Action)
    assert lines[0].endswith("| operator | supervisor | site_manager | auditor | admin |")
    record = next(line for line in lines if line.startswith("| `record` |"))
    assert record.endswith("| yes | yes | yes | - | yes |")


@given(roles=st.dictionaries(SITES, st.sampled_from(SITE_ROLES)), action=st.sampled_from(Action), site=SITES)
def test_no_role_at_a_site_is_always_not_found_never_forbidden(roles: dict[str, Role], action: Action,
                                                                 site: str) -> None:
    caller = Caller("someone", roles=roles)
    what = f"checklist at {site}"
    if site not in roles:
        with pytest.raises(NotFound) as raised:
            authorize(caller, action, site, what=what)
        assert str(raised.value) == f"{what} does not exist"
        assert not visible(caller, site)
    elif action in ALLOWED[roles[site]]:
        authorize(caller, action, site, what=what)
        assert caller.may(action, site)
    else:
        with pytest.raises(Forbidden, match=f"the role {roles[site].value} at site {site} does not allow {action}"):
            authorize(caller, action, site, what=what)
        assert visible(caller, site)  # Forbidden only where the caller may see it


@given(action=st.sampled_from(Action), site=st.one_of(st.none(), SITES))
def test_admin_and_unscoped_may_do_everything_everywhere(action: Action, site: str | None) -> None:
    for caller in (Caller("root", admin=True), Caller.operator("ops"),
                   Caller("arn:aws:iam::1:role/app", unscoped=True)):
        authorize(caller, action, site, what="anything")
        assert caller.may(action, site) and visible(caller, site)
        assert caller.sites() is None


def test_an_object_without_a_site_is_only_admins_and_unscoped_callers() -> None:
    manager = Caller("m", roles={"north": Role.site_manager})
    with pytest.raises(NotFound, match="^equipment FL-1 does not exist$"):
        authorize(manager, Action.read, None, what="equipment FL-1")
    assert not visible(manager, None)
    assert manager.role_at(None) is None


def test_a_caller_answers_its_roles_and_sites() -> None:
    caller = Caller("p", roles={"north": Role.operator, "south": Role.auditor})
    assert caller.role_at("north") is Role.operator
    assert caller.role_at("west") is None
    assert caller.sites() == frozenset({"north", "south"})
    assert Caller("root", admin=True).role_at("anywhere") is Role.admin
    assert Caller.operator("ops").unscoped and not Caller.operator("ops").admin


@pytest.mark.parametrize(("claim", "roles", "admin"), [
    (["admin"], {}, True),
    ('["site_manager@north", "operator@south"]', {"north": "site_manager", "south": "operator"}, False),
    ("[site_manager@north operator@south]", {"north": "site_manager", "south": "operator"}, False),
    ("[admin auditor@north]", {"north": "auditor"}, True),
    ("[]", {}, False),
    ("supervisor@north", {"north": "supervisor"}, False),
    (None, {}, False),
    (["staff", "admin@north", "operator@", "nobody@north", "operator@bad/site", 7], {}, False),
    (["operator@north", "site_manager@north", "auditor@north"], {"north": "site_manager"}, False),
])
def test_roles_from_groups(claim: object, roles: dict[str, str], admin: bool) -> None:
    groups = roles_from_groups(claim)
    assert dict(groups.roles) == roles
    assert groups.admin is admin


def test_the_grant_record_wins_per_site_and_admin_is_either() -> None:
    groups = roles_from_groups("[site_manager@north operator@south]")
    grant = Grant("ann", roles={"north": Role.auditor, "east": Role.supervisor}, revision=2)
    caller = person_caller("ann", groups, grant)
    assert dict(caller.roles) == {"north": Role.auditor, "south": Role.operator, "east": Role.supervisor}
    assert not caller.admin and not caller.unscoped
    assert person_caller("ann", roles_from_groups("[admin]"), grant).admin
    assert person_caller("ann", groups, Grant("ann", roles={}, admin=True)).admin
    assert dict(person_caller("ann", groups, None).roles) == {"north": Role.site_manager, "south": Role.operator}


def test_an_iam_caller_without_a_grant_is_unscoped_and_with_one_scoped() -> None:
    arn = "arn:aws:iam::123456789012:role/yard-app"
    assert machine_caller(arn, None) == Caller(arn, unscoped=True)
    scoped = machine_caller(arn, Grant(arn, roles={"north": Role.operator}))
    assert not scoped.unscoped and scoped.sites() == frozenset({"north"})
    with pytest.raises(NotFound):
        authorize(scoped, Action.read, "south", what="checklist c")


def test_parse_grant_roles_names_the_field() -> None:
    assert parse_grant_roles({"north": "operator"}) == {"north": Role.operator}
    with pytest.raises(InvalidInput, match=r"^roles\.north: 'admin' is not a site role"):
        parse_grant_roles({"north": "admin"})
    with pytest.raises(InvalidInput, match=r"^roles: is a list"):
        parse_grant_roles(["north"])
    with pytest.raises(InvalidInput, match=r"^roles \(a site id\): 'no site' is not a valid site id"):
        parse_grant_roles({"no site": "operator"})
    with pytest.raises(InvalidInput, match=r"^role: a number \(3\) is not a site role"):
        parse_role(3, "role")


def test_callers_and_grants_hash_whatever_their_roles() -> None:
    """Frozen, so usable as keys (a cache of callers); the roles' read-only map is left out of the hash."""
    caller = Caller("p", roles={"north": Role.operator})
    assert {caller: 1}[Caller("p", roles={"north": Role.operator})] == 1
    assert hash(Grant("p", roles={"north": Role.operator})) == hash(Grant("p", roles={"south": Role.auditor}))
    with pytest.raises(TypeError):
        caller.roles["south"] = Role.admin  # type: ignore[index]


GROUP_NAMES = st.one_of(
    st.just("admin"),
    st.builds(lambda role, site: f"{role.value}@{site}", st.sampled_from(SITE_ROLES), SITES),
    st.from_regex(r"[a-z]{1,8}", fullmatch=True),  # someone else's group
)


@given(names=st.lists(GROUP_NAMES, max_size=8))
def test_every_form_of_the_groups_claim_says_the_same(names: list[str]) -> None:
    """The list a token holds, that list as JSON text, and API Gateway's rendering ``[a b]``."""
    import json

    forms = [names, json.dumps(names), "[" + " ".join(names) + "]"]
    read = [roles_from_groups(form) for form in forms]
    assert all(dict(r.roles) == dict(read[0].roles) and r.admin == read[0].admin for r in read)
    assert read[0].admin == ("admin" in names)
    assert set(read[0].roles) == {name.partition("@")[2] for name in names if "@" in name}
