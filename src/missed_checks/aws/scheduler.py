"""EventBridge Scheduler: create, fully replace and delete one checklist's schedule; list a group's."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from missed_checks.aws.clients import ServiceAdapter
from missed_checks.checklists.schedule import DesiredSchedule, Target
from missed_checks.errors import ScheduleRejected, TransientError

TRANSIENT_CODES = {"ThrottlingException", "InternalServerException", "ServiceUnavailable"}


def _code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


def _translate(error: ClientError) -> Exception:
    code = _code(error)
    if code in TRANSIENT_CODES:
        return TransientError(f"EventBridge Scheduler: {error}")
    if code == "ValidationException":
        return ScheduleRejected(str(error.response.get("Error", {}).get("Message") or error))
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
