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


APIS = {"HttpApi": [{"AWS_IAM": []}], "PeopleApi": [{"PeopleAuthorizer": []}]}
"""Each API and the security of every one of its routes (#31): machines sign with IAM, people send a
bearer JWT; the same routes on both."""


def documented() -> set[tuple[str, str]]:
    return {(method.upper(), path) for path, item in DOCUMENT["paths"].items() for method in item if method in METHODS}


def template_events(api: str = "HttpApi") -> dict[tuple[str, str], str]:
    """(METHOD, path) -> the logical id of the function whose HttpApi event on ``api`` it is."""
    found: dict[tuple[str, str], str] = {}
    for logical_id, resource in TEMPLATE["Resources"].items():
        for event in (resource.get("Properties", {}).get("Events") or {}).values():
            if event.get("Type") == "HttpApi" and event["Properties"].get("ApiId") == {"Ref": api}:
                route = (event["Properties"]["Method"].upper(), event["Properties"]["Path"])
                assert route not in found, (api, route, logical_id, found.get(route))
                found[route] = logical_id
    return found


def test_the_document_is_valid_openapi() -> None:
    validate(DOCUMENT)
    assert DOCUMENT["openapi"].startswith("3.")


def test_every_documented_route_is_in_the_template_on_both_apis_and_nothing_else_is() -> None:
    for api in APIS:
        assert set(template_events(api)) == documented(), api
    assert template_events("HttpApi") == template_events("PeopleApi")


def test_every_http_api_event_names_an_api_and_its_people_twin_is_named_after_it() -> None:
    """``<Name>`` on HttpApi, ``<Name>People`` on PeopleApi: the same method and path."""
    for logical_id, resource in TEMPLATE["Resources"].items():
        events = {name: event["Properties"] for name, event in (resource.get("Properties", {}).get("Events") or {}
                                                                ).items() if event.get("Type") == "HttpApi"}
        if logical_id == "WebAppFunction":  # the web app's own API (#32): test_the_web_app_is_its_own_api
            continue
        for name, event in events.items():
            assert event.get("ApiId") in ({"Ref": "HttpApi"}, {"Ref": "PeopleApi"}), (logical_id, name)
            if event["ApiId"] == {"Ref": "HttpApi"}:
                twin = events.get(f"{name}People")
                assert twin is not None, f"{logical_id}.{name} has no {name}People event on PeopleApi"
                assert (twin["ApiId"], twin["Method"], twin["Path"]) == (
                    {"Ref": "PeopleApi"}, event["Method"], event["Path"]), (logical_id, name)
            else:
                assert name.endswith("People") and name.removesuffix("People") in events, (logical_id, name)


def test_the_web_app_is_its_own_api_with_one_default_route_to_its_function() -> None:
    """The web app (#32): no authorizer on its API (a browser sends cookies, not a bearer token; the
    function requires a session), every request to WebAppFunction, and no other function on it."""
    on_web_app = [(logical_id, name, event["Properties"]) for logical_id, resource in TEMPLATE["Resources"].items()
                  for name, event in (resource.get("Properties", {}).get("Events") or {}).items()
                  if event.get("Type") == "HttpApi" and event["Properties"].get("ApiId") == {"Ref": "WebApp"}]
    assert on_web_app == [("WebAppFunction", "Pages", {"ApiId": {"Ref": "WebApp"}, "Method": "ANY",
                                                       "Path": "$default"})]
    assert set(TEMPLATE["Resources"]["WebAppFunction"]["Properties"]["Events"]) == {"Pages"}
    properties = TEMPLATE["Resources"]["WebApp"]["Properties"]
    assert "Auth" not in properties and "DefinitionBody" not in properties
    assert set(properties["DefaultRouteSettings"]) == {"ThrottlingBurstLimit", "ThrottlingRateLimit"}


def test_every_route_is_authorized_iam_on_one_api_and_jwt_on_the_other() -> None:
    for api, security in APIS.items():
        properties = TEMPLATE["Resources"][api]["Properties"]
        body_paths = properties["DefinitionBody"]["paths"]
        listed = {(method.upper(), path) for path, item in body_paths.items() for method in item}
        assert listed == documented(), api
        for path, item in body_paths.items():
            for method, operation in item.items():
                assert operation["security"] == security, (api, method, path)
        assert set(properties["DefaultRouteSettings"]) == {"ThrottlingBurstLimit", "ThrottlingRateLimit"}
    assert TEMPLATE["Resources"]["HttpApi"]["Properties"]["Auth"]["EnableIamAuthorizer"] is True
    assert set(TEMPLATE["Resources"]["PeopleApi"]["Properties"]["Auth"]["Authorizers"]) == {"PeopleAuthorizer"}


def test_the_document_offers_both_doors_on_every_route() -> None:
    assert DOCUMENT["security"] == [{"sigv4": []}, {"bearer": []}]
    for path, item in DOCUMENT["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                assert operation.get("security", DOCUMENT["security"]) == DOCUMENT["security"], (method, path)


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


# -- ETags and If-Match (issue #31) ---------------------------------------------------------------
def test_if_match_reads_a_strong_etag_star_or_refuses_naming_the_header() -> None:
    from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

    from missed_checks.api import etags

    app = APIGatewayHttpResolver()
    install_problems(app)

    @app.put("/things/<thing>")
    def edit(thing: str) -> dict[str, Any]:
        return {"if_match": etags.if_match(app)}

    def put(headers: dict[str, str]) -> tuple[int, Any]:
        answer = app.resolve({**event("PUT", "/things/a"), "headers": headers}, None)
        return answer["statusCode"], json.loads(answer["body"])

    assert put({"If-Match": '"7"'}) == (200, {"if_match": 7})
    assert put({"if-match": ' "0" '}) == (200, {"if_match": 0})
    assert put({"If-Match": "*"}) == (200, {"if_match": None})
    status, missing = put({})
    assert (status, missing["field"], missing["title"]) == (428, "If-Match", "Precondition required")
    assert "PUT /things/a" in missing["detail"]
    for bad in ('W/"7"', "7", '"7", "8"', '"seven"', '"-1"', '"01"', '""'):
        status, refused = put({"If-Match": bad})
        assert (status, refused["field"]) == (400, "If-Match"), bad
    assert etags.etag(12) == '"12"' and etags.revision_of(etags.etag(12)) == 12


def test_forbidden_stale_missing_and_conflict_answer_403_412_428_409() -> None:
    from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

    from missed_checks.api.etags import PreconditionRequired, tagged
    from missed_checks.errors import Conflict, Forbidden, NotFound, PreconditionFailed

    app = APIGatewayHttpResolver()
    install_problems(app)
    raised = {"forbidden": Forbidden("supervisor at north may not manage checklists"),
              "stale": PreconditionFailed("site north is at revision 4, not 3", current_etag='"4"'),
              "required": PreconditionRequired("send If-Match"), "conflict": Conflict("exists already"),
              "missing": NotFound("site east does not exist")}

    @app.post("/fail/<kind>")
    def fail(kind: str) -> Any:
        if kind == "created":
            return tagged({"site_id": "north"}, 1, status=201, location="/sites/north")
        raise raised[kind]

    answers = {kind: app.resolve(event("POST", f"/fail/{kind}"), None) for kind in (*raised, "created")}
    assert {kind: a["statusCode"] for kind, a in answers.items()} == {
        "forbidden": 403, "stale": 412, "required": 428, "conflict": 409, "missing": 404, "created": 201}
    stale = json.loads(answers["stale"]["body"])
    assert (stale["current_etag"], stale["field"], answers["stale"]["headers"]["ETag"]) == ('"4"', "If-Match", '"4"')
    assert json.loads(answers["forbidden"]["body"])["detail"] == "supervisor at north may not manage checklists"
    assert all(answers[k]["headers"]["Content-Type"] == "application/problem+json" for k in raised)
    created = answers["created"]
    assert (created["headers"]["ETag"], created["headers"]["Location"]) == ('"1"', "/sites/north")


def test_a_page_query_binds_its_cursor_to_its_filters() -> None:
    from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

    from missed_checks.api.http_api import page_answer, page_query

    app = APIGatewayHttpResolver()
    install_problems(app)

    @app.get("/things")
    def things() -> dict[str, Any]:
        query = page_query(app, "site_id", default=2)
        return {"position": query.position, "limit": query.limit,
                **page_answer([{"id": "b"}], "b" if query.position is None else None, query)}

    def get(query: dict[str, str]) -> tuple[int, Any]:
        answer = app.resolve({**event("GET", "/things"), "queryStringParameters": query,
                              "rawQueryString": "&".join(f"{k}={v}" for k, v in query.items())}, None)
        return answer["statusCode"], json.loads(answer["body"])

    status, first = get({"site_id": "north"})
    assert (status, first["position"], first["limit"], first["items"]) == (200, None, 2, [{"id": "b"}])
    status, second = get({"site_id": "north", "cursor": first["next_cursor"], "limit": "5"})
    assert (status, second["position"], second["limit"], second["next_cursor"]) == (200, "b", 5, None)
    refusals = {"other filter": {"site_id": "south", "cursor": first["next_cursor"]},
                "made up": {"cursor": "abc"}, "too large": {"limit": "1001"}, "unknown": {"sort": "name"}}
    answers = {name: get(query) for name, query in refusals.items()}
    assert {name: (status, body["field"]) for name, (status, body) in answers.items()} == {
        "other filter": (400, "cursor"), "made up": (400, "cursor"), "too large": (400, "limit"),
        "unknown": (400, "sort")}
