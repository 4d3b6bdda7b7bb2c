"""Readiness (#33), end to end on the local stack: a subscriber's EventBridge rule receives the
``Equipment readiness changed`` event once per change, and nothing when a stream record is delivered
again or a recheck finds nothing changed; a defect tells the checklist's people once.

The timeline (UTC; Berlin is UTC+1): ``forklift-daily`` is a pre-use checklist (06:00-14:00 Berlin,
05:00-13:00Z) with a critical item "Brakes work"; FL-1 is assigned on Monday 2 March at 04:00Z.

* 04:00Z, assigned before its first window: ``cleared`` (nothing is asked yet), recheck at 05:00Z;
* 05:00Z, the window opens (the recheck schedule fires): ``unchecked``;
* 05:42Z, a check fails the brakes: ``not_cleared`` and defect D-..., the crew is told once;
* 06:10Z, a supervisor resolves it: the window still has no passing check, ``unchecked``;
* 06:20Z, a passing check: ``cleared``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from missed_checks.aws.table import ManagementTable
from missed_checks.checklists.check_item import parse_items
from missed_checks.checklists.saving import save_checklist
from missed_checks.defects.resolving import resolve_defect
from missed_checks.notifications.notification import NotifySettings
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks.performed_checks.recording import Row, record_checks
from missed_checks.permissions.caller import Caller
from missed_checks.readiness.watching import recheck_schedule_name
from missed_checks_local.runtime import LocalRuntime

pytestmark = [pytest.mark.e2e, pytest.mark.filterwarnings("ignore:No application metrics to publish:UserWarning")]

RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY"
ITEMS = parse_items([{"id": "brakes", "label": "Brakes work", "kind": "pass_fail", "critical": True}])
START = datetime(2026, 3, 2, 4, 0, tzinfo=UTC)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def subscribe(runtime: LocalRuntime, name: str, pattern: dict[str, Any]) -> str:
    """An SQS queue subscribed to the stack's bus with a rule, as a customer's interlock would: its URL."""
    sqs, events = runtime.stack.client("sqs"), runtime.stack.client("events")
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    bus = runtime.stack.outputs["EventBusName"]
    events.put_rule(Name=name, EventBusName=bus, EventPattern=json.dumps(pattern))
    events.put_targets(Rule=name, EventBusName=bus, Targets=[{"Id": "subscriber", "Arn": arn}])
    return url


def received(runtime: LocalRuntime, url: str) -> list[dict[str, Any]]:
    """The events delivered since the last call (consumed), whole."""
    sqs, found = runtime.stack.client("sqs"), []
    while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
        found += [json.loads(m["Body"]) for m in messages]
        sqs.delete_message_batch(QueueUrl=url, Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]}
                                                        for i, m in enumerate(messages)])
    return found


def changes(runtime: LocalRuntime, url: str) -> list[tuple[str | None, str, int]]:
    return [(e["detail"]["previous"], e["detail"]["readiness"], e["detail"]["sequence"])
            for e in received(runtime, url)]


def check(runtime: LocalRuntime, table: ManagementTable, performed_at: str, brakes: str) -> Any:
    runtime.advance_to(at(performed_at))
    row = Row(PerformedCheck("forklift-daily", "FL-1", at(performed_at), answers={"brakes": brakes}))
    recorded = record_checks(table, [row], now=at(performed_at), recorded_by="op@example.com")
    runtime.settle()
    return recorded


def test_a_subscriber_receives_each_readiness_change_once(local_runtime: LocalRuntime) -> None:
    runtime = local_runtime
    runtime.advance_to(START)
    table = ManagementTable(runtime.stack.table_name)
    readiness = subscribe(runtime, "interlock", {"source": ["missed-checks"],
                                                 "detail-type": ["Equipment readiness changed"]})
    alerts = subscribe(runtime, "alerts", {"source": ["missed-checks"], "detail-type": ["Checklist notification"],
                                           "detail": {"kind": ["defect"]}})
    save_checklist(table, "forklift-daily", recurrence=RULE, window="PT8H", now=START, by="tests", items=ITEMS,
                   pre_use=True, notify=NotifySettings(to=("crew@example.com",)))
    table.assign_equipment("forklift-daily", ["FL-1"], START, by="tests")
    runtime.settle()
    assert changes(runtime, readiness) == [(None, "cleared", 1)]  # nothing is asked before the first window
    scheduler = runtime.stack.client("scheduler")
    schedule = scheduler.get_schedule(Name=recheck_schedule_name("FL-1"), GroupName=runtime.stack.schedule_group)
    assert schedule["ScheduleExpression"] == "at(2026-03-02T05:00:00)"

    runtime.advance_to(at("2026-03-02T05:00:00Z"))  # the recheck fires as the window opens
    runtime.settle()
    [opened] = received(runtime, readiness)
    assert (opened["source"], opened["detail-type"]) == ("missed-checks", "Equipment readiness changed")
    assert opened["detail"] == {
        "equipment_id": "FL-1", "site_id": None, "readiness": "unchecked", "previous": "cleared",
        "since": "2026-03-02T05:00:00Z",
        "reason": "no passing pre-use check yet in the current window of forklift-daily (window opened "
                  "Mon 2 Mar 2026 06:00 CET)",
        "sequence": 2, "change_id": "FL-1#2", "changed_at": "2026-03-02T05:00:00Z", "open_defects": [],
        "unchecked_checklists": ["forklift-daily"], "out_of_service_until": None}

    recorded = check(runtime, table, "2026-03-02T05:42:00Z", "fail")
    [[defect_id]] = recorded.defects_opened
    [failed] = received(runtime, readiness)
    assert (failed["detail"]["previous"], failed["detail"]["readiness"], failed["detail"]["sequence"]) == (
        "unchecked", "not_cleared", 3)
    assert failed["detail"]["open_defects"] == [defect_id] and failed["detail"]["since"] == "2026-03-02T05:42:00Z"
    [alert] = received(runtime, alerts)
    assert alert["detail"]["to"] == "crew@example.com" and alert["detail"]["occasion"] == defect_id
    assert alert["detail"]["subject"] == "Not cleared: FL-1 failed forklift-daily at Mon 2 Mar 2026 06:42 CET"

    # the same stream records again, and a recheck with nothing changed: nothing more is announced or told
    runtime.advance_to(at("2026-03-02T06:00:00Z"))
    stream_again(runtime)
    assert invoke(runtime, {"kind": "recheck", "equipment_id": "FL-1"}) == {"equipment_id": "FL-1",
                                                                           "readiness": "not_cleared"}
    runtime.settle()
    assert received(runtime, readiness) == [] and received(runtime, alerts) == []

    runtime.advance_to(at("2026-03-02T06:10:00Z"))
    resolve_defect(table, defect_id, "brake fluid topped up", caller=Caller.operator("lead"),
                   now=at("2026-03-02T06:10:00Z"))
    runtime.settle()
    assert changes(runtime, readiness) == [("not_cleared", "unchecked", 4)]  # no passing check yet
    check(runtime, table, "2026-03-02T06:20:00Z", "pass")
    assert changes(runtime, readiness) == [("unchecked", "cleared", 5)]
    assert received(runtime, alerts) == []
    assert runtime.read_dead_letters()["ReadinessDeadLetterQueue"] == []


def stream_again(runtime: LocalRuntime) -> None:
    """Hand every record of the table's stream to the readiness function again, as a retried batch."""
    streams = runtime.stack.client("dynamodbstreams")
    arn = runtime.stack.outputs["TableStreamArn"]
    records: list[dict[str, Any]] = []
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        while iterator:
            page = streams.get_records(ShardIterator=iterator, Limit=1000)
            if not page["Records"]:
                break
            records += page["Records"]
            iterator = page.get("NextShardIterator")
    for record in records:
        record["dynamodb"].pop("ApproximateCreationDateTime", None)
        record["eventSourceARN"] = arn
    assert len(records) > 5 and invoke(runtime, {"Records": records}) == {"batchItemFailures": []}


def invoke(runtime: LocalRuntime, event: dict[str, Any]) -> Any:
    invocation = runtime.stack.lambda_runtime.invoke("ReadinessFunction", event)
    assert invocation.ok, invocation.error
    return invocation.result
