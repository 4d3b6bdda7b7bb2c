"""People sign in (#31), against the server ``local serve`` runs: its user pool holds the users it
prints (each in the group of their role at their site), the sites ``north`` and ``south`` exist, the
people's API answers 401 without a token (or with a bad one) before any function runs and hands an
``operator-north`` token's claims to the function as API Gateway does; ``missed-checks local token``
prints that token, and the CLI's ``--as`` builds the person from it (roles from the groups)."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from missed_checks.permissions.role import Role
from missed_checks_local.endpoint import serve_session
from missed_checks_local.product.people import LOCAL_PASSWORD
from missed_checks_local.serve import LocalServer
from missed_checks_ops import people
from missed_checks_ops.target import resolve_target

pytestmark = [pytest.mark.e2e, pytest.mark.duration(20)]

USERS = ["admin", *(f"{who}-{site}" for site in ("north", "south")
                    for who in ("operator", "supervisor", "manager", "auditor"))]


@pytest.fixture(scope="module")
def server(people_server: LocalServer) -> LocalServer:
    return people_server


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], Any]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, dict(answer.headers), json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as refused:
        return refused.code, dict(refused.headers), json.loads(refused.read() or b"null")


def test_the_users_are_in_their_groups_and_the_sites_exist(server: LocalServer) -> None:
    assert server.stack is not None and server.people is not None
    assert list(server.people.groups) == USERS
    assert server.people.password == LOCAL_PASSWORD
    cognito = server.stack.client("cognito-idp")
    pool = server.stack.outputs["UserPoolId"]
    groups = [group["GroupName"] for group in cognito.list_groups(UserPoolId=pool)["Groups"]]
    members = {group: [user["Username"] for user in cognito.list_users_in_group(UserPoolId=pool, GroupName=group)[
        "Users"]] for group in groups}
    assert members["admin"] == ["admin"]
    assert members["operator@north"] == ["operator-north"] and members["site_manager@south"] == ["manager-south"]
    assert len(members) == 9
    dynamodb = server.stack.client("dynamodb")
    sites = {item["site_id"]["S"]: item["timezone"]["S"] for item in dynamodb.scan(
        TableName=server.stack.table_name, FilterExpression="#t = :site", ExpressionAttributeNames={"#t": "type"},
        ExpressionAttributeValues={":site": {"S": "site"}})["Items"]}
    assert sites == {"north": "Europe/Berlin", "south": "America/Chicago"}


def test_no_token_or_a_bad_one_is_401_and_nothing_runs(server: LocalServer) -> None:
    invoked: list[Any] = []
    api = server.people_api
    original = api.invoke
    api.invoke = lambda arn, event: invoked.append(event) or original(arn, event)
    try:
        url = f"{server.people_api_url}/equipment/FL-1/status"
        for headers in ({}, {"Authorization": "Bearer not-a-token"},
                        {"Authorization": f"Bearer {server.access_token('operator-north')}x"}):
            status, answer_headers, body = get(url, headers)
            assert (status, body) == (401, {"message": "Unauthorized"}), headers
            assert "invalid_token" in answer_headers["www-authenticate"]
        assert invoked == []
        # the IAM API is not the people's door: a token there is no signature (403)
        status, _, _ = get(f"{server.api_url}/equipment/FL-1/status",
                           {"Authorization": f"Bearer {server.access_token('admin')}"})
        assert status == 403
    finally:
        api.invoke = original


def test_an_operator_north_token_reaches_the_function_with_its_claims(server: LocalServer) -> None:
    events: list[dict[str, Any]] = []
    api = server.people_api
    original = api.invoke
    api.invoke = lambda arn, event: events.append(event) or original(arn, event)
    try:
        status, _, body = get(f"{server.people_api_url}/equipment/FL-1/status",
                              {"Authorization": f"Bearer {server.access_token('operator-north')}"})
    finally:
        api.invoke = original
    assert status == 404, body  # FL-1 is on no checklist: the function answered, not the gateway
    assert body["status"] == 404
    claims = events[0]["requestContext"]["authorizer"]["jwt"]["claims"]
    assert claims["username"] == "operator-north" and claims["cognito:groups"] == "[operator@north]"
    assert claims["token_use"] == "access" and claims["client_id"] == server.stack.outputs["UserPoolClientId"]
    assert all(isinstance(value, str) for value in claims.values())


def test_local_token_prints_it_and_as_builds_the_person(server: LocalServer) -> None:
    done = subprocess.run([sys.executable, "-m", "missed_checks_ops.cli.main", "local", "token", "supervisor-south",
                           "--endpoint", server.endpoint], capture_output=True, text=True, timeout=120, check=False,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(Path.home())})
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip()
    status, _, _ = get(f"{server.people_api_url}/equipment/FL-1/status", {"Authorization": f"Bearer {token}"})
    assert status == 404  # through the authorizer to the function
    target = resolve_target(None, "us-east-1", server.endpoint, {}, session=serve_session())
    person = people.person(target, people.claims_of(target, token))
    assert (person.principal, dict(person.roles), person.admin) == ("supervisor-south", {"south": Role.supervisor},
                                                                    False)
    signed_in = people.sign_in(target, "admin", people.password_for(None, local=True))
    assert people.person(target, people.claims_of(target, signed_in["AccessToken"])).admin is True
    with pytest.raises(people.InvalidInput, match="cannot sign in"):
        people.sign_in(target, "admin", "Wrong-Password-1")
