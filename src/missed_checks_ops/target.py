"""Which stack the operations commands work on, and boto3 clients bound to it.

A deployed stack is found by name: CloudFormation ``DescribeStacks`` returns the Outputs that
``template.yaml`` declares (TableName, StateMachineArn, ScheduleGroupName, the three
``*DeadLetterQueueUrl`` ...). ``--endpoint URL`` (or ``AWS_ENDPOINT_URL``) sends every call to
another endpoint, such as ``missed-checks local serve``, which deploys the template with
CloudFormation there, so the lookup is the same. Explicit overrides (``--table`` ...) win over
the stack's outputs, and are enough on their own when there is no stack to look up.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, NoRegionError

from missed_checks.aws.clients import bound_client, new_session
from missed_checks.aws.queues import Queue
from missed_checks.aws.scheduler import ScheduleStore
from missed_checks.aws.stacks import StackDescription, describe_stack
from missed_checks.aws.table import ChecklistTable
from missed_checks.errors import MissedChecksError

# Where local serve answers and what it publishes: the emulator's values, in the one module the
# operator's tools share with it (missed_checks_local.endpoint imports nothing of either).
from missed_checks_local import endpoint
from missed_checks_local.endpoint import CLOCK_TAG as CLOCK_TAG
from missed_checks_local.endpoint import LOCAL_API_PORT as LOCAL_API_PORT
from missed_checks_local.endpoint import LOCAL_API_URL as LOCAL_API_URL
from missed_checks_local.endpoint import LOCAL_ENDPOINT as LOCAL_ENDPOINT
from missed_checks_local.endpoint import LOCAL_SERVE_PORT as LOCAL_SERVE_PORT
from missed_checks_local.endpoint import LOCAL_STACK_NAME as LOCAL_STACK_NAME

STACK_ENV = "MISSED_CHECKS_STACK"

# Queue kinds, as the commands name them, and the stack output holding each URL.
QUEUE_OUTPUTS = {
    "schedule-sync": "ScheduleSyncDeadLetterQueueUrl",
    "scheduler": "SchedulerDeadLetterQueueUrl",
    "evaluation": "EvaluationDeadLetterQueueUrl",
    "notification": "NotificationDeadLetterQueueUrl",  # notifications (#18)
    "audit": "AuditDeadLetterQueueUrl",  # the audit trail (#31)
    "readiness": "ReadinessDeadLetterQueueUrl",  # readiness (#33)
}
# Override flag (without dashes, as argparse names it) -> output it replaces.
OVERRIDES = {
    "table": "TableName",
    "state_machine_arn": "StateMachineArn",
    "schedule_group": "ScheduleGroupName",
    "sync_dlq_url": "ScheduleSyncDeadLetterQueueUrl",
    "scheduler_dlq_url": "SchedulerDeadLetterQueueUrl",
    "evaluation_dlq_url": "EvaluationDeadLetterQueueUrl",
}


class TargetError(MissedChecksError):
    """The stack cannot be found or lacks what a command needs. ``field`` names the option to give
    when the command line, not the stack, is at fault (a usage error)."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


@dataclass
class StackTarget:
    region: str
    endpoint_url: str | None
    stack_name: str | None
    outputs: dict[str, str]
    parameters: dict[str, str] = field(default_factory=dict)
    session: Any = field(default=None, repr=False, compare=False)
    _clients: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def where(self) -> str:
        place = f"stack {self.stack_name}" if self.stack_name else "explicit resources"
        return f"{place} in {self.region}" + (f" at {self.endpoint_url}" if self.endpoint_url else "")

    def output(self, name: str) -> str:
        value = self.outputs.get(name)
        if not value:
            flag = next((k.replace("_", "-") for k, v in OVERRIDES.items() if v == name), None)
            hint = f"; give --{flag}" if flag else ""
            raise TargetError(f"{self.where} has no output {name}{hint}",
                              field=(flag or "stack") if not self.stack_name else None)
        return value

    def parameter(self, name: str) -> str:
        """The stack's parameter ``name`` (DescribeStacks lists defaulted ones too: template.yaml
        holds every default, the tools have none of their own)."""
        value = self.parameters.get(name)
        if value is None:
            raise TargetError(f"{self.where} has no parameter {name}" + ("" if self.stack_name else "; give --stack"),
                              field=None if self.stack_name else "stack")
        return value

    def client(self, service: str) -> Any:
        if service not in self._clients:
            session = self.session or new_session(self.region)
            self._clients[service] = bound_client(session, service, self.region, self.endpoint_url)
        return self._clients[service]

    def table(self) -> ChecklistTable:
        return ChecklistTable(self.output("TableName"), dynamodb=self.client("dynamodb"))

    @property
    def state_machine_arn(self) -> str:
        return self.output("StateMachineArn")

    def queue_url(self, kind: str) -> str:
        if kind not in QUEUE_OUTPUTS:
            raise TargetError(f"unknown queue {kind!r}: give one of {', '.join(QUEUE_OUTPUTS)}", field="queue")
        return self.output(QUEUE_OUTPUTS[kind])

    def queue(self, kind: str) -> Queue:
        return Queue(self.queue_url(kind), self.client("sqs"))

    def schedules(self) -> ScheduleStore:
        return ScheduleStore(self.output("ScheduleGroupName"), self.client("scheduler"))

    def console_url(self, execution_arn: str) -> str:
        """The Step Functions console page of an execution."""
        region = self.region
        return (f"https://{region}.console.aws.amazon.com/states/home?region={region}"
                f"#/v2/executions/details/{execution_arn}")


class ClockAnchor(endpoint.ClockAnchor):
    """A local stack's clock as the operator's tools read it: a tag that is not a clock is a
    :class:`TargetError` (the stack, not the command line, is at fault)."""

    @classmethod
    def from_tag(cls, text: str) -> ClockAnchor:
        try:
            anchor = super().from_tag(text)
        except endpoint.NotAClock as error:
            raise TargetError(str(error)) from error
        return cls(anchor.instant, anchor.wall, anchor.speed)


_LOOKED_UP: dict[tuple[str, str, str], StackDescription] = {}
"""What :func:`stack_clock` found, by (endpoint, region, stack), handed once to the next
:func:`resolve_target` of this process for the same stack: a command asks for "now" first, then
finds its target, and one DescribeStacks serves both (a command's start is mostly such calls)."""


def stack_clock(stack: str | None, region: str | None, endpoint: str | None, session: Any = None) -> ClockAnchor | None:
    """The clock a stack behind ``endpoint`` publishes (``local serve``'s simulated one), or None:
    no endpoint (AWS itself), no such stack, or a stack that publishes none (the wall clock rules)."""
    endpoint = endpoint or os.environ.get("AWS_ENDPOINT_URL") or None
    if not endpoint:
        return None
    try:
        session = session or new_session(region)
        region = region or session.region_name
        if not region:
            return None
        name = stack or os.environ.get(STACK_ENV) or LOCAL_STACK_NAME
        found = describe_stack(bound_client(session, "cloudformation", region, endpoint), name)
    except (ClientError, BotoCoreError):
        return None  # the command's own lookup of the stack says what is wrong
    if found is not None:
        _LOOKED_UP[(endpoint, region, name)] = found
    if found is None or CLOCK_TAG not in found.tags:
        return None
    return ClockAnchor.from_tag(found.tags[CLOCK_TAG])


def resolve_target(
    stack: str | None = None,
    region: str | None = None,
    endpoint: str | None = None,
    overrides: Mapping[str, str | None] | None = None,
    session: Any = None,
) -> StackTarget:
    """Find the stack. With no ``stack``: ``$MISSED_CHECKS_STACK``, else the local runtime's stack
    when an endpoint is given, else only the explicit ``overrides``. Nothing named at all is said
    first, before the region: without a stack there is nothing a region would find."""
    endpoint = endpoint or os.environ.get("AWS_ENDPOINT_URL") or None
    given = {OVERRIDES[k]: v for k, v in (overrides or {}).items() if v and k in OVERRIDES}
    stack = stack or os.environ.get(STACK_ENV) or None
    if stack is None and not endpoint and not given:
        raise TargetError(
            f"no target: give --stack NAME (a stack deployed with sam deploy; or set {STACK_ENV}), "
            f"--endpoint URL for a local stack (missed-checks local serve: {LOCAL_ENDPOINT}; or set "
            "AWS_ENDPOINT_URL), or the resources themselves (--table ...)",
            field="stack")
    if session is None:
        session = new_session(region)
    region = region or session.region_name
    if not region:
        raise TargetError("no AWS region: give --region REGION (or set AWS_DEFAULT_REGION, or a region in your "
                          "AWS profile)", field="region")
    guessed_local = False
    if stack is None and endpoint and not given:
        stack, guessed_local = LOCAL_STACK_NAME, True
    if stack is None:
        return StackTarget(region, endpoint, None, given, session=session)
    outputs, parameters = _describe(stack, region, endpoint, session, guessed_local)
    return StackTarget(region, endpoint, stack, {**outputs, **given}, parameters, session=session)


def _describe(stack: str, region: str, endpoint: str | None, session: Any,
              guessed_local: bool) -> tuple[dict[str, str], dict[str, str]]:
    where = f"{region}" + (f" at {endpoint}" if endpoint else "")
    found = _LOOKED_UP.pop((endpoint, region, stack), None) if endpoint else None
    try:
        if found is None:
            found = describe_stack(bound_client(session, "cloudformation", region, endpoint), stack)
    except ClientError as error:
        message = error.response.get("Error", {}).get("Message") or str(error)
        if "does not exist" in message:
            hint = (" (is `missed-checks local serve` running there?)" if guessed_local
                    else " (check --stack and --region)")
            raise TargetError(f"stack {stack} not found in {where}{hint}") from error
        raise TargetError(f"cannot describe stack {stack} in {where}: {message}") from error
    except NoCredentialsError as error:
        raise TargetError(f"no AWS credentials to describe stack {stack} in {where}") from error
    except NoRegionError as error:
        raise TargetError("no AWS region: give --region REGION", field="region") from error
    except BotoCoreError as error:
        raise TargetError(f"cannot reach CloudFormation in {where}: {error}") from error
    if found is None:
        raise TargetError(f"stack {stack} not found in {where}")
    if "TableName" not in found.outputs:
        raise TargetError(f"stack {stack} in {where} is not a missed-checks stack (no TableName output)")
    return found.outputs, found.parameters
