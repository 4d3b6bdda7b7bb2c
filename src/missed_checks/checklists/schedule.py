"""The EventBridge Scheduler schedule a checklist should have (domain only, no AWS calls)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from missed_checks.checklists.checklist import Checklist, Status
from missed_checks.checklists.schedule_expression import ScheduleSpec, firing_wall_time, schedule_for

TARGET_INPUT_TEMPLATE = ('{{"kind": "scheduler", "checklist_id": "{checklist_id}", '
                         '"instant": "<aws.scheduler.scheduled-time>"}}')
"""The execution input of every firing, and so the body of a firing Scheduler could not deliver
(``missed_checks.dead_letters.SchedulerLetter``: ``kind`` is its dead-letter tag)."""
MAXIMUM_EVENT_AGE_SECONDS = 86400
CATCH_UP_DELAY = timedelta(minutes=1)
"""A single-window rule whose one firing instant has passed unjudged is fired this long after the
sync (rounded up to the minute) instead: Scheduler never gets an ``at()`` in the past."""


@dataclass(frozen=True)
class Target:
    """Where every schedule points: the stack's state machine, role and dead-letter queue."""

    state_machine_arn: str
    role_arn: str
    dead_letter_arn: str
    max_retry_attempts: int


@dataclass(frozen=True)
class DesiredSchedule:
    name: str
    group_name: str
    expression: str
    timezone: str
    start_date: datetime | None
    end_date: datetime | None
    enabled: bool
    exact: bool
    target_input: str
    purpose: str = ""
    """The schedule's Description when it is not the evaluation's (a reminder schedule, #18)."""

    def request(self, target: Target) -> dict[str, Any]:
        """The complete CreateSchedule/UpdateSchedule request. UpdateSchedule replaces everything,
        so this is always the whole schedule, never a patch."""
        request: dict[str, Any] = {
            "Name": self.name,
            "GroupName": self.group_name,
            "ScheduleExpression": self.expression,
            "ScheduleExpressionTimezone": self.timezone,
            "FlexibleTimeWindow": {"Mode": "OFF"},
            "State": "ENABLED" if self.enabled else "DISABLED",
            "ActionAfterCompletion": "NONE",
            "Description": self.purpose or f"missed-checks: evaluates checklist {self.name} "
            f"({'exact' if self.exact else 'superset, the state machine skips firings that close no window'})",
            "Target": {
                "Arn": target.state_machine_arn,
                "RoleArn": target.role_arn,
                "Input": self.target_input,
                "RetryPolicy": {
                    "MaximumEventAgeInSeconds": MAXIMUM_EVENT_AGE_SECONDS,
                    "MaximumRetryAttempts": target.max_retry_attempts,
                },
                "DeadLetterConfig": {"Arn": target.dead_letter_arn},
            },
        }
        if self.start_date is not None:
            request["StartDate"] = self.start_date
        if self.end_date is not None:
            request["EndDate"] = self.end_date
        return request

    def fingerprint(self, target: Target) -> str:
        """Changes whenever anything in the request would change: equal fingerprints mean no call is needed."""
        document = json.dumps(self.request(target), sort_keys=True, default=str)
        return hashlib.sha256(document.encode("utf-8")).hexdigest()[:32]


def desired_schedule(checklist: Checklist, group_name: str, now: datetime) -> DesiredSchedule | None:
    """The schedule ``checklist`` needs, or ``None`` when it needs none any more (its last window has
    been judged: Scheduler refuses an EndDate in the past). Raises InvalidRecurrence.

    Closure calendars (#23 item 2): cron cannot leave dates out, so the expression stays the rule's
    and fires on a closed date too (the evaluation then finds nothing due there); the schedule is
    then never ``exact``. Its StartDate and EndDate follow the first and last windows left open,
    and a bounded rule whose every window is closed needs no schedule."""
    recurrence = checklist.parsed()
    if recurrence.closed_dates and not recurrence.has_windows():
        return None
    found: ScheduleSpec | None = schedule_for(recurrence)
    if found is not None and found.expression.startswith("at("):
        found = _one_time(checklist, found, now)  # never an at() in the past (#30 item 2)
    if found is None or (found.end_date is not None and found.end_date <= now):
        return None
    spec = found
    # Scheduler refuses a StartDate more than 5 minutes in the past (and a past one means nothing):
    # only a rule that has not started yet keeps it.
    start_date = spec.start_date if spec.start_date is not None and spec.start_date > now else None
    return DesiredSchedule(
        name=checklist.checklist_id,
        group_name=group_name,
        expression=spec.expression,
        timezone=spec.timezone,
        start_date=start_date,
        end_date=spec.end_date,
        enabled=checklist.status is Status.ACTIVE,
        exact=spec.exact and not recurrence.closed_dates,
        target_input=TARGET_INPUT_TEMPLATE.format(checklist_id=checklist.checklist_id),
    )


def _one_time(checklist: Checklist, spec: ScheduleSpec, now: datetime) -> ScheduleSpec | None:
    """A single-window rule's ``at()`` schedule, never in the past (#30 item 2).

    Its one window is judged by one firing at or after its ``evaluate_at``. When that instant has
    passed by the time of the sync (a stream record retried or redriven late, a re-sync after an
    edit of who is told, a calendar change), nothing fired for it, or what fired was judged:

    * the window ends at or before the checklist's watermark (judged, or closed before the rule
      took effect, which the contract never judges): no schedule is needed (None);
    * otherwise the window closed while nothing judged it, and the contract says it must still be
      judged: the schedule fires once, :data:`CATCH_UP_DELAY` after the sync, and that firing's
      evaluation judges every window due by then after the watermark (docs/evaluation.md), this
      one. The same target, retry policy and dead-letter queue as any firing.
    """
    window = checklist.parsed().first_window()
    if not window.closed_by(now):
        return spec
    watermark = checklist.watermark
    if watermark is not None and window.settled_by(watermark):
        return None
    zone = checklist.parsed().zone
    wall = firing_wall_time(now + CATCH_UP_DELAY, zone)
    return ScheduleSpec(f"at({wall:%Y-%m-%dT%H:%M:%S})", spec.timezone, None, None, spec.exact)
