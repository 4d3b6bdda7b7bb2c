"""One dead-letter model: every message the stack's dead-letter queues hold, a contract each, read
by its tag in one place (:func:`read_dead_letter`) for listing, replaying and the local run's summary.

Each letter names its kind in its body (``kind``): the state machine's Catch bodies
(``statemachines/evaluate_checklist.asl.json``), schedule-sync's letters and the schedules' target
input (a firing Scheduler could not deliver) all carry it. Letters sent before the tag existed (in
the queues of a deployed stack) are recognised by their shape instead (:func:`_untagged_kind`), and so
is Lambda's own OnFailure record of a stream batch, which cannot carry a tag.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.contracts import dump, parse
from missed_checks.errors import InvalidInput
from missed_checks.timefmt import parse_instant, to_utc_iso

__all__ = [
    "LETTERS", "DeadLetter", "EvaluationInstantLetter", "EvaluationWindowLetter", "InvalidExecutionInputLetter",
    "LetterView", "NotificationLetter", "ReminderLetter", "Replay", "ScheduleSyncLetter", "SchedulerLetter",
    "StreamBatchLetter", "SyncError", "WindowEventLetter",
    "decode_dead_letter", "failed_window", "failed_window_message", "read_dead_letter",
    "DigestLetter",  # digest (#18)
    "RecheckLetter",  # readiness (#33)
]


class Replay(StrEnum):
    """How a dead letter is replayed (``missed_checks_ops.dlq.Replayer``)."""

    SYNC_CHECKLIST = "sync-checklist"
    """Re-run schedule-sync for the letter's checklist."""
    SYNC_EVERYTHING = "sync-everything"
    """Re-run schedule-sync for every checklist and every schedule (which checklists is unknown)."""
    EVALUATE_FROM_NOW = "evaluate-from-now"
    """Start the evaluation at the later of the letter's instant and now (and hand over its window's claim)."""
    EVALUATE_AT_INSTANT = "evaluate-at-instant"
    """Start the evaluation at the letter's own instant (a firing that never started)."""
    NONE = "none"
    """Not replayable: left in the queue."""
    NOTIFY_AGAIN = "notify-again"
    """Hand the letter back to the notifier (#18): whatever was sent already is not sent again."""
    DIGEST_AGAIN = "digest-again"
    """Fire the digest function again with the letter (#18): a digest sent already is not sent again."""
    RECHECK_AGAIN = "recheck-again"
    """Hand the letter back to the readiness function (#33): a change announced already is not announced again."""


@dataclass(frozen=True)
class LetterView:
    """What a dead letter says, the same for every kind: listed by the ops commands, summarised by
    the local run, replayed by ``replay``."""

    kind: str
    """``schedule-sync``, ``stream-batch``, ``evaluation``, ``scheduler`` or ``unknown``."""
    replay: Replay
    summary: str
    checklist_id: str | None = None
    instant: str | None = None
    """UTC ISO (as the table and Scheduler write instants) when it can be read, else as it came."""
    window: dict[str, str] | None = None
    """The failed window (``start``, ``end``, ``evaluate_at``), when an evaluation letter names one."""
    execution: str | None = None
    error: str = ""
    cause: str = ""


_UNKNOWN = "not a message missed-checks knows: left in the queue"


def failed_window_message(window: OccurrenceWindow, error: object) -> str:
    """The error message of a window PlanEvaluation judged itself and failed (Lambda reports only
    ``errorType`` and ``errorMessage``, so the window rides in the message: :func:`failed_window`)."""
    text = window.to_dict()
    return f"window {text['start']}..{text['end']} (judged from {text['evaluate_at']}): {error}"


_FAILED_WINDOW = re.compile(r"window (\S+)\.\.(\S+) \(judged from (\S+)\): ")


def failed_window(error_message: str) -> dict[str, str] | None:
    """The window :func:`failed_window_message` names (``start``, ``end``, ``evaluate_at``), or None."""
    match = _FAILED_WINDOW.search(error_message)
    return dict(zip(("start", "end", "evaluate_at"), match.groups(), strict=True)) if match else None


def _utc(instant: str) -> str:
    try:  # one spelling for people and tools
        return to_utc_iso(parse_instant(instant, "instant"))
    except ValueError:
        return instant  # shown as it came; its replay fails and says why


@dataclass(frozen=True)
class EvaluationWindowLetter:
    """A fanned-out window that failed (the state machine's SendWindowToDeadLetterQueue)."""

    kind: Literal["evaluation-window"]
    source: Literal["evaluation"]
    checklist_id: str
    window: OccurrenceWindow
    execution: str
    error: str
    cause: str

    def view(self, attributes: Mapping[str, str]) -> LetterView:
        return _evaluation_view(self.checklist_id, dump(self.window), None, self.execution, self.error, self.cause)


@dataclass(frozen=True)
class EvaluationInstantLetter:
    """A run that failed in PlanEvaluation or around a fanned-out window (SendToDeadLetterQueue). A
    window PlanEvaluation judged itself is named in ``cause`` (:func:`failed_window`)."""

    kind: Literal["evaluation-run"]
    source: Literal["evaluation"]
    checklist_id: str
    instant: str
    """As the failed input gave it: it may be what made the run fail."""
    execution: str
    error: str
    cause: str

    def view(self, attributes: Mapping[str, str]) -> LetterView:
        return _evaluation_view(self.checklist_id, failed_window(self.cause), self.instant, self.execution,
                                self.error, self.cause)


def _evaluation_view(checklist_id: str, window: dict[str, str] | None, instant: str | None, execution: str,
                     error: str, cause: str) -> LetterView:
    when = _utc(window["evaluate_at"] if window else str(instant))
    what = f"window {window['start']}" if window else when
    return LetterView("evaluation", Replay.EVALUATE_FROM_NOW, f"evaluation of {checklist_id} ({what}) failed: {error}",
                      checklist_id=checklist_id, instant=when, window=window, execution=execution,
                      error=error, cause=cause)


@dataclass(frozen=True)
class InvalidExecutionInputLetter:
    """An execution input without string ``checklist_id`` and ``instant``, kept as it came (RejectInput)."""

    kind: Literal["invalid-execution-input"]
    source: Literal["evaluation"]
    input: Any
    execution: str
    error: Literal["InvalidExecutionInput"]
    cause: str

    def view(self, attributes: Mapping[str, str]) -> LetterView:
        return LetterView("unknown", Replay.NONE, f"execution input refused ({self.cause}): {str(self.input)[:200]}",
                          execution=self.execution, error=self.error, cause=self.cause)


@dataclass(frozen=True)
class SyncError:
    field: str
    message: str


@dataclass(frozen=True)
class ScheduleSyncLetter:
    """schedule-sync's record of a checklist it cannot schedule."""

    kind: Literal["schedule-sync"]
    source: Literal["schedule-sync"]
    checklist_id: str
    revision: int
    error: SyncError
    event_id: str | None = None
    sequence_number: str | None = None

    def view(self, attributes: Mapping[str, str]) -> LetterView:
        error = f"{self.error.field}: {self.error.message}"
        return LetterView("schedule-sync", Replay.SYNC_CHECKLIST,
                          f"schedule-sync refused {self.checklist_id}: {error} (revision {self.revision})",
                          checklist_id=self.checklist_id, error=error)


@dataclass(frozen=True)
class StreamBatchLetter:
    """Lambda's OnFailure record of a stream batch schedule-sync kept failing (stream positions, not
    checklists). Lambda's own shape (no tag): only what the tools read is declared."""

    DDBStreamBatchInfo: dict[str, Any]
    requestContext: dict[str, Any] = field(default_factory=dict)
    responseContext: dict[str, Any] = field(default_factory=dict)

    def view(self, attributes: Mapping[str, str]) -> LetterView:
        info, context, response = self.DDBStreamBatchInfo, self.requestContext, self.responseContext
        return LetterView(
            "stream-batch", Replay.SYNC_EVERYTHING,
            f"stream batch given up after {context.get('approximateInvokeCount')} attempts: "
            f"{info.get('batchSize')} record(s) from sequence {info.get('startSequenceNumber')}"
            f"..{info.get('endSequenceNumber')} were never synced; replay re-syncs every checklist",
            error=str(context.get("condition") or ""),
            cause=(f"function {context.get('functionArn')} returned {response.get('statusCode')}"
                   + (f" ({response.get('functionError')})" if response.get("functionError") else "")))


@dataclass(frozen=True)
class SchedulerLetter:
    """A firing EventBridge Scheduler could not deliver: the schedule's target input
    (``missed_checks.checklists.schedule.TARGET_INPUT_TEMPLATE``), read from the dead letter's body
    or, when the body is not that, from Scheduler's message attributes (:func:`scheduler_firing`)."""

    kind: Literal["scheduler"]
    checklist_id: str
    instant: str

    def view(self, attributes: Mapping[str, str]) -> LetterView:
        code, message = attributes.get("ERROR_CODE", ""), attributes.get("ERROR_MESSAGE", "")
        return LetterView("scheduler", Replay.EVALUATE_AT_INSTANT,
                          f"firing not started ({code}): {self.checklist_id} at {self.instant} never started an "
                          f"evaluation: {message or 'no message'} ({_attempts(attributes)})",
                          checklist_id=self.checklist_id, instant=_utc(self.instant), error=code, cause=message)


SCHEDULER_ATTRIBUTES = ("ERROR_CODE", "ERROR_MESSAGE", "EXECUTION_ID", "EXHAUSTED_RETRY_CONDITION",
                        "IS_PAYLOAD_TRUNCATED", "RETRY_ATTEMPTS", "SCHEDULED_TIME", "SCHEDULE_ARN", "TARGET_ARN")
"""The message attributes of an EventBridge Scheduler dead-letter event (Scheduler User Guide,
"Configuring a dead-letter queue for EventBridge Scheduler", Retrieve the dead-letter event:
https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html). Its body is
"a JSON payload containing invocation details": in the guide's example the target's request
(``{"MessageBody": ..., "QueueUrl": ...}`` for SQS SendMessage), for a templated Step Functions
target the execution input or a StartExecution request wrapping it; it is cut short when
``IS_PAYLOAD_TRUNCATED`` is ``true``. So the firing is read from the body when it can be, else
from ``SCHEDULE_ARN`` (the schedule is named after its checklist) and ``SCHEDULED_TIME``."""


def _attempts(attributes: Mapping[str, str]) -> str:
    retries = attributes.get("RETRY_ATTEMPTS")
    condition = attributes.get("EXHAUSTED_RETRY_CONDITION")
    if condition:  # present only for an error Scheduler retried (the guide)
        return f"given up after {retries or '?'} retries ({condition})"
    return "not retried: a permanent error" if "ERROR_CODE" in attributes else "no retry details"


def _unwrapped(body: object) -> object:
    """The execution input inside a StartExecution request (``input``/``Input`` beside the state
    machine's ARN), decoded; any other body as it is."""
    if isinstance(body, Mapping) and ({"stateMachineArn", "StateMachineArn"} & set(body)):
        inner = body.get("input", body.get("Input"))
        if isinstance(inner, str):
            try:
                return json.loads(inner)
            except ValueError:
                return inner
        return inner
    return body


def scheduler_firing(attributes: Mapping[str, str]) -> SchedulerLetter | str:
    """The firing an EventBridge Scheduler dead letter names by its attributes (its body did not say
    it), or why it cannot be replayed (a sentence)."""
    schedule_arn, scheduled = attributes.get("SCHEDULE_ARN", ""), attributes.get("SCHEDULED_TIME", "")
    name = schedule_arn.rsplit("/", 1)[-1] if ":schedule/" in schedule_arn else ""
    if not name or not scheduled:
        body = "cut short (IS_PAYLOAD_TRUNCATED)" if attributes.get("IS_PAYLOAD_TRUNCATED") == "true" else "unreadable"
        return (f"an EventBridge Scheduler dead letter whose body is {body} and whose attributes lack "
                f"{'SCHEDULE_ARN' if not name else 'SCHEDULED_TIME'}: which checklist and instant it was cannot be "
                "known, so it cannot be replayed; `missed-checks rerun` starts the evaluation by hand")
    if name.startswith("_"):
        return (f"an EventBridge Scheduler dead letter of schedule {name} (not a checklist's evaluation schedule) "
                "whose body is not its input: it cannot be replayed")
    return SchedulerLetter(kind="scheduler", checklist_id=name, instant=scheduled)


# -- notifications (#18): the notification dead-letter queue ---------------------------------------------
@dataclass(frozen=True)
class NotificationLetter:
    """A notification a channel refused, or that kept failing: the notifier's own letter, one per
    notification (the others of its window went out)."""

    kind: Literal["notification"]
    source: Literal["notify", "readiness"]
    """Who wrote it: the notifier, or the readiness function (a defect alert, #33)."""
    notification: dict[str, Any]
    """``missed_checks.notifications.notification.Notification.to_dict()``: replayed as it is."""
    error: str
    failed_at: str

    def view(self, attributes: Mapping[str, str]) -> LetterView:
        n = self.notification
        what = f"{n.get('kind')} of {n.get('checklist_id')} to {n.get('to')}"
        window = f" (window {n.get('window_start')})" if n.get("window_start") else ""
        return LetterView("notification", Replay.NOTIFY_AGAIN, f"{what}{window} not sent: {self.error}",
                          checklist_id=str(n.get("checklist_id") or "") or None, instant=self.failed_at,
                          error=self.error)


@dataclass(frozen=True)
class ReminderLetter:
    """A reminder schedule's firing the notifier could not handle (Lambda's own dead letter of the
    asynchronous invocation, or Scheduler's when it could not invoke): the schedule's input."""

    kind: Literal["reminder"]
    checklist_id: str
    lead: str
    instant: str

    def view(self, attributes: Mapping[str, str]) -> LetterView:
        code = attributes.get("ErrorCode") or attributes.get("ERROR_CODE", "")
        message = attributes.get("ErrorMessage") or attributes.get("ERROR_MESSAGE", "")
        return LetterView("notification", Replay.NOTIFY_AGAIN,
                          f"reminder of {self.checklist_id} ({self.lead} before the window closes) at {self.instant} "
                          f"not handled: {code or 'failed'}", checklist_id=self.checklist_id,
                          instant=_utc(self.instant), error=code, cause=message)


@dataclass(frozen=True)
class WindowEventLetter:
    """An ``Occurrence window judged`` event the notifier could not handle (the rule's or the
    function's dead letter: the event as EventBridge delivered it)."""

    kind: Literal["window-event"]
    detail: dict[str, Any]

    def view(self, attributes: Mapping[str, str]) -> LetterView:
        window = self.detail.get("window") if isinstance(self.detail.get("window"), dict) else None
        code = attributes.get("ErrorCode") or attributes.get("ERROR_CODE", "")
        return LetterView("notification", Replay.NOTIFY_AGAIN,
                          f"notifications of {self.detail.get('checklist_id')} (window "
                          f"{(window or {}).get('start')}) not handled: {code or 'failed'}",
                          checklist_id=str(self.detail.get("checklist_id") or "") or None, window=window, error=code,
                          cause=attributes.get("ErrorMessage") or attributes.get("ERROR_MESSAGE", ""))


def async_failure(attributes: Mapping[str, str]) -> tuple[str, str]:
    """(error code, message) of a dead letter of Lambda's asynchronous invocation (``ErrorCode``,
    ``ErrorMessage``) or of Scheduler's (``ERROR_CODE``, ``ERROR_MESSAGE``)."""
    return (attributes.get("ErrorCode") or attributes.get("ERROR_CODE", ""),
            attributes.get("ErrorMessage") or attributes.get("ERROR_MESSAGE", ""))


@dataclass(frozen=True)
class DigestLetter:
    """A digest firing (#18) the digest function could not handle (Lambda's dead letter of the
    asynchronous invocation after its retries, or Scheduler's when it could not invoke): the
    schedule's input, replayed as it is (the same period, so a digest sent already is not sent again)."""

    kind: Literal["digest"]
    subscription_id: str
    instant: str
    error: str = ""
    """The digest function's own letter (#30 item 4): the addresses SES refused for good, each named
    with SES's reason; the firing's other addresses were sent. Empty in Lambda's and Scheduler's."""

    def view(self, attributes: Mapping[str, str]) -> LetterView:
        code, message = ("RecipientRefused", self.error) if self.error else async_failure(attributes)
        return LetterView("notification", Replay.DIGEST_AGAIN,
                          f"digest {self.subscription_id} fired at {self.instant} not sent: "
                          f"{(message or code or 'failed')[:200]}",
                          instant=_utc(self.instant), error=code, cause=message)


@dataclass(frozen=True)
class RecheckLetter:
    """An equipment's readiness recheck (#33): the input of its one-time recheck schedule
    (``{"kind": "recheck", "equipment_id": ...}``), and so the body of a firing the readiness function
    could not handle (Lambda's dead letter after its retries) or Scheduler could not deliver."""

    kind: Literal["recheck"]
    equipment_id: str

    def view(self, attributes: Mapping[str, str]) -> LetterView:
        code, message = async_failure(attributes)
        why = (message or code or "failed")[:200]
        return LetterView("recheck", Replay.RECHECK_AGAIN,
                          f"readiness recheck of {self.equipment_id} not handled: {why}", error=code, cause=message)


DeadLetter = (ScheduleSyncLetter | StreamBatchLetter | EvaluationWindowLetter | EvaluationInstantLetter
              | InvalidExecutionInputLetter | SchedulerLetter
              | NotificationLetter | ReminderLetter | WindowEventLetter
              | DigestLetter | RecheckLetter)
LETTERS: dict[str, type[DeadLetter]] = {
    "schedule-sync": ScheduleSyncLetter,
    "stream-batch": StreamBatchLetter,
    "evaluation-window": EvaluationWindowLetter,
    "evaluation-run": EvaluationInstantLetter,
    "invalid-execution-input": InvalidExecutionInputLetter,
    "scheduler": SchedulerLetter,
    "notification": NotificationLetter,  # notifications (#18)
    "reminder": ReminderLetter,
    "window-event": WindowEventLetter,
    "digest": DigestLetter,  # digest (#18)
    "recheck": RecheckLetter,  # readiness (#33)
}
"""Every dead letter by its tag (``kind``)."""


def _untagged_kind(body: Mapping[str, Any]) -> str | None:
    """The kind of a letter without a tag, by its shape: Lambda's stream-batch record, and letters
    sent before the tag existed."""
    if "DDBStreamBatchInfo" in body:
        return "stream-batch"
    # notifications (#18): the notifier's letters, and the inputs it could not handle
    if body.get("detail-type") == "Occurrence window judged" and isinstance(body.get("detail"), Mapping):
        return "window-event"
    if body.get("source") == "notify":
        return "notification"
    if {"checklist_id", "lead", "instant"} <= set(body):
        return "reminder"
    if {"subscription_id", "instant"} <= set(body):
        return "digest"  # digest (#18)
    if body.get("source") == "schedule-sync":
        return "schedule-sync"
    if body.get("source") == "evaluation":
        return ("evaluation-window" if "window" in body else "invalid-execution-input" if "input" in body
                else "evaluation-run")
    return "scheduler" if {"checklist_id", "instant"} <= set(body) else None


def decode_dead_letter(body: object) -> DeadLetter | None:
    """The letter ``body`` (a decoded JSON message body) is, by its tag, or None for one we do not know."""
    if not isinstance(body, Mapping):
        return None
    kind = body.get("kind") if "kind" in body else _untagged_kind(body)
    contract = LETTERS.get(kind) if isinstance(kind, str) else None
    if contract is None:
        return None
    try:
        return parse(contract, {**body, "kind": kind} if contract is not StreamBatchLetter else body)
    except InvalidInput:
        return None


def read_dead_letter(body: object, attributes: Mapping[str, str] | None = None) -> LetterView:
    """What a dead letter says (its message ``attributes`` too: Scheduler's reasons, and for
    Scheduler's own dead letter the firing when its body does not say it: :func:`scheduler_firing`)."""
    attributes = attributes or {}
    letter = decode_dead_letter(_unwrapped(body))
    if letter is None and {"ERROR_CODE", "TARGET_ARN"} <= set(attributes):  # Scheduler's, its body unreadable
        firing = scheduler_firing(attributes)
        if isinstance(firing, str):
            code, message = attributes.get("ERROR_CODE", ""), attributes.get("ERROR_MESSAGE", "")
            return LetterView("scheduler", Replay.NONE, f"{firing} ({code}: {message})", error=code, cause=message)
        letter = firing
    if letter is None:
        return LetterView("unknown", Replay.NONE, f"{_UNKNOWN}: {str(body)[:200]}")
    return letter.view(attributes)
