"""The local API Gateway of ``local serve`` (missed_checks_local.apigateway), without a stack: SigV4
verified as API Gateway verifies it, routes matched as it matches them, the payload 2.0 event it
sends and the response it makes of a function's answer."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from missed_checks_local.apigateway.routes import Route, _pattern, match
from missed_checks_local.apigateway.server import LocalHttpApi, http_api_event, http_response
from missed_checks_local.apigateway.sigv4 import Denied, KeyOwner, verify

URL = "http://127.0.0.1:5001/checks?x=1"
OWNERS = {"testing": KeyOwner("testing", "arn:aws:sts::123456789012:user/moto", "AIDAEXAMPLE")}
ARN = "arn:aws:lambda:us-east-1:123456789012:function:api-checks"


def signed(body: bytes = b'{"a": 1}', *, secret: str = "testing", region: str = "us-east-1",
           service: str = "execute-api", url: str = URL) -> dict[str, str]:
    request = AWSRequest(method="POST", url=url, data=body,
                         headers={"Content-Type": "application/json", "Host": "127.0.0.1:5001"})
    SigV4Auth(Credentials("testing", secret), service, region).add_auth(request)
    return dict(request.headers)


def check(headers: dict[str, str], body: bytes = b'{"a": 1}', url: str = URL) -> Any:
    return verify("POST", url, headers, body, region="us-east-1", account_id="123456789012", owner_of=OWNERS)


def test_a_correct_signature_names_the_caller() -> None:
    caller = check(signed())
    assert caller.user_arn == "arn:aws:sts::123456789012:user/moto"
    assert caller.to_event()["accountId"] == "123456789012"


@pytest.mark.parametrize(("signing", "body", "message"), [
    (None, b'{"a": 1}', "Missing Authentication Token"),
    ({}, b'{"a": 2}', "signature we calculated does not match"),
    ({"secret": "wrong"}, b'{"a": 1}', "signature we calculated does not match"),
    ({"region": "eu-west-1"}, b'{"a": 1}', "scoped to a valid region"),
    ({"service": "s3"}, b'{"a": 1}', "scoped to a valid region and service"),
    ("Bearer abc", b'{"a": 1}', "requires 'Credential'"),
])
def test_bad_signatures_are_refused(signing: dict[str, str] | str | None, body: bytes, message: str) -> None:
    # signed here, not when the module is collected: a signature is valid for 15 minutes, and a long
    # run can reach this test later than that
    if signing is None:
        headers: dict[str, str] = {}
    elif isinstance(signing, str):
        headers = {"Authorization": signing}
    else:
        headers = signed(**signing)
    with pytest.raises(Denied) as denied:
        check(headers, body)
    assert message in str(denied.value)


def test_an_unknown_key_or_an_old_signature_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    headers = signed()
    with pytest.raises(Denied, match="security token"):
        verify("POST", URL, headers, b'{"a": 1}', region="us-east-1", account_id="1", owner_of={})
    with pytest.raises(Denied, match="signature we calculated"):  # the query string is signed too
        check(headers, url=URL.replace("x=1", "x=2"))
    monkeypatch.setattr(time, "time", lambda: datetime.now(UTC).timestamp() + timedelta(minutes=16).total_seconds())
    with pytest.raises(Denied, match="Signature expired"):
        check(headers)


class Gateway:
    """apigatewayv2's answers for an API whose ``route_keys`` all go to the function ARN, IAM-authorized."""

    def __init__(self, route_keys: list[str]) -> None:
        self.route_keys = route_keys

    def get_integrations(self, ApiId: str) -> dict[str, Any]:  # noqa: N803 - boto3's parameter name
        return {"Items": [{"IntegrationId": "i1", "PayloadFormatVersion": "2.0",
                           "IntegrationUri": f"arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/"
                                             f"{ARN}/invocations"}]}

    def get_routes(self, ApiId: str) -> dict[str, Any]:  # noqa: N803
        return {"Items": [{"RouteKey": key, "Target": "integrations/i1", "AuthorizationType": "AWS_IAM"}
                          for key in self.route_keys]}


def route(key: str) -> Route:
    return Route(key, ARN, "AWS_IAM", "2.0", _pattern(key.split(" ", 1)[-1]))


def test_routes_match_literal_paths_and_one_segment_parameters() -> None:
    routes = [route("GET /equipment/{equipment_id}/status"), route("POST /checks/batch"), route("POST /checks")]
    assert match(routes, "POST", "/checks")[0].route_key == "POST /checks"  # type: ignore[index]
    assert match(routes, "POST", "/checks/batch")[0].route_key == "POST /checks/batch"  # type: ignore[index]
    assert match(routes, "GET", "/equipment/FL-1/status")[1] == {"equipment_id": "FL-1"}  # type: ignore[index]
    assert match(routes, "GET", "/equipment/a/b/status") is None
    assert match(routes, "GET", "/checks") is None


def test_the_default_route_takes_every_method_and_path_no_other_route_takes() -> None:
    """The web app's API (#32): one ``$default`` route (SAM's ``Path: $default``, any method)."""
    from missed_checks_local.cloudformation.http_api import route_key_of

    assert route_key_of("x-amazon-apigateway-any-method", "$default") == "$default"
    assert route_key_of("x-amazon-apigateway-any-method", "/x") == "ANY /x"
    assert route_key_of("get", "/checks") == "GET /checks"
    routes = sorted([route("$default"), route("POST /checks")], key=lambda r: r.route_key != "POST /checks")
    assert match(routes, "POST", "/checks")[0].route_key == "POST /checks"  # type: ignore[index]
    for method, path in (("GET", "/"), ("POST", "/record/FL-1"), ("DELETE", "/static/app.css")):
        found = match(routes, method, path)
        assert found is not None and found[0].route_key == "$default" and found[1] == {}, (method, path)
    assert (routes[-1].method, routes[-1].path) == ("ANY", "$default")


def test_the_event_is_payload_format_2() -> None:
    event = http_api_event(route("GET /equipment/{equipment_id}/status"), {"equipment_id": "FL-1"}, "GET",
                           "/equipment/FL-1/status", "a=1&a=2&b=", {"Host": "h", "X-Thing": "v"}, b"",
                           api_id="api1", account_id="123", caller=None, source_ip="127.0.0.1")
    assert event["version"] == "2.0" and event["routeKey"] == "GET /equipment/{equipment_id}/status"
    assert event["queryStringParameters"] == {"a": "1,2", "b": ""}
    assert event["pathParameters"] == {"equipment_id": "FL-1"}
    assert event["headers"] == {"host": "h", "x-thing": "v"}
    assert "authorizer" not in event["requestContext"] and "body" not in event
    assert event["requestContext"]["http"]["method"] == "GET"


def test_a_function_answer_becomes_the_http_response() -> None:
    assert http_response({"statusCode": 422, "headers": {"Content-Type": "application/problem+json"},
                          "body": '{"status": 422}'}) == (
        422, {"content-type": "application/problem+json"}, b'{"status": 422}')
    assert http_response({"ok": True}) == (200, {"content-type": "application/json"}, b'{"ok": true}')
    cookies = http_response({"statusCode": 303, "headers": {"Location": "/"}, "body": "",
                             "cookies": ["a=1; Path=/; HttpOnly", "b=; Max-Age=0"]})
    assert cookies == (303, {"location": "/", "set-cookie": "a=1; Path=/; HttpOnly\nb=; Max-Age=0"}, b"")


def test_the_gateway_refuses_before_invoking_and_answers_500_for_a_failed_function() -> None:
    invoked: list[dict[str, Any]] = []

    def invoke(arn: str, event: dict[str, Any]) -> Any:
        invoked.append(event)
        return SimpleNamespace(error={"errorType": "Boom"}, result=None)

    api = LocalHttpApi(apigatewayv2=Gateway(["POST /checks"]), api_id="api1", invoke=invoke, region="us-east-1",
                       account_id="123456789012", partition="aws", local_key="testing", local_secret="testing")
    try:
        assert api.answer("POST", "/checks", {}, b"{}", "127.0.0.1")[0] == 403
        assert api.answer("GET", "/nothing", {}, b"", "127.0.0.1")[0] == 404
        assert invoked == []
        headers = signed(b"{}", url="http://127.0.0.1:5001/checks")
        status, _, body = api.answer("POST", "/checks", headers, b"{}", "127.0.0.1")
        assert (status, json.loads(body)) == (500, {"message": "Internal Server Error"})
        assert invoked[0]["requestContext"]["authorizer"]["iam"]["userArn"].endswith(":user/moto")
    finally:
        api._server.server_close()
