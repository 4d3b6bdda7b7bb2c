"""The people's API's JWT authorizer as the local API Gateway runs it (#31), without a stack: a token
of the embedded user pool (signed with moto's key, as moto's InitiateAuth signs it) is let through
with its claims as API Gateway hands them over; an expired one, another issuer's, another app
client's, a tampered one, one of another key, a refresh-like ``token_use`` or none is a 401 and
no function runs."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from joserfc import jwt
from joserfc.jwk import RSAKey
from moto.utilities.utils import load_resource

from missed_checks_local.apigateway.jwt import (
    JwtAuthorizer,
    Unauthorized,
    bearer_token,
    cognito_key_set,
    event_claims,
    verify_token,
)
from missed_checks_local.apigateway.server import LocalHttpApi

ISSUER = "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_pool"
CLIENT = "client1"
AUTHORIZER = JwtAuthorizer(ISSUER, (CLIENT,))
MOTO_KEY = RSAKey.import_key(load_resource("cognitoidp/resources/jwks-private.json"))
ARN = "arn:aws:lambda:us-east-1:123456789012:function:api-status"


def token(*, key: Any = MOTO_KEY, kid: str = "dummy", **claims: Any) -> str:
    """An access token of operator-north as moto's user pool writes it; ``claims`` change or (None) drop one."""
    now = int(time.time())
    payload: dict[str, Any] = {"iss": ISSUER, "sub": "5e1c", "client_id": CLIENT, "token_use": "access",
                               "iat": now, "auth_time": now, "exp": now + 3600, "username": "operator-north",
                               "scope": "aws.cognito.signin.user.admin", "cognito:groups": ["operator@north"]}
    payload.update(claims)
    return jwt.encode({"kid": kid, "alg": "RS256"}, {k: v for k, v in payload.items() if v is not None}, key)


def verified(value: str) -> dict[str, Any]:
    return verify_token(value, AUTHORIZER, cognito_key_set(ISSUER))


def test_a_good_access_token_gives_its_claims() -> None:
    claims = verified(token())
    assert claims["username"] == "operator-north" and claims["cognito:groups"] == ["operator@north"]


def test_an_id_token_names_the_client_in_aud() -> None:
    id_token = token(token_use="id", client_id=None, aud=CLIENT, username=None, **{"cognito:username": "admin"})
    assert verified(id_token)["cognito:username"] == "admin"
    # an id token's audience is aud: a client_id in it does not count
    with pytest.raises(Unauthorized, match="aud"):
        verified(token(token_use="id", client_id=CLIENT, aud="other"))
    # an access token's audience is client_id: an aud in it does not count
    with pytest.raises(Unauthorized, match="client_id"):
        verified(token(client_id="other", aud=CLIENT))


@pytest.mark.parametrize(("changes", "reason"), [
    ({"exp": timedelta(seconds=-1)}, "expired"),  # from now, when the test runs (not when it is collected)
    ({"exp": None}, "no expiry"),
    ({"nbf": timedelta(seconds=600)}, "not valid yet"),
    ({"iat": timedelta(seconds=600)}, "not valid yet"),
    ({"iss": "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_other"}, "issuer"),
    ({"iss": None}, "issuer"),
    ({"client_id": "another-client"}, "client_id 'another-client' is not an audience"),
    ({"token_use": "refresh"}, "neither an access token nor an id token"),
])
def test_a_token_breaking_a_rule_is_refused_naming_it(changes: dict[str, Any], reason: str) -> None:
    now = int(time.time())
    claims = {name: now + int(value.total_seconds()) if isinstance(value, timedelta) else value
              for name, value in changes.items()}
    with pytest.raises(Unauthorized, match=reason):
        verified(token(**claims))


def test_a_tampered_token_or_another_keys_signature_is_refused() -> None:
    header, payload, signature = token().split(".")
    other = token(username="admin", **{"cognito:groups": ["admin"]}).split(".")[1]
    with pytest.raises(Unauthorized, match="bad_signature"):
        verified(f"{header}.{other}.{signature}")  # the claims of another token under this one's signature
    with pytest.raises(Unauthorized, match="not a JWT signed by the issuer's keys"):
        verified(token(key=RSAKey.generate_key(2048)))
    with pytest.raises(Unauthorized, match="not a JWT signed by the issuer's keys"):
        verified(token(kid="another-key", key=RSAKey.generate_key(2048)))
    with pytest.raises(Unauthorized, match="not a JWT"):
        verified("not.a-token")


def test_another_issuer_has_no_key_set_here() -> None:
    assert cognito_key_set("https://login.example.com/") is None
    with pytest.raises(Unauthorized, match="embedded user pool only"):
        verify_token(token(), JwtAuthorizer("https://login.example.com/", (CLIENT,)), None)


def test_the_bearer_token_is_taken_with_or_without_bearer_and_missing_is_refused() -> None:
    assert bearer_token({"Authorization": "Bearer abc"}) == "abc"
    assert bearer_token({"authorization": "abc"}) == "abc"
    for headers in ({}, {"Authorization": ""}, {"Authorization": "Bearer "}):
        with pytest.raises(Unauthorized, match="no bearer token"):
            bearer_token(headers)


def test_the_claims_reach_the_function_as_strings() -> None:
    assert event_claims({"exp": 1795849749, "cognito:groups": ["operator@north", "auditor@south"],
                         "email_verified": True, "username": "operator-north", "ratio": 1.0}) == {
        "exp": "1795849749", "cognito:groups": "[operator@north auditor@south]", "email_verified": "true",
        "username": "operator-north", "ratio": "1"}


# -- through the local API Gateway ------------------------------------------------------------------
class JwtGateway:
    """apigatewayv2's answers for an API whose one route ``GET /equipment/{equipment_id}/status`` uses
    the JWT authorizer ``a1`` (GetRoutes, GetIntegrations, GetAuthorizer)."""

    def get_integrations(self, ApiId: str) -> dict[str, Any]:  # noqa: N803 - boto3's parameter name
        return {"Items": [{"IntegrationId": "i1", "PayloadFormatVersion": "2.0",
                           "IntegrationUri": f"arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/"
                                             f"{ARN}/invocations"}]}

    def get_routes(self, ApiId: str) -> dict[str, Any]:  # noqa: N803
        return {"Items": [{"RouteKey": "GET /equipment/{equipment_id}/status", "Target": "integrations/i1",
                           "AuthorizationType": "JWT", "AuthorizerId": "a1"}]}

    def get_authorizer(self, ApiId: str, AuthorizerId: str) -> dict[str, Any]:  # noqa: N803
        assert AuthorizerId == "a1"
        return {"AuthorizerId": "a1", "AuthorizerType": "JWT", "Name": "PeopleAuthorizer",
                "JwtConfiguration": {"Issuer": ISSUER, "Audience": [CLIENT]}}


@pytest.fixture
def people_api() -> Iterator[tuple[LocalHttpApi, list[dict[str, Any]]]]:
    invoked: list[dict[str, Any]] = []

    def invoke(arn: str, event: dict[str, Any]) -> Any:
        invoked.append(event)
        return SimpleNamespace(error=None, result={"statusCode": 200, "body": "{}"})

    api = LocalHttpApi(apigatewayv2=JwtGateway(), api_id="people", invoke=invoke, region="us-east-1",
                       account_id="123456789012", partition="aws", local_key="testing", local_secret="testing")
    try:
        yield api, invoked
    finally:
        api._server.server_close()


def test_no_token_or_a_bad_one_is_401_and_nothing_runs(people_api: tuple[LocalHttpApi, list[Any]]) -> None:
    api, invoked = people_api
    for headers in ({}, {"Authorization": f"Bearer {token(exp=int(time.time()) - 5)}"}):
        status, response_headers, body = api.answer("GET", "/equipment/FL-1/status", headers, b"", "127.0.0.1")
        assert (status, json.loads(body)) == (401, {"message": "Unauthorized"})
        assert response_headers["www-authenticate"].startswith('Bearer scope="" error="invalid_token"')
    assert invoked == []


def test_a_good_token_passes_its_claims_to_the_function(people_api: tuple[LocalHttpApi, list[Any]]) -> None:
    api, invoked = people_api
    status, _, _ = api.answer("GET", "/equipment/FL-1/status", {"Authorization": f"Bearer {token()}"}, b"",
                              "127.0.0.1")
    assert status == 200
    authorizer = invoked[0]["requestContext"]["authorizer"]
    assert set(authorizer) == {"jwt"} and authorizer["jwt"]["scopes"] is None
    claims = authorizer["jwt"]["claims"]
    assert claims["username"] == "operator-north" and claims["cognito:groups"] == "[operator@north]"
    assert all(isinstance(value, str) for value in claims.values())
