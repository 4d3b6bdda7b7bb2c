"""schedule-sync fed with stream events in Lambda's shape (events/schedule_sync.json and variations)."""

from __future__ import annotations

import copy
import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import moto.scheduler.models
import pytest
from boto3.dynamodb.types import TypeSerializer

from missed_checks import clock
from missed_checks.aws.table import ChecklistTable
from missed_checks.checklists.saving import save_checklist
from missed_checks.timefmt import to_utc_iso
from missed_checks_local.iam.enforcement import RoleCall, observed

SAMPLE = json.loads((Path(__file__).resolve().parents[3] / "events" / "schedule_sync.json").read_text())
NOW = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
WORKDAYS = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"
_serializer = TypeSerializer()


def stream_record(table: ChecklistTable, event_name: str, checklist_id: str, old: dict | None, seq: int) -> dict:
    """A record as Lambda delivers it, carrying the item as it is in the table now (NewImage)."""
    record = copy.deepcopy(SAMPLE["Records"][0])
    record["eventName"] = event_name
    record["eventID"] = f"event-{seq}"
    new = table.get_checklist_item(checklist_id)
    images = record["dynamodb"]
    images["Keys"] = {"pk": {"S": f"CHECKLIST#{checklist_id}"}, "sk": {"S": "CHECKLIST"}}
    images["SequenceNumber"] = f"{1000 + seq:028d}"
    images.pop("NewImage", None)
    images.pop("OldImage", None)
    if new is not None and event_name != "REMOVE":
        images["NewImage"] = {k: _serializer.serialize(v) for k, v in new.items()}
    if old is not None:
        images["OldImage"] = {k: _serializer.serialize(v) for k, v in old.items()}
    return record


@pytest.fixture
def sync(local_stack, monkeypatch):
    clock.set_source(lambda: NOW)
    # Scheduler checks StartDate against its own clock: in this test, AWS's "now" is NOW too.
    monkeypatch.setattr(moto.scheduler.models, "utcnow", lambda: NOW.replace(tzinfo=None))
    table = ChecklistTable(local_stack.table_name)
    calls: Counter[str] = Counter()  # the Scheduler API calls schedule-sync makes, as moto receives them

    def count(call: RoleCall) -> None:
        if call.action.startswith("scheduler:"):
            calls.update([call.action.split(":", 1)[1]])

    def invoke(*records: dict) -> dict:
        invocation = local_stack.lambda_runtime.invoke("ScheduleSyncFunction", {"Records": list(records)})
        assert invocation.ok, invocation.error
        return invocation.result

    with observed(count):
        yield local_stack, table, invoke, calls
    clock.set_source(None)


def schedule(stack, name: str) -> dict | None:
    scheduler = stack.client("scheduler")
    try:
        return scheduler.get_schedule(Name=name, GroupName=stack.schedule_group)
    except scheduler.exceptions.ResourceNotFoundException:
        return None


def test_the_sample_event_creates_replaces_then_deletes(sync):
    """events/schedule_sync.json: INSERT, MODIFY, REMOVE of one checklist, exactly as sam local invoke sends it."""
    stack, table, invoke, calls = sync
    save_checklist(table, "forklift-daily", recurrence=WORKDAYS, window="PT8H", grace="PT30M", now=NOW, by="tests")
    (insert,) = [r for r in SAMPLE["Records"] if r["eventName"] == "INSERT"]
    assert invoke(insert) == {"batchItemFailures": []}
    created = schedule(stack, "forklift-daily")
    assert created["ScheduleExpression"] == "cron(30 14 ? * MON-FRI *)"
    assert created["ScheduleExpressionTimezone"] == "Europe/Berlin"
    assert created["State"] == "ENABLED"
    assert created["Target"]["Arn"] == stack.state_machine_arn
    assert json.loads(created["Target"]["Input"].replace("<aws.scheduler.scheduled-time>", "T")) == {
        "kind": "scheduler", "checklist_id": "forklift-daily", "instant": "T"}
    assert created["Target"]["DeadLetterConfig"]["Arn"] == stack.queue_arns["SchedulerDeadLetterQueue"]
    assert created["Target"]["RetryPolicy"]["MaximumRetryAttempts"] == 10

    save_checklist(table, "forklift-daily", recurrence=WORKDAYS.replace("T060000", "T070000"), window="PT8H",
                        grace="PT30M", now=NOW, by="tests")
    (modify,) = [r for r in SAMPLE["Records"] if r["eventName"] == "MODIFY"]
    assert invoke(modify) == {"batchItemFailures": []}
    replaced = schedule(stack, "forklift-daily")
    assert replaced["ScheduleExpression"] == "cron(30 15 ? * MON-FRI *)"
    # UpdateSchedule replaces everything: the full target survived the replacement.
    assert replaced["Target"]["DeadLetterConfig"] == created["Target"]["DeadLetterConfig"]

    table.delete_checklist("forklift-daily", by="tests")
    (remove,) = [r for r in SAMPLE["Records"] if r["eventName"] == "REMOVE"]
    assert invoke(remove) == {"batchItemFailures": []}
    assert schedule(stack, "forklift-daily") is None
    assert calls == Counter({"CreateSchedule": 1, "UpdateSchedule": 1, "DeleteSchedule": 1})


def test_pause_disables_and_resume_enables(sync):
    stack, table, invoke, _ = sync
    save_checklist(table, "weekly", recurrence="DTSTART;TZID=America/New_York:20260302T090000\nRRULE:FREQ=WEEKLY",
                        now=NOW, by="tests")
    invoke(stream_record(table, "INSERT", "weekly", None, 1))
    before = table.get_checklist_item("weekly")
    table.pause_checklist("weekly", now=NOW, by="tests")
    invoke(stream_record(table, "MODIFY", "weekly", before, 2))
    assert schedule(stack, "weekly")["State"] == "DISABLED"
    assert table.get_checklist_item("weekly")["schedule"]["state"] == "DISABLED"

    before = table.get_checklist_item("weekly")
    table.resume_checklist("weekly", now=NOW, by="tests")
    invoke(stream_record(table, "MODIFY", "weekly", before, 3))
    assert schedule(stack, "weekly")["State"] == "ENABLED"


def test_replayed_duplicated_and_no_op_records_make_no_scheduler_calls(sync):
    stack, table, invoke, calls = sync
    save_checklist(table, "daily", recurrence="DTSTART;TZID=Asia/Kolkata:20260302T080000\nRRULE:FREQ=DAILY",
                        window="PT4H", now=NOW, by="tests")
    insert = stream_record(table, "INSERT", "daily", None, 1)
    invoke(insert)
    assert calls == Counter({"CreateSchedule": 1})

    # The same record again (a retry or a replay), twice in one batch.
    invoke(insert, insert)
    # The MODIFY caused by the sync noting its result, and by the watermark moving: nothing to do.
    noted = table.get_checklist_item("daily")
    table.advance_watermark("daily", datetime(2026, 3, 2, 6, 30, tzinfo=UTC))
    invoke(stream_record(table, "MODIFY", "daily", noted, 2))
    # A name-only edit is a rule no-op too.
    before = table.get_checklist_item("daily")
    save_checklist(table, "daily", recurrence=before["recurrence"], window="PT4H", name="Renamed", now=NOW, by="tests")
    invoke(stream_record(table, "MODIFY", "daily", before, 3))

    assert calls == Counter({"CreateSchedule": 1})
    assert schedule(stack, "daily")["ScheduleExpression"] == "cron(0 12 * * ? *)"


def test_an_old_record_replayed_after_a_newer_change_does_not_bring_back_the_old_schedule(sync):
    stack, table, invoke, _ = sync
    save_checklist(table, "edit", recurrence=WORKDAYS, window="PT8H", now=NOW, by="tests")
    old_insert = stream_record(table, "INSERT", "edit", None, 1)
    invoke(old_insert)
    before = table.get_checklist_item("edit")
    save_checklist(table, "edit", recurrence=WORKDAYS.replace("T060000", "T090000"), window="PT8H", now=NOW, by="tests")
    invoke(stream_record(table, "MODIFY", "edit", before, 2))

    invoke(old_insert)

    assert schedule(stack, "edit")["ScheduleExpression"] == "cron(0 17 ? * MON-FRI *)"


def test_an_invalid_recurrence_is_reported_on_the_item_the_logs_and_the_dead_letter_queue_once(sync):
    stack, table, invoke, calls = sync
    save_checklist(table, "bad", recurrence=WORKDAYS, now=NOW, by="tests")
    invoke(stream_record(table, "INSERT", "bad", None, 1))
    before = table.get_checklist_item("bad")
    save_checklist(table, "bad", recurrence="DTSTART;TZID=Mars/Olympus:20260302T060000\nRRULE:FREQ=DAILY", now=NOW,
                        validate=False, by="tests")
    record = stream_record(table, "MODIFY", "bad", before, 2)

    assert invoke(record) == {"batchItemFailures": []}
    logs = stack.lambda_runtime.invocations[-1].logs  # what the function wrote in this invocation
    (line,) = [json.loads(line) for line in logs.splitlines() if '"ERROR"' in line and line.startswith("{")]
    assert (line["checklist_id"], line["error"]["field"]) == ("bad", "recurrence")
    assert "Mars/Olympus" in line["error"]["message"]

    item = table.get_checklist_item("bad")
    assert item["sync_error"]["field"] == "recurrence"  # the zone is named by DTSTART;TZID
    assert "Mars/Olympus" in item["sync_error"]["message"]
    assert "schedule" not in item
    # No schedule may fire for an unusable rule.
    assert schedule(stack, "bad") is None
    sqs = stack.client("sqs")
    messages = sqs.receive_message(QueueUrl=stack.queue_urls["ScheduleSyncDeadLetterQueue"],
                                   MaxNumberOfMessages=10)["Messages"]
    (body,) = [json.loads(m["Body"]) for m in messages]
    assert (body["source"], body["checklist_id"], body["error"]["field"]) == ("schedule-sync", "bad", "recurrence")

    # Replaying the record (or the MODIFY the error note caused) reports nothing twice.
    invoke(record, stream_record(table, "MODIFY", "bad", item, 3))
    again = sqs.receive_message(QueueUrl=stack.queue_urls["ScheduleSyncDeadLetterQueue"], MaxNumberOfMessages=10)
    assert again.get("Messages", []) == []
    assert calls["DeleteSchedule"] == 1


def test_a_poison_record_fails_alone_and_the_rest_of_the_batch_still_syncs(sync):
    stack, table, invoke, _ = sync
    save_checklist(table, "first", recurrence=WORKDAYS, now=NOW, by="tests")
    save_checklist(table, "last", recurrence=WORKDAYS, now=NOW, by="tests")
    good_first = stream_record(table, "INSERT", "first", None, 1)
    poison = copy.deepcopy(good_first)
    poison["eventID"] = "poison"
    poison["dynamodb"]["SequenceNumber"] = f"{1002:028d}"
    poison["dynamodb"]["Keys"] = {"pk": {"S": "PERFORMED#first#03"}, "sk": {"S": "x"}}  # not a checklist item
    good_last = stream_record(table, "INSERT", "last", None, 3)

    result = invoke(good_first, poison, good_last)

    assert result == {"batchItemFailures": [{"itemIdentifier": poison["dynamodb"]["SequenceNumber"]}]}
    assert schedule(stack, "first") is not None
    assert schedule(stack, "last") is not None


def test_a_rule_edited_by_hand_in_the_console_still_takes_effect_only_from_the_edit(sync):
    stack, table, invoke, _ = sync
    save_checklist(table, "console", recurrence=WORKDAYS, window="PT8H", now=NOW, by="tests")
    before = table.get_checklist_item("console")
    stack.client("dynamodb").update_item(  # what a hand edit does: the rule only
        TableName=stack.table_name, Key={"pk": {"S": "CHECKLIST#console"}, "sk": {"S": "CHECKLIST"}},
        UpdateExpression="SET recurrence = :r",
        ExpressionAttributeValues={":r": {"S": WORKDAYS.replace("T060000", "T070000")}})
    record = stream_record(table, "MODIFY", "console", before, 1)
    edited_at = datetime(2026, 3, 9, 10, 0, tzinfo=UTC)
    record["dynamodb"]["ApproximateCreationDateTime"] = int(edited_at.timestamp())

    assert invoke(record) == {"batchItemFailures": []}

    assert table.get_checklist("console").watermark == edited_at
    assert schedule(stack, "console")["ScheduleExpression"] == "cron(0 15 ? * MON-FRI *)"


# --- hand-written items, through the real flow (stream -> built schedule-sync -> Scheduler) -------


def test_a_hand_written_rule_outside_the_years_takes_the_invalid_rule_path_without_failing_its_batch(local_runtime):
    """A console edit to DTSTART:00010101T000000Z crashed the parser: the record was retried, held back
    the records after it and ended as an on-failure record without the checklist id, while the old
    schedule kept firing. Now: sync_error, schedule deleted, a DLQ message naming the checklist."""
    stack = local_runtime.stack
    table = ChecklistTable(stack.table_name)
    now = local_runtime.clock.now()
    save_checklist(table, "hand-edited", recurrence=WORKDAYS, window="PT8H", now=now, by="tests")
    local_runtime.settle()
    assert schedule(stack, "hand-edited")["State"] == "ENABLED"

    stack.client("dynamodb").update_item(  # aws dynamodb update-item, around our tools
        TableName=stack.table_name, Key={"pk": {"S": "CHECKLIST#hand-edited"}, "sk": {"S": "CHECKLIST"}},
        UpdateExpression="SET recurrence = :r",
        ExpressionAttributeValues={":r": {"S": "DTSTART:00010101T000000Z\nRRULE:FREQ=DAILY"}})
    save_checklist(table, "written-after", recurrence=WORKDAYS, window="PT8H", now=now,
                   by="tests")  # the same shard, later
    local_runtime.settle()

    item = table.get_checklist_item("hand-edited")
    assert item["sync_error"]["field"] == "recurrence"
    assert "DTSTART '00010101T000000Z' is outside the years 1970 to 2199" in item["sync_error"]["message"]
    assert schedule(stack, "hand-edited") is None  # the old schedule no longer fires
    assert schedule(stack, "written-after") is not None
    (poller,) = [p for p in local_runtime.pollers if p.mapping.function == "ScheduleSyncFunction"]  # + the audit's
    assert (poller.stats.failed_invocations, poller.stats.sent_to_on_failure) == (0, 0)  # the batch succeeded
    letters = local_runtime.read_dead_letters()["ScheduleSyncDeadLetterQueue"]
    assert [(letter["body"]["checklist_id"], letter["body"]["error"]["field"]) for letter in letters] == [
        ("hand-edited", "recurrence")]


def test_a_checklist_inserted_by_hand_with_a_past_created_at_judges_only_windows_after_it_arrived(local_runtime):
    """effective_from was only moved on MODIFY: an INSERT claiming created_at two weeks ago had its
    first firing judge (and record missed checks for) two weeks of windows before it existed."""
    stack = local_runtime.stack
    table = ChecklistTable(stack.table_name)
    arrived = local_runtime.clock.now()
    claimed = arrived - timedelta(days=14)
    stack.client("dynamodb").put_item(TableName=stack.table_name, Item={  # no revision, no effective_from
        "pk": {"S": "CHECKLIST#by-hand"}, "sk": {"S": "CHECKLIST"}, "type": {"S": "checklist"},
        "gsi2pk": {"S": "CHECKLISTS"}, "gsi2sk": {"S": "by-hand"}, "checklist_id": {"S": "by-hand"},
        "recurrence": {"S": "DTSTART;TZID=Europe/Berlin:20260201T080000\nRRULE:FREQ=DAILY"},
        "window": {"S": "PT2H"}, "status": {"S": "ACTIVE"}, "created_at": {"S": to_utc_iso(claimed)}})
    table.assign_equipment("by-hand", ["m-1"], claimed, by="tests")
    local_runtime.settle()

    item = table.get_checklist_item("by-hand")
    assert item["effective_from"] == to_utc_iso(arrived)  # the INSERT record's time
    assert item["revision"] == 0 and item["schedule"]["state"] == "ENABLED"  # adopted: the sync's note applied
    local_runtime.advance_to(arrived + timedelta(days=1, hours=12))

    missed = table.missed_checks_of_checklist("by-hand", claimed, local_runtime.clock.now())
    assert sorted(m["window_start"] for m in missed) == ["2026-03-02T07:00:00Z", "2026-03-03T07:00:00Z"]
    assert table.get_checklist("by-hand").watermark == datetime(2026, 3, 3, 9, tzinfo=UTC)


def test_the_evaluation_s_own_writes_never_wake_schedule_sync(local_runtime):
    """The watermark is an item of its own: a week of evaluations (each advancing it) invokes
    schedule-sync not once, so a checklist costs one schedule-sync call per change, not per window."""
    table = ChecklistTable(local_runtime.stack.table_name)
    now = local_runtime.clock.now()
    save_checklist(table, "daily", recurrence=WORKDAYS, window="PT8H", grace="PT30M", now=now, by="tests")
    table.assign_equipment("daily", ["fl-1", "fl-2"], at=now, by="tests")
    local_runtime.settle()
    synced = local_runtime.invocation_counts[("ScheduleSyncFunction", True)]
    assert synced >= 1

    local_runtime.advance_to(now + timedelta(days=7))
    local_runtime.settle()

    assert len(table.judged_windows("daily", now, now + timedelta(days=7))) == 5
    assert table.get_checklist("daily").evaluated_until is not None
    assert local_runtime.invocation_counts[("ScheduleSyncFunction", True)] == synced
    assert local_runtime.invocation_counts[("ScheduleSyncFunction", False)] == 0


# -- what Scheduler's ValidationException means (#30 item 1) ------------------------------------------
ROLE_NOT_ASSUMABLE = "The execution role you provide must allow AWS EventBridge Scheduler to assume the role."
"""Scheduler's answer while a new execution role propagates (aws/aws-sdk-js-v3#6494 quotes it)."""


def scheduler_refuses(monkeypatch, message: str, name: str) -> None:
    """moto's Scheduler answers a create or update of schedule ``name`` with a ValidationException
    saying ``message``."""
    backend = moto.scheduler.models.EventBridgeSchedulerBackend

    def refusing(original):
        def refuse(self, *args, **kwargs):
            if kwargs.get("name") == name:
                raise moto.scheduler.models.ValidationException(message)
            return original(self, *args, **kwargs)
        return refuse

    for operation in ("create_schedule", "update_schedule"):
        monkeypatch.setattr(backend, operation, refusing(getattr(backend, operation)))


def sync_dead_letters(stack) -> list[dict]:
    messages = stack.client("sqs").receive_message(QueueUrl=stack.queue_urls["ScheduleSyncDeadLetterQueue"],
                                                   MaxNumberOfMessages=10).get("Messages", [])
    return [json.loads(m["Body"]) for m in messages]


def test_a_setup_refusal_fails_the_record_for_a_retry_and_never_flags_the_checklist(sync, monkeypatch):
    stack, table, invoke, _ = sync
    save_checklist(table, "forklift-daily", recurrence=WORKDAYS, window="PT8H", grace="PT30M", now=NOW, by="tests")
    invoke(stream_record(table, "INSERT", "forklift-daily", None, 1))
    before = table.get_checklist_item("forklift-daily")
    save_checklist(table, "forklift-daily", recurrence=WORKDAYS, window="PT9H", grace="PT30M", now=NOW, by="tests")
    record = stream_record(table, "MODIFY", "forklift-daily", before, 2)
    save_checklist(table, "other", recurrence=WORKDAYS, now=NOW, by="tests")
    other = stream_record(table, "INSERT", "other", None, 3)
    seen = len(stack.lambda_runtime.invocations)
    with monkeypatch.context() as patch:
        scheduler_refuses(patch, ROLE_NOT_ASSUMABLE, "forklift-daily")
        result = invoke(record, other)

    # The record fails: Lambda retries it (then the OnFailure queue); nothing is flagged or deleted.
    assert result == {"batchItemFailures": [{"itemIdentifier": record["dynamodb"]["SequenceNumber"]}]}
    assert schedule(stack, "other") is not None  # the rest of the batch synced
    item = table.get_checklist_item("forklift-daily")
    assert "sync_error" not in item
    assert schedule(stack, "forklift-daily") is not None  # the schedule it had still fires
    assert sync_dead_letters(stack) == []
    logs = "".join(invocation.logs for invocation in stack.lambda_runtime.invocations[seen:])
    (line,) = [json.loads(line) for line in logs.splitlines() if '"ERROR"' in line and line.startswith("{")]
    # One ERROR line names it (a metric filter or Logs Insights finds it; the function also counts
    # ScheduleSetupErrors, which the local runtime does not publish).
    assert line["error_kind"] == "ScheduleSetupError" and "assume the role" in line["error"]
    assert line["checklist_id"] == "forklift-daily"

    # The role has propagated: the retried record syncs.
    assert invoke(record) == {"batchItemFailures": []}
    assert schedule(stack, "forklift-daily")["ScheduleExpression"].startswith("cron(")
    assert "sync_error" not in table.get_checklist_item("forklift-daily")


def test_a_rule_scheduler_refuses_still_flags_the_checklist(sync, monkeypatch):
    stack, table, invoke, _ = sync
    save_checklist(table, "forklift-daily", recurrence=WORKDAYS, window="PT8H", grace="PT30M", now=NOW, by="tests")
    scheduler_refuses(monkeypatch, "Invalid Schedule Expression cron(30 14 ? * MON-FRI *).", "forklift-daily")

    assert invoke(stream_record(table, "INSERT", "forklift-daily", None, 1)) == {"batchItemFailures": []}

    error = table.get_checklist_item("forklift-daily")["sync_error"]
    assert error["field"] == "schedule" and "Invalid Schedule Expression" in error["message"]
    [letter] = sync_dead_letters(stack)
    assert (letter["checklist_id"], letter["error"]["field"]) == ("forklift-daily", "schedule")
