"""The caller of an HTTP API event (#31): an IAM principal scoped by its grant record or unscoped
without one; a person named by username / cognito:username / sub, the token's groups merged with
the grant record (the record wins per site); no identity is a clear 400."""

from __future__ import annotations

from typing import Any

import pytest

from missed_checks.api.callers import caller_of, role_arn_of
from missed_checks.errors import InvalidInput
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.grant import Grant
from missed_checks.permissions.role import Role

ROLE_ARN = "arn:aws:iam::123456789012:role/yard-app"
SESSION_ARN = "arn:aws:sts::123456789012:assumed-role/yard-app/phone-17"


class Grants:
    def __init__(self, *grants: Grant) -> None:
        self.grants = {grant.principal: grant for grant in grants}
        self.asked: list[str] = []

    def get_grant(self, principal: str) -> Grant | None:
        self.asked.append(principal)
        return self.grants.get(principal)


def iam_event(arn: str) -> dict[str, Any]:
    return {"requestContext": {"authorizer": {"iam": {"userArn": arn, "accountId": "123456789012"}}}}


def jwt_event(**claims: str) -> dict[str, Any]:
    return {"requestContext": {"authorizer": {"jwt": {"claims": claims, "scopes": None}}}}


def test_an_iam_caller_without_a_grant_is_unscoped() -> None:
    grants = Grants()
    assert caller_of(iam_event(ROLE_ARN), grants) == Caller(ROLE_ARN, unscoped=True)
    assert grants.asked == [ROLE_ARN]


def test_an_iam_caller_with_a_grant_is_scoped_by_it() -> None:
    grants = Grants(Grant(ROLE_ARN, roles={"north": Role.operator}))
    caller = caller_of(iam_event(ROLE_ARN), grants)
    assert caller == Caller(ROLE_ARN, roles={"north": Role.operator})
    assert not caller.unscoped


def test_an_assumed_role_session_takes_its_own_grant_else_its_roles() -> None:
    assert role_arn_of(SESSION_ARN) == ROLE_ARN
    assert role_arn_of(ROLE_ARN) is None
    grants = Grants(Grant(ROLE_ARN, roles={"south": Role.auditor}))
    caller = caller_of(iam_event(SESSION_ARN), grants)
    assert caller.principal == SESSION_ARN  # the audit trail names the session
    assert dict(caller.roles) == {"south": Role.auditor}
    assert grants.asked == [SESSION_ARN, ROLE_ARN]
    own = Grants(Grant(SESSION_ARN, roles={}, admin=True), Grant(ROLE_ARN, roles={"south": Role.auditor}))
    assert caller_of(iam_event(SESSION_ARN), own).admin


@pytest.mark.parametrize(("claims", "principal"), [
    ({"username": "ann", "cognito:username": "ann-id", "sub": "1f"}, "ann"),
    ({"cognito:username": "ann-id", "sub": "1f"}, "ann-id"),
    ({"sub": "1f0c"}, "1f0c"),
    ({"username": " ", "sub": "1f0c"}, "1f0c"),
])
def test_a_person_is_named_by_username_then_cognito_username_then_sub(claims: dict[str, str],
                                                                      principal: str) -> None:
    grants = Grants()
    caller = caller_of(jwt_event(**claims), grants)
    assert caller.principal == principal
    assert not caller.unscoped and not caller.admin and caller.sites() == frozenset()
    assert grants.asked == [principal]


def test_a_persons_groups_merge_with_the_grant_which_wins_per_site() -> None:
    grants = Grants(Grant("ann", roles={"north": Role.auditor, "east": Role.operator}))
    event = jwt_event(username="ann", **{"cognito:groups": "[site_manager@north supervisor@south]"})
    caller = caller_of(event, grants)
    assert dict(caller.roles) == {"north": Role.auditor, "south": Role.supervisor, "east": Role.operator}
    assert caller_of(jwt_event(username="bob", **{"cognito:groups": '["admin"]'}), grants).admin


def test_a_person_whose_name_is_no_principal_gets_no_grant_read_but_keeps_their_groups() -> None:
    grants = Grants()
    caller = caller_of(jwt_event(username="Zoë Müller", **{"cognito:groups": "[operator@north]"}), grants)
    assert caller.principal == "Zoë Müller" and dict(caller.roles) == {"north": Role.operator}
    assert grants.asked == []


@pytest.mark.parametrize("event", [
    {}, {"requestContext": {}}, {"requestContext": {"authorizer": {"iam": {"userArn": ""}}}},
    {"requestContext": {"authorizer": {"jwt": {"claims": {"iss": "https://idp"}}}}},
])
def test_no_identity_is_invalid_input_naming_authorization(event: dict[str, Any]) -> None:
    with pytest.raises(InvalidInput, match="^Authorization: the request carries no caller identity"):
        caller_of(event, Grants())
