"""What API Gateway enforces, through ``local serve``'s HTTP API over real HTTP (issue #30): IAM users
of the stack's IAM (created through its IAM API) get what their policies allow (a GET-only user
cannot record a check, a denied user and a user without a policy get nothing: 403 Forbidden, nothing
written); a body swapped under its signature is refused; an equipment id with ``/`` has its status
route; a malformed ``Content-Length`` is a 400 and the server serves on; 20 parallel requests are
all answered."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from tests.e2e import test_http_api
from tests.e2e.test_http_api import stack_now
from tests.e2e.test_local_clock import BOUND_S, run

driven = test_http_api.driven  # local serve's server on a simulated clock (the fixture of test_http_api)

OPERATOR = Credentials("testing", "testing")


def request(serve: dict[str, Any], method: str, path: str, body: Any = None, *,
            credentials: Credentials = OPERATOR, sent: bytes | None = None) -> tuple[int, Any]:
    """(status, JSON body) of one request signed with ``credentials`` (``sent``: the body sent instead
    of the one signed)."""
    data = json.dumps(body).encode() if body is not None else b""
    signed = AWSRequest(method=method, url=serve["api"] + path, data=data, headers={"Content-Type": "application/json"})
    SigV4Auth(credentials, "execute-api", "us-east-1").add_auth(signed)
    payload = data if sent is None else sent
    prepared = urllib.request.Request(signed.url, data=payload or None, method=method, headers=dict(signed.headers))
    try:
        with urllib.request.urlopen(prepared, timeout=BOUND_S) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def iam_user(serve: dict[str, Any], name: str, statements: list[dict[str, Any]]) -> Credentials:
    iam = boto3.client("iam", endpoint_url=serve["endpoint"], region_name="us-east-1",
                       aws_access_key_id="testing", aws_secret_access_key="testing")
    iam.create_user(UserName=name)
    if statements:
        iam.put_user_policy(UserName=name, PolicyName="api", PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": statements}))
    key = iam.create_access_key(UserName=name)["AccessKey"]
    return Credentials(key["AccessKeyId"], key["SecretAccessKey"])


def test_iam_users_get_what_their_policies_allow_and_refusals_write_nothing(driven: dict[str, Any]) -> None:
    serve = driven
    run(serve, "checklist", "put", "hourly", "--recurrence", "DTSTART;TZID=Europe/Riga:20260302T000000",
        "--recurrence", "RRULE:FREQ=HOURLY", "--window", "PT50M", "--grace", "PT10M")
    run(serve, "equipment", "assign", "--checklist", "hourly", "FL-1", "x/y")
    driven["server"].tick()
    check = {"checklist_id": "hourly", "equipment_id": "FL-1",
             "performed_at": stack_now(serve).strftime("%Y-%m-%dT%H:%M:%SZ")}
    any_get = "arn:aws:execute-api:us-east-1:123456789012:*/$default/GET/*"
    reader = iam_user(serve, "reader", [{"Effect": "Allow", "Action": "execute-api:Invoke", "Resource": any_get}])
    denied = iam_user(serve, "denied", [{"Effect": "Allow", "Action": "*", "Resource": "*"},
                                        {"Effect": "Deny", "Action": "*", "Resource": "*"}])
    nobody = iam_user(serve, "nobody", [])

    assert request(serve, "POST", "/checks", check, credentials=reader) == (403, {"message": "Forbidden"})
    for who in (denied, nobody):
        assert request(serve, "POST", "/checks", check, credentials=who) == (403, {"message": "Forbidden"})
        assert request(serve, "GET", "/equipment/FL-1/status", credentials=who) == (403, {"message": "Forbidden"})
    status, before = request(serve, "GET", "/equipment/FL-1/status", credentials=reader)
    assert status == 200 and before["checklists"][0]["state"] == "undone", "a refused POST wrote nothing"

    # a body swapped under its signature: refused, nothing written
    swapped = json.dumps({**check, "equipment_id": "x/y"}).encode()
    status, refused = request(serve, "POST", "/checks", check, sent=swapped)
    assert status == 403 and "signature we calculated does not match" in refused["message"]

    # an equipment id with '/' has its status route (the path parameter decoded)
    status, slashed = request(serve, "GET", "/equipment/x%2Fy/status")
    assert status == 200 and slashed["equipment_id"] == "x/y" and slashed["checklists"][0]["state"] == "undone"

    # the operator records; the reader sees it
    assert request(serve, "POST", "/checks", check)[0] == 201
    assert request(serve, "GET", "/equipment/FL-1/status", credentials=reader)[1]["checklists"][0]["state"] == "done"


def test_broken_http_and_parallel_requests(driven: dict[str, Any]) -> None:
    serve = driven
    port = int(serve["api"].rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=BOUND_S) as connection:
        connection.sendall(b"POST /checks HTTP/1.1\r\nHost: x\r\nContent-Length: 12x\r\n\r\n{}")
        answer = connection.recv(65536)
    assert answer.startswith(b"HTTP/1.1 400 "), answer
    with socket.create_connection(("127.0.0.1", port), timeout=BOUND_S) as connection:
        connection.sendall(b"POST /checks HTTP/1.1\r\nHost: x\r\nContent-Length: 52428800\r\n\r\n")
        answer = connection.recv(65536)  # answered from the header: the 50 MB are never sent
    assert answer.startswith(b"HTTP/1.1 413 "), answer
    with ThreadPoolExecutor(max_workers=20) as pool:
        answers = list(pool.map(lambda _: request(serve, "GET", "/equipment/FL-1/status")[0], range(20)))
    assert answers == [404] * 20  # every one answered (by the function: FL-1 is assigned to nothing)
