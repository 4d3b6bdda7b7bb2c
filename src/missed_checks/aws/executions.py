"""Step Functions: starting an execution of the evaluation state machine and waiting for it.

botocore has no waiter for Step Functions executions (nor a paginator that helps here), so
:func:`wait_for` polls ``DescribeExecution``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError


@dataclass(frozen=True)
class StartedExecution:
    """An execution just started, or the one of that name started earlier (``already_existed``)."""

    execution_arn: str
    already_existed: bool = False


def execution_arn(state_machine_arn: str, name: str) -> str:
    """The ARN the execution named ``name`` has (or will have): known before it is started."""
    return state_machine_arn.replace(":stateMachine:", ":execution:") + f":{name}"


def start_execution(stepfunctions: Any, state_machine_arn: str, name: str,
                    document: Mapping[str, Any]) -> StartedExecution:
    """StartExecution with ``document`` as its JSON input. A name already used is not an error:
    the execution it names is returned, ``already_existed``."""
    try:
        response = stepfunctions.start_execution(stateMachineArn=state_machine_arn, name=name,
                                                 input=json.dumps(document))
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") != "ExecutionAlreadyExists":
            raise
        return StartedExecution(execution_arn(state_machine_arn, name), already_existed=True)
    return StartedExecution(str(response["executionArn"]))


def describe_execution(stepfunctions: Any, arn: str) -> dict[str, Any]:
    """DescribeExecution's answer: ``status``, and ``output``/``error``/``cause`` once it ended."""
    return dict(stepfunctions.describe_execution(executionArn=arn))


def wait_for(stepfunctions: Any, execution_arn: str, timeout_s: float = 900, poll_s: float = 0.5) -> dict[str, Any]:
    """Poll DescribeExecution until the execution is no longer RUNNING (or the timeout passes)."""
    deadline = time.monotonic() + timeout_s
    while True:
        described = describe_execution(stepfunctions, execution_arn)
        if described["status"] != "RUNNING" or time.monotonic() > deadline:
            return described
        time.sleep(poll_s)
