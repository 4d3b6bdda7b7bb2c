"""Every AWS action a handler really makes is granted by its function's role in template.yaml.

moto does not enforce IAM, so a missing permission would only show on AWS. Here every call the
handlers make (recorded per function while the real flow runs) is checked against the role the
template gives that function.
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import moto.scheduler.models
from cfnlint.decode import decode

from missed_checks import clock
from missed_checks.aws import clients
from missed_checks.aws.table import ChecklistTable
from missed_checks.performed_check import PerformedCheck

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE, _ = decode(str(ROOT / "template.yaml"))
RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"
CREATED = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
EVALUATE_AT = datetime(2026, 3, 2, 13, 30, tzinfo=UTC)


def granted_actions(function_logical_id: str) -> set[str]:
    role = TEMPLATE["Resources"][function_logical_id]["Properties"]["Role"]["Fn::GetAtt"][0]
    actions = set()
    for policy in TEMPLATE["Resources"][role]["Properties"]["Policies"]:
        for statement in policy["PolicyDocument"]["Statement"]:
            listed = statement["Action"]
            actions.update(listed if isinstance(listed, list) else [listed])
    return actions


def stream_record(table: ChecklistTable, event_name: str, checklist_id: str) -> dict:
    sample = json.loads((ROOT / "events" / "schedule_sync.json").read_text())["Records"][0]
    from boto3.dynamodb.types import TypeSerializer

    item = table.get_checklist_item(checklist_id)
    sample["eventName"] = event_name
    sample["dynamodb"]["Keys"] = {"pk": {"S": f"CHECKLIST#{checklist_id}"}, "sk": {"S": "CHECKLIST"}}
    sample["dynamodb"]["NewImage"] = {k: TypeSerializer().serialize(v) for k, v in item.items()}
    return sample


def test_every_call_the_handlers_make_is_allowed_by_their_role(local_stack, monkeypatch):
    monkeypatch.setattr(moto.scheduler.models, "utcnow", lambda: CREATED.replace(tzinfo=None))
    made: dict[str, set[str]] = defaultdict(set)
    names = {spec.name: logical for logical, spec in local_stack.functions.items()}

    def record(model, **_):
        function = names.get(os.environ.get("AWS_LAMBDA_FUNCTION_NAME", ""))
        if function:
            prefix = model.service_model.signing_name
            made[function].add(f"{prefix}:{model.name}")

    for service in ("dynamodb", "scheduler", "sqs", "events"):
        clients.client(service).meta.events.register(f"before-call.{service}", record)

    clock.set_source(lambda: EVALUATE_AT)
    try:
        table = ChecklistTable(local_stack.table_name)
        table.put_checklist("forklift", recurrence=RULE, window="PT8H", grace="PT30M", now=CREATED)
        table.assign_equipment("forklift", ["fl-1", "fl-2"], at=CREATED)
        table.record_performed_check(PerformedCheck("forklift", "fl-1", EVALUATE_AT - timedelta(hours=6)), CREATED)
        # schedule-sync: create, then an invalid edit (delete + dead letter), then delete.
        sync = local_stack.lambda_runtime
        assert sync.invoke("ScheduleSyncFunction", {"Records": [stream_record(table, "INSERT", "forklift")]}).ok
        table.put_checklist("broken", recurrence="RRULE:FREQ=MINUTELY", timezone="UTC", now=CREATED, validate=False)
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
        failures = [e for e in sfn.get_execution_history(executionArn=arn)["events"]
                    if "Failed" in e["type"]]
        assert status == "SUCCEEDED", [f.get("taskFailedEventDetails") for f in failures[:1]]
    finally:
        clock.set_source(None)

    assert set(made) == {"ScheduleSyncFunction", "PlanEvaluationFunction", "RecordMissedChecksFunction",
                         "CloseWindowFunction"}
    for function, actions in made.items():
        missing = actions - granted_actions(function)
        assert not missing, f"{function} calls {sorted(missing)} but its role does not allow them"
