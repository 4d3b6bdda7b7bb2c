"""One dead-letter model: every letter is read by its tag (``kind``), in one place
(``missed_checks.dead_letters.read_dead_letter``), for listing, replaying and the local run's summary;
letters sent before the tag existed are still read, by their shape."""

from __future__ import annotations

import json

import pytest

from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.checklists.schedule import TARGET_INPUT_TEMPLATE
from missed_checks.dead_letters import (
    LETTERS,
    Replay,
    failed_window,
    failed_window_message,
    read_dead_letter,
)

WINDOW = {"start": "2026-03-02T06:00:00+01:00", "end": "2026-03-02T14:00:00+01:00",
          "evaluate_at": "2026-03-02T14:30:00+01:00"}
EXECUTION = "arn:aws:states:us-east-1:123456789012:execution:sm:x"
TAGGED = {
    "evaluation-window": {"kind": "evaluation-window", "source": "evaluation", "checklist_id": "fl", "window": WINDOW,
                          "execution": EXECUTION, "error": "TransientError", "cause": "c"},
    "evaluation-run": {"kind": "evaluation-run", "source": "evaluation", "checklist_id": "fl",
                       "instant": "2026-03-02T15:30:00+01:00", "execution": EXECUTION, "error": "E", "cause": "c"},
    "invalid-execution-input": {"kind": "invalid-execution-input", "source": "evaluation", "input": {"x": 1},
                                "execution": EXECUTION, "error": "InvalidExecutionInput", "cause": "needs fields"},
    "schedule-sync": {"kind": "schedule-sync", "source": "schedule-sync", "checklist_id": "fl", "revision": 2,
                      "error": {"field": "recurrence", "message": "m"}},
    "scheduler": {"kind": "scheduler", "checklist_id": "fl", "instant": "2026-03-02T13:30:00Z"},
    "stream-batch": {"DDBStreamBatchInfo": {"batchSize": 2, "startSequenceNumber": "1", "endSequenceNumber": "2"},
                     "requestContext": {"condition": "RetryAttemptsExhausted", "approximateInvokeCount": 3}},
    # notifications (#18)
    "notification": {"kind": "notification", "source": "notify", "error": "NotificationRejected: refused",
                     "failed_at": "2026-03-02T13:30:00Z",
                     "notification": {"kind": "missed", "checklist_id": "fl", "window_start": "2026-03-02T05:00:00Z",
                                      "to": "crew@example.com", "equipment": ["A"], "subject": "s", "body": "b"}},
    "reminder": {"kind": "reminder", "checklist_id": "fl", "lead": "PT1H", "instant": "2026-03-02T12:00:00Z"},
    "window-event": {"version": "0", "detail-type": "Occurrence window judged", "source": "missed-checks",
                     "detail": {"checklist_id": "fl", "window": WINDOW, "missed": 1}},
    "digest": {"kind": "digest", "subscription_id": "fleet-daily", "instant": "2026-03-02T06:00:00Z"},  # (#18)
    "recheck": {"kind": "recheck", "equipment_id": "FL-1"},  # readiness (#33)
}
EXPECTED = {
    "evaluation-window": ("evaluation", Replay.EVALUATE_FROM_NOW),
    "evaluation-run": ("evaluation", Replay.EVALUATE_FROM_NOW),
    "invalid-execution-input": ("unknown", Replay.NONE),
    "schedule-sync": ("schedule-sync", Replay.SYNC_CHECKLIST),
    "scheduler": ("scheduler", Replay.EVALUATE_AT_INSTANT),
    "stream-batch": ("stream-batch", Replay.SYNC_EVERYTHING),
    "notification": ("notification", Replay.NOTIFY_AGAIN),
    "reminder": ("notification", Replay.NOTIFY_AGAIN),
    "window-event": ("notification", Replay.NOTIFY_AGAIN),
    "digest": ("notification", Replay.DIGEST_AGAIN),  # digest (#18)
    "recheck": ("recheck", Replay.RECHECK_AGAIN),  # readiness (#33)
}


def test_every_kind_of_letter_is_in_the_registry_and_has_an_example() -> None:
    assert set(LETTERS) == set(TAGGED) == set(EXPECTED)


@pytest.mark.parametrize("kind", sorted(TAGGED))
def test_a_tagged_letter_is_read_by_its_tag(kind: str) -> None:
    said = read_dead_letter(TAGGED[kind], {"ERROR_CODE": "AccessDeniedException"})
    assert (said.kind, said.replay) == EXPECTED[kind]


@pytest.mark.parametrize("kind", sorted(set(TAGGED) - {"stream-batch", "recheck"}))  # a recheck was born tagged
def test_a_letter_sent_before_the_tag_existed_is_read_by_its_shape(kind: str) -> None:
    untagged = {k: v for k, v in TAGGED[kind].items() if k != "kind"}
    assert (read_dead_letter(untagged).kind, read_dead_letter(untagged).replay) == EXPECTED[kind]


def test_the_tag_wins_over_the_shape_and_an_unknown_tag_is_not_guessed() -> None:
    # An evaluation-run letter whose body also holds a window field is still a run letter.
    said = read_dead_letter({**TAGGED["evaluation-run"], "window": WINDOW, "cause": "boom"})
    assert said.window is None and said.instant == "2026-03-02T14:30:00Z"
    unknown = read_dead_letter({**TAGGED["scheduler"], "kind": "something-new"})
    assert (unknown.kind, unknown.replay) == ("unknown", Replay.NONE)
    assert "not a message missed-checks knows" in unknown.summary


def test_a_broken_letter_of_a_known_kind_is_unknown_not_an_error() -> None:
    said = read_dead_letter({"kind": "schedule-sync", "source": "schedule-sync", "checklist_id": "fl"})
    assert (said.kind, said.replay) == ("unknown", Replay.NONE)


def test_the_window_a_planning_task_failed_on_is_read_once_into_the_letter() -> None:
    window = OccurrenceWindow.from_dict(WINDOW)
    cause = '{"errorMessage": "' + failed_window_message(window, "throttled") + '", "errorType": "TransientError"}'
    said = read_dead_letter({**TAGGED["evaluation-run"], "cause": cause})
    assert said.window == WINDOW == failed_window(cause)
    assert said.instant == "2026-03-02T13:30:00Z"  # the window's end + grace, in UTC
    assert said.summary == "evaluation of fl (window 2026-03-02T06:00:00+01:00) failed: E"


def test_a_window_letter_carries_its_window_and_a_scheduler_letter_its_reasons() -> None:
    said = read_dead_letter(TAGGED["evaluation-window"])
    assert (said.window, said.execution, said.error) == (WINDOW, EXECUTION, "TransientError")
    firing = read_dead_letter(TAGGED["scheduler"], {"ERROR_CODE": "AccessDeniedException", "ERROR_MESSAGE": "no"})
    assert (firing.error, firing.cause, firing.instant) == ("AccessDeniedException", "no", "2026-03-02T13:30:00Z")
    assert firing.summary.startswith("firing not started (AccessDeniedException)")


def test_a_schedules_target_input_is_a_tagged_scheduler_letter() -> None:
    body = TARGET_INPUT_TEMPLATE.format(checklist_id="fl").replace("<aws.scheduler.scheduled-time>",
                                                                   "2026-03-02T13:30:00Z")
    said = read_dead_letter(json.loads(body))
    assert (said.kind, said.checklist_id, said.instant) == ("scheduler", "fl", "2026-03-02T13:30:00Z")


# -- what EventBridge Scheduler really sends (#30 item 3) ---------------------------------------------
SCHEDULER_SENT = {
    "ERROR_CODE": "AccessDeniedException",
    "ERROR_MESSAGE": "not authorized to perform: states:StartExecution",
    "EXECUTION_ID": "ad06616e51cdf74a",
    "IS_PAYLOAD_TRUNCATED": "false",
    "RETRY_ATTEMPTS": "0",
    "SCHEDULED_TIME": "2026-03-02T13:30:00Z",
    "SCHEDULE_ARN": "arn:aws:scheduler:us-east-1:123456789012:schedule/missed-checks/fl",
    "TARGET_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:evaluate",
}
"""The attributes of Scheduler's dead-letter event (Scheduler User Guide, "Configuring a dead-letter
queue", Retrieve the dead-letter event): a permanent error has no EXHAUSTED_RETRY_CONDITION."""


@pytest.mark.parametrize("body", [
    TAGGED["scheduler"],  # the execution input itself
    {"stateMachineArn": SCHEDULER_SENT["TARGET_ARN"], "input": json.dumps(TAGGED["scheduler"])},  # a request
    "{\"stateMachineArn\": \"arn:aws:states:us-east-1:1:stateM",  # cut short (IS_PAYLOAD_TRUNCATED)
])
def test_a_scheduler_dead_letter_is_replayable_whatever_its_body_and_says_why_it_failed(body: object) -> None:
    attributes = {**SCHEDULER_SENT, "IS_PAYLOAD_TRUNCATED": "true" if isinstance(body, str) else "false"}
    said = read_dead_letter(body, attributes)
    assert (said.kind, said.replay) == ("scheduler", Replay.EVALUATE_AT_INSTANT)
    assert (said.checklist_id, said.instant) == ("fl", "2026-03-02T13:30:00Z")
    assert (said.error, said.cause) == ("AccessDeniedException", SCHEDULER_SENT["ERROR_MESSAGE"])
    assert "not retried: a permanent error" in said.summary and "states:StartExecution" in said.summary


def test_a_retried_error_says_how_often() -> None:
    said = read_dead_letter(TAGGED["scheduler"], {**SCHEDULER_SENT, "ERROR_CODE": "ThrottlingException",
                                                  "RETRY_ATTEMPTS": "10",
                                                  "EXHAUSTED_RETRY_CONDITION": "MaximumRetryAttempts"})
    assert "given up after 10 retries (MaximumRetryAttempts)" in said.summary


def test_a_scheduler_dead_letter_that_names_no_firing_says_it_cannot_be_replayed() -> None:
    attributes = {key: value for key, value in SCHEDULER_SENT.items() if key != "SCHEDULED_TIME"}
    said = read_dead_letter("not json", {**attributes, "IS_PAYLOAD_TRUNCATED": "true"})
    assert said.replay is Replay.NONE and said.kind == "scheduler"
    assert "cannot be replayed" in said.summary and "SCHEDULED_TIME" in said.summary
    assert said.error == "AccessDeniedException"


def test_replaying_a_scheduler_dead_letter_that_names_no_firing_says_why_it_stays() -> None:
    from datetime import UTC, datetime

    from missed_checks_ops.dlq import Replayer, decode

    attributes = {key: {"DataType": "String", "StringValue": value} for key, value in SCHEDULER_SENT.items()
                  if key != "SCHEDULE_ARN"}
    letter = decode("scheduler", {"MessageId": "m", "ReceiptHandle": "r", "Body": "{\"cut", "MessageAttributes": {
        **attributes, "IS_PAYLOAD_TRUNCATED": {"DataType": "String", "StringValue": "true"}}})
    result = Replayer(None, datetime(2026, 3, 3, tzinfo=UTC)).replay_one(letter)  # type: ignore[arg-type]
    assert not result.ok and not result.deleted
    assert result.detail.startswith("cannot be replayed, left in the queue: an EventBridge Scheduler dead letter")
    assert "SCHEDULE_ARN" in result.detail
