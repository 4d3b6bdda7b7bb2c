"""EventBridge Scheduler: create, fully replace and delete one checklist's schedule; list a group's;
plan an equipment's one-time readiness recheck (#33, :class:`RecheckSchedules`).

Scheduler answers ``ValidationException`` for two different things (Scheduler API reference,
"CreateSchedule", Errors: "The input fails to satisfy the constraints specified by an AWS
service"): a schedule it refuses (the expression, the time zone), which no retry can change, and
a stack whose setup it refuses at that moment: "The execution role you provide must allow AWS
EventBridge Scheduler to assume the role." while a new role propagates (aws/aws-sdk-js-v3#6494
quotes it), a target or dead-letter ARN or a permission it cannot use. :func:`classify` tells them
apart by the message: only the first is :class:`ScheduleRejected` (the checklist is flagged); the
second, and any refusal it cannot place, is :class:`SchedulerSetupError`, a transient error: the
stream record fails and is retried, nothing is flagged.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import ClientError

from missed_checks.aws.clients import ServiceAdapter
from missed_checks.checklists.schedule import MAXIMUM_EVENT_AGE_SECONDS, DesiredSchedule, Target
from missed_checks.contracts import dump
from missed_checks.dead_letters import RecheckLetter
from missed_checks.errors import ScheduleRejected, TransientError
from missed_checks.readiness.watching import recheck_schedule_name

TRANSIENT_CODES = {"ThrottlingException", "InternalServerException", "ServiceUnavailable"}
SETUP_CODES = {"AccessDeniedException", "AccessDenied", "UnrecognizedClientException"}
"""The function's own permissions (scheduler:CreateSchedule, iam:PassRole ...): a setup problem."""

_SETUP = re.compile(r"role|assume|\barn\b|target|dead.?letter|permission|authori[sz]|kms|access|group|"
                    r"cannot be earlier than|in the past", re.IGNORECASE)
"""A ValidationException about the stack's setup (role, target, queue, key, group), or about
Scheduler's clock (a StartDate "cannot be earlier than 5 minutes ago": the retry recomputes the
dates from the current time)."""
_RULE = re.compile(r"expression|time ?zone|cron|rate\(|at\(|date|at 'name'|\bname\b", re.IGNORECASE)
"""A ValidationException about the schedule itself: "Invalid Schedule Expression cron(...)", an
unknown ScheduleExpressionTimezone, dates that cannot go together, a checklist id Scheduler
refuses as a schedule name ("Value ... at 'name' failed to satisfy constraint")."""


class SchedulerSetupError(TransientError):
    """EventBridge Scheduler refused the stack's setup (its execution role, a target or dead-letter
    ARN, a permission), not the checklist's rule: transient (a new role propagates in seconds; a
    wrong one must be fixed in the stack), never a reason to flag the checklist."""


def _code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


def _message(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Message") or error)


def classify(code: str, message: str) -> type[Exception] | None:
    """What a Scheduler error means: ScheduleRejected (the rule), SchedulerSetupError (the setup),
    TransientError (throttled, unavailable), or None (not Scheduler's refusal: raised as it is)."""
    if code in TRANSIENT_CODES:
        return TransientError
    if code in SETUP_CODES:
        return SchedulerSetupError
    if code == "ValidationException":
        if _SETUP.search(message) or not _RULE.search(message):
            return SchedulerSetupError  # one it cannot place fails the record: retried, logged, never flagged
        return ScheduleRejected
    return None


def _translate(error: ClientError) -> Exception:
    kind = classify(_code(error), _message(error))
    if kind is ScheduleRejected:
        return ScheduleRejected(_message(error))
    if kind is SchedulerSetupError:
        return SchedulerSetupError(f"EventBridge Scheduler refused the stack's setup ({_code(error)}): "
                                   f"{_message(error)}")
    if kind is TransientError:
        return TransientError(f"EventBridge Scheduler: {error}")
    return error


class ScheduleStore(ServiceAdapter):
    """The schedules of one schedule group."""

    service_name = "scheduler"

    def __init__(self, group_name: str, scheduler: Any | None = None) -> None:
        super().__init__(scheduler)
        self.group_name = group_name

    def upsert(self, desired: DesiredSchedule, target: Target, *, probably_exists: bool) -> str:
        """Create the schedule or replace it whole (UpdateSchedule resets omitted fields, so the
        complete request is always sent). Returns "created" or "updated"."""
        request = desired.request(target)
        attempts = ("update", "create") if probably_exists else ("create", "update")
        for attempt in attempts:
            try:
                if attempt == "create":
                    self.client.create_schedule(**request)
                    return "created"
                self.client.update_schedule(**request)
                return "updated"
            except ClientError as error:
                code = _code(error)
                if (attempt == "create" and code == "ConflictException") or (
                    attempt == "update" and code == "ResourceNotFoundException"
                ):
                    continue
                raise _translate(error) from error
        raise TransientError(f"schedule {desired.name} was created and deleted concurrently; retry")

    def delete(self, name: str) -> bool:
        """Delete the schedule; False when there was none."""
        try:
            self.client.delete_schedule(Name=name, GroupName=self.group_name)
        except ClientError as error:
            if _code(error) == "ResourceNotFoundException":
                return False
            raise _translate(error) from error
        return True

    def names(self) -> list[str]:
        """The name of every schedule in the group (ListSchedules, every page)."""
        paginator = self.client.get_paginator("list_schedules")
        return [schedule["Name"] for page in paginator.paginate(GroupName=self.group_name)
                for schedule in page.get("Schedules", [])]


class RecheckSchedules(ServiceAdapter):
    """Readiness's :class:`missed_checks.readiness.ports.RecheckScheduler` (#33): one one-time
    schedule per piece of equipment in the stack's group, ``at(<instant>)`` in UTC, deleted by
    Scheduler once it has fired (``ActionAfterCompletion: DELETE``), invoking the readiness function
    with ``{"kind": "recheck", "equipment_id": ...}``."""

    service_name = "scheduler"

    def __init__(self, group_name: str, function_arn: str, role_arn: str, dead_letter_arn: str,
                 scheduler: Any | None = None) -> None:
        super().__init__(scheduler)
        self.group_name = group_name
        self.function_arn = function_arn
        self.role_arn = role_arn
        self.dead_letter_arn = dead_letter_arn

    def request(self, equipment_id: str, at: datetime) -> dict[str, Any]:
        """The complete CreateSchedule/UpdateSchedule request of the equipment's recheck at ``at``."""
        return {
            "Name": recheck_schedule_name(equipment_id),
            "GroupName": self.group_name,
            "ScheduleExpression": f"at({at.astimezone(UTC):%Y-%m-%dT%H:%M:%S})",
            "ScheduleExpressionTimezone": "UTC",
            "FlexibleTimeWindow": {"Mode": "OFF"},
            "State": "ENABLED",
            "ActionAfterCompletion": "DELETE",
            "Description": f"missed-checks: rechecks the readiness of {equipment_id[:400]}",
            "Target": {
                "Arn": self.function_arn,
                "RoleArn": self.role_arn,
                "Input": json.dumps(dump(RecheckLetter(kind="recheck", equipment_id=equipment_id))),
                "RetryPolicy": {"MaximumEventAgeInSeconds": MAXIMUM_EVENT_AGE_SECONDS, "MaximumRetryAttempts": 5},
                "DeadLetterConfig": {"Arn": self.dead_letter_arn},
            },
        }

    def plan_recheck(self, equipment_id: str, at: datetime | None) -> None:
        """Create or replace the schedule firing at ``at``; None deletes it (none is needed)."""
        if at is None:
            try:
                self.client.delete_schedule(Name=recheck_schedule_name(equipment_id), GroupName=self.group_name)
            except ClientError as error:
                if _code(error) != "ResourceNotFoundException":
                    raise _translate(error) from error
            return
        request = self.request(equipment_id, at)
        for attempt in ("update", "create"):
            try:
                getattr(self.client, f"{attempt}_schedule")(**request)
                return
            except ClientError as error:
                code = _code(error)
                if (attempt == "update" and code == "ResourceNotFoundException") or (
                        attempt == "create" and code == "ConflictException"):
                    continue
                raise _translate(error) from error
        raise TransientError(f"recheck schedule of {equipment_id} was created and deleted concurrently; retry")
