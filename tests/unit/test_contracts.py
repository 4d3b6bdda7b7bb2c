"""The contracts (``missed_checks.contracts``) against every other place a payload's shape is spelled:
the state machine's Parameters and ItemSelectors, its dead-letter bodies, the samples in ``events/``,
the schedules' target input, the template's Outputs and the ops commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEventV2, DynamoDBStreamEvent

from missed_checks import contracts, dead_letters
from missed_checks.checklists.schedule import TARGET_INPUT_TEMPLATE
from missed_checks.contracts import (
    CloseWindowInput,
    ExecutionInput,
    FanOutWindow,
    JudgedWindowDetail,
    PlanEvaluationInput,
    RecordMissedChecksInput,
    StackOutputs,
    field_names,
    parse,
)
from missed_checks.dead_letters import (
    EvaluationInstantLetter,
    EvaluationWindowLetter,
    InvalidExecutionInputLetter,
    ReminderLetter,
    SchedulerLetter,
    ScheduleSyncLetter,
)
from missed_checks.errors import InvalidInput
from missed_checks.performed_checks.recording import check_from
from missed_checks_local.cloudformation.deploy import load_sam_template
from missed_checks_ops import dlq, target

ROOT = Path(__file__).resolve().parents[2]
ASL = json.loads((ROOT / "statemachines" / "evaluate_checklist.asl.json").read_text())
EVENTS = ROOT / "events"

TASK_INPUTS = {
    "${PlanEvaluationFunctionArn}": PlanEvaluationInput,
    "${RecordMissedChecksFunctionArn}": RecordMissedChecksInput,
    "${CloseWindowFunctionArn}": CloseWindowInput,
}
MAP_ITEMS = {"JudgeDueWindows": FanOutWindow, "JudgeEquipmentBatches": RecordMissedChecksInput}
DEAD_LETTER_STATES = {
    "SendWindowToDeadLetterQueue": EvaluationWindowLetter,
    "SendToDeadLetterQueue": EvaluationInstantLetter,
    "RejectInput": InvalidExecutionInputLetter,
}
SAMPLES = {
    "evaluation_input.json": ExecutionInput,
    "plan_evaluation.json": PlanEvaluationInput,
    "record_missed_checks.json": RecordMissedChecksInput,
    "close_window.json": CloseWindowInput,
    "schedule_sync.json": DynamoDBStreamEvent,  # Lambda's own event: Powertools' data class
    "audit.json": DynamoDBStreamEvent,  # the audit trail (#31): a checklist created, stamped
    "readiness.json": DynamoDBStreamEvent,  # readiness (#33): an assignment, which the readiness function reads
    "readiness_recheck.json": dead_letters.RecheckLetter,  # readiness (#33): a recheck firing, and its dead letter
    "api_record_check.json": APIGatewayProxyEventV2,  # API Gateway's payload 2.0 (HTTP API, issue #19)
    "api_equipment_status.json": APIGatewayProxyEventV2,
    "api_missed.json": APIGatewayProxyEventV2,
    "api_report.json": APIGatewayProxyEventV2,
    "api_manage_me.json": APIGatewayProxyEventV2,  # the management routes (#31), a person on PeopleApi
    "webapp_sign_in.json": APIGatewayProxyEventV2,  # the web app (#32): its $default route, no authorizer
    # the notifier (#18): EventBridge's envelope around the window event's detail, a reminder firing
    "notify_window_judged.json": JudgedWindowDetail,
    "notify_reminder.json": ReminderLetter,
    "digest.json": dead_letters.DigestLetter,  # digest (#18): a subscription's firing, and its dead letter
}
WINDOW = {"start": "2026-03-02T06:00:00+01:00", "end": "2026-03-02T14:00:00+01:00",
          "evaluate_at": "2026-03-02T14:30:00+01:00"}
EXECUTION = "arn:aws:states:us-east-1:123456789012:execution:EvaluationStateMachine-EXAMPLE:x"
# What the state machine's paths hand a dead-letter body, by key.
PATH_EXAMPLES: dict[str, Any] = {"checklist_id": "forklift-daily", "window": WINDOW, "execution": EXECUTION,
                                 "instant": "2026-03-02T13:30:00Z", "error": "InvalidInput",
                                 "cause": "shards[0]: ...", "input": {"instant": 5}}


def states(definition: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every state, also those inside Map ItemProcessors, by name."""
    found = {}
    for name, state in definition["States"].items():
        found[name] = state
        if "ItemProcessor" in state:
            found.update(states(state["ItemProcessor"]))
    return found


def fields_of(parameters: dict[str, Any]) -> set[str]:
    return {key.removesuffix(".$") for key in parameters}


def test_every_lambda_task_passes_exactly_its_input_models_fields() -> None:
    tasks = {name: s for name, s in states(ASL).items() if s.get("Resource") == "arn:aws:states:::lambda:invoke"}
    assert {s["Parameters"]["FunctionName"] for s in tasks.values()} == set(TASK_INPUTS)
    for name, state in tasks.items():
        model = TASK_INPUTS[state["Parameters"]["FunctionName"]]
        assert fields_of(state["Parameters"]["Payload"]) == field_names(model), name


def test_every_map_selects_exactly_its_item_models_fields() -> None:
    maps = {name: s for name, s in states(ASL).items() if s["Type"] == "Map"}
    assert set(maps) == set(MAP_ITEMS)
    for name, state in maps.items():
        assert fields_of(state["ItemSelector"]) == field_names(MAP_ITEMS[name]), name


def test_the_fan_out_reads_fields_plan_evaluation_outputs() -> None:
    judge = ASL["States"]["JudgeDueWindows"]
    read = {judge["ItemsPath"], *(v for k, v in judge["ItemSelector"].items() if v.startswith("$."))}
    assert {path.removeprefix("$.") for path in read} <= field_names(contracts.PlanEvaluationOutput)


@pytest.mark.parametrize("state_name", sorted(DEAD_LETTER_STATES))
def test_every_dead_letter_body_is_its_message_model(state_name: str) -> None:
    model = DEAD_LETTER_STATES[state_name]
    body = states(ASL)[state_name]["Parameters"]["MessageBody"]
    assert fields_of(body) == field_names(model)
    example = {key.removesuffix(".$"): PATH_EXAMPLES[key.removesuffix(".$")] if key.endswith(".$") else value
               for key, value in body.items()}
    assert type(dead_letters.decode_dead_letter(example)) is model


def test_every_state_sending_to_the_evaluation_queue_has_a_model() -> None:
    senders = {name for name, s in states(ASL).items() if s.get("Resource") == "arn:aws:states:::sqs:sendMessage"}
    assert senders == set(DEAD_LETTER_STATES)


@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_every_sample_event_validates_against_its_model(sample: str) -> None:
    assert {path.name for path in EVENTS.glob("*.json")} == set(SAMPLES)
    event = json.loads((EVENTS / sample).read_text())
    if SAMPLES[sample] is DynamoDBStreamEvent:
        records = list(DynamoDBStreamEvent(event).records)
        assert records and all(r.dynamodb and r.dynamodb.keys["pk"].startswith("CHECKLIST#") for r in records)
    elif SAMPLES[sample] is APIGatewayProxyEventV2:  # the caller an IAM principal or a person; a POST's body a check
        request = APIGatewayProxyEventV2(event)
        authorizer = request.request_context.authorizer
        if request.route_key == "$default":  # the web app (#32): no authorizer, its session is a cookie
            assert request.version == "2.0" and "authorizer" not in event["requestContext"]
            assert request.raw_path.startswith("/") and request.request_context.http.method == "GET"
            return
        assert request.version == "2.0" and (authorizer.iam.user_arn or authorizer.jwt_claim.get("username"))
        assert request.route_key == f"{request.request_context.http.method} {request.route_key.split(' ')[1]}"
        if request.request_context.http.method == "POST":
            check_from(request.json_body)
        else:
            assert request.body is None
    elif SAMPLES[sample] is JudgedWindowDetail:  # as EventBridge delivers it to the notifier
        assert (event["source"], event["detail-type"]) == ("missed-checks", "Occurrence window judged")
        parse(JudgedWindowDetail, event["detail"])
    else:
        parse(SAMPLES[sample], event)


def test_a_schedules_target_input_is_an_execution_input_and_its_dead_letter() -> None:
    text = TARGET_INPUT_TEMPLATE.format(checklist_id="forklift-daily")
    body = json.loads(text.replace("<aws.scheduler.scheduled-time>", "2026-03-02T13:30:00Z"))
    assert set(body) == field_names(SchedulerLetter)
    parse(ExecutionInput, body)
    assert type(dead_letters.decode_dead_letter(body)) is SchedulerLetter


def test_the_stack_outputs_are_the_templates_and_the_ops_commands_name_only_those() -> None:
    outputs = load_sam_template(ROOT / "template.yaml")["Outputs"]
    assert set(outputs) == field_names(StackOutputs)
    assert {*target.QUEUE_OUTPUTS.values(), *target.OVERRIDES.values()} <= field_names(StackOutputs)


@pytest.mark.parametrize(("payload", "field"), [
    ({"input": {"checklist_id": "fl", "instant": 5}}, "input.instant"),
    ({"input": {"instant": "2026-03-02T13:30:00Z"}}, "input.checklist_id"),
    ({"input": {"checklist_id": "no spaces", "instant": "2026-03-02T13:30:00Z"}}, "input.checklist_id"),
    ({"input": {"checklist_id": "fl", "instant": "2026-03-02T13:30:00"}}, "input.instant"),
    ({"input": {"checklist_id": "fl", "instant": "2026-03-02T13:30:00Z", "claimed_window": {"start": "x"}}},
     "input.claimed_window.start"),
    ({"input": [1]}, "input"),
])
def test_a_payload_that_does_not_fit_is_invalid_input_naming_the_field(payload: Any, field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse(PlanEvaluationInput, payload)
    assert caught.value.field == field and str(caught.value).startswith(f"{field}: ")


@pytest.mark.parametrize(("shards", "field"), [
    ([0, True], "shards[1]"), ([16], "shards[0]"), ([-1], "shards[0]"), (["3"], "shards[0]"), ([], "shards"),
    (None, "shards"), (3, "shards"),
])
def test_shards_are_whole_numbers_of_the_stored_shards(shards: Any, field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse(RecordMissedChecksInput, {"checklist_id": "fl", "window": WINDOW, "shards": shards})
    assert caught.value.field == field


def test_a_window_outside_the_supported_years_is_invalid() -> None:
    with pytest.raises(InvalidInput) as caught:
        parse(CloseWindowInput, {"checklist_id": "fl", "window": {**WINDOW, "end": "2401-01-01T00:00:00Z"}})
    assert caught.value.field == "window.end"


def test_an_empty_claimed_window_is_none_and_a_task_without_execution_is_manual() -> None:
    task = parse(PlanEvaluationInput, {"input": {"checklist_id": "fl", "instant": "2026-03-02T13:30:00Z",
                                                 "claimed_window": {}}, "execution": None})
    assert task.input.claimed_window is None and task.execution == "manual"


def _sqs_message(body: Any, **attributes: str) -> dict[str, Any]:
    return {"MessageId": "m1", "ReceiptHandle": "r1", "Body": json.dumps(body),
            "MessageAttributes": {k: {"StringValue": v, "DataType": "String"} for k, v in attributes.items()}}


@pytest.mark.parametrize(("body", "kind"), [
    ({"source": "schedule-sync", "checklist_id": "fl", "revision": 2, "error": {"field": "recurrence", "message": "m"},
      "event_id": "e", "sequence_number": "1"}, "schedule-sync"),
    ({"requestContext": {"condition": "RetryAttemptsExhausted"}, "responseContext": {"statusCode": 200},
      "DDBStreamBatchInfo": {"batchSize": 1}}, "stream-batch"),
    ({"source": "evaluation", "checklist_id": "fl", "window": WINDOW, "execution": EXECUTION, "error": "E",
      "cause": "c"}, "evaluation"),
    ({"source": "evaluation", "checklist_id": "fl", "instant": "2026-03-02T13:30:00Z", "execution": EXECUTION,
      "error": "E", "cause": "c"}, "evaluation"),
    ({"checklist_id": "fl", "instant": "2026-03-02T13:30:00Z"}, "scheduler"),
    ({"hello": "world"}, "unknown"),
    ("not json", "unknown"),
])
def test_the_ops_decoder_reads_dead_letters_with_the_contract_models(body: Any, kind: str, monkeypatch) -> None:
    seen: list[object] = []

    real = dead_letters.decode_dead_letter
    monkeypatch.setattr(dead_letters, "decode_dead_letter", lambda value: seen.append(real(value)) or seen[-1])
    letter = dlq.decode("evaluation", _sqs_message(body, ERROR_CODE="X"))
    assert letter.kind == kind and len(seen) == 1  # decoded once, by the contracts
    if isinstance(seen[0], ScheduleSyncLetter):
        assert letter.error == "recurrence: m"
    if kind == "evaluation":
        assert letter.instant == "2026-03-02T13:30:00Z" and letter.checklist_id == "fl"


def test_a_digest_schedules_input_is_the_digest_functions_event_and_its_dead_letter() -> None:
    from missed_checks.notifications.digest import DIGEST_INPUT_TEMPLATE

    text = DIGEST_INPUT_TEMPLATE.format(subscription_id="fleet-daily")
    body = json.loads(text.replace("<aws.scheduler.scheduled-time>", "2026-03-03T06:00:00Z"))
    assert body == json.loads((EVENTS / "digest.json").read_text())
    assert type(dead_letters.decode_dead_letter(body)) is dead_letters.DigestLetter
