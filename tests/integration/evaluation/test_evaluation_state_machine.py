"""The real statemachines/ definition, executed by moto, with the real handlers in-process."""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from moto.events.models import EventsBackend

from missed_checks import clock
from missed_checks.aws.table import ChecklistTable
from missed_checks.checklists.saving import save_checklist
from missed_checks.dead_letters import Replay, failed_window, read_dead_letter
from missed_checks.equipment.assignments import SHARD_COUNT, shard_of
from missed_checks.performed_checks.performed_check import PerformedCheck
from tests.conftest import FAN_OUT

BERLIN_WORKDAYS = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"
CREATED = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
# Monday 2 March 2026, 06:00-14:00 Berlin (UTC+1), grace 30 min: judged from 13:30Z.
MONDAY_START = datetime(2026, 3, 2, 5, 0, tzinfo=UTC)
MONDAY_EVALUATE_AT = datetime(2026, 3, 2, 13, 30, tzinfo=UTC)
EQUIPMENT = [f"fl-{n:03d}" for n in range(300)]


def start(stack, checklist_id: str, instant: datetime, name: str | None = None) -> str:
    """Start an execution as a firing would; its ARN."""
    return stack.client("stepfunctions").start_execution(
        stateMachineArn=stack.state_machine_arn,
        name=name or f"{checklist_id}-{instant:%Y%m%dT%H%M%SZ}-{time.monotonic_ns()}",
        input=json.dumps({"checklist_id": checklist_id, "instant": instant.strftime("%Y-%m-%dT%H:%M:%SZ")}),
    )["executionArn"]


def finished(stack, execution_arn: str) -> dict:
    sfn = stack.client("stepfunctions")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        described = sfn.describe_execution(executionArn=execution_arn)
        if described["status"] != "RUNNING":
            return described
        time.sleep(0.05)
    raise AssertionError("execution did not finish in 120 s")


def run(stack, checklist_id: str, instant: datetime, name: str | None = None) -> dict:
    return finished(stack, start(stack, checklist_id, instant, name))


def dead_letters(stack, logical_id: str) -> list[dict]:
    sqs = stack.client("sqs")
    messages = sqs.receive_message(QueueUrl=stack.queue_urls[logical_id], MaxNumberOfMessages=10,
                                   WaitTimeSeconds=0).get("Messages", [])
    return [json.loads(m["Body"]) for m in messages]


def announcements_queue(stack) -> str:
    """An SQS queue subscribed to the stack's window events (source missed-checks): its URL."""
    events, sqs = stack.client("events"), stack.client("sqs")
    queue_url = sqs.create_queue(QueueName="announcements")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.put_rule(Name="missed", EventPattern=json.dumps({"source": ["missed-checks"]}))
    events.put_targets(Rule="missed", Targets=[{"Id": "q", "Arn": queue_arn}])
    return queue_url


def announced(stack, queue_url: str) -> list[dict]:
    """The window events delivered to ``announcements_queue`` since the last call (consumed)."""
    sqs, found = stack.client("sqs"), []
    while messages := sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages", []):
        found += [json.loads(m["Body"]) for m in messages]
        sqs.delete_message_batch(QueueUrl=queue_url, Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]}
                                                              for i, m in enumerate(messages)])
    return found


def judged_windows(execution: dict) -> list[dict]:
    """The windows an execution judged, whether PlanEvaluation judged them or the fan-out did."""
    output = json.loads(execution["output"])
    return [*output["judged"], *output.get("fanned_out", [])]


def missed_equipment(table: ChecklistTable, checklist_id: str) -> list[tuple[str, str]]:
    items = table.missed_checks_of_checklist(checklist_id, CREATED, CREATED + timedelta(days=30))
    return sorted((i["window_start"], i["equipment_id"]) for i in items)


@pytest.fixture
def fleet(local_stack):
    clock.set_source(lambda: MONDAY_EVALUATE_AT)
    table = ChecklistTable(local_stack.table_name)
    save_checklist(table, "forklift", recurrence=BERLIN_WORKDAYS, window="PT8H", grace="PT30M", now=CREATED,
                        name="Forklift pre-use check", by="tests")
    table.assign_equipment("forklift", EQUIPMENT, at=CREATED, by="tests")
    # Every third piece of equipment was checked on time, every fifth late but within grace,
    # fl-001 after the grace (too late to count).
    checks = [PerformedCheck("forklift", e, MONDAY_START + timedelta(hours=2)) for e in EQUIPMENT[::3]]
    checks += [PerformedCheck("forklift", e, MONDAY_START + timedelta(hours=8, minutes=10)) for e in EQUIPMENT[::5]]
    checks.append(PerformedCheck("forklift", "fl-001", MONDAY_EVALUATE_AT + timedelta(minutes=1)))
    table.record_performed_checks(checks, recorded_at=CREATED)
    yield local_stack, table
    clock.set_source(None)


def expected_monday_misses() -> list[tuple[str, str]]:
    done = set(EQUIPMENT[::3]) | set(EQUIPMENT[::5])
    return sorted(("2026-03-02T05:00:00Z", e) for e in EQUIPMENT if e not in done)


def test_misses_exactly_the_equipment_without_a_check_across_every_shard(fleet):
    stack, table = fleet
    assert len({shard_of(e) for e in EQUIPMENT}) == SHARD_COUNT

    execution = run(stack, "forklift", MONDAY_EVALUATE_AT)

    assert execution["status"] == "SUCCEEDED", execution
    assert missed_equipment(table, "forklift") == expected_monday_misses()
    output = json.loads(execution["output"])
    assert [w["missed"] for w in output["judged"]] == [len(expected_monday_misses())]
    assert table.get_checklist("forklift").evaluated_until == datetime(2026, 3, 2, 13, 0, tzinfo=UTC)
    record = table.missed_checks_of_checklist("forklift", MONDAY_START, MONDAY_START + timedelta(hours=1))[0]
    assert table.judged_window("forklift", MONDAY_START)["judged_by"]["recurrence"] == BERLIN_WORKDAYS
    assert record["window_start"] == "2026-03-02T05:00:00Z" and "judged_by" not in record
    assert record["execution"].endswith(execution["name"])


def test_running_the_same_instant_again_writes_nothing_new(fleet):
    stack, table = fleet
    first = run(stack, "forklift", MONDAY_EVALUATE_AT)
    assert first["status"] == "SUCCEEDED"
    before = missed_equipment(table, "forklift")

    again = run(stack, "forklift", MONDAY_EVALUATE_AT)

    assert again["status"] == "SUCCEEDED"
    assert json.loads(again["output"])["outcome"] == "NOTHING_DUE"
    assert missed_equipment(table, "forklift") == before


def test_a_redrive_behind_the_watermark_rewrites_nothing(fleet):
    """Even if the watermark were reset (a redrive or a hand backfill), the conditional puts keep one record."""
    stack, table = fleet
    assert run(stack, "forklift", MONDAY_EVALUATE_AT)["status"] == "SUCCEEDED"
    stack.client("dynamodb").update_item(
        TableName=stack.table_name, Key={"pk": {"S": "CHECKLIST#forklift"}, "sk": {"S": "CHECKLIST#EVALUATED_UNTIL"}},
        UpdateExpression="SET evaluated_until = :t", ExpressionAttributeValues={":t": {"S": "2026-03-01T09:00:00Z"}})

    rerun = run(stack, "forklift", MONDAY_EVALUATE_AT)

    assert rerun["status"] == "SUCCEEDED"
    judged = json.loads(rerun["output"])["judged"]
    assert [(w["missed"], w["newly_recorded"]) for w in judged] == [(len(expected_monday_misses()), 0)]
    assert missed_equipment(table, "forklift") == expected_monday_misses()


def test_a_firing_that_closes_no_window_succeeds_without_writing(fleet):
    stack, table = fleet
    # Monday 13:29Z: the window has ended (13:00Z) but its grace has not.
    execution = run(stack, "forklift", MONDAY_EVALUATE_AT - timedelta(minutes=1))

    assert execution["status"] == "SUCCEEDED"
    assert json.loads(execution["output"])["outcome"] == "NOTHING_DUE"
    assert missed_equipment(table, "forklift") == []
    assert table.get_checklist("forklift").watermark == CREATED


def test_a_late_firing_catches_up_every_window_oldest_first(fleet):
    stack, table = fleet
    wednesday = datetime(2026, 3, 4, 14, 0, tzinfo=UTC)
    clock.set_source(lambda: wednesday)
    # Wednesday 14:00Z: Monday, Tuesday and Wednesday are all due.
    execution = run(stack, "forklift", wednesday)

    assert execution["status"] == "SUCCEEDED"
    starts = [w["window_start"] for w in json.loads(execution["output"])["judged"]]
    assert starts == ["2026-03-02T05:00:00Z", "2026-03-03T05:00:00Z", "2026-03-04T05:00:00Z"]
    assert len(missed_equipment(table, "forklift")) == len(expected_monday_misses()) + 2 * len(EQUIPMENT)


def test_an_instant_in_the_future_never_judges_a_window_that_has_not_closed(fleet):
    stack, table = fleet  # the clock says Monday 13:30Z
    execution = run(stack, "forklift", datetime(2027, 3, 2, 13, 30, tzinfo=UTC))

    assert execution["status"] == "SUCCEEDED"
    output = json.loads(execution["output"])
    assert [w["window_start"] for w in output["judged"]] == ["2026-03-02T05:00:00Z"]
    assert "in the future" in output["reason"]
    assert table.get_checklist("forklift").evaluated_until == datetime(2026, 3, 2, 13, 0, tzinfo=UTC)


def test_an_execution_input_without_the_checklist_or_instant_is_kept_in_the_dead_letter_queue(fleet):
    stack, _ = fleet
    sfn = stack.client("stepfunctions")
    started = sfn.start_execution(stateMachineArn=stack.state_machine_arn, name="typo",
                                  input=json.dumps({"checklist": "forklift", "at": "yesterday"}))
    while (described := sfn.describe_execution(executionArn=started["executionArn"]))["status"] == "RUNNING":
        time.sleep(0.05)

    assert described["status"] == "FAILED"
    (message,) = dead_letters(stack, "EvaluationDeadLetterQueue")
    assert message["error"] == "InvalidExecutionInput"
    assert {k: v for k, v in message["input"].items() if k != "error"} == {"checklist": "forklift", "at": "yesterday"}
    assert "checklist_id" in message["input"]["error"]["Cause"]  # PlanEvaluation's own words
    assert message["execution"] == started["executionArn"]


@pytest.mark.parametrize("fanned_out", [
    pytest.param(False, id="judged-by-the-plan"),
    pytest.param(True, id="fanned-out", marks=pytest.mark.stack_parameters(**FAN_OUT)),
])
def test_a_failing_task_lands_in_the_dead_letter_queue_naming_its_window_and_fails_the_execution(fleet, fanned_out):
    stack, table = fleet
    # A hand-edited assignment with a broken timestamp: the task judging its shard cannot judge it.
    stack.client("dynamodb").update_item(
        TableName=stack.table_name,
        Key={"pk": {"S": "CHECKLIST#forklift"}, "sk": {"S": f"EQUIPMENT#{shard_of('fl-002'):02d}#fl-002"}},
        UpdateExpression="SET assigned_at = :t", ExpressionAttributeValues={":t": {"S": "yesterday-ish"}})

    execution = run(stack, "forklift", MONDAY_EVALUATE_AT)

    assert execution["status"] == "FAILED" and execution.get("error") == "EvaluationFailed"
    (message,) = dead_letters(stack, "EvaluationDeadLetterQueue")
    assert (message["source"], message["checklist_id"]) == ("evaluation", "forklift")
    assert message["execution"] == execution["executionArn"]
    assert message["error"] == "InvalidInput" and "assigned_at" in message["cause"]
    # Fanned out, the window is a field of its own; judged by PlanEvaluation, its error names it.
    window = message["window"] if fanned_out else failed_window(message["cause"])
    assert window["start"] == "2026-03-02T06:00:00+01:00"
    if not fanned_out:
        assert message["instant"] == "2026-03-02T13:30:00Z"
    assert table.get_checklist("forklift").watermark == CREATED


def without_cause_as_on_aws(monkeypatch) -> None:
    """moto hands a Catch ``{"Error": ..., "Cause": ""}`` when the failure gave no cause; AWS leaves
    ``Cause`` out (a task's ``States.Timeout``, ``States.HeartbeatTimeout``, some ``States.TaskFailed``)."""
    from moto.stepfunctions.parser.asl.component.state.exec.execute_state import ExecutionState

    def error_output(failure_event):
        (details,) = failure_event.event_details.values()
        return {key.capitalize(): details[key] for key in ("error", "cause") if details.get(key) is not None}

    monkeypatch.setattr(ExecutionState, "_construct_error_output_value", staticmethod(error_output))


def timing_out(stack, monkeypatch, function: str) -> None:
    """Every invocation of ``function`` by the state machine times out: ``States.Timeout``, no cause."""
    from moto.stepfunctions.parser.asl.component.common.timeouts.timeout import EvalTimeoutError
    from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils

    original = lambda_eval_utils.execute_lambda_function_integration

    def invoke(env, parameters, region, state_credentials):
        spec = stack.function_by_name(parameters["FunctionName"])
        if spec is not None and spec.logical_id == function:
            raise EvalTimeoutError()
        return original(env=env, parameters=parameters, region=region, state_credentials=state_credentials)

    monkeypatch.setattr(lambda_eval_utils, "execute_lambda_function_integration", invoke)


@pytest.mark.parametrize(("function", "dead_letter"), [
    pytest.param("PlanEvaluationFunction", "evaluation-run", id="plan"),
    # CloseWindow, not RecordMissedChecks: moto's inline Map turns an iteration's States.* error into
    # States.Runtime ("Custom Error Names MUST NOT begin with the prefix 'States.'"); AWS keeps it.
    pytest.param("CloseWindowFunction", "evaluation-window", id="fanned-out",
                 marks=pytest.mark.stack_parameters(**FAN_OUT)),
])
def test_an_error_without_a_cause_still_lands_in_the_dead_letter_queue(fleet, monkeypatch, function, dead_letter):
    """Reading a missing ``$.error.Cause`` would fail the execution with States.Runtime, which no
    Catch catches: no dead letter, nothing to replay."""
    stack, table = fleet
    without_cause_as_on_aws(monkeypatch)
    timing_out(stack, monkeypatch, function)

    execution = run(stack, "forklift", MONDAY_EVALUATE_AT)

    assert execution["status"] == "FAILED" and execution.get("error") == "EvaluationFailed", execution.get("cause")
    (message,) = dead_letters(stack, "EvaluationDeadLetterQueue")
    assert (message["kind"], message["checklist_id"]) == (dead_letter, "forklift")
    assert message["error"] == "States.Timeout", message
    assert message["cause"].startswith("Step Functions gave no cause for this error")
    assert message["execution"] == execution["executionArn"]
    said = read_dead_letter(message)
    assert (said.kind, said.replay, said.error) == ("evaluation", Replay.EVALUATE_FROM_NOW, "States.Timeout")
    assert table.get_checklist("forklift").watermark == CREATED


def test_an_unusable_recurrence_fails_the_plan_and_lands_in_the_dead_letter_queue(fleet):
    stack, table = fleet
    save_checklist(table, "broken", recurrence="RRULE:FREQ=SOMETIMES", now=CREATED, validate=False, by="tests")

    execution = run(stack, "broken", MONDAY_EVALUATE_AT)

    assert execution["status"] == "FAILED"
    assert execution.get("error") == "EvaluationFailed"
    (message,) = dead_letters(stack, "EvaluationDeadLetterQueue")
    assert (message["checklist_id"], message["instant"]) == ("broken", "2026-03-02T13:30:00Z")
    assert message["error"] == "InvalidRecurrence"


@pytest.mark.parametrize("change", ["pause", "delete"])
def test_paused_or_deleted_checklists_are_skipped_cleanly(fleet, change):
    stack, table = fleet
    if change == "pause":
        table.pause_checklist("forklift", now=CREATED, by="tests")
    else:
        table.delete_checklist("forklift", by="tests")

    execution = run(stack, "forklift", MONDAY_EVALUATE_AT)

    assert execution["status"] == "SUCCEEDED"
    assert json.loads(execution["output"])["outcome"] == {"pause": "PAUSED", "delete": "CHECKLIST_GONE"}[change]
    assert missed_equipment(table, "forklift") == []


def test_each_judged_window_is_announced_on_eventbridge(fleet):
    stack, table = fleet
    queue_url = announcements_queue(stack)

    assert run(stack, "forklift", MONDAY_EVALUATE_AT)["status"] == "SUCCEEDED"

    (event,) = announced(stack, queue_url)
    assert event["detail-type"] == "Occurrence window judged"
    assert event["detail"]["missed"] == len(expected_monday_misses())
    assert event["detail"]["equipment_counted"] == len(EQUIPMENT)
    # More than 100 missed: the event carries their count, not the list.
    assert "missed_equipment" not in event["detail"]

    # A duplicate firing or a re-run behind the watermark judges again but announces nothing twice.
    stack.client("dynamodb").update_item(
        TableName=stack.table_name, Key={"pk": {"S": "CHECKLIST#forklift"}, "sk": {"S": "CHECKLIST#EVALUATED_UNTIL"}},
        UpdateExpression="SET evaluated_until = :t", ExpressionAttributeValues={":t": {"S": "2026-03-01T09:00:00Z"}})
    assert run(stack, "forklift", MONDAY_EVALUATE_AT)["status"] == "SUCCEEDED"
    assert announced(stack, queue_url) == []


def test_a_small_miss_list_is_announced_by_name(fleet):
    stack, table = fleet
    save_checklist(table, "extinguishers", now=CREATED, window="P1D",
                        recurrence="DTSTART;TZID=Europe/Berlin:20260302\nRRULE:FREQ=MONTHLY;BYMONTHDAY=2", by="tests")
    table.assign_equipment("extinguishers", ["ext-1", "ext-2", "ext-3"], at=CREATED, by="tests")
    table.record_performed_check(PerformedCheck("extinguishers", "ext-2", MONDAY_START + timedelta(hours=3)),
                                 recorded_at=CREATED)
    queue_url = announcements_queue(stack)
    clock.set_source(lambda: datetime(2026, 3, 3, 0, 0, tzinfo=UTC))

    assert run(stack, "extinguishers", datetime(2026, 3, 3, 0, 0, tzinfo=UTC))["status"] == "SUCCEEDED"

    (event,) = announced(stack, queue_url)
    detail = event["detail"]
    assert detail["missed_equipment"] == ["ext-1", "ext-3"]
    assert detail["window_id"] == "extinguishers#2026-03-01T23:00:00Z"


@pytest.mark.parametrize("closer", [
    pytest.param("PlanEvaluationFunction", id="judged-by-the-plan"),
    pytest.param("CloseWindowFunction", id="fanned-out", marks=pytest.mark.stack_parameters(**FAN_OUT)),
])
def test_two_executions_of_one_window_at_once_announce_it_once(fleet, monkeypatch, closer):
    """A scheduled firing racing a re-run or a DLQ replay, or Scheduler delivering one firing twice:
    both executions judge Monday at the same time, one announces it, both succeed."""
    stack, table = fleet
    queue_url = announcements_queue(stack)
    # Hold the first announcement until the other execution has closed the window too, so that both
    # CloseWindow tasks are between claiming the window and announcing it at the same time.
    original, calls, raced = EventsBackend.put_events, [], threading.Event()

    def held_put_events(backend, entries):
        calls.append(entries)
        if len(calls) == 1:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not raced.is_set():
                if any(i.function == closer for i in stack.lambda_runtime.invocations):  # the other one finished
                    raced.set()
                time.sleep(0.05)
        return original(backend, entries)

    monkeypatch.setattr(EventsBackend, "put_events", held_put_events)

    arns = [start(stack, "forklift", MONDAY_EVALUATE_AT, name=f"firing-{n}") for n in (1, 2)]
    executions = [finished(stack, arn) for arn in arns]

    assert [e["status"] for e in executions] == ["SUCCEEDED", "SUCCEEDED"], executions
    assert raced.is_set(), f"the local Lambda runtime ran the two {closer} tasks one after the other"
    closed = [judged_windows(e)[0] for e in executions]
    assert sorted(c["announced"] for c in closed) == [False, True]
    winner = arns[[c["announced"] for c in closed].index(True)]
    (event,) = announced(stack, queue_url)
    assert event["detail"]["execution"] == winner
    assert event["detail"]["missed"] == len(expected_monday_misses())
    record = table.judged_window("forklift", MONDAY_START)
    assert record["execution"] == winner and record["announced"] is True
    assert (record["missed"], record["equipment_counted"]) == (len(expected_monday_misses()), len(EQUIPMENT))
    # Between them every miss was recorded once (newly_recorded splits them), and the watermark moved once.
    assert sum(c["newly_recorded"] for c in closed) == len(expected_monday_misses())
    assert record["newly_recorded"] == closed[arns.index(winner)]["newly_recorded"]
    assert missed_equipment(table, "forklift") == expected_monday_misses()
    assert table.get_checklist("forklift").evaluated_until == datetime(2026, 3, 2, 13, 0, tzinfo=UTC)


def test_an_announcement_that_failed_is_made_by_the_retry_of_the_execution_that_claimed_the_window(
        fleet, monkeypatch):
    """A crash between the claim and the event: the winner's retry announces, once; no other execution does."""
    stack, table = fleet
    queue_url = announcements_queue(stack)
    original, calls = EventsBackend.put_events, []

    def failing_once(backend, entries):
        calls.append(entries)
        if len(calls) == 1:
            return [{"ErrorCode": "InternalFailure", "ErrorMessage": "injected"} for _ in entries]
        return original(backend, entries)

    monkeypatch.setattr(EventsBackend, "put_events", failing_once)

    execution = run(stack, "forklift", MONDAY_EVALUATE_AT)

    assert execution["status"] == "SUCCEEDED", execution
    assert len(calls) == 2  # the first attempt claimed the window, its event was refused; the retry announced
    (event,) = announced(stack, queue_url)
    assert event["detail"]["execution"] == execution["executionArn"]
    assert json.loads(execution["output"])["judged"][0]["announced"] is True

    # Another execution judging Monday again (the watermark reset by hand) neither announces nor rewrites.
    stack.client("dynamodb").update_item(
        TableName=stack.table_name, Key={"pk": {"S": "CHECKLIST#forklift"}, "sk": {"S": "CHECKLIST#EVALUATED_UNTIL"}},
        UpdateExpression="SET evaluated_until = :t", ExpressionAttributeValues={":t": {"S": "2026-03-01T09:00:00Z"}})
    again = run(stack, "forklift", MONDAY_EVALUATE_AT)
    assert again["status"] == "SUCCEEDED"
    closed = json.loads(again["output"])["judged"][0]
    assert (closed["announced"], closed["claimed_by"]) == (False, execution["executionArn"])
    assert closed["newly_recorded"] == 0
    assert announced(stack, queue_url) == []
    record = table.judged_window("forklift", MONDAY_START)
    assert (record["execution"], record["newly_recorded"]) == (execution["executionArn"],
                                                              len(expected_monday_misses()))
