"""Every sample in ``events/`` parses with its contract and runs through its real, built handler on the
embedded stack, for a checklist set up so the samples judge something real; each answer parses
with the handler's output contract."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from typing import Any

import pytest

from missed_checks import clock
from missed_checks.aws.table import ChecklistTable
from missed_checks.checklists.checklist import JudgedBy
from missed_checks.checklists.saving import save_checklist
from missed_checks.contracts import (
    BatchCounts,
    CloseWindowInput,
    CloseWindowOutput,
    ExecutionInput,
    PlanEvaluationInput,
    PlanEvaluationOutput,
    RecordMissedChecksInput,
    parse,
)
from tests.event_samples import (
    CHECKED,
    CHECKLIST,
    EQUIPMENT,
    EVENTS,
    MONDAY_EVALUATE_AT,
    RULE,
    sample,
    seed_sample_checklist,
)


@pytest.fixture
def checklist(local_stack):
    clock.set_source(lambda: MONDAY_EVALUATE_AT)
    table = ChecklistTable(local_stack.table_name)
    seed_sample_checklist(table)
    yield local_stack, table
    clock.set_source(None)


def invoke(stack, function: str, event: Any) -> Any:
    invocation = stack.lambda_runtime.invoke(function, event)
    assert invocation.error is None, invocation.error
    return invocation.result


def test_the_plan_evaluation_sample_judges_the_window_due(checklist):
    stack, _ = checklist
    event = parse(PlanEvaluationInput, sample("plan_evaluation.json"))
    output = parse(PlanEvaluationOutput, invoke(stack, "PlanEvaluationFunction", sample("plan_evaluation.json")))
    assert output.outcome.value == "EVALUATE" and output.checklist_id == event.input.checklist_id
    assert [(w.window_start, w.missed) for w in output.judged] == [("2026-03-02T05:00:00Z", len(EQUIPMENT) // 2)]


def test_the_record_and_close_samples_judge_and_close_a_fanned_out_window(checklist):
    stack, table = checklist
    task = parse(RecordMissedChecksInput, sample("record_missed_checks.json"))
    table.open_window(CHECKLIST, task.window, JudgedBy(RULE))
    counts = [parse(BatchCounts, invoke(stack, "RecordMissedChecksFunction", {**sample("record_missed_checks.json"),
                                                                              "shards": shards}))
              for shards in (list(range(8)), list(range(8, 16)))]
    assert counts[0].shards == task.shards
    assert sum(c.counted for c in counts) == len(EQUIPMENT) and sum(c.missed for c in counts) == len(EQUIPMENT) // 2

    parse(CloseWindowInput, sample("close_window.json"))
    closed = parse(CloseWindowOutput, invoke(stack, "CloseWindowFunction", sample("close_window.json")))
    assert closed.announced and closed.announced_now and closed.watermark_advanced
    assert closed.missed == sum(b["missed"] for b in sample("close_window.json")["batches"]) == len(EQUIPMENT) // 2


def test_the_evaluation_input_sample_starts_an_execution_that_succeeds(checklist):
    stack, _ = checklist
    given = sample("evaluation_input.json")
    parse(ExecutionInput, given)
    sfn = stack.client("stepfunctions")
    arn = sfn.start_execution(stateMachineArn=stack.state_machine_arn, name="sample",
                              input=json.dumps(given))["executionArn"]
    deadline = time.monotonic() + 120
    while (described := sfn.describe_execution(executionArn=arn))["status"] == "RUNNING":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert described["status"] == "SUCCEEDED", described
    assert parse(PlanEvaluationOutput, json.loads(described["output"])).judged


def test_the_schedule_sync_sample_syncs_the_checklist(checklist):
    stack, _ = checklist
    result = invoke(stack, "ScheduleSyncFunction", sample("schedule_sync.json"))
    assert result == {"batchItemFailures": []}
    schedules = stack.client("scheduler").list_schedules(GroupName=stack.outputs["ScheduleGroupName"])["Schedules"]
    assert [s["Name"] for s in schedules] == [CHECKLIST]


def test_the_audit_sample_records_the_checklists_creation_once(checklist):
    """#31: events/audit.json (the checklist created by manager-north at site north) is one audit
    entry, written once however often the record is delivered."""
    from missed_checks.aws.table.audit import AuditItems

    stack, _ = checklist
    for _ in range(2):
        assert invoke(stack, "AuditFunction", sample("audit.json")) == {"batchItemFailures": []}
    entries = AuditItems(stack.table_name, stack.client("dynamodb")).object_trail("checklist", CHECKLIST, None, 10)
    assert [(e.action.value, e.changed_by, e.site_id, e.before, e.after["name"]) for e in entries.items] == [
        ("created", "manager-north", "north", None, "Forklift pre-use check")]


def test_the_readiness_samples_store_and_announce_the_equipments_readiness_once(checklist):
    """#33: events/readiness.json (fl-000 assigned) and events/readiness_recheck.json (its recheck
    firing) keep one state item, at its first change, however often either is delivered."""
    from missed_checks.aws.table.readiness import ReadinessItems

    stack, _ = checklist
    for _ in range(2):
        assert invoke(stack, "ReadinessFunction", sample("readiness.json")) == {"batchItemFailures": []}
        assert invoke(stack, "ReadinessFunction", sample("readiness_recheck.json")) == {
            "equipment_id": "fl-000", "readiness": "cleared"}  # no pre-use checklist: cleared
    record = ReadinessItems(stack.table_name, stack.client("dynamodb")).readiness_record("fl-000")
    assert record is not None and (record.sequence, record.announced, record.previous) == (1, True, None)


def test_a_malformed_task_payload_fails_with_invalid_input_naming_the_field(checklist):
    stack, _ = checklist
    invocation = stack.lambda_runtime.invoke("RecordMissedChecksFunction",
                                             {**sample("record_missed_checks.json"), "shards": [0, True]})
    assert invocation.error["errorType"] == "InvalidInput"
    assert invocation.error["errorMessage"].startswith("shards[1]: ")


def test_the_notifier_samples_send_the_mondays_reminder_and_missed_alert_once(checklist):
    """#18: events/notify_reminder.json (11:00Z, two hours before the Monday window closes: nothing
    half the fleet is checked by then) and events/notify_window_judged.json (after the window was judged)."""
    from missed_checks.aws.table.notifications import NotificationItems
    from missed_checks.notifications.notification import NotifySettings

    stack, table = checklist
    save_checklist(table, CHECKLIST, recurrence=RULE, window="PT8H", grace="PT30M", now=MONDAY_EVALUATE_AT,
                        notify=NotifySettings(to=("crew@example.com",), remind_before=("PT2H",)), by="tests")
    reminded = invoke(stack, "NotifyFunction", sample("notify_reminder.json"))
    assert (reminded["sent"], reminded["failed"]) == (1, 0), reminded
    invoke(stack, "PlanEvaluationFunction", sample("plan_evaluation.json"))  # judges the Monday window
    alerted = invoke(stack, "NotifyFunction", sample("notify_window_judged.json"))
    assert (alerted["sent"], alerted["failed"]) == (1, 0), alerted
    again = invoke(stack, "NotifyFunction", sample("notify_window_judged.json"))  # a duplicate delivery
    assert (again["sent"], again["already_sent"]) == (0, 1), again
    records = sorted(NotificationItems(stack.table_name).notifications(MONDAY_EVALUATE_AT - timedelta(days=1),
                                                                       MONDAY_EVALUATE_AT + timedelta(days=1)),
                     key=lambda record: str(record["kind"]))
    assert [(r["kind"], r["status"], len(r["equipment"])) for r in records] == [
        ("missed", "SENT", len(EQUIPMENT) // 2), ("reminder", "SENT", len(EQUIPMENT) // 2)]


FUNCTION_SAMPLES = {
    "ScheduleSyncFunction": ["schedule_sync.json"],
    "AuditFunction": ["audit.json"],  # the audit trail (#31)
    "ReadinessFunction": ["readiness.json", "readiness_recheck.json"],  # readiness (#33)
    "PlanEvaluationFunction": ["plan_evaluation.json"],
    "RecordMissedChecksFunction": ["record_missed_checks.json"],
    "CloseWindowFunction": ["close_window.json"],
    "NotifyFunction": ["notify_reminder.json", "notify_window_judged.json"],
    "DigestFunction": ["digest.json"],
    "ApiChecksFunction": ["api_record_check.json"],
    "ApiStatusFunction": ["api_equipment_status.json"],
    "ApiMissedFunction": ["api_missed.json"],
    "ApiReportFunction": ["api_report.json"],
    "ApiManageFunction": ["api_manage_me.json"],
    "WebAppFunction": ["webapp_sign_in.json"],  # the web app (#32)
}
"""Each function's samples in ``events/`` (README: "sample events for every function")."""


def test_every_function_of_the_template_has_a_sample_event(local_stack):
    assert set(FUNCTION_SAMPLES) == set(local_stack.functions)
    assert {name for names in FUNCTION_SAMPLES.values() for name in names} | {"evaluation_input.json"} == {
        path.name for path in EVENTS.glob("*.json")}


def _answer(stack, function: str, name: str) -> tuple[int, Any]:
    result = invoke(stack, function, sample(name))
    return result["statusCode"], json.loads(result["body"])


def test_the_api_read_samples_answer_the_mondays_status_missed_checks_and_report(checklist):
    """The three read routes' samples, after the Monday window was judged: fl-001 was not checked
    (its status says missed), the six unchecked are the missed checks, the report counts them."""
    stack, _ = checklist
    invoke(stack, "PlanEvaluationFunction", sample("plan_evaluation.json"))  # judges the Monday window
    status, equipment = _answer(stack, "ApiStatusFunction", "api_equipment_status.json")
    assert status == 200 and equipment["equipment_id"] == "fl-001", equipment
    assert [c["checklist_id"] for c in equipment["checklists"]] == [CHECKLIST]
    # its live readiness (#33): the sample's checklist is no pre-use checklist, so nothing is asked
    assert equipment["readiness"] == {
        "equipment_id": "fl-001", "site_id": None, "state": "cleared", "since": None,
        "reason": "cleared to operate: no open defect and no pre-use check due", "open_defects": [],
        "unchecked_checklists": [], "out_of_service_until": None, "next_change_at": None}
    status, missed = _answer(stack, "ApiMissedFunction", "api_missed.json")
    assert status == 200, missed
    assert sorted(m["equipment_id"] for m in missed["missed"]) == [e for e in EQUIPMENT if e not in CHECKED]
    status, report = _answer(stack, "ApiReportFunction", "api_report.json")
    assert status == 200, report
    assert sum(row["missed"] for row in report["rows"]) == len(EQUIPMENT) - len(CHECKED)
    assert sum(row["on_time"] for row in report["rows"]) == len(CHECKED)


def test_the_web_app_sample_is_its_sign_in_page_over_https(local_stack):
    """The web app's sample (#32), as its HTTP API hands ``GET /sign-in`` over HTTPS: the page with its
    form and the sign-in token's cookie, ``Secure``; nothing read or written (no session needed)."""
    result = invoke(local_stack, "WebAppFunction", sample("webapp_sign_in.json"))
    assert result["statusCode"] == 200 and result["headers"]["Content-Type"] == "text/html; charset=utf-8"
    assert '<form class="sign-in" method="post" action="/sign-in"' in result["body"]
    assert 'name="next" value="/record/fl-001"' in result["body"]
    assert [c.split("=")[0] for c in result["cookies"]] == ["mc_signin"] and "Secure" in result["cookies"][0]
    assert result["headers"]["Content-Security-Policy"].startswith("default-src 'self'")


def test_the_management_sample_is_a_person_with_their_roles_by_site(local_stack):
    """``GET /me`` as PeopleApi hands it over (a Cognito access token's claims, groups as API Gateway
    renders a list claim): the person and the roles their groups give, nothing read but their grant."""
    status, me = _answer(local_stack, "ApiManageFunction", "api_manage_me.json")
    assert status == 200, me
    assert me["principal"] == "manager-north" and (me["admin"], me["unscoped"]) == (False, False)
    assert me["roles"] == {"north": "site_manager", "south": "auditor"}
    assert "manage" in me["actions"]["north"] and "manage" not in me["actions"]["south"]
