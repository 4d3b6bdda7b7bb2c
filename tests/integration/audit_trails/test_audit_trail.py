"""The audit trail on the local stack (#31): every change a use case makes reaches the audit
function through the table's stream and becomes one entry, in order, with who, before and after; a
record delivered again writes nothing; a record no reader can read goes to the audit dead-letter
queue without holding up the changes after it."""

from __future__ import annotations

import json
from datetime import timedelta

from missed_checks.audit_trails.audit_entry import UNKNOWN_WRITER
from missed_checks.audit_trails.reading import site_trail, trail_of
from missed_checks.aws.table import ChecklistTable
from missed_checks.checklists import managing
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.equipment.registering import register_equipment
from missed_checks.evaluation.missed_check import MissedCheck
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Role
from missed_checks.sites.saving import create_site
from missed_checks.timefmt import to_utc_iso
from missed_checks_ops.dlq import list_dead_letters, replay_queues
from missed_checks_ops.target import resolve_target

RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY"
ADMIN = Caller("admin", admin=True)
MANAGER = Caller("manager-north", {"north": Role.site_manager})
AUDITOR = Caller("auditor-north", {"north": Role.auditor})


def audit_events(stack):
    """The events the stream delivered to the audit function, in order."""
    return [i.event for i in stack.lambda_runtime.invocations if i.function == "AuditFunction"]


def test_a_checklists_life_is_four_entries_in_order_with_who_before_and_after(local_runtime):
    stack = local_runtime.stack
    table = ChecklistTable(stack.table_name, stack.client("dynamodb"))
    clock = local_runtime.clock
    create_site(table, ADMIN, "north", name="North plant", timezone="Europe/Berlin", now=clock.now())
    spec = {"id": "forklift", "recurrence": RULE, "window": "PT8H", "site_id": "north", "name": "Forklift"}
    managing.put_checklist(table, MANAGER, spec, clock.now(), create=True)
    managing.put_checklist(table, MANAGER, {**spec, "name": "Forklift daily"}, clock.now(), if_match=1)
    managing.pause_checklist(table, MANAGER, "forklift", clock.now(), if_match=2)
    managing.delete_checklist(table, Caller("admin", admin=True), "forklift", if_match=3)
    local_runtime.settle()

    trail = trail_of(table, AUDITOR, "checklist", "forklift").items
    assert [(e.action.value, e.changed_by) for e in trail] == [
        ("created", "manager-north"), ("changed", "manager-north"), ("changed", "manager-north"), ("deleted", "admin")]
    created, renamed, paused, deleted = trail
    assert created.before is None and created.after["name"] == "Forklift" and created.site_id == "north"
    assert (renamed.before["name"], renamed.after["name"]) == ("Forklift", "Forklift daily")
    assert "name" in renamed.changed_fields and "status" not in renamed.changed_fields
    assert (paused.before["status"], paused.after["status"]) == ("ACTIVE", "PAUSED")
    assert deleted.before == paused.after and deleted.after is None
    assert all("changed_by" not in (e.after or e.before) for e in trail)  # stamps are no part of the object
    assert [e.object_id for e in site_trail(table, AUDITOR, "north").items] == ["north", *["forklift"] * 4]

    entries = len(list(table.query(KeyConditionExpression="pk = :pk",
                                   ExpressionAttributeValues={":pk": {"S": "AUDIT#checklist#forklift"}})))
    events = audit_events(stack)
    for event in events:  # every record delivered again (a retried batch): nothing is written twice
        assert stack.lambda_runtime.invoke("AuditFunction", event).result == {"batchItemFailures": []}
    assert len(trail_of(table, AUDITOR, "checklist", "forklift").items) == entries == 4


def test_a_hand_edit_is_recorded_with_an_unknown_writer(local_runtime):
    stack = local_runtime.stack
    table = ChecklistTable(stack.table_name, stack.client("dynamodb"))
    create_site(table, ADMIN, "north", name="North plant", timezone="Europe/Berlin", now=local_runtime.clock.now())
    stack.client("dynamodb").update_item(  # aws dynamodb update-item, around the product
        TableName=stack.table_name, Key={"pk": {"S": "SITE#north"}, "sk": {"S": "SITE"}},
        UpdateExpression="SET #name = :n", ExpressionAttributeNames={"#name": "name"},
        ExpressionAttributeValues={":n": {"S": "North plant (renamed by hand)"}})
    local_runtime.settle()
    trail = trail_of(table, ADMIN, "site", "north").items
    assert [(e.action.value, e.changed_by) for e in trail] == [("created", "admin"), ("changed", UNKNOWN_WRITER)]
    assert trail[1].after["name"] == "North plant (renamed by hand)"


def test_an_unreadable_record_goes_to_the_dead_letter_queue_and_the_changes_after_it_are_recorded(local_runtime):
    stack = local_runtime.stack
    table = ChecklistTable(stack.table_name, stack.client("dynamodb"))
    stack.client("dynamodb").put_item(  # a subscription no reader understands, put by hand
        TableName=stack.table_name, Item={"pk": {"S": "SUBSCRIPTION#broken"}, "sk": {"S": "SUBSCRIPTION"},
                                          "subscription_id": {"S": "broken"}, "period": {"S": "hourly"}})
    local_runtime.clock.advance_to(local_runtime.clock.now() + timedelta(seconds=1))
    create_site(table, ADMIN, "south", name="South yard", timezone="America/Chicago", now=local_runtime.clock.now())
    local_runtime.settle()

    assert [e.action.value for e in trail_of(table, ADMIN, "site", "south").items] == ["created"]
    assert trail_of(table, ADMIN, "subscription", "broken").items == []
    queue = stack.outputs["AuditDeadLetterQueueUrl"]
    messages = stack.client("sqs").receive_message(QueueUrl=queue, MaxNumberOfMessages=10,
                                                   VisibilityTimeout=0)["Messages"]
    (letter,) = [json.loads(m["Body"]) for m in messages]
    (poison,) = {record["dynamodb"]["SequenceNumber"] for event in audit_events(stack) for record in event["Records"]
                 if record["dynamodb"]["Keys"]["pk"]["S"] == "SUBSCRIPTION#broken"}
    # the batch given up on starts at the unreadable record (the ones after it were recorded all the same)
    assert letter["DDBStreamBatchInfo"]["startSequenceNumber"] == poison

    # missed-checks dlq list / replay --queue audit: the record is read again, still unreadable: it stays, named
    target = resolve_target(stack.stack_name, stack.region)
    (listed,) = list_dead_letters(target, "audit")["audit"]
    assert listed.kind == "stream-batch"
    (replayed,) = replay_queues(target, local_runtime.clock.now(), "audit")
    assert not replayed.ok and "period" in replayed.detail, replayed.detail
    assert len(list_dead_letters(target, "audit")["audit"]) == 1
    assert [e.action.value for e in trail_of(table, ADMIN, "site", "south").items] == ["created"]  # not twice


def test_each_kind_is_recorded_at_its_site(local_runtime):
    """A calendar, registered equipment, an assignment (its checklist's site), an out-of-service period
    (its equipment's), a dismissal (its checklist's) and a subscription, each one entry at north."""
    stack = local_runtime.stack
    table = ChecklistTable(stack.table_name, stack.client("dynamodb"))
    now = local_runtime.clock.now()
    create_site(table, ADMIN, "north", name="North plant", timezone="Europe/Berlin", now=now)
    register_equipment(table, MANAGER, "FL-1", name="Forklift 1", kind="forklift", site_id="north", now=now)
    table.put_calendar("holidays", [now.date()], now=now, by="manager-north", site_id="north")
    managing.put_checklist(table, MANAGER, {"id": "forklift", "recurrence": RULE, "window": "PT8H",
                                            "site_id": "north"}, now, create=True)
    table.assign_equipment("forklift", ["FL-1"], now, by="manager-north")
    period = OutOfServicePeriod.create(equipment_id="FL-1", start=now + timedelta(days=1), end=None,
                                       reason="gearbox", recorded_by="supervisor-north", recorded_at=now)
    table.record_out_of_service(period)
    window = OccurrenceWindow(now, now + timedelta(hours=8), now + timedelta(hours=8))
    table.put_missed_check(MissedCheck("forklift", "FL-1", window, judged_at=now, execution="arn:execution:test"))
    table.dismiss_missed_check("forklift", now, "FL-1", reason="broken down", by="supervisor-north", at=now)
    local_runtime.settle()

    trail = site_trail(table, AUDITOR, "north").items
    assert {(e.kind, e.object_id, e.changed_by) for e in trail} == {
        ("site", "north", "admin"), ("equipment", "FL-1", "manager-north"), ("calendar", "holidays", "manager-north"),
        ("checklist", "forklift", "manager-north"), ("assignment", "forklift/FL-1", "manager-north"),
        ("out_of_service", f"FL-1/{to_utc_iso(now + timedelta(days=1))}", "supervisor-north"),
        ("dismissal", f"forklift/{to_utc_iso(now)}/FL-1", "supervisor-north")}
    (dismissal,) = [e for e in trail if e.kind == "dismissal"]
    assert dismissal.before is None and dismissal.after["reason"] == "broken down"
    (assignment,) = [e for e in trail if e.kind == "assignment"]
    assert assignment.after["assigned_at"] == to_utc_iso(now) and assignment.after["unassigned_at"] is None
