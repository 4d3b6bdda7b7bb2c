"""Shared fixtures: what ``sam build`` produced, deployed into an in-process moto.

``local_stack`` is the built template deployed with the SAM transform and moto's CloudFormation
(tables, queues, schedule group, roles, functions, the state machine), each function answering
in its own Python 3.13 worker with its role's credentials (IAM enforced), so a started execution
runs the real, built functions. ``local_runtime`` adds the simulated clock, the stream poller and
the simulated EventBridge Scheduler. ``make test`` builds the artifacts first.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from missed_checks_local.clock import SimulatedClock
from missed_checks_local.embedded import embedded_aws
from missed_checks_local.lambda_runtime import LambdaRuntime
from missed_checks_local.runtime import LocalRuntime
from missed_checks_local.stack import EmbeddedStack


@pytest.fixture
def embedded() -> Iterator[None]:
    """An empty in-process AWS (moto, state machines executing) with fake credentials."""
    with embedded_aws():
        yield


@pytest.fixture
def local_stack(embedded: None, request: pytest.FixtureRequest) -> Iterator[EmbeddedStack]:
    """The built template deployed in moto, its functions answering in their workers.

    ``local_stack.lambda_runtime.invocations`` lists every function call with its event,
    result or error and captured logs. ``@pytest.mark.stack_parameters(EquipmentPerTask="20")``
    overrides template parameters (``FAN_OUT`` makes even a small fleet fan out).
    """
    marker = request.node.get_closest_marker("stack_parameters")
    stack = EmbeddedStack.provision(parameters=marker.kwargs if marker else None)
    with LambdaRuntime(stack) as runtime:
        stack.lambda_runtime = runtime
        yield stack


FAN_OUT = {"EquipmentPerTask": "20"}
"""Stack parameters that make the test fleets (hundreds of pieces) fan out, one task per batch of
about 20, instead of being judged whole by PlanEvaluation."""

LOCAL_START = datetime(2026, 3, 2, tzinfo=UTC)
"""Where ``local_runtime``'s simulated clock starts (a Monday)."""


@pytest.fixture
def local_runtime(local_stack: EmbeddedStack) -> Iterator[LocalRuntime]:
    """``local_stack`` plus the simulated clock (at ``LOCAL_START``), stream delivery and scheduler.

    Write through the adapters, then ``local_runtime.settle()`` (stream to schedule-sync,
    schedules refreshed) and ``local_runtime.advance_to(instant)`` (fires what is due, waits
    for the executions). ``local_runtime.clock`` is also what ``missed_checks.clock.now()`` returns.
    """
    local_stack.lambda_runtime.uninstall()
    with LocalRuntime(local_stack, SimulatedClock(LOCAL_START)) as runtime:
        yield runtime
