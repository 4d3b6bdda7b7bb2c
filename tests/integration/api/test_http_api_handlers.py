"""The HTTP API's functions as built, run by the emulator's Lambda runtime with API Gateway's payload
2.0 events (events/api_record_check.json), on the samples' checklist (tests/event_samples.py): a
record with its caller and idempotency key, the same event again, and the equipment's status."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from missed_checks import clock
from missed_checks.aws.table import ChecklistTable
from tests.event_samples import (
    CHECKED,
    CHECKLIST,
    EQUIPMENT,
    MONDAY_EVALUATE_AT,
    MONDAY_START,
    sample,
    seed_sample_checklist,
)

NOW = MONDAY_START.replace(hour=6, minute=15)  # 07:15 in Berlin, the Monday window open


@pytest.fixture
def stack(local_stack: Any) -> Any:
    clock.set_source(lambda: NOW)
    seed_sample_checklist(ChecklistTable(local_stack.table_name))
    yield local_stack
    clock.set_source(None)


def answer(stack: Any, function: str, event: dict[str, Any]) -> tuple[int, Any]:
    invocation = stack.lambda_runtime.invoke(function, event)
    assert invocation.error is None, invocation.error
    return invocation.result["statusCode"], json.loads(invocation.result["body"])


def test_the_record_sample_records_once_with_its_caller(stack: Any) -> None:
    event = sample("api_record_check.json")
    status, recorded = answer(stack, "ApiChecksFunction", event)
    assert status == 201, recorded
    assert (recorded["written"], recorded["recorded_by"]) == (1, "arn:aws:iam::123456789012:user/yard-tablet-7")
    status, again = answer(stack, "ApiChecksFunction", event)
    assert (status, again["replayed"], again["recorded_at"]) == (200, True, recorded["recorded_at"])
    table = ChecklistTable(stack.table_name)
    stored = [c for c in table.performed_checks_of_checklist(CHECKLIST, MONDAY_START, NOW)
              if c.equipment_id == "fl-001"]
    assert [c.performed_at.isoformat() for c in stored] == ["2026-03-02T06:12:00+00:00"]
    status, state = answer(stack, "ApiStatusFunction", {
        **event, "routeKey": "GET /equipment/{equipment_id}/status", "rawPath": "/equipment/fl-001/status",
        "pathParameters": {"equipment_id": "fl-001"}, "body": None,
        "requestContext": {**event["requestContext"], "http": {**event["requestContext"]["http"], "method": "GET",
                                                               "path": "/equipment/fl-001/status"}}})
    assert status == 200 and state["checklists"][0]["state"] == "done"
    assert state["checklists"][0]["window"]["start"] == "2026-03-02T06:00:00+01:00"


def test_the_same_check_posted_again_without_a_key_by_someone_else_keeps_the_first_record(stack: Any) -> None:
    """Found by an adversarial user: a check posted again without an Idempotency-Key rewrote its
    recorded_by and recorded_at. It is a replay now: 200, nothing rewritten, the first record answered."""
    event = sample("api_record_check.json")
    status, first = answer(stack, "ApiChecksFunction", event)
    assert status == 201, first
    clock.set_source(lambda: NOW + timedelta(minutes=20))
    iam = event["requestContext"]["authorizer"]["iam"]
    other = {**event, "headers": {"content-type": "application/json"},
             "requestContext": {**event["requestContext"], "authorizer": {"iam": {
                 **iam, "userArn": "arn:aws:iam::123456789012:user/someone-else", "userId": "AIDAEXAMPLEOTHER"}}}}
    status, again = answer(stack, "ApiChecksFunction", other)
    assert (status, again["replayed"], again["written"], again["already_recorded"]) == (200, True, 0, 1), again
    assert (again["recorded_by"], again["recorded_at"]) == (first["recorded_by"], first["recorded_at"])
    assert again["checks"][0]["recorded_by"] == "arn:aws:iam::123456789012:user/yard-tablet-7"
    items = ChecklistTable(stack.table_name).checks_of_equipment("fl-001", MONDAY_START, NOW + timedelta(hours=1))
    assert [(i["recorded_by"], i["recorded_at"]) for i in items if i["type"] == "performed_check"] == [
        ("arn:aws:iam::123456789012:user/yard-tablet-7", first["recorded_at"])]


def test_a_check_for_equipment_not_assigned_is_refused_by_the_function(stack: Any) -> None:
    event = sample("api_record_check.json")
    body = {**json.loads(event["body"]), "equipment_id": "fl-999"}
    status, problem = answer(stack, "ApiChecksFunction", {**event, "body": json.dumps(body), "headers": {
        "content-type": "application/json"}})
    assert (status, problem["errors"][0]["kind"]) == (422, "not_assigned")


def report_event(query: dict[str, str], headers: dict[str, str] | None = None) -> dict[str, Any]:
    """``GET /report`` as API Gateway sends it (the record sample's caller and context)."""
    event = sample("api_record_check.json")
    return {**event, "routeKey": "GET /report", "rawPath": "/report", "body": None, "headers": headers or {},
            "rawQueryString": "&".join(f"{k}={v}" for k, v in query.items()), "queryStringParameters": query,
            "requestContext": {**event["requestContext"], "http": {**event["requestContext"]["http"], "method": "GET",
                                                                   "path": "/report"}}}


def test_the_report_function_answers_json_and_csv_with_the_commands_rows(stack: Any) -> None:
    from missed_checks.api.parameters import period_bound
    from missed_checks.reporting.fleet_report import build_report
    from missed_checks.reporting.report_formats import csv_text

    later = MONDAY_EVALUATE_AT + timedelta(hours=1)  # Monday's window closed, not judged yet: pending
    clock.set_source(lambda: later)
    query = {"from": "2026-03-02", "to": "2026-03-03", "tz": "Europe/Berlin", "checklist": CHECKLIST}
    status, document = answer(stack, "ApiReportFunction", report_event(query))
    expected = build_report(ChecklistTable(stack.table_name), period_bound("2026-03-02", "from", "Europe/Berlin"),
                            period_bound("2026-03-03", "to", "Europe/Berlin"), now=later, checklist_ids=[CHECKLIST],
                            detail=True)
    assert status == 200 and document["from"] == "2026-03-01T23:00:00Z"
    assert document["rows"] == [row.to_dict() for row in expected.rows]
    assert [(row["equipment_id"], row["on_time"], row["pending"]) for row in document["rows"]] == [
        (e, 1, 0) if e in CHECKED else (e, 0, 1) for e in EQUIPMENT]  # checked: on time; the others wait judging
    assert document["windows"] == [outcome.to_dict() for outcome in expected.outcomes or []]
    for event in (report_event(query, {"accept": "text/csv"}), report_event({**query, "format": "csv"})):
        invocation = stack.lambda_runtime.invoke("ApiReportFunction", event)
        assert invocation.result["statusCode"] == 200
        assert invocation.result["headers"]["Content-Type"] == "text/csv; charset=utf-8"
        assert invocation.result["body"] == csv_text(expected)


@pytest.mark.parametrize(("query", "status", "field"), [
    ({"to": "2026-03-03"}, 400, "from"),
    ({"from": "2026-03-02", "to": "2026-03-02"}, 400, "to"),
    ({"from": "2026-03-05", "to": "2026-03-02"}, 400, "to"),
    ({"from": "2025-01-01", "to": "2026-03-02"}, 400, "to"),
    ({"from": "2026-02-30", "to": "2026-03-02"}, 400, "from"),
    ({"from": "2026-03-02", "to": "2026-03-03", "tz": "Europe/Nowhere"}, 400, "tz"),
    ({"from": "2026-03-02", "to": "2026-03-03", "format": "xml"}, 400, "format"),
    ({"from": "2026-03-02", "to": "2026-03-03", "checklist": "no such"}, 400, "checklist"),
    ({"from": "2026-03-02", "to": "2026-03-03", "checklist": "no-such-checklist"}, 404, None),
])
def test_the_report_function_refuses_a_bad_range_naming_the_parameter(stack: Any, query: dict[str, str],
                                                                       status: int, field: str | None) -> None:
    answered, problem = answer(stack, "ApiReportFunction", report_event(query))
    assert (answered, problem["status"], problem.get("field")) == (status, status, field), problem


def test_the_missed_function_as_built_answers_the_fleet_in_pages_and_refuses_a_bad_cursor(stack: Any) -> None:
    """``GET /missed`` in its worker with its role: pages of ``limit`` followed by ``next_cursor``
    read every missed check once; a cursor handed to another range is a 400 naming it."""
    from tests.integration.api.test_http_api_paging import missed_event, seed

    seed(ChecklistTable(stack.table_name), ["a-list", "b-list", "c-list"], 2, ["E1", "E2"])
    query = {"from": "2026-02-01T00:00:00Z", "to": "2026-03-01T00:00:00Z", "limit": "5"}
    got, sizes, cursor = [], [], None
    while True:
        sent = {**query, **({"cursor": cursor} if cursor else {})}
        status, page = answer(stack, "ApiMissedFunction", missed_event(sent))
        assert status == 200, page
        got += [(m["checklist_id"], m["window_start"], m["equipment_id"]) for m in page["missed"]]
        sizes.append(len(page["missed"]))
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert sizes == [5, 5, 2] and len(set(got)) == 12 and got == sorted(got)
    status, problem = answer(stack, "ApiMissedFunction", missed_event(
        {**query, "from": "2026-02-02T00:00:00Z", "cursor": page_one_cursor(stack, query)}))
    assert (status, problem["field"]) == (400, "cursor"), problem


def page_one_cursor(stack: Any, query: dict[str, str]) -> str:
    from tests.integration.api.test_http_api_paging import missed_event

    return str(answer(stack, "ApiMissedFunction", missed_event(query))[1]["next_cursor"])
