"""The three dead-letter queues: what each message says, and re-driving it to the right place.

Each message is read once, by its ``kind`` tag, with :func:`missed_checks.dead_letters.read_dead_letter`
(which also says how it is replayed); this module lists, replays and deletes.

* **schedule-sync** (``ScheduleSyncDeadLetterQueue``): schedule-sync's own record of a checklist it
  could not schedule (``{"kind": "schedule-sync", "source": "schedule-sync", "checklist_id", "error",
  ...}``), and Lambda's OnFailure record of a stream batch that kept failing (``requestContext``, ``responseContext``,
  ``DDBStreamBatchInfo``: which stream positions, not which checklists). Replay re-runs the sync
  from the checklist's current item, with the stack's settings: for one checklist, or for every
  checklist and every schedule in the group when the batch's checklists are unknown.
* **evaluation** (``EvaluationDeadLetterQueue``): the state machine's record of a failed window or
  run (``{"kind": "evaluation-window" | "evaluation-run", "source": "evaluation", "checklist_id",
  "window" | "instant", "execution", "error", "cause"}``; a window PlanEvaluation judged itself,
  for a small fleet, is named in ``cause``).
  Replay starts the state machine for the checklist at the later of the failed
  instant and now, so it judges everything due by now from the watermark on (nothing is judged
  twice), also the windows of a COUNT/UNTIL rule whose schedule is gone; while a run ends with
  ``more_due`` another one follows. When the failed execution had claimed its window but never
  announced it, the claim is handed over to the replay's first run, which judges that window again
  and announces it. The replay waits for its runs; a window message whose window the watermark has
  since passed unjudged (a resume or an edit) cannot be judged any more and stays in the queue,
  with that said.
* **notification** (``NotificationDeadLetterQueue``, #18): a notification that was not sent
  (``{"kind": "notification", "source": "notify", "notification", "error", "failed_at"}``), or an
  input the notifier could not handle (the ``Occurrence window judged`` event, a reminder firing
  ``{"kind": "reminder", "checklist_id", "lead", "instant"}``). Replay hands it back to the notifier
  and waits: what was sent already is not sent again.
* **audit** (``AuditDeadLetterQueue``, #31): Lambda's OnFailure record of a stream batch the audit
  function kept failing on (``DDBStreamBatchInfo``: the shard and the first and last sequence numbers;
  most often an item a hand edit made unreadable). Replay reads those records from the stream again
  (it keeps them 24 hours) and records each one's audit entry: one recorded already is not written
  twice; one still unreadable keeps the message, naming the field.
* **scheduler** (``SchedulerDeadLetterQueue``): a firing EventBridge Scheduler could not deliver,
  as AWS documents its dead-letter event: the body is invocation details (the target input
  ``{"kind": "scheduler", "checklist_id", "instant"}``, or a StartExecution request carrying it;
  cut short when ``IS_PAYLOAD_TRUNCATED``) and the message attributes say why (``ERROR_CODE``,
  ``ERROR_MESSAGE``, ``RETRY_ATTEMPTS``, ``SCHEDULED_TIME``, ``SCHEDULE_ARN`` ...). The firing is
  read from the body, else from ``SCHEDULE_ARN`` and ``SCHEDULED_TIME``
  (:func:`missed_checks.dead_letters.read_dead_letter`); one naming neither is kept, said to be
  unreplayable. Replay starts the state machine with that input.

A message is deleted only after its replay succeeded, or when a newer dead letter replaces it (the
replayed evaluation failed again and dead-lettered itself: the replay counts as failed); otherwise
a failed replay makes it visible again at once. Executions started by a replay are named after
the message, so replaying a message twice (a crash between start and delete) starts one execution.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from missed_checks.audit_trails.auditing import record_change
from missed_checks.aws.functions import function_arn, function_environment, invoke_function
from missed_checks.aws.table.audit import AuditItems, batch_records
from missed_checks.checklists.schedule import Target
from missed_checks.checklists.schedule_sync import Action, SyncResult, sync_checklist
from missed_checks.dead_letters import Replay, read_dead_letter
from missed_checks.errors import MissedChecksError
from missed_checks.notifications.reminders import checklist_of_reminder
from missed_checks.timefmt import parse_instant, to_utc_iso
from missed_checks_ops.rerun import execution_arn, execution_name, start_evaluation, wait_for
from missed_checks_ops.target import QUEUE_OUTPUTS, StackTarget

LIST_VISIBILITY_S = 60
REPLAY_VISIBILITY_S = 300
MAX_REPLAY_RUNS = 100
"""Runs one replay chains while each ends with ``more_due`` (each judges up to MaxWindowsPerRun windows)."""


@dataclass
class DeadLetter:
    queue: str
    message_id: str
    receipt_handle: str = field(repr=False)
    kind: str
    """schedule-sync | stream-batch | evaluation | scheduler | unknown"""
    summary: str
    replay: Replay = Replay.NONE
    checklist_id: str | None = None
    instant: str | None = None
    window: dict[str, Any] | None = None
    execution: str | None = None
    error: str = ""
    cause: str = ""
    sent_at: str | None = None
    receive_count: int = 0
    body: Any = None
    attributes: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "queue": self.queue, "message_id": self.message_id, "kind": self.kind, "summary": self.summary,
            "checklist_id": self.checklist_id, "instant": self.instant, "window": self.window,
            "execution": self.execution, "error": self.error, "cause": self.cause, "sent_at": self.sent_at,
            "receive_count": self.receive_count, "attributes": self.attributes, "body": self.body,
        }


def decode(queue: str, message: dict[str, Any]) -> DeadLetter:
    raw = message.get("Body", "")
    try:
        body: Any = json.loads(raw)
    except ValueError:
        body = raw
    system = message.get("Attributes") or {}
    attributes = {name: str(value.get("StringValue", value.get("BinaryValue", "")))
                  for name, value in (message.get("MessageAttributes") or {}).items()}
    said = read_dead_letter(body, attributes)  # the letter's kind, read once, by its tag
    if queue == "readiness" and said.kind == "stream-batch":  # readiness (#33): its records are handed back
        said = replace(said, summary=said.summary.replace("were never synced; replay re-syncs every checklist",
                                                          "were never watched; replay hands them back to readiness"))
    return DeadLetter(queue=queue, message_id=str(message["MessageId"]), receipt_handle=message["ReceiptHandle"],
                      kind=said.kind, summary=said.summary, replay=said.replay, checklist_id=said.checklist_id,
                      instant=said.instant, window=said.window, execution=said.execution, error=said.error,
                      cause=said.cause, body=body, attributes=attributes,
                      receive_count=int(system.get("ApproximateReceiveCount", 0)),
                      sent_at=_sent_at(system.get("SentTimestamp")))


def _epoch(value: object) -> object:
    """A stream record's ApproximateCreationDateTime (a datetime from GetRecords) as Lambda sends it."""
    if isinstance(value, datetime):
        return int(value.timestamp())
    raise TypeError(f"{type(value).__name__} is not JSON")


def _sent_at(millis: str | None) -> str | None:
    if not millis:
        return None
    return datetime.fromtimestamp(int(millis) / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- reading queues -------------------------------------------------------------------------------
def queue_kinds(selected: str | None, target: StackTarget | None = None) -> list[str]:
    kinds = list(QUEUE_OUTPUTS) if selected in (None, "all") else [str(selected)]
    if selected in (None, "all") and target is not None:
        for optional in ("notification", "audit", "readiness"):  # a stack deployed before #18, #31 or #33
            if not target.outputs.get(QUEUE_OUTPUTS[optional]):
                kinds.remove(optional)
    return kinds


def list_dead_letters(target: StackTarget, selected: str | None = None) -> dict[str, list[DeadLetter]]:
    """Every message of the selected queues, decoded; they stay in their queue, visible."""
    found: dict[str, list[DeadLetter]] = {}
    for kind in queue_kinds(selected, target):
        queue = target.queue(kind)
        letters = [decode(kind, message) for message in queue.receive_all(LIST_VISIBILITY_S)]
        queue.release([letter.receipt_handle for letter in letters])
        found[kind] = sorted(letters, key=lambda letter: (letter.sent_at or "", letter.message_id))
    return found


# -- replay ---------------------------------------------------------------------------------------
@dataclass
class Replayed:
    letter: DeadLetter
    ok: bool
    detail: str
    executions: list[str] = field(default_factory=list)
    superseded: bool = False
    """The replay failed, and a newer dead letter replaces this message: the replayed evaluation
    failed again and sent its own. The message is deleted; the replay still counts as failed."""

    @property
    def deleted(self) -> bool:
        return self.ok or self.superseded

    def to_dict(self) -> dict[str, Any]:
        return {"queue": self.letter.queue, "message_id": self.letter.message_id, "kind": self.letter.kind,
                "checklist_id": self.letter.checklist_id, "replayed": self.ok, "deleted": self.deleted,
                "detail": self.detail, "executions": self.executions}


class Replayer:
    """Re-drives decoded messages with the stack's own settings."""

    def __init__(self, target: StackTarget, now: datetime) -> None:
        self.target = target
        self.now = now
        self._sync_target: Target | None = None
        self._reminder_target: tuple[Target | None] | None = None

    # schedule-sync needs what the function has in its environment
    def sync_target(self) -> Target:
        if self._sync_target is None:
            self._sync_target = _sync_settings(self.target)
        return self._sync_target

    def reminder_target(self) -> Target | None:
        """Where reminder schedules point (#18), None for a stack without the notifier."""
        if self._reminder_target is None:
            self._reminder_target = (_reminder_settings(self.target, self.sync_target()),)
        return self._reminder_target[0]

    def _sync(self, checklist_id: str) -> SyncResult:
        schedules = self.target.schedules()
        return sync_checklist(
            checklist_id, table=self.target.table(), schedules=schedules,
            target=self.sync_target(), group_name=schedules.group_name, now=self.now,
            report_rejected=lambda *_args: None,  # this message already reports it; it stays until fixed
            reminder_target=self.reminder_target(),
        )

    def replay_one(self, letter: DeadLetter) -> Replayed:
        try:
            if letter.queue == "audit":  # the audit trail (#31): its stream batches are audited again
                return self._audit_again(letter)
            if letter.queue == "readiness":  # readiness (#33): its stream batches and rechecks handed back
                return self._recheck_again(letter)
            match letter.replay:
                case Replay.SYNC_CHECKLIST:
                    result = self._sync(str(letter.checklist_id))
                    if result.action in (Action.INVALID, Action.SKIPPED) and result.error:
                        return Replayed(letter, False, f"still cannot be scheduled: {result.error.get('message')}; "
                                                       "fix it with `checklist put`, then replay")
                    return Replayed(letter, True, f"re-synced: {result.action.value} {result.detail}".strip())
                case Replay.SYNC_EVERYTHING:
                    return self._resync_everything(letter)
                case Replay.EVALUATE_FROM_NOW | Replay.EVALUATE_AT_INSTANT:
                    return self._evaluate(letter)
                case Replay.NONE if letter.kind == "unknown":
                    return Replayed(letter, False, "not a message missed-checks knows; left in the queue")
                case Replay.NONE:  # known, but naming nothing to re-drive (a Scheduler letter without its firing)
                    return Replayed(letter, False, f"cannot be replayed, left in the queue: {letter.summary}")
                case Replay.NOTIFY_AGAIN:
                    return self._notify_again(letter)
                case Replay.DIGEST_AGAIN:  # digest (#18)
                    return self._digest_again(letter)
                case Replay.RECHECK_AGAIN:  # readiness (#33): a recheck firing found in another queue
                    return self._recheck_again(letter)
        except Exception as error:  # one failed replay must not stop the others; the message stays
            return Replayed(letter, False, f"replay failed: {type(error).__name__}: {error}")

    def _evaluate(self, letter: DeadLetter) -> Replayed:
        """Start the evaluation, and more runs while one ends with ``more_due``; wait for each.

        An evaluation message is replayed at the later of its instant and now: everything due by now
        is judged, so the windows of a COUNT/UNTIL rule whose schedule is gone (no later firing will
        catch up) are not left behind. A scheduler message is the firing that never started, at its
        own instant. A failed run dead-letters itself again: that new message replaces this one, and
        the replay counts as failed. A window message only counts as replayed when the window was
        really judged and announced: a pause/resume or a rule edit since the failure may have moved
        the watermark past it unjudged, and then the message must stay."""
        checklist_id = str(letter.checklist_id)
        failed_at = parse_instant(letter.instant or "", "instant")
        instant = max(failed_at, self.now) if letter.replay is Replay.EVALUATE_FROM_NOW else failed_at
        digest = hashlib.sha256(f"{letter.queue}/{letter.message_id}".encode()).hexdigest()[:12]
        stepfunctions = self.target.client("stepfunctions")
        state_machine = self.target.state_machine_arn
        first = execution_name("replay", checklist_id, failed_at, digest)
        window_start = (letter.window or {}).get("start")
        extra: dict[str, Any] = {}
        if window_start:
            # The failed execution may have claimed the window and died before announcing it: only the
            # claim's holder announces, so the claim goes to this replay's first run, which is told to
            # judge the window again (even behind the watermark) and so announces it once.
            if letter.execution:
                self.target.table().hand_over_window_claim(
                    checklist_id, parse_instant(window_start, "window.start"), letter.execution,
                    execution_arn(state_machine, first))
            extra = {"claimed_window": letter.window}
        executions: list[str] = []
        for run in range(MAX_REPLAY_RUNS):
            name = first if run == 0 else execution_name("replay", checklist_id, failed_at, f"{digest}-{run + 1}")
            started = start_evaluation(stepfunctions, state_machine, checklist_id, instant, name,
                                       extra if run == 0 else None)
            executions.append(started.execution_arn)
            how = "already started by an earlier replay" if started.already_existed else "started"
            described = wait_for(stepfunctions, started.execution_arn)
            status = described["status"]
            if status == "RUNNING":
                return Replayed(letter, False, f"evaluation {how} ({name}) is still running; replay again later "
                                               "to confirm", executions)
            if status == "FAILED" and described.get("error") == "EvaluationFailed":
                return Replayed(letter, False, f"evaluation {how} ({name}) failed again: its own dead letter "
                                               "replaces this one", executions, superseded=True)
            if status != "SUCCEEDED":
                return Replayed(letter, False, f"evaluation {how} ({name}) ended {status} "
                                               f"({described.get('error') or 'stopped'}) without a dead letter of "
                                               "its own; this one stays", executions)
            if not _output(described).get("more_due"):
                break
        runs = started.name if len(executions) == 1 else f"{len(executions)} runs, {first} .. {started.name}"
        if window_start:
            start = parse_instant(window_start, "window.start")
            holder = self.target.table().claim_holder(checklist_id, start)
            if holder is None:
                checklist = self.target.table().get_checklist(checklist_id)
                watermark = to_utc_iso(checklist.watermark) if checklist and checklist.watermark else "unknown"
                detail = (f"the window starting {window_start} was not judged: the checklist's watermark "
                          f"({watermark}) has moved past it since it failed (a resume or a rule edit), so no re-run "
                          "can judge it; the message stays for the record until the queue's retention drops it")
                return Replayed(letter, False, detail, executions)
            if not holder.announced:
                detail = (f"the window starting {window_start} was judged but its event has not gone out: its claim "
                          f"is held by {holder.execution} (still running, or the checklist is paused or "
                          "gone); the message stays")
                return Replayed(letter, False, detail, executions)
        return Replayed(letter, True, f"evaluation {how} and succeeded: {runs}", executions)

    def _notify_again(self, letter: DeadLetter) -> Replayed:
        """Hand the letter back to the notifier (#18), synchronously: what it names is claimed and
        sent once (what went out already is not sent again). A notification that fails again is
        dead-lettered again by the notifier: that new message replaces this one."""
        ok, answer = invoke_function(self.target.client("lambda"), self.target.output("NotifyFunctionName"),
                                     letter.body)
        if not ok or not isinstance(answer, dict):
            message = answer.get("errorMessage") if isinstance(answer, dict) else answer
            return Replayed(letter, False, f"the notifier failed: {message}; the message stays")
        counts = {key: int(answer.get(key) or 0) for key in ("sent", "already_sent", "in_flight", "failed")}
        detail = ", ".join(f"{n} {key.replace('_', ' ')}" for key, n in counts.items() if n) or "nothing to send"
        if counts["failed"]:
            return Replayed(letter, False, f"notified again: {detail}; the failed ones are dead-lettered again",
                            superseded=True)
        if counts["in_flight"]:
            return Replayed(letter, False, f"notified again: {detail}; another sender holds the rest, replay "
                                           "later to confirm")
        return Replayed(letter, True, f"notified again: {detail}")

    def _digest_again(self, letter: DeadLetter) -> Replayed:
        """Fire the digest function again with the firing (#18), synchronously: the same period, so
        a digest that went out already is not sent again. A failure leaves the message."""
        ok, answer = invoke_function(self.target.client("lambda"), self.target.output("DigestFunctionArn"),
                                     letter.body)
        if not ok or not isinstance(answer, dict):
            message = answer.get("errorMessage") if isinstance(answer, dict) else answer
            return Replayed(letter, False, f"the digest function failed: {message}; the message stays")
        delivery = str(answer.get("delivery"))
        if delivery == "in_flight":
            return Replayed(letter, False, "another firing is sending this digest; replay later to confirm")
        return Replayed(letter, True, f"digest fired again: {delivery.replace('_', ' ')}")

    def _recheck_again(self, letter: DeadLetter) -> Replayed:
        """Hand a readiness letter back to the readiness function (#33), synchronously: a recheck
        firing as it is; a stream batch as the records read from the stream again (it keeps them 24
        hours). What was announced or told already is not again."""
        if letter.replay is Replay.RECHECK_AGAIN:
            event: Any = letter.body
        else:
            batch = letter.body.get("DDBStreamBatchInfo") if isinstance(letter.body, dict) else None
            if not isinstance(batch, dict):
                return Replayed(letter, False, "neither a recheck nor a stream batch; left in the queue")
            try:
                records = list(batch_records(self.target.client("dynamodbstreams"), batch))
            except ClientError as error:
                return Replayed(letter, False, f"the stream no longer holds these records ({error}): recheck the "
                                               "equipment by any change of it; the message stays as their record")
            event = json.loads(json.dumps({"Records": records}, default=_epoch))
        ok, answer = invoke_function(self.target.client("lambda"), self.target.output("ReadinessFunctionName"), event)
        if not ok or not isinstance(answer, dict):
            message = answer.get("errorMessage") if isinstance(answer, dict) else answer
            return Replayed(letter, False, f"the readiness function failed: {message}; the message stays")
        if answer.get("batchItemFailures"):
            return Replayed(letter, False, f"{len(answer['batchItemFailures'])} record(s) failed again; the message "
                                           "stays")
        what = f"rechecked {answer.get('equipment_id')}: {answer.get('readiness')}" if "readiness" in answer else \
            f"handled again: {len(event['Records'])} record(s)"
        return Replayed(letter, True, what)

    def _audit_again(self, letter: DeadLetter) -> Replayed:
        """Read the batch's records from the stream again and record each one's audit entry (#31)."""
        batch = letter.body.get("DDBStreamBatchInfo") if isinstance(letter.body, dict) else None
        if not isinstance(batch, dict) or not all(batch.get(k) for k in ("streamArn", "shardId",
                                                                          "startSequenceNumber", "endSequenceNumber")):
            return Replayed(letter, False, "not a stream batch (no DDBStreamBatchInfo); left in the queue")
        table = AuditItems(self.target.output("TableName"), self.target.client("dynamodb"))
        try:
            records = list(batch_records(self.target.client("dynamodbstreams"), batch))
        except ClientError as error:
            return Replayed(letter, False, f"the stream no longer holds these records ({error}): the changes are "
                                           "not in the trail; the message stays as their record")
        recorded = 0
        for record in records:  # one still unreadable raises InvalidInput naming the field: the message stays
            change = table.change_of_record(record, self.now)
            if change is not None and record_change(table, change) is not None:
                recorded += 1
        return Replayed(letter, True, f"audited again: {len(records)} record(s), {recorded} new entr(ies)")

    def _resync_everything(self, letter: DeadLetter) -> Replayed:
        table = self.target.table()
        ids = {c.checklist_id for c in table.list_checklists()}
        for name in self.target.schedules().names():  # a reminder schedule (#18) is synced with its checklist
            owner = checklist_of_reminder(name) if name.startswith("_") else name
            if owner:
                ids.add(owner)
        actions: dict[str, int] = {}
        failed = []
        for checklist_id in sorted(ids):
            try:
                result = self._sync(checklist_id)
            except (MissedChecksError, ClientError, BotoCoreError, ValueError) as error:
                failed.append(f"{checklist_id}: {error}")
                continue
            if result.error:  # the batch may have carried this invalid rule: keep the message until it is fixed
                failed.append(f"{checklist_id} cannot be scheduled: {result.error.get('message')}")
                continue
            actions[result.action.value] = actions.get(result.action.value, 0) + 1
        counts = ", ".join(f"{n} {a}" for a, n in sorted(actions.items())) or "nothing to sync"
        if failed:
            return Replayed(letter, False, f"re-sync of {len(failed)} checklist(s) failed (fix them with `checklist "
                                           f"put`, then replay): {'; '.join(failed[:5])}")
        return Replayed(letter, True, f"re-synced {len(ids)} checklist(s): {counts}")


def replay_queues(target: StackTarget, now: datetime, selected: str | None = None,
                  on_each: Callable[[Replayed], None] | None = None) -> list[Replayed]:
    """Replay every message of the selected queues; delete each one whose replay succeeded (or that a
    newer dead letter replaces)."""
    replayer = Replayer(target, now)
    results = []
    for kind in queue_kinds(selected, target):
        queue = target.queue(kind)
        letters = [decode(kind, message) for message in queue.receive_all(REPLAY_VISIBILITY_S)]
        for letter in sorted(letters, key=lambda item: (item.sent_at or "", item.message_id)):
            result = replayer.replay_one(letter)
            if result.deleted:
                queue.delete(letter.receipt_handle)
            else:
                queue.release([letter.receipt_handle])
            results.append(result)
            if on_each:
                on_each(result)
    return results


def _output(described: dict[str, Any]) -> dict[str, Any]:
    try:
        output = json.loads(described.get("output") or "{}")
    except ValueError:
        return {}
    return output if isinstance(output, dict) else {}


def _sync_settings(target: StackTarget) -> Target:
    """schedule-sync's own settings: from the function's environment when it can be read (a deployed
    stack), else from the stack's outputs and parameters (the local runtime)."""
    function = target.outputs.get("ScheduleSyncFunctionName")
    if function:
        try:
            env = function_environment(target.client("lambda"), function)
            if env.get("STATE_MACHINE_ARN"):
                return Target(env["STATE_MACHINE_ARN"], env["SCHEDULER_ROLE_ARN"], env["SCHEDULER_DLQ_ARN"],
                              int(env.get("SCHEDULER_MAX_RETRY_ATTEMPTS") or 10))
        except (ClientError, BotoCoreError, KeyError, ValueError):
            pass  # not readable (local runtime, or no lambda:GetFunctionConfiguration): use the outputs
    return Target(
        state_machine_arn=target.state_machine_arn,
        role_arn=target.output("SchedulerRoleArn"),
        dead_letter_arn=target.queue("scheduler").arn(),
        max_retry_attempts=int(target.parameters.get("SchedulerMaximumRetryAttempts") or 10),
    )


def _reminder_settings(target: StackTarget, sync: Target) -> Target | None:
    """schedule-sync's reminder target (#18): the notifier and its dead-letter queue, from the
    function's environment or the stack's outputs; None for a stack without them."""
    function = target.outputs.get("ScheduleSyncFunctionName")
    if function:
        try:
            env = function_environment(target.client("lambda"), function)
            if env.get("NOTIFY_FUNCTION_ARN"):
                return Target(env["NOTIFY_FUNCTION_ARN"], sync.role_arn, env["NOTIFICATION_DLQ_ARN"],
                              sync.max_retry_attempts)
        except (ClientError, BotoCoreError, KeyError, ValueError):
            pass  # as _sync_settings: use the outputs
    notifier = target.outputs.get("NotifyFunctionName")
    if not notifier or not target.outputs.get("NotificationDeadLetterQueueUrl"):
        return None
    return Target(function_arn(target.client("lambda"), notifier), sync.role_arn, target.queue("notification").arn(),
                  sync.max_retry_attempts)
