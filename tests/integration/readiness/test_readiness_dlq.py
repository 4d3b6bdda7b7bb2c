"""The readiness DLQ (#33) through the command line: a stream batch the readiness function kept failing
on (a defect item a hand edit made unreadable) and a recheck firing it could not handle are listed,
and replayed by handing them back to the function once the cause is gone."""

from __future__ import annotations

import json

from missed_checks.aws.table import ManagementTable, keys, serialize
from missed_checks.checklists.saving import save_checklist
from missed_checks_local.runtime import LocalRuntime
from tests.integration.ops.ops_support import Cli

RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY"


def test_a_failed_batch_and_a_failed_recheck_are_listed_and_replayed(runtime: LocalRuntime, cli: Cli) -> None:
    now = runtime.clock.now()
    table = ManagementTable(runtime.stack.table_name, runtime.stack.client("dynamodb"))
    save_checklist(table, "forklift-daily", recurrence=RULE, window="PT8H", now=now, by="tests", pre_use=True)
    table.assign_equipment("forklift-daily", ["FL-1"], now, by="tests")
    broken = {**keys.defect_key("D-0000000000000001"), "type": "defect", "defect_id": "D-0000000000000001",
              "equipment_id": "FL-1", "status": "open", "found_at": "yesterday"}  # a hand edit gone wrong
    table.client.put_item(TableName=table.name, Item=serialize(broken))
    runtime.settle()
    [batch] = cli.ok("dlq", "list", "--queue", "readiness")["readiness"]
    assert batch["kind"] == "stream-batch" and "replay hands them back to readiness" in batch["summary"]
    kept = cli("dlq", "replay", "--queue", "readiness", "--format", "json")
    assert kept.code == 1 and "failed" in kept.json["results"][0]["detail"]  # still unreadable: it stays

    table.client.delete_item(TableName=table.name, Key=serialize(keys.defect_key("D-0000000000000001")))
    sqs = runtime.stack.client("sqs")
    sqs.send_message(QueueUrl=runtime.stack.outputs["ReadinessDeadLetterQueueUrl"],
                     MessageBody=json.dumps({"kind": "recheck", "equipment_id": "FL-1"}))
    listed = cli.ok("dlq", "list", "--queue", "readiness")["readiness"]
    assert sorted(letter["kind"] for letter in listed) == ["recheck", "stream-batch"]
    replayed = cli.ok("dlq", "replay", "--queue", "readiness")
    details = sorted(result["detail"] for result in replayed["results"])
    assert details[0].startswith("handled again: ") and details[1] == "rechecked FL-1: cleared"
    assert cli.ok("dlq", "list", "--queue", "readiness")["readiness"] == []
    assert table.readiness_record("FL-1") is not None
