"""The whole system on a simulated clock: stack, in-process Lambda, streams, scheduler.

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
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from missed_checks_local import moto_patches
from missed_checks_local.awslambda.runtime import LambdaRuntime
from missed_checks_local.clock import RealTimeClock, SimulatedClock, installed
from missed_checks_local.iam.enforcement import observed
from missed_checks_local.scheduler.simulated import Firing, SimulatedScheduler
from missed_checks_local.stack import EmbeddedStack
from missed_checks_local.streams.poller import StreamPoller

__all__ = ["ExecutionRecord", "LocalRuntime", "RuntimeStuck"]

_EXECUTION_TIMEOUT_S = 120.0
_SETTLE_ROUNDS = 50


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
    """A :class:`~missed_checks_local.testing.faults.FaultInjector`, or None for a run without faults."""
    refresh_always: bool = False
    """Re-read the schedules on every settle, not only after a function ran (``local serve``:
    anyone may change schedules through the endpoint)."""
    _invocations_at_refresh: int = field(init=False, default=-1)
    _schedules_at_refresh: frozenset[tuple[str, float]] | None = field(init=False, default=None)
    _exit: ExitStack = field(init=False, default_factory=ExitStack)
    _running: list[ExecutionRecord] = field(init=False, default_factory=list)

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

    def _count_invocation(self, invocation: Any) -> None:
        self.invocation_counts[(invocation.function, invocation.ok)] += 1
        if not invocation.ok:
            self.failed_invocations.append(invocation)

    def _invoke_lambda(self, arn: str, event: Any) -> Any:
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
        self._exit.enter_context(installed(self.clock))
        self._exit.enter_context(moto_on_simulated_time(self.clock))
        self._exit.enter_context(moto_patches.parse_each_definition_once())
        self._exit.enter_context(_quiet_moto_logs(self.log_path))
        self.settle()

    def close(self) -> None:
        self._exit.close()

    # -- moving time -----------------------------------------------------------------------
    def settle(self) -> None:
        """Drain streams, refresh schedules and wait for executions until all is quiet."""
        for _ in range(_SETTLE_ROUNDS):
            invoked = 0
            for poller in self.pollers:
                before = poller.stats.invocations
                poller.drain()
                invoked += poller.stats.invocations - before
            # Only a function can change schedules in a scenario; serve mode refreshes every tick.
            if self._schedules_may_have_changed():
                self.scheduler.refresh()
            finished = self._wait_for_executions()
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
                    self.executions.append(record)
                    self._running.append(record)
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
        self.executions.append(record)
        self._running.append(record)
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

    def _wait_for_executions(self) -> int:
        """Wait for the started executions; returns how many finished."""
        if not self._running:
            return 0
        sfn = self.stack.client("stepfunctions")
        deadline = time.monotonic() + _EXECUTION_TIMEOUT_S
        finished = 0
        delay = 0.005
        while self._running:
            record = self._running[0]
            described = sfn.describe_execution(executionArn=record.arn)
            if described["status"] == "RUNNING":
                if time.monotonic() > deadline:
                    raise RuntimeStuck(f"execution {record.arn} still running after {_EXECUTION_TIMEOUT_S:.0f} s")
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

    def deployment_problems(self) -> list[str]:
        """What would break this stack on AWS, not in the data: a function that cannot start
        (``Runtime.ImportModuleError``, ``Runtime.HandlerNotFound``, a syntax error) or a call
        its role does not allow (``AccessDenied``), by a function or by the state machine."""
        problems: list[str] = []
        for invocation in self.failed_invocations:
            error = invocation.error or {}
            kind, message = str(error.get("errorType", "")), str(error.get("errorMessage", ""))
            if kind.startswith("Runtime.") or "AccessDenied" in kind or "AccessDenied" in message:
                problems.append(f"{invocation.function}: {kind}: {message}")
        roles = {spec.role_arn: logical for logical, spec in self.stack.functions.items()}
        for call in self.lambda_runtime.denied:
            role = self.lambda_runtime.roles.role_of(call.access_key_id) or "?"
            problems.append(f"{roles.get(role, role)}: AccessDenied: its role does not allow {call.action}")
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


@contextmanager
def moto_on_simulated_time(clock: SimulatedClock | RealTimeClock) -> Iterator[None]:
    with moto_patches.simulated_time(clock.now):
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
