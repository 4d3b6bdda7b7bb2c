"""The HTTP API's functions as built, run by the emulator's Lambda runtime with API Gateway's payload
2.0 events (events/api_record_check.json), on the samples' checklist (tests/event_samples.py): a
record with its caller and idempotency key, the same event again, and the equipment's status."""

from __future__ import annotations

import json
from typing import Any

import pytest

from missed_checks import clock
from missed_checks.aws.table import ChecklistTable
from tests.event_samples import CHECKLIST, MONDAY_START, sample, seed_sample_checklist

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


def test_a_check_for_equipment_not_assigned_is_refused_by_the_function(stack: Any) -> None:
    event = sample("api_record_check.json")
    body = {**json.loads(event["body"]), "equipment_id": "fl-999"}
    status, problem = answer(stack, "ApiChecksFunction", {**event, "body": json.dumps(body), "headers": {
        "content-type": "application/json"}})
    assert (status, problem["errors"][0]["kind"]) == (422, "not_assigned")
