"""Every AWS call a function or the state machine makes is allowed by the role template.yaml
gives it, down to the resource.

The local runtime enforces IAM by action (moto's policy engine: a call the role does not allow
fails with AccessDenied, so the flow below succeeding proves the actions). moto does not compare
a statement's ``Resource`` with the request's for most services, so this test does: it records
every role-signed call while the real flow runs, derives the ARN the call acts on, and checks it
against the statements of the deployed role (as CloudFormation resolved them).
"""

from __future__ import annotations

import ast
import fnmatch
import json
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import unquote

import moto.scheduler.models
import pytest

from missed_checks import clock
from missed_checks.aws.table import ChecklistTable
from missed_checks.checklists.saving import save_checklist
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks_local.iam.enforcement import RoleCall, observed

ROOT = Path(__file__).resolve().parents[2]
RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"
CREATED = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
EVALUATE_AT = datetime(2026, 3, 2, 13, 30, tzinfo=UTC)


def stream_record(table: ChecklistTable, event_name: str, checklist_id: str) -> dict:
    sample = json.loads((ROOT / "events" / "schedule_sync.json").read_text())["Records"][0]
    from boto3.dynamodb.types import TypeSerializer

    item = table.get_checklist_item(checklist_id)
    sample["eventName"] = event_name
    sample["dynamodb"]["Keys"] = {"pk": {"S": f"CHECKLIST#{checklist_id}"}, "sk": {"S": "CHECKLIST"}}
    sample["dynamodb"]["NewImage"] = {k: TypeSerializer().serialize(v) for k, v in item.items()}
    return sample


def resource_of(call: RoleCall, stack) -> str | None:
    """The ARN a call acts on (None where the request names none, e.g. GetRecords' iterator)."""
    prefix = f"{stack.region}:{stack.account_id}"
    service = call.action.split(":", 1)[0]
    if service == "dynamodb":
        if "StreamArn" in call.body:
            return call.body["StreamArn"]
        if "TableName" in call.body:
            table = f"arn:aws:dynamodb:{prefix}:table/{call.body['TableName']}"
            return f"{table}/index/{call.body['IndexName']}" if "IndexName" in call.body else table
        return None
    if service == "scheduler" and call.path.startswith("/schedules/"):
        group = (call.query.get("groupName") or call.body.get("GroupName") or ["default"])
        group = group[0] if isinstance(group, list) else group
        return f"arn:aws:scheduler:{prefix}:schedule/{group}/{unquote(call.path.split('/')[2])}"
    if service == "events":
        buses = {entry.get("EventBusName", "default") for entry in call.body.get("Entries", [])}
        (bus,) = buses
        return bus if bus.startswith("arn:") else f"arn:aws:events:{prefix}:event-bus/{bus}"
    if service == "sqs" and "QueueUrl" in call.body:
        lid = stack.queue_logical_id(call.body["QueueUrl"])
        return stack.queue_arns[lid]
    if service == "lambda" and "/functions/" in call.path:
        return stack.function_by_name(unquote(call.path.split("/functions/")[1].split("/")[0])).arn
    return None


def statements(stack, role_arn: str) -> list[dict]:
    iam = stack.client("iam")
    name = role_arn.rsplit("/", 1)[1]
    found = []
    for policy in iam.list_role_policies(RoleName=name)["PolicyNames"]:
        document = iam.get_role_policy(RoleName=name, PolicyName=policy)["PolicyDocument"]
        if isinstance(document, str):  # moto answers with the Python repr of a CloudFormation-made document
            document = ast.literal_eval(document)
        found += document["Statement"] if isinstance(document["Statement"], list) else [document["Statement"]]
    return found


def allowed(call: RoleCall, resource: str | None, role_statements: list[dict]) -> bool:
    for statement in role_statements:
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        if statement["Effect"] == "Allow" and any(fnmatch.fnmatchcase(call.action, a) for a in actions):
            if resource is None or any(fnmatch.fnmatchcase(resource, r) for r in resources):
                return True
    return False


@pytest.mark.parametrize("fanned_out", [
    pytest.param(False, id="judged-by-the-plan"),
    pytest.param(True, id="fanned-out", marks=pytest.mark.stack_parameters(EquipmentPerTask="1")),
])
def test_every_call_the_functions_and_the_state_machine_make_is_allowed_by_their_role(local_stack, monkeypatch,
                                                                                      fanned_out):
    monkeypatch.setattr(moto.scheduler.models, "utcnow", lambda: CREATED.replace(tzinfo=None))
    calls: list[RoleCall] = []
    clock.set_source(lambda: EVALUATE_AT)
    try:
        with observed(calls.append):
            table = ChecklistTable(local_stack.table_name)
            save_checklist(table, "forklift", recurrence=RULE, window="PT8H", grace="PT30M", now=CREATED, by="tests")
            table.assign_equipment("forklift", ["fl-1", "fl-2"], at=CREATED, by="tests")
            table.record_performed_check(PerformedCheck("forklift", "fl-1", EVALUATE_AT - timedelta(hours=6)), CREATED)
            # schedule-sync: create, then an invalid edit (delete + dead letter).
            sync = local_stack.lambda_runtime
            assert sync.invoke("ScheduleSyncFunction", {"Records": [stream_record(table, "INSERT", "forklift")]}).ok
            save_checklist(table, "broken", recurrence="RRULE:FREQ=MINUTELY", timezone="UTC", now=CREATED,
                                validate=False, by="tests")
            assert sync.invoke("ScheduleSyncFunction", {"Records": [stream_record(table, "INSERT", "broken")]}).ok
            # The evaluation: plan, shards, close (announce, watermark).
            sfn = local_stack.client("stepfunctions")
            arn = sfn.start_execution(stateMachineArn=local_stack.state_machine_arn, name="permissions",
                                      input=json.dumps({"checklist_id": "forklift",
                                                        "instant": "2026-03-02T13:30:00Z"}))["executionArn"]
            deadline = time.monotonic() + 120
            while (status := sfn.describe_execution(executionArn=arn)["status"]) == "RUNNING":
                assert time.monotonic() < deadline, "the evaluation did not finish in 120 s"
                time.sleep(0.05)
            failures = [e for e in sfn.get_execution_history(executionArn=arn)["events"] if "Failed" in e["type"]]
            assert status == "SUCCEEDED", [f.get("taskFailedEventDetails") for f in failures[:1]]
    finally:
        clock.set_source(None)

    roles = local_stack.lambda_runtime.roles
    callers = {spec.role_arn: logical for logical, spec in local_stack.functions.items()}
    callers[local_stack.state_machine_role_arn] = "EvaluationStateMachine"
    made: dict[str, set[str]] = defaultdict(set)
    for call in calls:
        role_arn = roles.role_of(call.access_key_id)
        assert role_arn in callers, f"{call.action} signed by an unknown role {role_arn}"
        resource = resource_of(call, local_stack)
        made[callers[role_arn]].add(call.action)
        assert allowed(call, resource, statements(local_stack, role_arn)), (
            f"{callers[role_arn]} calls {call.action} on {resource} but its role does not allow it"
        )
    judges = {"RecordMissedChecksFunction", "CloseWindowFunction"} if fanned_out else set()
    assert set(made) == {"ScheduleSyncFunction", "PlanEvaluationFunction", "EvaluationStateMachine", *judges}
    judging = made["RecordMissedChecksFunction"] | made["CloseWindowFunction"] if fanned_out else made[
        "PlanEvaluationFunction"]
    assert {"dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem", "events:PutEvents"} <= judging
    assert {"scheduler:CreateSchedule", "scheduler:DeleteSchedule", "sqs:SendMessage"} <= made["ScheduleSyncFunction"]
    assert "lambda:InvokeFunction" in made["EvaluationStateMachine"]
