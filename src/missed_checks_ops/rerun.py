"""Starting the evaluation state machine by hand, as a schedule firing would."""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from missed_checks.aws.executions import describe_execution, execution_arn, start_execution, wait_for
from missed_checks.checklists.checklist import validate_checklist_id
from missed_checks.errors import InvalidInput
from missed_checks.timefmt import to_utc_iso
from missed_checks_ops.checklists import get_checklist
from missed_checks_ops.target import StackTarget

__all__ = ["Started", "describe_execution", "execution_arn", "execution_name", "rerun", "start_evaluation",
           "wait_for"]

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


def start_evaluation(stepfunctions: Any, state_machine_arn: str, checklist_id: str, instant: datetime,
                     name: str, extra: dict[str, Any] | None = None) -> Started:
    """StartExecution with the schedule's input (plus ``extra`` fields). A name already used (a
    replay that ran before) is not an error: the execution it names is returned."""
    document: dict[str, Any] = {"checklist_id": validate_checklist_id(checklist_id, "checklist_id"),
                                "instant": to_utc_iso(instant), **(extra or {})}
    started = start_execution(stepfunctions, state_machine_arn, name, document)
    return Started(started.execution_arn, name, document, already_existed=started.already_existed)


def rerun(target: StackTarget, checklist_id: str, instant: datetime, name: str, *,
          wait: bool = False) -> tuple[Started, dict[str, Any] | None]:
    """``missed-checks rerun``: start the evaluation of an existing checklist at ``instant`` under a
    new execution ``name`` (a name already used is an InvalidInput on ``name``); with ``wait``, also
    DescribeExecution's answer once it ended."""
    get_checklist(target, checklist_id, "checklist")
    stepfunctions = target.client("stepfunctions")
    started = start_evaluation(stepfunctions, target.state_machine_arn, checklist_id, instant, name)
    if started.already_existed:
        raise InvalidInput("name", f"an execution named {name} already exists: choose another --name")
    return started, wait_for(stepfunctions, started.execution_arn) if wait else None
