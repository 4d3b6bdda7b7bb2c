"""The operator's commands as a person (#31, missed_checks_ops.people and the --as/--token options),
without a stack: a token of another issuer or app client, an expired one or none at all is refused
naming ``token``; the password comes from --password, then $MISSED_CHECKS_PASSWORD, then (locally) the
one local serve printed; without --as or --token a command acts as the unscoped operator."""

from __future__ import annotations

import argparse
import base64
import json
import time
from typing import Any

import pytest

from missed_checks.errors import InvalidInput
from missed_checks_local.product.people import LOCAL_PASSWORD
from missed_checks_ops import people
from missed_checks_ops.cli.common import caller_of, person_of_args, target_parent
from missed_checks_ops.target import StackTarget, TargetError

POOL, CLIENT = "us-east-1_pool", "client1"
TARGET = StackTarget(region="us-east-1", endpoint_url=None, stack_name="missed-checks",
                     outputs={"UserPoolId": POOL, "UserPoolClientId": CLIENT, "TableName": "t"})


def unsigned(**claims: Any) -> str:
    """A JWT's shape with ``claims`` (the CLI reads claims; API Gateway verifies signatures)."""
    payload = {"iss": f"https://cognito-idp.us-east-1.amazonaws.com/{POOL}", "token_use": "access",
               "client_id": CLIENT, "exp": int(time.time()) + 600, "username": "operator-north"} | claims

    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")
    return f"{part({'alg': 'RS256', 'kid': 'dummy'})}.{part(payload)}.c2ln"


def test_the_stacks_token_gives_its_claims() -> None:
    assert people.claims_of(TARGET, unsigned())["username"] == "operator-north"
    assert people.claims_of(TARGET, "Bearer " + unsigned(token_use="id", client_id=None, aud=CLIENT))["aud"] == CLIENT


@pytest.mark.parametrize(("token", "reason"), [
    ("abc", "is not a JWT"),
    ("a.!!!.c", "is not a JWT"),
    (unsigned(iss="https://cognito-idp.us-east-1.amazonaws.com/us-east-1_other"), "not this stack's user pool"),
    (unsigned(client_id="other"), "app client 'other'"),
    (unsigned(token_use="id", aud="other"), "app client 'other'"),
    (unsigned(exp=int(time.time()) - 1), "has expired"),
    (unsigned(exp=None), "has expired"),
])
def test_another_stacks_or_an_expired_token_is_refused_naming_token(token: str, reason: str) -> None:
    with pytest.raises(InvalidInput, match=reason) as refused:
        people.claims_of(TARGET, token)
    assert refused.value.field == "token"


def test_a_stack_without_a_user_pool_says_to_give_a_token_of_its_issuer() -> None:
    bare = StackTarget(region="us-east-1", endpoint_url=None, stack_name="s", outputs={"TableName": "t"})
    with pytest.raises(TargetError, match="JwtIssuer"):
        people.claims_of(bare, unsigned())


def test_the_password_comes_from_the_option_then_the_environment_then_local_serve(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(people.PASSWORD_VARIABLE, raising=False)
    assert people.password_for("Given-Pass-1", local=True) == "Given-Pass-1"
    assert people.password_for(None, local=True) == LOCAL_PASSWORD
    with pytest.raises(InvalidInput, match="MISSED_CHECKS_PASSWORD") as missing:
        people.password_for(None, local=False)
    assert missing.value.field == "password"
    monkeypatch.setenv(people.PASSWORD_VARIABLE, "From-Env-Pass-1")
    assert people.password_for(None, local=False) == "From-Env-Pass-1"


def test_without_as_or_token_a_command_is_the_unscoped_operator() -> None:
    parser = argparse.ArgumentParser(parents=[target_parent()])
    args = parser.parse_args([])
    assert person_of_args(args) is None
    assert caller_of(args).unscoped is True
    with pytest.raises(SystemExit):
        parser.parse_args(["--as", "admin", "--token", "x.y.z"])  # one or the other
    assert parser.parse_args(["--as", "admin", "--password", "p"]).as_user == "admin"
