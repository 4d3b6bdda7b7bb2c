"""dlq list / dlq replay round trips, one per queue, with failures produced by the running system."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from moto.events.models import EventsBackend

from missed_checks.aws.table import ChecklistTable, serialize
from missed_checks.aws.table.keys import assignment_key
from missed_checks.checklists.saving import save_checklist
from missed_checks.dead_letters import SCHEDULER_ATTRIBUTES
from missed_checks.equipment.assignments import shard_of
from missed_checks_local.runtime import LocalRuntime
from missed_checks_ops.rerun import wait_for
from tests.integration.ops.ops_support import BERLIN_WORKDAYS, Cli, ops_runtime, utc

MONDAY = "2026-03-02T05:00:00Z"


def table_of(runtime: LocalRuntime) -> ChecklistTable:
    return ChecklistTable(runtime.stack.table_name, runtime.stack.client("dynamodb"))


def set_assigned_at(table: ChecklistTable, equipment_id: str, value: str, checklist_id: str = "forklift-daily") -> None:
    """Edit an assignment item by hand, as a damaged import or an operator's repair would."""
    key = assignment_key(checklist_id, shard_of(equipment_id), equipment_id)
    table.client.update_item(TableName=table.name, Key=serialize(key), UpdateExpression="SET assigned_at = :x",
                             ExpressionAttributeValues=serialize({":x": value}))


def put_forklift(cli: Cli, *equipment: str) -> None:
    args = ["checklist", "put", "forklift-daily", "--window", "PT8H", "--grace", "PT30M"]
    for line in BERLIN_WORKDAYS:
        args += ["--recurrence", line]
    cli.ok(*args)
    if equipment:
        cli.ok("equipment", "assign", "--checklist", "forklift-daily", *equipment)


def missed_on_monday(runtime: LocalRuntime) -> list[str]:
    items = table_of(runtime).missed_checks_of_checklist("forklift-daily", utc(MONDAY), utc("2026-03-03T00:00:00Z"))
    return sorted(item["equipment_id"] for item in items)


def announcements_queue(runtime: LocalRuntime) -> str:
    """An SQS queue subscribed to the stack's window events: its URL."""
    events, sqs = runtime.stack.client("events"), runtime.stack.client("sqs")
    url = sqs.create_queue(QueueName="announcements")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    # the window events only: readiness (#33) and notifications publish on the same source
    events.put_rule(Name="windows", EventPattern=json.dumps({"source": ["missed-checks"],
                                                             "detail-type": ["Occurrence window judged"]}))
    events.put_targets(Rule="windows", Targets=[{"Id": "q", "Arn": arn}])
    return url


def announced(runtime: LocalRuntime, url: str) -> list[dict]:
    """The window events delivered since the last call (consumed): their details."""
    sqs, found = runtime.stack.client("sqs"), []
    while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
        found += [json.loads(m["Body"])["detail"] for m in messages]
        sqs.delete_message_batch(QueueUrl=url, Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]}
                                                        for i, m in enumerate(messages)])
    return found


def finish(runtime: LocalRuntime, replayed: dict) -> list[str]:
    sfn = runtime.stack.client("stepfunctions")
    return [wait_for(sfn, arn, timeout_s=120)["status"] for r in replayed["results"] for arn in r["executions"]]


def test_schedule_sync_queue_invalid_checklist(runtime: LocalRuntime, cli: Cli) -> None:
    # A hand edit the recurrence engine would have refused: schedule-sync reports it to its DLQ.
    save_checklist(table_of(runtime), "handmade", recurrence="RRULE:FREQ=SECONDLY", timezone="Europe/Berlin",
                                    now=runtime.clock.now(), validate=False, by="tests")
    runtime.settle()
    listed = cli.ok("dlq", "list", "--queue", "schedule-sync")["schedule-sync"]
    assert len(listed) == 1
    [letter] = listed
    assert (letter["kind"], letter["checklist_id"]) == ("schedule-sync", "handmade")
    assert "recurrence" in letter["error"]
    assert len(cli.ok("dlq", "list")["schedule-sync"]) == 1  # listing consumes nothing

    kept = cli("dlq", "replay", "--queue", "schedule-sync", "--format", "json")
    assert kept.code == 1 and kept.json["failed"] == 1
    assert "still cannot be scheduled" in kept.json["results"][0]["detail"]
    assert len(cli.ok("dlq", "list", "--queue", "schedule-sync")["schedule-sync"]) == 1

    cli.ok("checklist", "put", "handmade", "--recurrence", "DTSTART:20260302T070000", "--recurrence",
           "RRULE:FREQ=DAILY", "--timezone", "Europe/Berlin")
    replayed = cli.ok("dlq", "replay", "--queue", "schedule-sync")
    assert replayed["replayed"] == 1 and replayed["failed"] == 0
    assert cli.ok("dlq", "list", "--queue", "schedule-sync")["schedule-sync"] == []
    schedule = runtime.stack.client("scheduler").get_schedule(Name="handmade", GroupName=runtime.stack.schedule_group)
    assert schedule["ScheduleExpressionTimezone"] == "Europe/Berlin"


def test_schedule_sync_queue_failed_stream_batch(runtime: LocalRuntime, cli: Cli) -> None:
    scheduler = runtime.stack.client("scheduler")
    group = runtime.stack.schedule_group
    scheduler.delete_schedule_group(Name=group)  # every sync now fails: Lambda gives the batch up
    put_forklift(cli)
    runtime.settle()
    [letter] = cli.ok("dlq", "list", "--queue", "schedule-sync")["schedule-sync"]
    assert letter["kind"] == "stream-batch" and letter["checklist_id"] is None
    assert "DDBStreamBatchInfo" in letter["body"]

    failed = cli("dlq", "replay", "--queue", "schedule-sync", "--format", "json")
    assert failed.code == 1  # the group is still missing: kept
    assert len(cli.ok("dlq", "list", "--queue", "schedule-sync")["schedule-sync"]) == 1

    scheduler.create_schedule_group(Name=group)
    replayed = cli.ok("dlq", "replay", "--queue", "schedule-sync")
    assert replayed["replayed"] == 1 and "re-synced 1 checklist" in replayed["results"][0]["detail"]
    assert scheduler.get_schedule(Name="forklift-daily", GroupName=group)["State"] == "ENABLED"
    assert cli.ok("dlq", "list")["schedule-sync"] == []


def monday_fails(runtime: LocalRuntime, cli: Cli) -> ChecklistTable:
    """forklift-daily with E1 and E2, E2's assignment item broken by hand: judging Monday fails and
    its window is dead-lettered. The table, to repair it."""
    put_forklift(cli, "E1", "E2")
    runtime.settle()
    table = table_of(runtime)
    set_assigned_at(table, "E2", "last tuesday")
    runtime.advance_to(utc("2026-03-02T15:00:00Z"))
    return table


def test_evaluation_queue_failed_window_and_failed_run(runtime: LocalRuntime, cli: Cli) -> None:
    table = monday_fails(runtime, cli)
    [window] = cli.ok("dlq", "list", "--queue", "evaluation")["evaluation"]
    assert window["kind"] == "evaluation" and window["checklist_id"] == "forklift-daily"
    assert utc(window["window"]["start"]) == utc(MONDAY) and window["instant"] == "2026-03-02T13:30:00Z"
    assert window["execution"] and window["error"]
    assert missed_on_monday(runtime) in ([], ["E1"])  # the window was not completed

    # The operator repairs the damaged item (assigning E2 again would keep its assignment as it is).
    set_assigned_at(table, "E2", "2026-03-01T09:00:00Z")
    replayed = cli.ok("dlq", "replay", "--queue", "evaluation")
    assert replayed["replayed"] == 1 and finish(runtime, replayed) == ["SUCCEEDED"]
    assert missed_on_monday(runtime) == ["E1", "E2"]
    assert cli.ok("dlq", "list", "--queue", "evaluation")["evaluation"] == []

    # A run that fails before any window (the rule became unreadable): dead-lettered with its instant.
    save_checklist(table, "forklift-daily", recurrence="RRULE:FREQ=SECONDLY", timezone="Europe/Berlin",
                        now=runtime.clock.now(), validate=False, by="tests")
    runtime.clock.advance_to(utc("2026-03-03T15:00:00Z"))
    failed = cli("rerun", "--checklist", "forklift-daily", "--at", "2026-03-03T14:00:00Z", "--wait", "--format", "json")
    assert failed.code == 1 and failed.json["status"] == "FAILED"
    [run] = cli.ok("dlq", "list", "--queue", "evaluation")["evaluation"]
    assert run["window"] is None and run["instant"] == "2026-03-03T14:00:00Z"
    assert run["execution"] == failed.json["execution_arn"]


def test_scheduler_queue_failed_firing_and_an_unknown_message(runtime: LocalRuntime, cli: Cli) -> None:
    sqs = runtime.stack.client("sqs")
    sqs.send_message(QueueUrl=runtime.stack.outputs["EvaluationDeadLetterQueueUrl"],
                     MessageBody=json.dumps({"hello": "world"}))
    [unknown] = cli.ok("dlq", "list", "--queue", "evaluation")["evaluation"]
    assert unknown["kind"] == "unknown" and unknown["body"] == {"hello": "world"}
    put_forklift(cli, "E1")
    runtime.settle()
    runtime.scheduler.inject_failure("forklift-daily", error_code="AccessDeniedException",
                                     message="not authorized to perform states:StartExecution")
    runtime.advance_to(utc("2026-03-02T15:00:00Z"))
    assert missed_on_monday(runtime) == []
    [letter] = cli.ok("dlq", "list", "--queue", "scheduler")["scheduler"]
    assert letter["kind"] == "scheduler" and letter["checklist_id"] == "forklift-daily"
    assert letter["instant"] == "2026-03-02T13:30:00Z"
    assert letter["error"] == "AccessDeniedException" and "StartExecution" in letter["cause"]
    assert letter["attributes"]["SCHEDULE_ARN"].endswith("/forklift-daily")
    # The emulator's dead letter has the attributes AWS documents (a permanent error: not retried).
    assert set(SCHEDULER_ATTRIBUTES) - {"EXHAUSTED_RETRY_CONDITION"} == set(letter["attributes"])
    assert letter["attributes"]["SCHEDULED_TIME"] == "2026-03-02T13:30:00Z"
    assert "not retried: a permanent error" in letter["summary"]
    people = cli("dlq", "list")
    assert people.code == 0 and "AccessDeniedException" in people.out

    result = cli("dlq", "replay", "--format", "json")
    assert result.code == 1  # the unknown message is kept
    replayed = result.json
    assert (replayed["replayed"], replayed["failed"]) == (1, 1)
    assert finish(runtime, replayed) == ["SUCCEEDED"]
    assert missed_on_monday(runtime) == ["E1"]
    left = cli.ok("dlq", "list")
    assert (left["schedule-sync"], left["scheduler"]) == ([], [])
    assert [letter["kind"] for letter in left["evaluation"]] == ["unknown"]


def test_a_window_the_watermark_passed_since_it_failed_is_not_dropped_silently(runtime: LocalRuntime,
                                                                              cli: Cli) -> None:
    table = monday_fails(runtime, cli)
    assert len(cli.ok("dlq", "list", "--queue", "evaluation")["evaluation"]) == 1
    # The operator pauses, repairs and resumes: the watermark jumps past Monday's window.
    cli.ok("checklist", "pause", "forklift-daily")
    set_assigned_at(table, "E2", "2026-03-01T09:00:00Z")
    runtime.clock.advance_to(utc("2026-03-02T16:00:00Z"))
    cli.ok("checklist", "resume", "forklift-daily")

    result = cli("dlq", "replay", "--queue", "evaluation", "--format", "json")

    assert result.code == 1
    (outcome,) = result.json["results"]
    assert outcome["replayed"] is False and "watermark" in outcome["detail"]
    assert missed_on_monday(runtime) in ([], ["E1"])  # E2's shard never judged Monday, and cannot now
    assert len(cli.ok("dlq", "list", "--queue", "evaluation")["evaluation"]) == 1  # kept, with the reason said


def test_a_replay_whose_evaluation_fails_again_exits_1_and_leaves_only_the_new_dead_letter(runtime: LocalRuntime,
                                                                                         cli: Cli) -> None:
    table = monday_fails(runtime, cli)
    [first] = cli.ok("dlq", "list", "--queue", "evaluation")["evaluation"]

    # Replayed before the damaged item is repaired: the evaluation fails again.
    result = cli("dlq", "replay", "--queue", "evaluation", "--format", "json")

    assert result.code == 1
    assert (result.json["replayed"], result.json["failed"]) == (0, 1)
    (outcome,) = result.json["results"]
    assert (outcome["replayed"], outcome["deleted"]) == (False, True) and "failed again" in outcome["detail"]
    assert finish(runtime, result.json) == ["FAILED"]
    # The failed replay sent its own dead letter, which replaces the one replayed: one message per failure.
    [second] = cli.ok("dlq", "list", "--queue", "evaluation")["evaluation"]
    assert second["message_id"] != first["message_id"]
    assert second["execution"] == outcome["executions"][0] and second["window"] == first["window"]
    people = cli("dlq", "replay", "--queue", "evaluation")
    assert people.code == 1 and "failed again" in people.out

    set_assigned_at(table, "E2", "2026-03-01T09:00:00Z")
    replayed = cli.ok("dlq", "replay", "--queue", "evaluation")
    assert (replayed["replayed"], replayed["failed"]) == (1, 0)
    assert missed_on_monday(runtime) == ["E1", "E2"]
    assert cli.ok("dlq", "list", "--queue", "evaluation")["evaluation"] == []


def test_a_window_judged_but_never_announced_is_announced_once_by_its_replay(runtime: LocalRuntime, cli: Cli,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    url = announcements_queue(runtime)
    put_forklift(cli, "E1")
    runtime.settle()
    # EventBridge refuses every event: CloseWindow claims Monday, cannot announce it, and after its
    # retries the window goes to the DLQ with the execution that holds the claim.
    original = EventsBackend.put_events
    monkeypatch.setattr(EventsBackend, "put_events",
                        lambda _backend, entries: [{"ErrorCode": "InternalFailure", "ErrorMessage": "down"}
                                                   for _ in entries])
    runtime.advance_to(utc("2026-03-02T15:00:00Z"))
    [letter] = cli.ok("dlq", "list", "--queue", "evaluation")["evaluation"]
    assert letter["error"] == "TransientError"
    monday = table_of(runtime).judged_window("forklift-daily", utc(MONDAY))
    assert (monday["execution"], monday["announced"]) == (letter["execution"], False)
    monkeypatch.setattr(EventsBackend, "put_events", original)

    # Another execution (a re-run by hand) judges Monday again: the claim is not its own, so it
    # announces nothing and keeps the totals, but succeeds and moves the watermark past Monday.
    rerun = cli("rerun", "--checklist", "forklift-daily", "--at", "2026-03-02T15:00:00Z", "--wait", "--format", "json")
    assert rerun.code == 0
    assert announced(runtime, url) == []
    closed = rerun.json["output"]["judged"][0]
    assert (closed["announced"], closed["claimed_by"]) == (False, letter["execution"])

    # The replay is handed the claim, judges Monday again although the watermark passed it, and announces it.
    replayed = cli.ok("dlq", "replay", "--queue", "evaluation")
    assert replayed["replayed"] == 1 and finish(runtime, replayed) == ["SUCCEEDED"]
    [replay] = replayed["results"][0]["executions"]
    [event] = announced(runtime, url)
    assert (event["window_id"], event["execution"], event["missed"]) == (
        "forklift-daily#2026-03-02T05:00:00Z", replay, 1)
    monday = table_of(runtime).judged_window("forklift-daily", utc(MONDAY))
    assert (monday["execution"], monday["handed_over_from"], monday["announced"]) == (replay, letter["execution"],
                                                                                      True)
    assert missed_on_monday(runtime) == ["E1"]
    assert cli.ok("dlq", "list", "--queue", "evaluation")["evaluation"] == []
    # Tuesday's firing announces Tuesday, and nothing about Monday again.
    runtime.advance_to(utc("2026-03-03T15:00:00Z"))
    assert [e["window_id"] for e in announced(runtime, url)] == ["forklift-daily#2026-03-03T05:00:00Z"]


@pytest.fixture
def two_windows_a_run(embedded: None) -> Iterator[LocalRuntime]:
    """The stack with MaxWindowsPerRun 2, so that catching up takes several runs."""
    with ops_runtime(parameters={"MaxWindowsPerRun": "2"}) as runtime:
        yield runtime


def test_a_replay_judges_everything_due_by_now_when_no_firing_will_come(two_windows_a_run: LocalRuntime,
                                                                        cli: Cli) -> None:
    runtime = two_windows_a_run
    # Five daily drills, then the rule is finished: its schedule ends with the last window.
    cli.ok("checklist", "put", "drill", "--window", "PT8H", "--grace", "PT30M", "--recurrence",
           "DTSTART;TZID=Europe/Berlin:20260302T060000", "--recurrence", "RRULE:FREQ=DAILY;COUNT=5")
    cli.ok("equipment", "assign", "--checklist", "drill", "E1", "E2")
    runtime.settle()
    table = table_of(runtime)
    set_assigned_at(table, "E2", "last tuesday", checklist_id="drill")
    runtime.advance_to(utc("2026-03-09T12:00:00Z"))
    # Every firing failed on Monday, the oldest window due: nothing was judged, and none will fire again.
    letters = cli.ok("dlq", "list", "--queue", "evaluation")["evaluation"]
    assert letters and {utc(letter["window"]["start"]) for letter in letters} == {utc(MONDAY)}
    assert table.judged_windows("drill", utc(MONDAY), utc("2026-03-09T00:00:00Z")) == []
    assert runtime.next_firing_time() is None

    set_assigned_at(table, "E2", "2026-03-01T09:00:00Z", checklist_id="drill")
    result = cli("dlq", "replay", "--queue", "evaluation", "--format", "json")

    assert result.code == 0, result.json
    assert result.json["replayed"] == len(letters)
    # The first replay judged everything due by now, two windows a run (more_due), in three runs.
    assert len(result.json["results"][0]["executions"]) == 3
    judged = table.judged_windows("drill", utc(MONDAY), utc("2026-03-09T00:00:00Z"))
    assert [w["window_start"][:10] for w in judged] == [f"2026-03-0{day}" for day in range(2, 7)]
    assert all(w["announced"] for w in judged)
    missed = table.missed_checks_of_checklist("drill", utc(MONDAY), utc("2026-03-09T00:00:00Z"))
    assert sorted((m["window_start"][:10], m["equipment_id"]) for m in missed) == [
        (f"2026-03-0{day}", e) for day in range(2, 7) for e in ("E1", "E2")]
    assert table.get_checklist("drill").evaluated_until == utc("2026-03-06T13:00:00Z")
    assert cli.ok("dlq", "list", "--queue", "evaluation")["evaluation"] == []
