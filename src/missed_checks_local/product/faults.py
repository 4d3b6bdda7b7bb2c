"""Faults injected into the local runtime, declared in a scenario (``"faults"``) or a file.

Each fault names a kind, how many times it strikes (``count``) and how many opportunities to let
pass first (``skip``). The hooks live where AWS would fail: the Lambda service (a task's invoke),
the service endpoints the functions call (DynamoDB throttling, an EventBridge publish failing),
Lambda's stream poller (records delivered twice, redelivered in a later batch), EventBridge
Scheduler (a firing dropped, delivered twice, or hours late; two executions of one window at
once) and Step Functions (an execution stopped in the middle of its Map).

==========================  ==================================================================
kind                        what happens
==========================  ==================================================================
``lambda_error``            a task's invoke fails: ``transient`` (default) as the Lambda service
                            failing (``Lambda.ServiceException``, retried by the state machine),
                            otherwise as the function failing (``InjectedFailure``, caught: the
                            execution fails into the evaluation DLQ); ``function`` narrows it
``lambda_throttle``         the invoke is throttled (``TooManyRequestsException``)
``dynamodb_throttle``       a function's ``read`` or ``write`` (``operation``) is throttled
                            (``ProvisionedThroughputExceededException``; the SDK retries)
``eventbridge_failure``     a ``PutEvents`` fails (``InternalException``; the SDK retries)
``stream_duplicate``        a delivered stream batch is delivered again (at-least-once)
``stream_redeliver``        a delivered batch's records come again, inside the next batches
``firing_drop``             a schedule firing never happens
``firing_duplicate``        a firing is delivered twice, one after the other
``firing_late``             a firing arrives ``hours`` late (default 3)
``concurrent_execution``    a firing starts two executions of its window at the same moment
``stop_mid_map``            the execution is stopped while a task judges its equipment (its first
                            batch task when fanned out; PlanEvaluation for a small fleet)
==========================  ==================================================================
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from missed_checks.errors import InvalidInput

__all__ = ["KINDS", "Fault", "FaultInjector", "parse_faults", "random_faults"]

KINDS = (
    "lambda_error",
    "lambda_throttle",
    "dynamodb_throttle",
    "eventbridge_failure",
    "stream_duplicate",
    "stream_redeliver",
    "firing_drop",
    "firing_duplicate",
    "firing_late",
    "concurrent_execution",
    "stop_mid_map",
)
_FIELDS = {"kind", "count", "skip", "function", "transient", "operation", "hours"}
_MAX_COUNT = 1000


@dataclass
class Fault:
    kind: str
    count: int = 1
    skip: int = 0
    function: str | None = None
    transient: bool = True
    operation: str = "write"
    hours: float = 3.0
    struck: int = 0
    seen: int = 0

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "count": self.count}
        if self.skip:
            out["skip"] = self.skip
        if self.kind in ("lambda_error", "lambda_throttle") and self.function:
            out["function"] = self.function
        if self.kind == "lambda_error":
            out["transient"] = self.transient
        if self.kind == "dynamodb_throttle":
            out["operation"] = self.operation
        if self.kind == "firing_late":
            out["hours"] = self.hours
        return out


def _whole(where: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidInput(where, f"expected a whole number from {low} to {high}, got {value!r}")
    return value


def parse_faults(raw: Any, where: str = "faults") -> list[Fault]:
    """A list of fault declarations, checked (errors name the entry and field)."""
    if not isinstance(raw, list):
        raise InvalidInput(where, f"expected a list of faults, got {type(raw).__name__}")
    faults = []
    for index, entry in enumerate(raw):
        at = f"{where}[{index}]"
        if not isinstance(entry, Mapping):
            raise InvalidInput(at, "expected an object with a 'kind'")
        unknown = sorted(set(entry) - _FIELDS)
        if unknown:
            raise InvalidInput(at, f"unknown field(s) {', '.join(unknown)}")
        kind = entry.get("kind")
        if kind not in KINDS:
            raise InvalidInput(f"{at}.kind", f"expected one of {', '.join(KINDS)}, got {kind!r}")
        fault = Fault(
            kind=kind,
            count=_whole(f"{at}.count", entry.get("count", 1), 1, _MAX_COUNT),
            skip=_whole(f"{at}.skip", entry.get("skip", 0), 0, _MAX_COUNT),
        )
        if "function" in entry:
            if not isinstance(entry["function"], str) or not entry["function"]:
                raise InvalidInput(f"{at}.function", "expected a function's logical id")
            fault.function = entry["function"]
        if "transient" in entry:
            if not isinstance(entry["transient"], bool):
                raise InvalidInput(f"{at}.transient", "expected true or false")
            fault.transient = entry["transient"]
        if "operation" in entry:
            if entry["operation"] not in ("read", "write"):
                raise InvalidInput(f"{at}.operation", f"expected read or write, got {entry['operation']!r}")
            fault.operation = entry["operation"]
        if "hours" in entry:
            hours = entry["hours"]
            if isinstance(hours, bool) or not isinstance(hours, int | float) or not 0 < hours <= 48:
                raise InvalidInput(f"{at}.hours", f"expected a number of hours above 0, at most 48, got {hours!r}")
            fault.hours = float(hours)
        faults.append(fault)
    return faults


def random_faults(seed: int, *, functions: Sequence[str] = ()) -> list[Fault]:
    """A seeded random plan: every kind once or more, at random opportunities."""
    rng = random.Random(seed)
    faults = []
    for kind in KINDS:
        fault = Fault(kind=kind, count=rng.randint(1, 2), skip=rng.randint(0, 6))
        if kind == "lambda_error":
            fault.transient = rng.random() < 0.6
            fault.function = rng.choice(list(functions)) if functions and rng.random() < 0.5 else None
        if kind == "dynamodb_throttle":
            fault.operation = rng.choice(("read", "write"))
            fault.count = rng.randint(1, 3)
        if kind == "firing_late":
            fault.hours = float(rng.choice((1, 3, 6)))
        faults.append(fault)
    return faults


@dataclass
class FaultInjector:
    """Decides, opportunity by opportunity, whether a declared fault strikes (thread-safe)."""

    faults: list[Fault] = field(default_factory=list)
    injected: Counter[str] = field(default_factory=Counter)
    active: bool = True
    """False: nothing strikes any more (the chaos run's settling period)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def strike(self, kind: str, *, function: str | None = None, operation: str | None = None) -> Fault | None:
        """The fault of ``kind`` that strikes at this opportunity, if any (counted as injected)."""
        with self._lock:
            if not self.active:
                return None
            for fault in self.faults:
                if fault.kind != kind or fault.struck >= fault.count:
                    continue
                if fault.function and function and fault.function != function:
                    continue
                if kind == "dynamodb_throttle" and operation != fault.operation:
                    continue
                fault.seen += 1
                if fault.seen <= fault.skip:
                    continue
                fault.struck += 1
                self.injected[kind] += 1
                return fault
        return None

    def plan(self) -> list[dict[str, Any]]:
        return [fault.describe() for fault in self.faults]

    def endpoint_observer(self) -> Any:
        """:func:`endpoint_faults` of this injector (the runtime calls it: it imports nothing
        of the test tooling)."""
        return endpoint_faults(self)


_READS = {"GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"}
_WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}


def endpoint_faults(injector: FaultInjector) -> Any:
    """An observer for :func:`missed_checks_local.iam.enforcement.observed`: the service endpoints' faults
    (DynamoDB throttling, EventBridge failing), answered to the functions' own calls."""
    from moto.core.exceptions import JsonRESTError  # deferred: moto is a dev dependency and slow to import

    def observe(call: Any) -> None:
        if call.denied:
            return
        service, _, operation = call.action.partition(":")
        if service == "dynamodb" and (operation in _READS or operation in _WRITES):
            kind = "read" if operation in _READS else "write"
            if injector.strike("dynamodb_throttle", operation=kind):
                raise JsonRESTError(
                    "ProvisionedThroughputExceededException",
                    "The level of configured provisioned throughput for the table was exceeded. (injected fault)",
                )
        if call.action == "events:PutEvents" and injector.strike("eventbridge_failure"):
            error = JsonRESTError("InternalException", "EventBridge failed to publish. (injected fault)")
            error.code = 500
            raise error

    return observe
