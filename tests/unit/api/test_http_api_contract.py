"""The HTTP API's contract (openapi/missed-checks.yaml) against the template and the handlers: the
document is valid OpenAPI 3 (openapi-spec-validator); every documented route is an HttpApi event of
a function in template.yaml, is authorized (IAM or JWT) in the API's DefinitionBody, and is routed
by that function's resolver; and nothing is routed or deployed that the document does not list.
Also the problem+json shapes every refusal is answered with."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from openapi_spec_validator import validate

from missed_checks.api.http_api import caller_identity, install_problems, problem
from missed_checks.errors import InvalidInput
from missed_checks.performed_checks.recording import ChecksRefused, Problem, Refusal
from missed_checks_local.cloudformation.deploy import load_sam_template

ROOT = Path(__file__).resolve().parents[3]
DOCUMENT = yaml.safe_load((ROOT / "openapi" / "missed-checks.yaml").read_text(encoding="utf-8"))
TEMPLATE = load_sam_template(ROOT / "template.yaml")
METHODS = {"get", "post", "put", "patch", "delete"}


def documented() -> set[tuple[str, str]]:
    return {(method.upper(), path) for path, item in DOCUMENT["paths"].items() for method in item if method in METHODS}


def template_events() -> dict[tuple[str, str], str]:
    """(METHOD, path) -> the logical id of the function whose HttpApi event it is."""
    found = {}
    for logical_id, resource in TEMPLATE["Resources"].items():
        for event in (resource.get("Properties", {}).get("Events") or {}).values():
            if event.get("Type") == "HttpApi":
                found[(event["Properties"]["Method"].upper(), event["Properties"]["Path"])] = logical_id
    return found


def test_the_document_is_valid_openapi() -> None:
    validate(DOCUMENT)
    assert DOCUMENT["openapi"].startswith("3.")


def test_every_documented_route_is_in_the_template_and_nothing_else_is() -> None:
    assert set(template_events()) == documented()


def test_every_route_is_authorized_iam_by_default_or_jwt() -> None:
    api = TEMPLATE["Resources"]["HttpApi"]["Properties"]
    body_paths = api["DefinitionBody"]["paths"]
    listed = {(method.upper(), path) for path, item in body_paths.items() for method in item}
    assert listed == documented()
    for item in body_paths.values():
        for operation in item.values():
            assert operation["security"] == {"Fn::If": ["ApiUsesJwt", [{"OidcAuthorizer": []}], [{"AWS_IAM": []}]]}
    assert api["Auth"]["EnableIamAuthorizer"] is True
    assert set(api["DefaultRouteSettings"]) == {"ThrottlingBurstLimit", "ThrottlingRateLimit"}


def _resolver_routes(logical_id: str, monkeypatch: pytest.MonkeyPatch) -> set[tuple[str, str]]:
    code_uri = TEMPLATE["Resources"][logical_id]["Properties"]["CodeUri"].strip("/")
    monkeypatch.setenv("TABLE_NAME", "contract-test")
    module = importlib.import_module(code_uri.replace("/", ".") + ".app")
    routes = set()
    for route in module.app._static_routes + module.app._dynamic_routes:  # Powertools' registered routes
        routes.add((route.method, re.sub(r"<(\w+)>", r"{\1}", route.path)))
    return routes


def test_every_route_is_routed_by_its_function_and_no_function_routes_more(monkeypatch: pytest.MonkeyPatch) -> None:
    events = template_events()
    for logical_id in set(events.values()):
        wanted = {route for route, function in events.items() if function == logical_id}
        assert _resolver_routes(logical_id, monkeypatch) == wanted, logical_id


def test_every_api_function_role_is_scoped_to_the_table() -> None:
    for logical_id in set(template_events().values()):
        role = TEMPLATE["Resources"][logical_id]["Properties"]["Role"]["Fn::GetAtt"][0]
        statements = TEMPLATE["Resources"][role]["Properties"]["Policies"][0]["PolicyDocument"]["Statement"]
        for statement in statements:
            actions = statement["Action"]
            if any(a.startswith("dynamodb:") for a in actions):
                resource = statement["Resource"]
                resources = resource if isinstance(resource, list) else [resource]
                assert all("ChecklistsTable" in json.dumps(r) for r in resources), (logical_id, statement)
                assert "dynamodb:Scan" not in actions and "dynamodb:*" not in actions


# -- problem+json ----------------------------------------------------------------------------------
def test_a_problem_is_rfc_9457_with_the_field() -> None:
    response = problem(422, "Check refused", "nothing was written", field="equipment_id", extra={"errors": []})
    body = json.loads(response.body)
    assert response.status_code == 422 and response.headers["Content-Type"] == "application/problem+json"
    assert set(body) == {"type", "title", "status", "detail", "field", "errors"}
    assert body["status"] == 422 and body["type"].endswith("#errors-check-refused")


def event(method: str, path: str, body: Any = None, authorizer: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"version": "2.0", "routeKey": f"{method} {path}", "rawPath": path, "rawQueryString": "",
            "headers": {"content-type": "application/json"},
            "requestContext": {"http": {"method": method, "path": path}, "stage": "$default",
                               "authorizer": authorizer or {"iam": {"userArn": "arn:aws:iam::1:user/app"}}},
            "body": None if body is None else json.dumps(body), "isBase64Encoded": False}


def test_refusals_map_to_status_codes() -> None:
    from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

    app = APIGatewayHttpResolver()
    install_problems(app, not_found_errors=(KeyError,))
    not_assigned = Problem("equipment_id", "never assigned", Refusal.NOT_ASSIGNED, "checks[1]")

    @app.post("/refuse/<kind>")
    def refuse(kind: str) -> None:
        if kind == "malformed":
            raise ChecksRefused([Problem("performed_at", "has no UTC offset", row="checks[0]")])
        if kind == "semantic":
            raise ChecksRefused([not_assigned])
        if kind == "missing":
            raise KeyError("gone")
        raise InvalidInput("body", "is not JSON")

    answers = {kind: app.resolve(event("POST", f"/refuse/{kind}"), None)
               for kind in ("malformed", "semantic", "missing", "invalid")}
    assert {kind: a["statusCode"] for kind, a in answers.items()} == {
        "malformed": 400, "semantic": 422, "missing": 404, "invalid": 400}
    semantic = json.loads(answers["semantic"]["body"])
    assert semantic["errors"] == [{"row": "checks[1]", "field": "equipment_id", "kind": "not_assigned",
                                   "detail": "never assigned"}]
    assert semantic["field"] == "checks[1].equipment_id"
    unknown = app.resolve(event("GET", "/nowhere"), None)
    assert unknown["statusCode"] == 404 and "no route GET /nowhere" in json.loads(unknown["body"])["detail"]


def test_the_caller_is_the_iam_principal_or_the_jwt_subject() -> None:
    assert caller_identity(event("GET", "/")) == "arn:aws:iam::1:user/app"
    jwt = {"jwt": {"claims": {"iss": "https://issuer.example", "sub": "user-7"}, "scopes": None}}
    assert caller_identity(event("GET", "/", authorizer=jwt)) == "https://issuer.example#user-7"
    with pytest.raises(InvalidInput) as error:
        caller_identity(event("GET", "/", authorizer={"iam": {}}))
    assert error.value.field == "Authorization"


def test_the_record_routes_refuse_a_bad_body_before_reading_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TABLE_NAME", "contract-test")
    from functions.api_checks import app as checks_app

    def no_table() -> None:
        raise AssertionError("the table was read for a request refused by its shape")

    monkeypatch.setattr(checks_app, "table", no_table)
    check = {"checklist_id": "c", "equipment_id": "FL-1", "performed_at": "2026-03-02T05:00:00Z"}
    answers = {
        "too many": checks_app.app.resolve(event("POST", "/checks/batch", {"checks": [check] * 501}), None),
        "a list": checks_app.app.resolve(event("POST", "/checks/batch", [check]), None),
        "no json": checks_app.app.resolve({**event("POST", "/checks"), "body": "{"}, None),
        "no offset": checks_app.app.resolve(event("POST", "/checks", {**check, "performed_at": "2026-03-02"}), None),
    }
    assert {name: a["statusCode"] for name, a in answers.items()} == {
        "too many": 413, "a list": 400, "no json": 400, "no offset": 400}
    assert json.loads(answers["too many"]["body"])["field"] == "checks"
    assert json.loads(answers["no offset"]["body"])["field"] == "performed_at"
    assert all(a["headers"]["Content-Type"] == "application/problem+json" for a in answers.values())
