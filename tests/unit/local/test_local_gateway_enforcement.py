"""The local HTTP API refuses what API Gateway refuses: a caller whose IAM policies do not allow
``execute-api:Invoke`` on the request (403 Forbidden, nothing invoked), a body changed under its
signature or signed as ``UNSIGNED-PAYLOAD``, broken HTTP (400), a body over 10 MB (413 from its
``Content-Length``, unread), a function past the integration timeout (503); path parameters are
decoded; parallel connections are all served."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Any

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from moto import mock_aws

from missed_checks_local.apigateway.server import LocalHttpApi
from tests.unit.local.test_local_apigateway import Gateway

ACCOUNT = "123456789012"
API = "arn:aws:execute-api:us-east-1:123456789012:api1/$default"
ROUTES = ["POST /checks", "GET /equipment/{equipment_id}/status", "GET /missed"]


@pytest.fixture
def api() -> Iterator[tuple[LocalHttpApi, list[dict[str, Any]]]]:
    invoked: list[dict[str, Any]] = []

    def invoke(arn: str, event: dict[str, Any]) -> Any:
        invoked.append(event)
        if event.get("body") == '"slow"':
            time.sleep(1.0)
        return SimpleNamespace(error=None, result={"statusCode": 200, "body": json.dumps(event.get("pathParameters"))})

    with mock_aws():
        made = LocalHttpApi(apigatewayv2=Gateway(ROUTES), api_id="api1", invoke=invoke, region="us-east-1",
                            account_id=ACCOUNT, partition="aws", local_key="testing", local_secret="testing",
                            integration_timeout_s=0.3)
        try:
            yield made, invoked
        finally:
            made._server.server_close()


def user(name: str, *statements: dict[str, Any], managed: bool = False, group: bool = False) -> Credentials:
    """An IAM user of the local IAM with one policy of ``statements`` (inline, managed, or its group's)."""
    iam = boto3.client("iam", region_name="us-east-1")
    iam.create_user(UserName=name)
    document = json.dumps({"Version": "2012-10-17", "Statement": list(statements)})
    if statements and managed:
        arn = iam.create_policy(PolicyName=f"{name}-policy", PolicyDocument=document)["Policy"]["Arn"]
        iam.attach_user_policy(UserName=name, PolicyArn=arn)
    elif statements and group:
        iam.create_group(GroupName=f"{name}-group")
        iam.put_group_policy(GroupName=f"{name}-group", PolicyName="p", PolicyDocument=document)
        iam.add_user_to_group(GroupName=f"{name}-group", UserName=name)
    elif statements:
        iam.put_user_policy(UserName=name, PolicyName="p", PolicyDocument=document)
    key = iam.create_access_key(UserName=name)["AccessKey"]
    return Credentials(key["AccessKeyId"], key["SecretAccessKey"])


def allow(resource: str | list[str], action: str = "execute-api:Invoke", **extra: Any) -> dict[str, Any]:
    return {"Effect": "Allow", "Action": action, "Resource": resource, **extra}


def send(api: LocalHttpApi, method: str, path: str, body: bytes = b"", *, credentials: Credentials | None = None,
         headers: dict[str, str] | None = None, sent_body: bytes | None = None) -> tuple[int, dict[str, str], Any]:
    request = AWSRequest(method=method, url=f"http://127.0.0.1:5001{path}", data=body,
                         headers={"Host": "127.0.0.1:5001", **(headers or {})})
    SigV4Auth(credentials or Credentials("testing", "testing"), "execute-api", "us-east-1").add_auth(request)
    status, answer_headers, payload = api.answer(method, path, dict(request.headers),
                                                 body if sent_body is None else sent_body, "127.0.0.1")
    return status, answer_headers, json.loads(payload)


def test_a_get_only_user_is_refused_post_and_nothing_is_invoked(api: tuple[LocalHttpApi, list[Any]]) -> None:
    gateway, invoked = api
    reader = user("reader", allow(f"{API}/GET/*"))
    status, headers, body = send(gateway, "POST", "/checks", b"{}", credentials=reader)
    assert (status, body) == (403, {"message": "Forbidden"}) and headers["x-local-iam-decision"] == "implicit deny"
    assert invoked == []
    assert send(gateway, "GET", "/equipment/FL-1/status", credentials=reader)[0] == 200
    assert send(gateway, "GET", "/missed", credentials=reader)[0] == 200


def test_an_explicit_deny_wins_and_no_policy_is_an_implicit_deny(api: tuple[LocalHttpApi, list[Any]]) -> None:
    gateway, invoked = api
    denied = user("denied", allow("*", action="*"), {"Effect": "Deny", "Action": "*", "Resource": "*"})
    nobody = user("nobody")
    for method, path in [("POST", "/checks"), ("GET", "/equipment/FL-1/status"), ("GET", "/missed")]:
        status, headers, body = send(gateway, method, path, b"{}" if method == "POST" else b"", credentials=denied)
        assert (status, body, headers["x-local-iam-decision"]) == (403, {"message": "Forbidden"}, "explicit deny")
        status, headers, _ = send(gateway, method, path, b"{}" if method == "POST" else b"", credentials=nobody)
        assert (status, headers["x-local-iam-decision"]) == (403, "implicit deny")
    assert invoked == []
    assert send(gateway, "POST", "/checks", b"{}")[0] == 200  # the stack's own credentials: an administrator's


def test_resource_wildcards_actions_and_policy_kinds_as_iam_matches_them(api: tuple[LocalHttpApi, list[Any]]) -> None:
    gateway, _ = api
    # the documented grant ($default/*/*), from a managed policy; action names are case-insensitive
    app = user("app", allow("arn:aws:execute-api:us-east-1:123456789012:api1/$default/*/*",
                            action="Execute-API:invoke"), managed=True)
    assert send(gateway, "POST", "/checks", b"{}", credentials=app)[0] == 200
    # '$' is literal ('$default' is not an end of line): another stage does not match
    other = user("other-stage", allow("arn:aws:execute-api:us-east-1:123456789012:api1/prod/*/*"))
    assert send(gateway, "POST", "/checks", b"{}", credentials=other)[0] == 403
    # one path segment with '?', from a group's policy; another API id is not this one
    status_only = user("status-only", allow(f"{API}/GET/equipment/FL-?/status"), group=True)
    assert send(gateway, "GET", "/equipment/FL-1/status", credentials=status_only)[0] == 200
    assert send(gateway, "GET", "/equipment/FL-12/status", credentials=status_only)[0] == 403
    wrong_api = user("wrong-api", allow("arn:aws:execute-api:us-east-1:123456789012:api2/*"))
    assert send(gateway, "GET", "/missed", credentials=wrong_api)[0] == 403
    # NotResource: everything but POST
    no_post = user("no-post", {"Effect": "Allow", "Action": "execute-api:Invoke", "NotResource": f"{API}/POST/*"})
    assert send(gateway, "GET", "/missed", credentials=no_post)[0] == 200
    assert send(gateway, "POST", "/checks", b"{}", credentials=no_post)[0] == 403


def test_conditions_on_the_callers_context(api: tuple[LocalHttpApi, list[Any]]) -> None:
    gateway, _ = api
    here = user("here", allow("*", Condition={"StringEquals": {"aws:SourceIp": "127.0.0.1"}}))
    elsewhere = user("elsewhere", allow("*", Condition={"StringEquals": {"aws:SourceIp": "10.0.0.1"}}))
    # a Deny whose condition is false does not apply
    named = user("named", allow("*"), {"Effect": "Deny", "Action": "execute-api:Invoke", "Resource": "*",
                                       "Condition": {"StringEquals": {"aws:username": "someone-else"}}})
    unknown = user("unknown", allow("*", Condition={"IpAddress": {"aws:SourceIp": "127.0.0.0/8"}}))
    assert send(gateway, "GET", "/missed", credentials=here)[0] == 200
    assert send(gateway, "GET", "/missed", credentials=elsewhere)[0] == 403
    assert send(gateway, "GET", "/missed", credentials=named)[0] == 200
    status, headers, _ = send(gateway, "GET", "/missed", credentials=unknown)
    assert (status, headers["x-local-iam-decision"]) == (403, "condition operator IpAddress is not evaluated locally")


def test_a_roles_temporary_credentials_get_what_the_roles_policies_allow(
        api: tuple[LocalHttpApi, list[Any]]) -> None:
    """The documented setup: the app's role gets execute-api:Invoke (here on GET only)."""
    gateway, invoked = api
    iam = boto3.client("iam", region_name="us-east-1")
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                      "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}}]}
    arn = iam.create_role(RoleName="app", AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]
    iam.put_role_policy(RoleName="app", PolicyName="api", PolicyDocument=json.dumps(
        {"Version": "2012-10-17", "Statement": [allow(f"{API}/GET/*")]}))
    issued = boto3.client("sts", region_name="us-east-1").assume_role(RoleArn=arn, RoleSessionName="tablet-7")
    session = Credentials(issued["Credentials"]["AccessKeyId"], issued["Credentials"]["SecretAccessKey"],
                          issued["Credentials"]["SessionToken"])
    assert send(gateway, "GET", "/missed", credentials=session)[0] == 200
    caller = invoked[0]["requestContext"]["authorizer"]["iam"]
    assert caller["userArn"] == f"arn:aws:sts::{ACCOUNT}:assumed-role/app/tablet-7"
    status, headers, body = send(gateway, "POST", "/checks", b"{}", credentials=session)
    assert (status, body, headers["x-local-iam-decision"]) == (403, {"message": "Forbidden"}, "implicit deny")
    forged = Credentials(session.access_key, session.secret_key, "not-the-token")
    status, _, body = send(gateway, "GET", "/missed", credentials=forged)
    assert (status, body) == (403, {"message": "The security token included in the request is invalid."})
    assert len(invoked) == 1


def test_the_payload_hash_is_the_received_bodys(api: tuple[LocalHttpApi, list[Any]]) -> None:
    gateway, invoked = api
    signed = b'{"equipment_id": "a"}'
    header = {"X-Amz-Content-SHA256": hashlib.sha256(signed).hexdigest()}
    assert send(gateway, "POST", "/checks", signed, headers=header)[0] == 200
    status, _, body = send(gateway, "POST", "/checks", signed, headers=header, sent_body=b'{"equipment_id": "b"}')
    assert status == 403 and "signature we calculated does not match" in body["message"]
    status, _, body = send(gateway, "POST", "/checks", signed, headers={"X-Amz-Content-SHA256": "UNSIGNED-PAYLOAD"})
    assert status == 403 and "signature we calculated does not match" in body["message"]
    assert [event["body"] for event in invoked] == ['{"equipment_id": "a"}']


def test_path_parameters_are_decoded(api: tuple[LocalHttpApi, list[Any]]) -> None:
    gateway, invoked = api
    status, _, parameters = send(gateway, "GET", "/equipment/x%2Fy/status")
    assert (status, parameters) == (200, {"equipment_id": "x/y"})
    assert invoked[0]["rawPath"] == "/equipment/x%2Fy/status"


def test_a_function_past_the_integration_timeout_is_a_503(api: tuple[LocalHttpApi, list[Any]]) -> None:
    gateway, _ = api
    started = time.monotonic()
    assert send(gateway, "POST", "/checks", b'"slow"') == (503, {"content-type": "application/json"},
                                                           {"message": "Service Unavailable"})
    assert time.monotonic() - started < 0.9


def raw(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(request)
        connection.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := connection.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_broken_http_is_a_400_a_large_body_a_413_unread_and_the_server_keeps_serving(
        api: tuple[LocalHttpApi, list[Any]]) -> None:
    gateway, invoked = api
    gateway.start()
    try:
        answer = raw(gateway.port, b"POST /checks HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}")
        assert answer.startswith(b"HTTP/1.1 400 ") and b"Content-Length 'abc' is not a length" in answer
        started = time.monotonic()
        answer = raw(gateway.port, b"POST /checks HTTP/1.1\r\nHost: x\r\nContent-Length: 52428800\r\n\r\n{}")
        assert answer.startswith(b"HTTP/1.1 413 ") and time.monotonic() - started < 5  # never waits for 50 MB
        answer = raw(gateway.port, b"GET /missed HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 403 ") and b"Missing Authentication Token" in answer
        assert invoked == []
    finally:
        gateway.stop()


def test_parallel_connections_are_all_served(api: tuple[LocalHttpApi, list[Any]]) -> None:
    """100 connections opened at once (socketserver's listen backlog of 5 left about a third of them
    unanswered), each answered."""
    gateway, _ = api
    gateway.start()
    count = 100
    barrier = threading.Barrier(count)

    def one(_: int) -> bytes:
        connection = socket.socket()
        connection.settimeout(20)
        barrier.wait()
        connection.connect(("127.0.0.1", gateway.port))
        try:
            connection.sendall(b"GET /missed HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            chunks = []
            while chunk := connection.recv(65536):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            connection.close()

    try:
        with ThreadPoolExecutor(max_workers=count) as pool:
            answers = list(pool.map(one, range(count)))
        assert all(answer.startswith(b"HTTP/1.1 403 ") for answer in answers)
    finally:
        gateway.stop()
