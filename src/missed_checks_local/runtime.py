"""The whole system on a simulated clock: stack, Lambda (a warm worker process per function), streams, scheduler.

:class:`LocalRuntime` wires the pieces together the way AWS does and moves time forward. After
every step (a write by the scenario, a schedule firing) it *settles*: it drains the table's
stream into schedule-sync (so schedules exist before they are due), picks up the schedules
that changed, and waits for the executions it started, repeating until nothing moves.

Two places where moto reads the wall clock are pointed at the simulated one while the runtime
runs: EventBridge Scheduler's "StartDate cannot be earlier than 5 minutes ago" check, and Step
Functions' Retry waits, which are skipped (``IntervalSeconds`` of simulated time pass instantly).
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError

from missed_checks_local.awslambda.async_invoke import AsyncInvocations
from missed_checks_local.awslambda.runtime import LambdaRuntime
from missed_checks_local.clock import RealTimeClock, SimulatedClock, installed
from missed_checks_local.events.patches import event_rule_lambda_targets
from missed_checks_local.iam.enforcement import observed
from missed_checks_local.scheduler.patches import scheduler_clock
from missed_checks_local.scheduler.simulated import Firing, SimulatedScheduler
from missed_checks_local.stack import EmbeddedStack
from missed_checks_local.stepfunctions.patches import parse_each_definition_once, retries_wait_no_real_time
from missed_checks_local.streams.poller import StreamPoller

__all__ = ["ExecutionRecord", "LocalRuntime", "RuntimeStuck"]

_SETTLE_ROUNDS = 50
_STANDARD_MAX_DURATION_S = 365 * 24 * 3600.0
"""A Standard execution's own limit when the definition sets no ``TimeoutSeconds`` (one year)."""


class RuntimeStuck(RuntimeError):
    """An execution did not finish, or streams and schedules kept changing without end."""


@dataclass
class ExecutionRecord:
    arn: str
    schedule: str | None
    input: dict[str, Any]
    status: str = "RUNNING"
    output: dict[str, Any] | None = None
    error: str | None = None
    cause: str | None = None

    @property
    def outcome(self) -> str | None:
        """The plan's outcome (EVALUATE, NOTHING_DUE, PAUSED, CHECKLIST_GONE) for a success."""
        return (self.output or {}).get("outcome") if isinstance(self.output, dict) else None


@dataclass
class LocalRuntime:
    """Everything needed to play a timeline against a provisioned :class:`EmbeddedStack`."""

    stack: EmbeddedStack
    clock: SimulatedClock | RealTimeClock
    log_path: str | Path | None = None
    executions: list[ExecutionRecord] = field(default_factory=list)
    lambda_runtime: LambdaRuntime = field(init=False)
    scheduler: SimulatedScheduler = field(init=False)
    pollers: list[StreamPoller] = field(init=False)
    on_step: Callable[[], None] | None = None
    faults: Any = None
    """A :class:`~missed_checks_local.product.faults.FaultInjector`, or None for a run without faults."""
    refresh_always: bool = False
    """Re-read the schedules on every settle, not only after a function ran (``local serve``:
    anyone may change schedules through the endpoint)."""
    _invocations_at_refresh: int = field(init=False, default=-1)
    _schedules_at_refresh: frozenset[tuple[str, float]] | None = field(init=False, default=None)
    _exit: ExitStack = field(init=False, default_factory=ExitStack)
    _running: list[ExecutionRecord] = field(init=False, default_factory=list)
    _started: dict[str, float] = field(init=False, default_factory=dict)
    _interrupted: threading.Event = field(init=False, default_factory=threading.Event)
    execution_timeout_s: float = field(init=False, default=_STANDARD_MAX_DURATION_S)
    """The state machine's ``TimeoutSeconds`` (read from the deployed definition at :meth:`start`):
    an execution that runs longer ends ``TIMED_OUT`` with ``States.Timeout``, as on AWS. It is
    measured on the time the work takes (the functions run at this machine's speed, as on AWS,
    whatever the simulated clock does meanwhile); each task is bounded by its function's
    ``Timeout`` (``Sandbox.Timedout``)."""

    def __post_init__(self) -> None:
        self.lambda_runtime = LambdaRuntime(self.stack, log_path=self.log_path, keep_invocations=False)
        self.lambda_runtime.on_invocation = self._count_invocation
        self.stack.lambda_runtime = self.lambda_runtime
        self.scheduler = SimulatedScheduler(
            self.stack, self.clock.now, invoke_lambda=self._invoke_lambda, role_sessions=self.lambda_runtime.roles
        )
        self.pollers = [
            StreamPoller(self.stack, self.lambda_runtime, mapping, self.clock.now)
            for mapping in self.stack.stream_mappings
        ]
        self.invocation_counts: Counter[tuple[str, bool]] = Counter()
        self.failed_invocations: list[Any] = []
        # Lambda's asynchronous invocations: EventBridge rule targets and Scheduler's Lambda targets (#18)
        self.async_invocations = AsyncInvocations(self.stack, self.lambda_runtime)

    def _count_invocation(self, invocation: Any) -> None:
        self.invocation_counts[(invocation.function, invocation.ok)] += 1
        if not invocation.ok:
            self.failed_invocations.append(invocation)

    def _invoke_lambda(self, arn: str, event: Any) -> Any:
        """Scheduler invokes a Lambda target asynchronously: queued, run when the runtime settles (#18)."""
        if self.async_invocations.submit(arn, event, "scheduler"):
            return None
        return self.lambda_runtime.invoke(arn, event)

    # -- lifecycle -------------------------------------------------------------------------
    def __enter__(self) -> LocalRuntime:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        if self.faults is not None:

            self.lambda_runtime.faults = self.scheduler.faults = self.faults
            for poller in self.pollers:
                poller.faults = self.faults
            self._exit.enter_context(observed(self.faults.endpoint_observer()))
        self._exit.enter_context(self.lambda_runtime)
        self.execution_timeout_s = self._definition_timeout_s()
        self._exit.enter_context(installed(self.clock))
        self._exit.enter_context(moto_on_simulated_time(self.clock))
        self._exit.enter_context(parse_each_definition_once())
        self._exit.enter_context(event_rule_lambda_targets(
            lambda arn, event: self.async_invocations.submit(arn, event, "events")))
        self._exit.enter_context(_quiet_moto_logs(self.log_path))
        self.settle()

    def close(self) -> None:
        self._exit.close()

    def interrupt(self) -> None:
        """Stop waiting (from another thread or a signal handler): settling returns at once, so
        that the runtime can be closed promptly (``local serve`` on SIGINT/SIGTERM)."""
        self._interrupted.set()

    # -- moving time -----------------------------------------------------------------------
    def settle(self) -> None:
        """Drain streams, refresh schedules and wait for executions until all is quiet."""
        for _ in range(_SETTLE_ROUNDS):
            if self._interrupted.is_set():
                return
            invoked = 0
            for poller in self.pollers:
                before = poller.stats.invocations
                poller.drain()
                invoked += poller.stats.invocations - before
            # Only a function can change schedules in a scenario; serve mode refreshes every tick.
            if self._schedules_may_have_changed():
                self.scheduler.refresh()
            finished = self._wait_for_executions()
            invoked += self.async_invocations.drain()  # EventBridge and Scheduler's Lambda targets (#18)
            if not invoked and not finished:
                return
        raise RuntimeStuck("streams and executions kept changing after 50 rounds of settling")

    def _schedules_may_have_changed(self) -> bool:
        seen = sum(self.invocation_counts.values())
        changed = seen != self._invocations_at_refresh
        self._invocations_at_refresh = seen
        if self.refresh_always:
            # Anyone may change schedules through the endpoint: compare what moto holds (cheap, in
            # process) instead of listing every schedule over HTTP on every tick.
            fingerprint = self.scheduler.fingerprint()
            changed = changed or fingerprint is None or fingerprint != self._schedules_at_refresh
            self._schedules_at_refresh = fingerprint
        return changed

    def next_firing_time(self) -> datetime | None:
        return self.scheduler.next_firing_time()

    def fire_due(self, until: datetime, *, inclusive: bool = True) -> list[Firing]:
        """Fire everything due before ``until`` (or at it, when ``inclusive``), in time order,
        moving the clock to each firing and settling after each."""
        fired: list[Firing] = []
        while (due := self.scheduler.next_firing_time()) is not None and (due < until or (inclusive and due == until)):
            if isinstance(self.clock, SimulatedClock):
                self.clock.advance_to(due)
            for firing in self.scheduler.fire_due(due):
                fired.append(firing)
                if firing.execution_arn:
                    record = ExecutionRecord(firing.execution_arn, firing.schedule, json.loads(firing.input or "{}"))
                    self._track(record)
            self.settle()
            if self.on_step is not None:
                self.on_step()
        return fired

    def start_execution(self, execution_input: dict[str, Any]) -> ExecutionRecord:
        """Start the state machine by hand, as an operator's re-run does (the run waits for it)."""
        started = self.stack.client("stepfunctions").start_execution(
            stateMachineArn=self.stack.state_machine_arn, input=json.dumps(execution_input), name=str(uuid.uuid4())
        )
        record = ExecutionRecord(started["executionArn"], None, dict(execution_input))
        self._track(record)
        return record

    def advance_to(self, instant: datetime, *, inclusive: bool = True) -> list[Firing]:
        """Fire everything due up to ``instant`` (see :meth:`fire_due`), then move the clock there.

        The scenario runner passes ``inclusive=False`` before applying an event, so that events
        come before firings at the same instant.
        """
        fired = self.fire_due(instant, inclusive=inclusive)
        if isinstance(self.clock, SimulatedClock):
            self.clock.advance_to(instant)
        return fired

    def _definition_timeout_s(self) -> float:
        arn = self.stack.outputs.get("StateMachineArn")
        if not arn:
            return _STANDARD_MAX_DURATION_S
        definition = json.loads(self.stack.client("stepfunctions").describe_state_machine(stateMachineArn=arn)[
            "definition"])
        return float(definition.get("TimeoutSeconds") or _STANDARD_MAX_DURATION_S)

    def _track(self, record: ExecutionRecord) -> None:
        self.executions.append(record)
        self._running.append(record)
        self._started[record.arn] = time.monotonic()

    def _time_out(self, sfn: Any, record: ExecutionRecord) -> None:
        """What Step Functions does when ``TimeoutSeconds`` passes: the execution ends TIMED_OUT."""
        record.status, record.error = "TIMED_OUT", "States.Timeout"
        record.cause = (f"the execution ran longer than the state machine's TimeoutSeconds "
                        f"({self.execution_timeout_s:g} s)")
        for _ in range(100):  # moto cannot stop an execution whose interpreter has not started yet
            try:
                sfn.stop_execution(executionArn=record.arn, error=record.error, cause=record.cause)
                return
            except ClientError:  # it ended meanwhile: the timeout still stands, as on AWS
                return
            except AttributeError:
                time.sleep(0.02)

    def _wait_for_executions(self) -> int:
        """Wait for the started executions; returns how many finished (or timed out)."""
        if not self._running:
            return 0
        sfn = self.stack.client("stepfunctions")
        finished = 0
        delay = 0.005
        while self._running and not self._interrupted.is_set():
            record = self._running[0]
            described = sfn.describe_execution(executionArn=record.arn)
            if described["status"] == "RUNNING":
                started = self._started.get(record.arn, time.monotonic())
                if time.monotonic() - started > self.execution_timeout_s:
                    self._time_out(sfn, record)
                    self._running.pop(0)
                    self._started.pop(record.arn, None)
                    finished += 1
                    continue
                time.sleep(delay)  # each poll costs CPU the execution's threads need: back off
                delay = min(delay * 2, 0.1)
                continue
            delay = 0.005
            record.status = described["status"]
            if "output" in described:
                try:
                    record.output = json.loads(described["output"])
                except ValueError:
                    record.output = None
            record.error, record.cause = described.get("error"), described.get("cause")
            self._running.pop(0)
            self._started.pop(record.arn, None)
            finished += 1
        return finished

    # -- summaries -------------------------------------------------------------------------
    def execution_counts(self) -> dict[str, Any]:
        statuses = Counter(record.status for record in self.executions)
        outcomes = Counter(record.outcome for record in self.executions if record.outcome)
        return {
            "started": len(self.executions),
            "by_status": dict(sorted(statuses.items())),
            "by_outcome": dict(sorted(outcomes.items())),
        }

    def firing_counts(self) -> dict[str, int]:
        firings = self.scheduler.firings
        return {
            "fired": len(firings),
            "started_execution": sum(1 for f in firings if f.execution_arn),
            "failed_to_start": sum(1 for f in firings if not f.ok),
            "dead_lettered": sum(1 for f in firings if f.dead_lettered),
        }

    def denials(self) -> list[str]:
        """Every action IAM refused to a role of the stack, once per (who, action, resource), with
        how often: ``RecordMissedChecksFunction was denied dynamodb:PutItem on arn:...:table/T (47
        times)``. Who: the function(s) of the role, or the state machine or scheduler role."""
        stack = self.stack
        who: dict[str, list[str]] = {}
        for logical, spec in stack.functions.items():
            who.setdefault(spec.role_arn, []).append(logical)
        counts: Counter[tuple[str, str, str]] = Counter()
        for call in self.lambda_runtime.denied:
            role = self.lambda_runtime.roles.role_of(call.access_key_id) or "an unknown role"
            names = " / ".join(who.get(role, [role.rsplit("/", 1)[-1]]))
            counts[(names, call.action, _resource_of(call, stack))] += 1
        return [f"{names} was denied {action} on {resource}" + (f" ({count} times)" if count > 1 else "")
                for (names, action, resource), count in counts.items()]

    def deployment_problems(self) -> list[str]:
        """What would break this stack on AWS, not in the data: a function that cannot start
        (``Runtime.ImportModuleError``, ``Runtime.HandlerNotFound``, a syntax error) or a call
        its role does not allow (``AccessDenied``), by a function or by the state machine."""
        problems: list[str] = []
        roles = {spec.role_arn: logical for logical, spec in self.stack.functions.items()}
        for call in self.lambda_runtime.denied:  # the cause first, its consequences after
            role = self.lambda_runtime.roles.role_of(call.access_key_id) or "?"
            problems.append(f"{roles.get(role, role)}: AccessDenied: its role does not allow {call.action}")
        for invocation in self.failed_invocations:
            error = invocation.error or {}
            kind, message = str(error.get("errorType", "")), str(error.get("errorMessage", ""))
            if kind.startswith("Runtime.") or "AccessDenied" in kind or "AccessDenied" in message:
                problems.append(f"{invocation.function}: {kind}: {message}")
        for record in self.executions:
            if record.status != "SUCCEEDED" and "AccessDenied" in f"{record.error} {record.cause}":
                problems.append(f"state machine {record.arn.rsplit(':', 2)[-2]}: {record.error}: {record.cause}")
        return list(dict.fromkeys(problems))

    def invocation_summary(self) -> dict[str, dict[str, int]]:
        summary: dict[str, dict[str, int]] = {}
        for (function, ok), count in sorted(self.invocation_counts.items()):
            summary.setdefault(function, {"ok": 0, "error": 0})["ok" if ok else "error"] += count
        return summary

    def read_dead_letters(self) -> dict[str, list[dict[str, Any]]]:
        """Every message in each queue of the stack, by logical id (bodies JSON-decoded)."""
        sqs = self.stack.client("sqs")
        letters: dict[str, list[dict[str, Any]]] = {}
        for logical_id, url in sorted(self.stack.queue_urls.items()):
            messages: list[dict[str, Any]] = []
            while True:
                page = sqs.receive_message(
                    QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=600, MessageAttributeNames=["All"]
                )
                batch = page.get("Messages", [])
                if not batch:
                    break
                for message in batch:
                    try:
                        body: Any = json.loads(message["Body"])
                    except ValueError:
                        body = message["Body"]
                    entry: dict[str, Any] = {"body": body}
                    attributes = message.get("MessageAttributes") or {}
                    if attributes:
                        entry["attributes"] = {
                            name: value.get("StringValue") for name, value in sorted(attributes.items())
                        }
                    messages.append(entry)
            letters[logical_id] = messages
        return letters


def _resource_of(call: Any, stack: EmbeddedStack) -> str:
    """The resource a denied request was about, as far as its body tells (moto does not say)."""
    body = call.body if isinstance(call.body, dict) else {}
    service = call.action.split(":", 1)[0]
    if body.get("TableName"):
        return f"arn:aws:dynamodb:{stack.region}:{stack.account_id}:table/{body['TableName']}"
    for key in ("stateMachineArn", "executionArn", "FunctionName", "QueueUrl", "TopicArn", "Name"):
        if body.get(key):
            return str(body[key])
    if isinstance(body.get("RequestItems"), dict):
        return ", ".join(f"arn:aws:dynamodb:{stack.region}:{stack.account_id}:table/{name}"
                         for name in body["RequestItems"])
    queue = (call.query.get("QueueUrl") or [None])[0]
    return str(queue or f"{service} {call.path}")


@contextmanager
def moto_on_simulated_time(clock: SimulatedClock | RealTimeClock) -> Iterator[None]:
    """moto's Scheduler reads ``clock``; its Step Functions Retry waits no real time (patch 6)."""
    with scheduler_clock(clock.now), retries_wait_no_real_time():
        yield


@contextmanager
def _quiet_moto_logs(log_path: str | Path | None) -> Iterator[None]:
    """moto logs every failed execution at ERROR with its whole state dump: keep it out of the
    terminal (Python's last-resort handler would print it) and in the log file, if any; failed
    executions are reported anyway."""
    logger = logging.getLogger("moto")
    previous = (logger.level, logger.propagate, list(logger.handlers))
    handler: logging.Handler = logging.FileHandler(log_path, encoding="utf-8") if log_path else logging.NullHandler()
    logger.handlers = [handler]
    logger.propagate = False
    try:
        yield
    finally:
        handler.close()
        logger.setLevel(previous[0])
        logger.propagate = previous[1]
        logger.handlers = previous[2]
