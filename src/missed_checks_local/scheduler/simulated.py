"""A simulated EventBridge Scheduler: the schedules stored in moto, fired on the simulated clock.

moto's Scheduler stores schedules but never fires them. :class:`SimulatedScheduler` reads the
schedules of one group through the Scheduler API (``list_schedules``/``get_schedule``), works
out when AWS would fire each one, and at that instant invokes the target as Scheduler does:

* ``cron(...)`` is evaluated on the wall clock of ``ScheduleExpressionTimezone`` (with
  ``aws-croniter``, which only knows UTC, so wall times are evaluated as if UTC and then mapped
  to instants). AWS's DST rules: a wall time that does not exist on the spring-forward day is
  skipped; a wall time that occurs twice on the fall-back day fires once, at its first
  occurrence. ``at(...)`` is one wall time in the zone; ``rate(...)`` counts from the
  schedule's StartDate, or from when it was created.
* A schedule fires at instants strictly after it was created or last changed (updating a
  schedule never back-fills), at or after ``StartDate`` and before ``EndDate`` (both ignored
  for ``at()``), and never while ``State`` is ``DISABLED``.
* The target ``Input`` gets ``<aws.scheduler.scheduled-time>`` (``2026-03-02T14:30:00Z``),
  ``<aws.scheduler.schedule-arn>``, ``<aws.scheduler.execution-id>`` (new per attempt) and
  ``<aws.scheduler.attempt-number>`` substituted; Step Functions targets get StartExecution,
  Lambda targets an invoke through the runtime (its warm worker for the function), SQS targets SendMessage.
* A failed start is retried (retryable errors only, up to the target's
  ``RetryPolicy.MaximumRetryAttempts``, all at the same simulated instant, no backoff), then
  sent to the target's ``DeadLetterConfig`` queue: body = the input, message attributes
  ``ERROR_CODE``, ``ERROR_MESSAGE``, ``EXECUTION_ID``, ``SCHEDULE_ARN``, ``TARGET_ARN``,
  ``RETRY_ATTEMPTS``, ``SCHEDULED_TIME``, ``IS_PAYLOAD_TRUNCATED`` and ``EXHAUSTED_RETRY_CONDITION``
  (AWS's list). ERROR_CODE is the target service's error code (``StateMachineDoesNotExist``...).
* ``ActionAfterCompletion: DELETE`` deletes an ``at()`` schedule after it fired.

Firings of all schedules come out in time order (ties by schedule name). Failures can be
injected with :meth:`SimulatedScheduler.inject_failure` (scenarios use it to test catch-up).
The flexible time window is not emulated: every firing happens at its scheduled time.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from botocore.exceptions import ClientError

from missed_checks_local.stack import EmbeddedStack, local_session

__all__ = [
    "Firing",
    "ScheduleDefinitionError",
    "SimulatedScheduler",
    "next_fire_time",
]

_AT = re.compile(r"^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$")
_RATE = re.compile(r"^rate\((\d+)\s+(minute|minutes|hour|hours|day|days)\)$")
_CRON = re.compile(r"^cron\((.+)\)$")
# Wall time can run ahead of or behind the instant by the DST shift; look back this far.
_DST_SLACK = timedelta(hours=3)
_CRON_SEARCH_LIMIT = 100_000
_RETRYABLE = {
    "ThrottlingException",
    "TooManyRequestsException",
    "ServiceUnavailable",
    "ServiceUnavailableException",
    "InternalServerError",
    "InternalServerException",
    "ExecutionLimitExceeded",
    "RequestTimeout",
}


class ScheduleDefinitionError(ValueError):
    """A schedule AWS would not have accepted (bad expression or time zone)."""


@dataclass
class Firing:
    """One firing of a schedule, after all its attempts."""

    schedule: str
    scheduled_time: datetime
    attempts: int
    input: str
    execution_arn: str | None = None
    error_code: str | None = None
    error_message: str | None = None
    dead_lettered: bool = False

    @property
    def ok(self) -> bool:
        return self.error_code is None


@dataclass
class _Injected:
    remaining: int
    error_code: str
    message: str


@dataclass
class _Schedule:
    name: str
    definition: dict[str, Any]
    modified: Any
    cursor: datetime
    """Firings happen strictly after this instant (creation, last change, last firing)."""
    next_fire: datetime | None = None
    problem: str | None = None


def _zone(name: str | None) -> ZoneInfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleDefinitionError(f"unknown ScheduleExpressionTimezone {name!r}") from None


def _as_utc(value: Any) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return datetime.fromtimestamp(float(value), UTC)


def _wall_to_instant(wall: datetime, zone: ZoneInfo) -> datetime | None:
    """The first instant that shows ``wall`` (naive) in ``zone``; None inside a DST gap."""
    first = wall.replace(tzinfo=zone, fold=0)
    if first.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != wall:
        return None
    return first.astimezone(UTC)


def _cron(expression: str) -> Any:
    from aws_croniter import AwsCroniter  # deferred: only the local runtime needs it

    try:
        return AwsCroniter(expression)
    except Exception as error:  # aws-croniter raises its own hierarchy
        raise ScheduleDefinitionError(f"invalid cron expression cron({expression}): {error}") from None


def next_fire_time(
    expression: str,
    timezone: str | None,
    after: datetime,
    *,
    start: datetime | None = None,
    end: datetime | None = None,
    anchor: datetime | None = None,
) -> datetime | None:
    """When a schedule with ``expression`` fires next, strictly after ``after`` (UTC)."""
    zone = _zone(timezone)
    expression = expression.strip()
    if match := _AT.match(expression):
        instant = _wall_to_instant(datetime.fromisoformat(match.group(1)), zone)
        return instant if instant is not None and instant > after else None
    if start is not None and start > after:
        after = start - timedelta(microseconds=1)
    candidate: datetime | None
    if match := _RATE.match(expression):
        count, unit = int(match.group(1)), match.group(2).rstrip("s")
        if count < 1:
            raise ScheduleDefinitionError(f"invalid rate expression {expression}")
        period = timedelta(**{f"{unit}s": count})
        origin = start or anchor or after
        steps = max(1, int((after - origin) / period) + 1) if after >= origin else 1
        candidate = origin + steps * period
        while candidate <= after:
            candidate += period
    elif match := _CRON.match(expression):
        candidate = _next_cron(_cron(match.group(1).strip()), zone, after)
    else:
        raise ScheduleDefinitionError(f"invalid schedule expression {expression!r}")
    if candidate is None or (end is not None and candidate >= end):
        return None
    return candidate


def _next_cron(cron: Any, zone: ZoneInfo, after: datetime) -> datetime | None:
    wall = after.astimezone(zone).replace(tzinfo=None) - _DST_SLACK
    for _ in range(_CRON_SEARCH_LIMIT):
        (found,) = cron.get_next(wall.replace(tzinfo=UTC, second=0, microsecond=0))
        if found is None:
            return None
        wall = found.replace(tzinfo=None)
        instant = _wall_to_instant(wall, zone)
        if instant is not None and instant > after:
            return instant
    return None


def scheduled_time_text(instant: datetime) -> str:
    """``<aws.scheduler.scheduled-time>`` as Scheduler writes it: ``2026-03-02T14:30:00Z``."""
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class SimulatedScheduler:
    """Fires the schedules of ``group`` (default: the stack's group) on the simulated clock.

    Call :meth:`refresh` after anything may have changed schedules (the runner does after each
    stream drain), :meth:`next_firing_time` to know when the next firing is due, and
    :meth:`fire_due` at that instant.
    """

    def __init__(
        self,
        stack: EmbeddedStack,
        now: Callable[[], datetime],
        *,
        group: str | None = None,
        invoke_lambda: Callable[[str, Any], Any] | None = None,
        role_sessions: Any = None,
    ) -> None:
        self.stack = stack
        self.role_sessions = role_sessions
        """:class:`~missed_checks_local.iam.enforcement.RoleSessions`: when given, each firing acts with its
        target's ``RoleArn``, as Scheduler does (so IAM decides whether it may start the target)."""
        self._role_clients: dict[str, tuple[Any, Any]] = {}
        self.faults: Any = None
        """A :class:`~missed_checks_local.product.faults.FaultInjector`: firings dropped, delivered twice,
        late, or starting two executions at once."""
        self._deferred: list[tuple[datetime, str, datetime, Any]] = []
        """Deliveries to come: (deliver at, schedule name, scheduled time, schedule state)."""
        self.now = now
        self.group = group or stack.schedule_group
        self.invoke_lambda = invoke_lambda
        self.firings: list[Firing] = []
        self.problems: dict[str, str] = {}
        """Schedules that can never fire (AWS would have refused them), by name."""
        self._schedules: dict[str, _Schedule] = {}
        self._injected: dict[str, _Injected] = {}
        self._scheduler = stack.client("scheduler")
        self._sfn = stack.client("stepfunctions")
        self._sqs = stack.client("sqs")

    # -- reading schedules -----------------------------------------------------------------
    def refresh(self) -> None:
        """Pick up created, changed and deleted schedules (changes apply from now on)."""
        now = self.now()
        seen: set[str] = set()
        paginator = self._scheduler.get_paginator("list_schedules")
        for page in paginator.paginate(GroupName=self.group):
            for summary in page["Schedules"]:
                name = summary["Name"]
                seen.add(name)
                known = self._schedules.get(name)
                modified = summary.get("LastModificationDate")
                if known is not None and modified is not None and known.modified == modified:
                    continue
                definition = self._scheduler.get_schedule(GroupName=self.group, Name=name)
                definition.pop("ResponseMetadata", None)
                if known is None:
                    state = _Schedule(name, definition, modified, cursor=now)
                else:
                    known.definition, known.modified = definition, modified
                    known.cursor = max(known.cursor, now)
                    state = known
                self._schedules[name] = state
                self._plan(state)
        for name in set(self._schedules) - seen:
            del self._schedules[name]
            self.problems.pop(name, None)

    def fingerprint(self) -> frozenset[tuple[str, float]] | None:
        """The group's schedules as moto holds them in this process (name, last modification), or
        None when moto cannot be read: equal fingerprints mean :meth:`refresh` would change nothing."""
        from moto.scheduler.models import scheduler_backends  # deferred: moto is a dev dependency and slow to import

        try:
            group = scheduler_backends[self.stack.account_id][self.stack.region].schedule_groups[self.group]
            return frozenset((name, schedule.last_modified_date) for name, schedule in list(group.schedules.items()))
        except (KeyError, AttributeError):
            return None

    def _plan(self, state: _Schedule) -> None:
        definition = state.definition
        state.problem = None
        self.problems.pop(state.name, None)
        if definition.get("State", "ENABLED") == "DISABLED":
            state.next_fire = None
            return
        try:
            state.next_fire = next_fire_time(
                definition["ScheduleExpression"],
                definition.get("ScheduleExpressionTimezone"),
                state.cursor,
                start=_as_utc(definition.get("StartDate")),
                end=_as_utc(definition.get("EndDate")),
                anchor=_as_utc(definition.get("CreationDate")),
            )
        except ScheduleDefinitionError as error:
            state.next_fire = None
            state.problem = str(error)
            self.problems[state.name] = str(error)

    @property
    def schedules(self) -> dict[str, dict[str, Any]]:
        """The known schedules' definitions, by name."""
        return {name: state.definition for name, state in self._schedules.items()}

    def next_firing_time(self) -> datetime | None:
        times = [state.next_fire for state in self._schedules.values() if state.next_fire is not None]
        times += [deliver_at for deliver_at, *_ in self._deferred]
        return min(times, default=None)

    def upcoming(self, name: str) -> datetime | None:
        state = self._schedules.get(name)
        return state.next_fire if state else None

    # -- firing ----------------------------------------------------------------------------
    def inject_failure(
        self,
        name: str,
        *,
        count: int = 1,
        error_code: str = "AccessDeniedException",
        message: str = "injected failure: the scheduler role may not start the target",
    ) -> None:
        """Make the next ``count`` firings of schedule ``name`` fail every attempt."""
        self._injected[name] = _Injected(count, error_code, message)

    def fire_due(self, until: datetime) -> list[Firing]:
        """Fire, in time order, every firing due at or before ``until`` (late or repeated
        deliveries of earlier firings included)."""
        fired: list[Firing] = []
        while True:
            due = sorted(
                (state.next_fire, name)
                for name, state in self._schedules.items()
                if state.next_fire is not None and state.next_fire <= until
            )
            deferred = sorted((item for item in self._deferred if item[0] <= until), key=lambda item: item[0])
            if deferred and (not due or deferred[0][0] < due[0][0]):
                self._deferred.remove(deferred[0])
                _, _, scheduled, state = deferred[0]
                fired.append(self._fire(state, scheduled))
                continue
            if not due:
                return fired
            when, name = due[0]
            state = self._schedules[name]
            fired.extend(self._deliver(state, when))
            state.cursor = when
            if _AT.match(state.definition["ScheduleExpression"].strip()):
                state.next_fire = None
                if state.definition.get("ActionAfterCompletion") == "DELETE":
                    self._scheduler.delete_schedule(GroupName=self.group, Name=name)
                    del self._schedules[name]
            else:
                self._plan(state)

    def _deliver(self, state: _Schedule, when: datetime) -> list[Firing]:
        """One firing as Scheduler delivers it, or as an injected fault changes its delivery."""
        faults = self.faults
        if faults is not None:
            if faults.strike("firing_drop"):
                return []
            late = faults.strike("firing_late")
            if late is not None:
                self._deferred.append((when + timedelta(hours=late.hours), state.name, when, state))
                return []
            if faults.strike("firing_duplicate"):
                self._deferred.append((when + timedelta(minutes=1), state.name, when, state))
            if faults.strike("concurrent_execution"):
                return [self._fire(state, when), self._fire(state, when)]
        return [self._fire(state, when)]

    def _fire(self, state: _Schedule, when: datetime) -> Firing:
        target = state.definition["Target"]
        retry_cap = int((target.get("RetryPolicy") or {}).get("MaximumRetryAttempts", 185))
        template = target.get("Input", "")
        injected = self._injected.get(state.name)
        if injected is not None and injected.remaining > 0:
            injected.remaining -= 1
        else:
            injected = None
        attempt = 0
        while True:
            attempt += 1
            execution_id = str(uuid.uuid4())
            payload = (
                template.replace("<aws.scheduler.scheduled-time>", scheduled_time_text(when))
                .replace("<aws.scheduler.schedule-arn>", state.definition["Arn"])
                .replace("<aws.scheduler.execution-id>", execution_id)
                .replace("<aws.scheduler.attempt-number>", str(attempt))
            )
            firing = Firing(schedule=state.name, scheduled_time=when, attempts=attempt, input=payload)
            if injected is not None:
                error: tuple[str, str] | None = (injected.error_code, injected.message)
            else:
                error = self._invoke_target(target, payload, firing)
            if error is None:
                self.firings.append(firing)
                return firing
            code, message = error
            firing.error_code, firing.error_message = code, message
            if code in _RETRYABLE and attempt <= retry_cap:
                continue
            self._dead_letter(state, target, firing, execution_id, retryable=code in _RETRYABLE)
            self.firings.append(firing)
            return firing

    def _clients(self, target: dict[str, Any]) -> tuple[Any, Any]:
        """Step Functions and SQS clients acting with the target's role (or the operator's)."""
        role_arn = target.get("RoleArn")
        if self.role_sessions is None or not role_arn:
            return self._sfn, self._sqs
        if role_arn not in self._role_clients:
            credentials = self.role_sessions.client_kwargs(role_arn, "scheduler")
            session = local_session(self.stack.region, **credentials)
            self._role_clients[role_arn] = tuple(
                session.client(service, endpoint_url=self.stack.endpoint_url) for service in ("stepfunctions", "sqs")
            )
        return self._role_clients[role_arn]

    def _invoke_target(self, target: dict[str, Any], payload: str, firing: Firing) -> tuple[str, str] | None:
        arn = target["Arn"]
        sfn, sqs = self._clients(target)
        try:
            if ":states:" in arn:
                # Without a name Step Functions generates a UUID; moto's interpreter would use
                # "None" for every execution (then ExecutionAlreadyExists), so name it the same way.
                started = sfn.start_execution(stateMachineArn=arn, input=payload, name=str(uuid.uuid4()))
                firing.execution_arn = started["executionArn"]
            elif ":sqs:" in arn:
                sqs.send_message(QueueUrl=self._queue_url(arn), MessageBody=payload)
            elif ":lambda:" in arn and self.invoke_lambda is not None:
                self.invoke_lambda(arn, json.loads(payload) if payload else {})
            else:
                return "ValidationException", f"target {arn} is not supported by the local scheduler"
        except ClientError as error:
            details = error.response.get("Error", {})
            return str(details.get("Code", "ClientError")), str(details.get("Message", error))
        except ValueError as error:
            return "ValidationException", str(error)
        return None

    def _queue_url(self, arn: str) -> str:
        try:
            return self.stack.queue_url_for_arn(arn)
        except KeyError:
            name, account = arn.rsplit(":", 1)[1], arn.split(":")[4]
            return str(self._sqs.get_queue_url(QueueName=name, QueueOwnerAWSAccountId=account)["QueueUrl"])

    def _dead_letter(
        self, state: _Schedule, target: dict[str, Any], firing: Firing, execution_id: str, *, retryable: bool
    ) -> None:
        dead_letter_arn = (target.get("DeadLetterConfig") or {}).get("Arn")
        if not dead_letter_arn:
            return  # no DLQ: the firing is dropped, as in AWS

        def attribute(value: object) -> dict[str, str]:
            return {"DataType": "String", "StringValue": str(value)}

        attributes = {
            "ERROR_CODE": attribute(firing.error_code),
            "ERROR_MESSAGE": attribute(firing.error_message),
            "EXECUTION_ID": attribute(execution_id),
            "SCHEDULE_ARN": attribute(state.definition["Arn"]),
            "TARGET_ARN": attribute(target["Arn"]),
            "RETRY_ATTEMPTS": attribute(firing.attempts - 1),
            "SCHEDULED_TIME": attribute(scheduled_time_text(firing.scheduled_time)),
            "IS_PAYLOAD_TRUNCATED": attribute("false"),  # the attributes AWS documents (configuring-schedule-dlq)
        }
        if retryable:
            attributes["EXHAUSTED_RETRY_CONDITION"] = attribute("MaximumRetryAttempts")
        self._clients(target)[1].send_message(
            QueueUrl=self._queue_url(dead_letter_arn),
            MessageBody=firing.input or "{}",
            MessageAttributes=attributes,
        )
        firing.dead_lettered = True
