"""Starting the evaluation state machine by hand, as a schedule firing would."""

from __future__ import annotations

import hashlib
import json
import re
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from missed_checks.checklist import validate_checklist_id
from missed_checks.timefmt import to_utc_iso

MAX_NAME = 80
# Step Functions forbids whitespace, < > { } [ ] ? * " # % \ ^ | ~ ` $ & , ; : / and control characters.
_FORBIDDEN = re.compile(r"[^A-Za-z0-9._-]")


def execution_name(prefix: str, checklist_id: str, instant: datetime, unique: str | None = None) -> str:
    """A valid, readable execution name: ``<prefix>-<checklist>-<instant>-<unique>``, at most 80 characters."""
    unique = unique or uuid.uuid4().hex[:8]
    stamp = to_utc_iso(instant).replace("-", "").replace(":", "")
    fixed = f"{prefix}--{stamp}-{unique}"
    room = MAX_NAME - len(fixed)
    checklist = _FORBIDDEN.sub("_", checklist_id)
    if len(checklist) > room:
        checklist = checklist[: max(0, room - 9)] + "_" + hashlib.sha256(checklist_id.encode()).hexdigest()[:8]
    return _FORBIDDEN.sub("_", f"{prefix}-{checklist}-{stamp}-{unique}")[:MAX_NAME]


@dataclass(frozen=True)
class Started:
    execution_arn: str
    name: str
    input: dict[str, Any]
    already_existed: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"execution_arn": self.execution_arn, "name": self.name, "input": self.input,
                "already_existed": self.already_existed}


def execution_arn(state_machine_arn: str, name: str) -> str:
    """The ARN the execution named ``name`` has (or will have): known before it is started."""
    return state_machine_arn.replace(":stateMachine:", ":execution:") + f":{name}"


def start_evaluation(stepfunctions: Any, state_machine_arn: str, checklist_id: str, instant: datetime,
                     name: str, extra: dict[str, Any] | None = None) -> Started:
    """StartExecution with the schedule's input (plus ``extra`` fields). A name already used (a
    replay that ran before) is not an error: the execution it names is returned."""
    document: dict[str, Any] = {"checklist_id": validate_checklist_id(checklist_id, "checklist_id"),
                                "instant": to_utc_iso(instant), **(extra or {})}
    try:
        response = stepfunctions.start_execution(stateMachineArn=state_machine_arn, name=name,
                                                 input=json.dumps(document))
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") != "ExecutionAlreadyExists":
            raise
        return Started(execution_arn(state_machine_arn, name), name, document, already_existed=True)
    return Started(str(response["executionArn"]), name, document)


def wait_for(stepfunctions: Any, execution_arn: str, timeout_s: float = 900, poll_s: float = 0.5) -> dict[str, Any]:
    """Poll DescribeExecution until the execution is no longer RUNNING (or the timeout passes)."""
    deadline = time.monotonic() + timeout_s
    while True:
        described = stepfunctions.describe_execution(executionArn=execution_arn)
        if described["status"] != "RUNNING" or time.monotonic() > deadline:
            return dict(described)
        time.sleep(poll_s)
