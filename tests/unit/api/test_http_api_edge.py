"""The HTTP API's edge: what a function cannot keep is refused with a problem+json 400 (413 when too
large) naming the field, before any route's code reads the table; request bodies are closed, in the
OpenAPI document and in the code alike; query parameters are read by one function per kind, and a
"366-day" range means 366 days.

The functions run in this process (their resolvers, as test_http_api_contract does), with a table
that fails the test when it is read: every answer here is decided at the edge."""

from __future__ import annotations

import base64
import importlib
import json
import re
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from missed_checks.api.http_api import MAX_BODY_BYTES
from missed_checks.permissions.caller import Caller
from missed_checks.reporting import reading
from tests.unit.api.test_http_api_contract import DOCUMENT

CHECK = {"checklist_id": "forklift-daily", "equipment_id": "fl-001", "performed_at": "2026-03-02T06:12:00Z"}
DISMISSAL = {"checklist_id": "forklift-daily", "equipment_id": "fl-001", "window_start": "2026-03-02T05:00:00Z",
             "reason": "in the workshop"}
IAM = {"iam": {"userArn": "arn:aws:iam::123456789012:user/app"}}


def api_event(method: str, path: str, *, body: str | bytes | None = None, query: dict[str, str] | None = None,
              path_parameters: dict[str, str] | None = None) -> dict[str, Any]:
    """A payload 2.0 event as API Gateway sends it: a body that is not UTF-8 arrives base64-encoded."""
    encoded = isinstance(body, bytes)
    if isinstance(body, bytes):
        try:
            body, encoded = body.decode("utf-8"), False
        except UnicodeDecodeError:
            body = base64.b64encode(body).decode("ascii")
    event: dict[str, Any] = {
        "version": "2.0", "routeKey": f"{method} {path}", "rawPath": path,
        "rawQueryString": "&".join(f"{k}={v}" for k, v in (query or {}).items()),
        "headers": {"content-type": "application/json"},
        "requestContext": {"http": {"method": method, "path": path}, "stage": "$default", "authorizer": IAM},
        "isBase64Encoded": encoded}
    if body is not None:
        event["body"] = body
    if query is not None:
        event["queryStringParameters"] = query
    if path_parameters is not None:
        event["pathParameters"] = path_parameters
    return event


@pytest.fixture
def functions(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, ModuleType]]:
    monkeypatch.setenv("TABLE_NAME", "edge-test")
    from functions.api_checks import app as checks
    from functions.api_manage import app as manage
    from functions.api_missed import app as missed
    from functions.api_report import app as report
    from functions.api_status import app as status
    from missed_checks.api.routes import context

    modules = {"checks": checks, "missed": missed, "report": report, "status": status, "manage": manage}

    def no_table() -> None:
        raise AssertionError("the table was read for a request the edge should have refused")

    for module in modules.values():
        if hasattr(module, "table"):
            monkeypatch.setattr(module, "table", no_table)
    for module in _route_modules(manage) | {context}:
        if hasattr(module, "table"):  # the management routes' table (and the caller's grant) read through context
            monkeypatch.setattr(module, "table", no_table)
    yield modules


def _route_modules(manage: ModuleType) -> set[ModuleType]:
    """The modules of the management function's routers (its ROUTERS), where each route's function is."""
    return {sys.modules[function.__module__] for router in manage.ROUTERS for function in router._routes.values()}


def module_of_path(path: str) -> str:
    """Which function serves a documented path (the six routes before #31; the rest are management's)."""
    return {"/checks": "checks", "/checks/batch": "checks", "/missed": "missed", "/missed/dismissals": "missed",
            "/report": "report", "/equipment/{equipment_id}/status": "status"}.get(path, "manage")


def concrete(path: str) -> tuple[str, dict[str, str] | None]:
    """A documented path with each parameter filled in, and the path parameters."""
    names = re.findall(r"\{(\w+)\}", path)
    values = {name: "fl-001" if name == "equipment_id" else f"{name.split('_')[0]}-1" for name in names}
    return re.sub(r"\{(\w+)\}", lambda m: values[m.group(1)], path), values or None


def answer(module: ModuleType, event: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    result = module.app.resolve(event, None)
    assert result["headers"]["Content-Type"] == "application/problem+json", result
    return result["statusCode"], json.loads(result["body"])


# -- what the edge cannot parse --------------------------------------------------------------------
UNPARSEABLE = {
    "not UTF-8": b'{"checklist_id": "Pr\xfcfung"}',
    "nested 100,000 deep": "[" * 100_000 + "]" * 100_000,
    "nested 100,000 deep in an object": '{"checklist_id": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "a lone surrogate": '{"checklist_id": "forklift-daily", "equipment_id": "\\ud800", "performed_at": "x"}',
    "NaN": '{"checks": NaN}',
    "an infinite number": '{"checks": 1e999}',
    "a member twice": json.dumps(CHECK)[:-1] + ', "checklist_id": "other"}',
    "a byte-order mark": "\ufeff" + json.dumps(CHECK),
    "not JSON": "{",
}


@pytest.mark.parametrize("body", UNPARSEABLE.values(), ids=list(UNPARSEABLE))
@pytest.mark.parametrize("route", [("checks", "/checks"), ("checks", "/checks/batch"),
                                   ("missed", "/missed/dismissals")], ids=lambda r: r[1])
def test_a_body_the_api_cannot_parse_is_a_400_before_any_route_runs(functions: dict[str, ModuleType],
                                                                    route: tuple[str, str], body: str | bytes) -> None:
    status, problem = answer(functions[route[0]], api_event("POST", route[1], body=body))
    assert status == 400, problem
    assert problem["field"] in ("body", "checklist_id"), problem  # a member twice: the member


def test_a_body_that_is_not_utf8_says_which_byte(functions: dict[str, ModuleType]) -> None:
    status, problem = answer(functions["checks"], api_event("POST", "/checks", body=b'{"a": "\xfc"}'))
    assert (status, problem["field"]) == (400, "body")
    assert "not UTF-8 (byte 0xfc at offset 7)" in problem["detail"]


@pytest.mark.parametrize("encoded", [False, True])
def test_a_body_too_large_is_413_whatever_its_encoding(functions: dict[str, ModuleType], encoded: bool) -> None:
    body = b'{"checks": ["' + b"x" * MAX_BODY_BYTES + b'"]}'
    event = api_event("POST", "/checks/batch", body=body + (b"\xff" if encoded else b""))
    status, problem = answer(functions["checks"], event)
    assert (status, problem["field"]) == (413, "body")


def test_a_get_with_a_body_is_refused(functions: dict[str, ModuleType]) -> None:
    status, problem = answer(functions["report"], api_event("GET", "/report", body="{}",
                                                            query={"from": "2026-03-01", "to": "2026-03-02"}))
    assert (status, problem["field"]) == (400, "body")


# -- query parameters: one function per kind --------------------------------------------------------
REPORT = {"from": "2026-03-02", "to": "2026-03-03"}


@pytest.mark.parametrize(("query", "field"), [
    ({**REPORT, "tz": "Europe"}, "tz"),
    ({**REPORT, "tz": "E" * 10_000}, "tz"),
    ({**REPORT, "tz": ""}, "tz"),
    ({**REPORT, "tz": "UTC\n"}, "tz"),
    ({**REPORT, "checklist": "forklift-daily\n"}, "checklist"),
    ({**REPORT, "checklist": "a, b"}, "checklist"),
    ({**REPORT, "equipment": "fl-001,"}, "equipment"),
    ({**REPORT, "format": "json,csv"}, "format"),
    ({**REPORT, "checklists": "forklift-daily"}, "checklists"),
    ({"from": "2026-03-29", "to": "2027-03-31", "tz": "Europe/Berlin"}, "to"),  # 367 days, one spring-forward
    ({"from": "2026-01-01T00:00:00Z", "to": "2027-01-02T23:59:59Z"}, "to"),  # 366 days and 23:59:59
])
def test_the_report_refuses_a_bad_parameter_naming_it(functions: dict[str, ModuleType], query: dict[str, str],
                                                      field: str) -> None:
    status, problem = answer(functions["report"], api_event("GET", "/report", query=query))
    assert (status, problem["field"]) == (400, field), problem


@pytest.mark.parametrize(("query", "field"), [
    ({"from": "2026-01-01T00:00:00Z", "to": "2027-01-02T12:00:00Z"}, "to"),  # 366.5 days
    ({"from": "2026-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z", "checklist_id": "forklift-daily\n"},
     "checklist_id"),
    ({"from": "2026-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z", "equipment_id": "fl-001"}, "equipment_id"),
    ({"from": "2026-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z", "limit": "1001"}, "limit"),
    ({"from": "2026-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z", "limit": "0"}, "limit"),
    ({"from": "2026-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z", "cursor": "e30"}, "cursor"),  # {}
    ({"from": "2026-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z", "cursor": "a+b/c="}, "cursor"),
])
def test_the_missed_list_refuses_a_bad_parameter_naming_it(functions: dict[str, ModuleType], query: dict[str, str],
                                                           field: str) -> None:
    status, problem = answer(functions["missed"], api_event("GET", "/missed", query=query))
    assert (status, problem["field"]) == (400, field), problem


def test_a_range_of_exactly_366_days_is_one_the_report_reads(functions: dict[str, ModuleType],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[Any] = []

    def build_report(_table: Any, start: Any, end: Any, **_kwargs: Any) -> Any:
        read.append((start, end))
        raise LookupError("read")

    monkeypatch.setattr(reading, "build_report", build_report)  # the scoped use case GET /report calls
    monkeypatch.setattr(functions["report"], "table", lambda: None)
    # an IAM caller without a grant record (#31: scoped callers are tests/unit/api/test_scoped_routes.py's)
    monkeypatch.setattr(functions["report"], "caller_of", lambda _event, _grants: Caller.operator("iam"))
    for query in ({"from": "2026-03-29", "to": "2027-03-30", "tz": "Europe/Berlin"},
                  {"from": "2026-01-01", "to": "2027-01-02"}):
        with pytest.raises(LookupError):
            functions["report"].app.resolve(api_event("GET", "/report", query=query), None)
    assert [(end - start).total_seconds() / 3600 for start, end in read] == [366 * 24 - 1, 366 * 24]


def test_the_status_route_refuses_an_id_with_a_trailing_newline(functions: dict[str, ModuleType]) -> None:
    status, problem = answer(functions["status"], api_event("GET", "/equipment/fl-001%0A/status",
                                                            path_parameters={"equipment_id": "fl-001%0A"}))
    assert (status, problem["field"]) == (400, "equipment_id"), problem


def test_a_check_whose_id_ends_in_a_newline_is_malformed(functions: dict[str, ModuleType]) -> None:
    status, problem = answer(functions["checks"], api_event("POST", "/checks", body=json.dumps(
        {**CHECK, "checklist_id": "forklift-daily\n"})))
    assert (status, problem["field"]) == (400, "checklist_id"), problem


def test_every_routes_query_parameters_are_the_documents_and_a_page_is_bounded_as_documented(
        functions: dict[str, ModuleType]) -> None:
    """What each route takes (as its refusal of an unknown parameter lists it) is what the OpenAPI
    document lists; the page size's default and maximum are the function's."""
    from functions.api_missed.app import DEFAULT_PAGE, MAX_PAGE

    for path, item in DOCUMENT["paths"].items():
        for method, operation in item.items():
            if method == "parameters":
                continue
            documented = set()
            for given in [*item.get("parameters", []), *operation.get("parameters", [])]:
                parameter = DOCUMENT["components"]["parameters"][given["$ref"].rsplit("/", 1)[1]] \
                    if "$ref" in given else given
                if parameter["in"] == "query":
                    documented.add(parameter["name"])
            filled, path_parameters = concrete(path)
            event = api_event(method.upper(), filled, query={"zz-unknown": "1"}, path_parameters=path_parameters)
            status, problem = answer(functions[module_of_path(path)], event)
            assert (status, problem["field"]) == (400, "zz-unknown"), (path, problem)
            takes = problem["detail"].rsplit("it takes ", 1)[1]
            assert (set() if takes == "none" else set(takes.split(", "))) == documented, (method, path, takes)
    limit = DOCUMENT["components"]["parameters"]["Limit"]["schema"]
    assert (limit["default"], limit["maximum"]) == (DEFAULT_PAGE, MAX_PAGE)
    from missed_checks.api import http_api
    from missed_checks.paging import MAX_PAGE as MAX_MANAGED_PAGE

    page_limit = DOCUMENT["components"]["parameters"]["PageLimit"]["schema"]
    assert (page_limit["default"], page_limit["maximum"]) == (http_api.DEFAULT_PAGE, MAX_MANAGED_PAGE)
    missed = DOCUMENT["paths"]["/missed"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert missed["properties"]["missed"]["maxItems"] == MAX_PAGE


# -- closed request bodies: the OpenAPI document and the code agree -----------------------------------
def _resolved(schema: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return dict(DOCUMENT["components"]["schemas"][name])
    return schema


def request_bodies() -> dict[tuple[str, str], dict[str, Any]]:
    found = {}
    for path, item in DOCUMENT["paths"].items():
        for method, operation in item.items():
            body = None if method == "parameters" else operation.get("requestBody")
            if body:
                found[(method.upper(), path)] = _resolved(body["content"]["application/json"]["schema"])
    return found


def code_fields() -> dict[tuple[str, str], tuple[str, ...]]:
    """What the functions take, as they declare it."""
    from functions.api_checks.app import BATCH_FIELDS
    from functions.api_missed.app import DISMISSAL_FIELDS
    from missed_checks.api import routes
    from missed_checks.performed_checks.recording import CHECK_FIELDS

    fields = {("POST", "/checks"): CHECK_FIELDS, ("POST", "/checks/batch"): BATCH_FIELDS,
              ("POST", "/missed/dismissals"): DISMISSAL_FIELDS}
    declared = {  # the management routes' bodies: (module of missed_checks.api.routes, its constant)
        ("POST", "/sites"): ("sites", "CREATE_FIELDS"), ("PUT", "/sites/{site_id}"): ("sites", "EDIT_FIELDS"),
        ("POST", "/equipment"): ("equipment", "REGISTER_FIELDS"),
        ("PUT", "/equipment/{equipment_id}"): ("equipment", "EDIT_FIELDS"),
        ("PUT", "/grants/{principal}"): ("grants", "PUT_FIELDS"),
        ("POST", "/checklists"): ("checklists", "CREATE_FIELDS"),
        ("PUT", "/checklists/{checklist_id}"): ("checklists", "EDIT_FIELDS"),
        ("POST", "/checklists/preview"): ("checklists", "PREVIEW_FIELDS"),
        ("POST", "/checklists/{checklist_id}/equipment"): ("checklists", "ASSIGN_FIELDS"),
        ("PUT", "/calendars/{calendar_id}"): ("calendars", "PUT_FIELDS"),
        ("POST", "/equipment/{equipment_id}/out-of-service"): ("out_of_service", "PERIOD_FIELDS"),
        ("POST", "/equipment/{equipment_id}/back-in-service"): ("out_of_service", "BACK_FIELDS"),
        ("POST", "/subscriptions"): ("subscriptions", "SUBSCRIPTION_FIELDS"),
        ("POST", "/defects/{defect_id}/resolve"): ("defects", "RESOLVE_FIELDS"),
    }
    for route, (module, constant) in declared.items():
        if route in request_bodies():
            fields[route] = getattr(importlib.import_module(f"{routes.__name__}.{module}"), constant)
    return fields


def test_every_request_body_schema_is_closed_and_lists_what_the_code_takes(functions: dict[str, ModuleType]) -> None:
    bodies = request_bodies()
    assert set(bodies) == set(code_fields())
    for route, schema in bodies.items():
        assert schema.get("additionalProperties") is False, f"{route}: additionalProperties: false"
        assert set(schema["properties"]) == set(code_fields()[route]), route
        assert set(schema.get("required", [])) <= set(schema["properties"]), route


VALID_BODIES = {("POST", "/checks"): CHECK, ("POST", "/checks/batch"): {"checks": [CHECK]},
                ("POST", "/missed/dismissals"): DISMISSAL}
MODULE_OF = {"/checks": "checks", "/checks/batch": "checks", "/missed/dismissals": "missed"}


@pytest.mark.parametrize("extra", ["by", "dismissed_at", "recorded_by", "Checklist_Id"])
@pytest.mark.parametrize("route", list(VALID_BODIES), ids=lambda r: r[1])
def test_a_field_a_body_does_not_take_is_refused_naming_it(functions: dict[str, ModuleType], route: tuple[str, str],
                                                           extra: str) -> None:
    body = {**VALID_BODIES[route], extra: "x"}
    status, problem = answer(functions[MODULE_OF[route[1]]], api_event(*route, body=json.dumps(body)))
    assert status == 400 and problem["field"] == extra, problem


def test_a_query_parameter_a_post_does_not_take_is_refused(functions: dict[str, ModuleType]) -> None:
    status, problem = answer(functions["missed"], api_event("POST", "/missed/dismissals", body=json.dumps(DISMISSAL),
                                                            query={"by": "someone-else"}))
    assert (status, problem["field"]) == (400, "by"), problem


def test_the_documents_id_patterns_are_the_codes() -> None:
    from missed_checks.identifiers import KINDS

    schemas = DOCUMENT["components"]["schemas"]
    header = DOCUMENT["components"]["parameters"]["IdempotencyKey"]["schema"]
    for documented, kind in ((schemas["ChecklistId"], "checklist id"), (schemas["EquipmentId"], "equipment id"),
                             (header, "idempotency key")):
        assert documented["pattern"] == f"^{KINDS[kind].pattern.pattern}$", kind


def test_the_depth_scan_is_linear_and_skips_brackets_and_escaped_quotes_in_strings() -> None:
    """A body's nesting is measured in one pass: brackets inside strings (escaped quotes included)
    do not count, and an unterminated string of escaped quotes (a regex over strings took 12 s for
    96 KB of it, a Lambda's whole timeout for 256 KB) is scanned at once and refused as not JSON."""
    from missed_checks.api.http_api import MAX_JSON_DEPTH, _depth_of_text
    from missed_checks.errors import InvalidInput

    _depth_of_text('{"a": "[[[[[[[[[[\\"{{{{{{{{{{\\\\", "b": [[1]]}')  # 2 levels; the rest is inside strings
    with pytest.raises(InvalidInput, match="nested deeper"):
        _depth_of_text("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1))
    with pytest.raises(InvalidInput, match="nested deeper"):
        _depth_of_text('{"a": "\\\\", "b": ' + "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH + "}")
    hostile = '{"a":"' + '\\"' * 120_000
    _depth_of_text(hostile)  # not deeper than 1: json.loads then says it is not JSON
