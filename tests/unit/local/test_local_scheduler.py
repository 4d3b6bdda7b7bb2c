"""The simulated EventBridge Scheduler: when schedules fire, what the target gets, DLQ on failure."""

from __future__ import annotations

import json
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from missed_checks_local.clock import SimulatedClock
from missed_checks_local.runtime import moto_on_simulated_time
from missed_checks_local.scheduler.simulated import ScheduleDefinitionError, SimulatedScheduler, next_fire_time
from missed_checks_local.stack import EmbeddedStack

T0 = datetime(2026, 3, 2, tzinfo=UTC)


def fires(expression: str, zone: str, after: datetime, count: int, **kwargs) -> list[str]:
    times = []
    for _ in range(count):
        found = next_fire_time(expression, zone, after, **kwargs)
        if found is None:
            break
        times.append(found.strftime("%Y-%m-%dT%H:%M:%SZ"))
        after = found
    return times


# -- firing times ---------------------------------------------------------------------------------
def test_cron_in_berlin_skips_the_missing_spring_forward_time() -> None:
    # 2026-03-29: 02:00 CET jumps to 03:00 CEST, so 02:30 does not exist that day.
    assert fires("cron(30 2 * * ? *)", "Europe/Berlin", datetime(2026, 3, 27, 12, tzinfo=UTC), 3) == [
        "2026-03-28T01:30:00Z",
        "2026-03-30T00:30:00Z",
        "2026-03-31T00:30:00Z",
    ]


def test_cron_in_berlin_fires_once_for_the_repeated_autumn_time() -> None:
    # 2026-10-25: 03:00 CEST falls back to 02:00 CET; 02:30 happens twice and fires once, the first.
    assert fires("cron(30 2 * * ? *)", "Europe/Berlin", datetime(2026, 10, 24, 12, tzinfo=UTC), 3) == [
        "2026-10-25T00:30:00Z",
        "2026-10-26T01:30:00Z",
        "2026-10-27T01:30:00Z",
    ]
    every_half_hour = fires("cron(0/30 * * * ? *)", "Europe/Berlin", datetime(2026, 10, 25, 0, tzinfo=UTC), 4)
    assert every_half_hour == [
        "2026-10-25T00:30:00Z",  # 02:30 CEST
        "2026-10-25T02:00:00Z",  # 03:00 CET: the repeated 02:00 and 02:30 CET do not fire again
        "2026-10-25T02:30:00Z",
        "2026-10-25T03:00:00Z",
    ]


def test_cron_in_new_york_across_both_dst_changes() -> None:
    # Working days 14:30 local: EST (UTC-5) before 2026-03-08, EDT (UTC-4) after.
    assert fires("cron(30 14 ? * MON-FRI *)", "America/New_York", datetime(2026, 3, 5, tzinfo=UTC), 3) == [
        "2026-03-05T19:30:00Z",
        "2026-03-06T19:30:00Z",
        "2026-03-09T18:30:00Z",
    ]
    # 2026-03-08 02:30 does not exist in New York; 2026-11-01 01:30 happens twice.
    assert fires("cron(30 2 * * ? *)", "America/New_York", datetime(2026, 3, 7, tzinfo=UTC), 2) == [
        "2026-03-07T07:30:00Z",
        "2026-03-09T06:30:00Z",
    ]
    assert fires("cron(30 1 * * ? *)", "America/New_York", datetime(2026, 10, 31, 12, tzinfo=UTC), 2) == [
        "2026-11-01T05:30:00Z",
        "2026-11-02T06:30:00Z",
    ]


def test_aws_day_of_week_numbers_and_nth_weekday() -> None:
    # 2 = MON in AWS cron; 2#1 = first Monday of the month.
    assert fires("cron(0 12 ? * 2#1 *)", "UTC", T0 - timedelta(days=1), 3) == [
        "2026-03-02T12:00:00Z",
        "2026-04-06T12:00:00Z",
        "2026-05-04T12:00:00Z",
    ]


def test_start_and_end_dates_bound_the_firings() -> None:
    start = datetime(2026, 3, 4, 0, tzinfo=UTC)
    end = datetime(2026, 3, 6, 12, tzinfo=UTC)
    assert fires("cron(0 12 * * ? *)", "UTC", T0, 10, start=start, end=end) == [
        "2026-03-04T12:00:00Z",
        "2026-03-05T12:00:00Z",
    ]
    # EndDate is exclusive: a firing exactly at EndDate does not happen.
    assert fires("cron(0 12 * * ? *)", "UTC", T0, 10, end=datetime(2026, 3, 3, 12, tzinfo=UTC)) == [
        "2026-03-02T12:00:00Z"
    ]


def test_at_and_rate_expressions() -> None:
    assert fires("at(2026-03-29T02:30:00)", "Europe/Berlin", T0, 3) == []  # in the spring gap
    assert fires("at(2026-03-10T09:00:00)", "Europe/Berlin", T0, 3) == ["2026-03-10T08:00:00Z"]
    assert fires("at(2026-03-01T09:00:00)", "UTC", T0, 3) == []  # already past
    assert fires("rate(6 hours)", "UTC", T0, 3, anchor=T0) == [
        "2026-03-02T06:00:00Z",
        "2026-03-02T12:00:00Z",
        "2026-03-02T18:00:00Z",
    ]


@pytest.mark.parametrize(
    ("expression", "zone"),
    [
        ("cron(* * * * * *)", "UTC"),
        ("cron(0 12 ? * 2#1,6#3 *)", "UTC"),
        ("every day", "UTC"),
        ("rate(1 hour)", "Mars/Base"),
    ],
)
def test_expressions_aws_would_refuse(expression: str, zone: str) -> None:
    with pytest.raises(ScheduleDefinitionError):
        next_fire_time(expression, zone, T0)


# -- against the Scheduler API of moto ----------------------------------------------------------
MINI_TEMPLATE = textwrap.dedent(
    """\
    Resources:
      Group:
        Type: AWS::Scheduler::ScheduleGroup
        Properties:
          Name: !Sub "${AWS::StackName}-group"
      DeadLetters:
        Type: AWS::SQS::Queue
      Machine:
        Type: AWS::Serverless::StateMachine
        Properties:
          DefinitionUri: pass.asl.json
    """
)


@pytest.fixture
def mini(embedded: None, tmp_path: Path):
    (tmp_path / "pass.asl.json").write_text(
        json.dumps({"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}})
    )
    (tmp_path / "template.yaml").write_text(MINI_TEMPLATE)
    stack = EmbeddedStack.provision(tmp_path / "template.yaml", stack_name="mini")
    clock = SimulatedClock(T0)
    with moto_on_simulated_time(clock):
        yield stack, clock, SimulatedScheduler(stack, clock.now)


def create(stack: EmbeddedStack, name: str, expression: str, *, target: str | None = None, **extra) -> None:
    stack.client("scheduler").create_schedule(
        GroupName=stack.schedule_group,
        Name=name,
        ScheduleExpression=expression,
        FlexibleTimeWindow={"Mode": "OFF"},
        Target={
            "Arn": target or stack.state_machine_arn,
            "RoleArn": "arn:aws:iam::123456789012:role/scheduler",
            "Input": json.dumps(
                {
                    "checklist_id": name,
                    "instant": "<aws.scheduler.scheduled-time>",
                    "attempt": "<aws.scheduler.attempt-number>",
                    "arn": "<aws.scheduler.schedule-arn>",
                }
            ),
            "DeadLetterConfig": {"Arn": stack.queue_arns["DeadLetters"]},
            "RetryPolicy": {"MaximumRetryAttempts": 2, "MaximumEventAgeInSeconds": 3600},
        },
        **extra,
    )


def test_firings_come_in_time_order_with_the_scheduled_time_substituted(mini) -> None:
    stack, clock, scheduler = mini
    create(stack, "berlin", "cron(0 9 * * ? *)", ScheduleExpressionTimezone="Europe/Berlin")
    create(stack, "new-york", "cron(0 2 * * ? *)", ScheduleExpressionTimezone="America/New_York")
    create(stack, "utc", "cron(0 8 * * ? *)")
    scheduler.refresh()
    fired = scheduler.fire_due(datetime(2026, 3, 3, 7, 30, tzinfo=UTC))
    assert [(f.schedule, f.scheduled_time.strftime("%Y-%m-%dT%H:%M:%SZ")) for f in fired] == [
        ("new-york", "2026-03-02T07:00:00Z"),
        ("berlin", "2026-03-02T08:00:00Z"),  # same instant: by name
        ("utc", "2026-03-02T08:00:00Z"),
        ("new-york", "2026-03-03T07:00:00Z"),
    ]
    assert all(f.ok for f in fired), [(f.error_code, f.error_message) for f in fired]
    sfn = stack.client("stepfunctions")
    started = json.loads(sfn.describe_execution(executionArn=fired[1].execution_arn)["input"])
    assert started == {
        "checklist_id": "berlin",
        "instant": "2026-03-02T08:00:00Z",
        "attempt": "1",
        "arn": f"arn:aws:scheduler:us-east-1:123456789012:schedule/{stack.schedule_group}/berlin",
    }


def test_disabled_schedules_do_not_fire_and_reenabling_does_not_backfill(mini) -> None:
    stack, clock, scheduler = mini
    create(stack, "daily", "cron(0 12 * * ? *)", State="DISABLED")
    scheduler.refresh()
    assert scheduler.next_firing_time() is None
    clock.advance_to(T0 + timedelta(days=3, hours=13))
    assert scheduler.fire_due(clock.now()) == []
    client = stack.client("scheduler")
    definition = client.get_schedule(GroupName=stack.schedule_group, Name="daily")
    client.update_schedule(
        GroupName=stack.schedule_group,
        Name="daily",
        ScheduleExpression="cron(0 12 * * ? *)",
        FlexibleTimeWindow={"Mode": "OFF"},
        Target=definition["Target"],
        State="ENABLED",
    )
    scheduler.refresh()
    assert scheduler.next_firing_time() == datetime(2026, 3, 6, 12, tzinfo=UTC)


def test_schedule_only_fires_after_its_creation_and_from_its_start_date(mini) -> None:
    stack, clock, scheduler = mini
    clock.advance_to(T0 + timedelta(hours=13))
    create(stack, "daily", "cron(0 12 * * ? *)")
    create(stack, "later", "cron(0 12 * * ? *)", StartDate=T0 + timedelta(days=2, hours=13))
    scheduler.refresh()
    assert scheduler.upcoming("daily") == datetime(2026, 3, 3, 12, tzinfo=UTC)
    assert scheduler.upcoming("later") == datetime(2026, 3, 5, 12, tzinfo=UTC)


def test_start_date_in_the_simulated_past_is_refused_like_aws(mini) -> None:
    stack, clock, scheduler = mini
    clock.advance_to(T0 + timedelta(hours=13))
    with pytest.raises(Exception, match="StartDate you specify cannot be earlier than 5 minutes ago"):
        create(stack, "daily", "cron(0 12 * * ? *)", StartDate=T0)


def test_deleted_schedule_stops_firing(mini) -> None:
    stack, clock, scheduler = mini
    create(stack, "daily", "cron(0 12 * * ? *)")
    scheduler.refresh()
    stack.client("scheduler").delete_schedule(GroupName=stack.schedule_group, Name="daily")
    scheduler.refresh()
    assert scheduler.next_firing_time() is None


def test_failed_start_goes_to_the_dead_letter_queue_with_scheduler_attributes(mini) -> None:
    stack, clock, scheduler = mini
    missing = "arn:aws:states:us-east-1:123456789012:stateMachine:does-not-exist"
    create(stack, "broken", "cron(0 12 * * ? *)", target=missing)
    scheduler.refresh()
    (firing,) = scheduler.fire_due(datetime(2026, 3, 2, 12, tzinfo=UTC))
    assert not firing.ok and firing.dead_lettered and firing.execution_arn is None
    assert firing.error_code == "StateMachineDoesNotExist"
    assert firing.attempts == 1  # not retryable
    messages = stack.client("sqs").receive_message(
        QueueUrl=stack.queue_urls["DeadLetters"], MaxNumberOfMessages=10, MessageAttributeNames=["All"]
    )["Messages"]
    (message,) = messages
    assert json.loads(message["Body"])["instant"] == "2026-03-02T12:00:00Z"
    attributes = {name: value["StringValue"] for name, value in message["MessageAttributes"].items()}
    assert attributes["ERROR_CODE"] == "StateMachineDoesNotExist"
    assert attributes["TARGET_ARN"] == missing
    assert attributes["SCHEDULE_ARN"].endswith(f"schedule/{stack.schedule_group}/broken")
    assert attributes["EXECUTION_ID"] and attributes["ERROR_MESSAGE"]
    # the schedule keeps firing afterwards
    assert scheduler.next_firing_time() == datetime(2026, 3, 3, 12, tzinfo=UTC)


def test_injected_retryable_failure_is_retried_then_dead_lettered(mini) -> None:
    stack, clock, scheduler = mini
    create(stack, "daily", "cron(0 12 * * ? *)")
    scheduler.refresh()
    scheduler.inject_failure("daily", error_code="ThrottlingException")
    first, second = scheduler.fire_due(datetime(2026, 3, 3, 12, tzinfo=UTC))
    assert first.dead_lettered and first.attempts == 3  # 1 + MaximumRetryAttempts 2
    assert json.loads(first.input)["attempt"] == "3"
    assert second.ok and second.execution_arn
    (message,) = stack.client("sqs").receive_message(
        QueueUrl=stack.queue_urls["DeadLetters"], MessageAttributeNames=["All"]
    )["Messages"]
    assert message["MessageAttributes"]["EXHAUSTED_RETRY_CONDITION"]["StringValue"] == "MaximumRetryAttempts"
    assert message["MessageAttributes"]["RETRY_ATTEMPTS"]["StringValue"] == "2"


def test_the_fingerprint_changes_with_every_create_update_and_delete(mini) -> None:
    """`local serve` re-reads the schedules only when this fingerprint changed: any change made
    through the endpoint (create, update, delete) must change it, and nothing else may."""
    stack, clock, scheduler = mini
    empty = scheduler.fingerprint()
    assert empty == frozenset()
    create(stack, "a", "cron(0 6 * * ? *)")
    created = scheduler.fingerprint()
    assert created != empty and scheduler.fingerprint() == created
    client = stack.client("scheduler")
    definition = client.get_schedule(GroupName=stack.schedule_group, Name="a")
    clock.advance(timedelta(minutes=1))
    client.update_schedule(GroupName=stack.schedule_group, Name="a", ScheduleExpression="cron(0 7 * * ? *)",
                           FlexibleTimeWindow={"Mode": "OFF"}, Target=definition["Target"])
    updated = scheduler.fingerprint()
    assert updated not in (created, empty)
    client.delete_schedule(GroupName=stack.schedule_group, Name="a")
    assert scheduler.fingerprint() == empty


def test_local_serve_says_what_each_firing_was_and_only_a_failure_failed() -> None:
    """A digest's and a reminder's schedule invoke a function (no execution to start): their firing
    is not an evaluation that "FAILED to start (None)"; a failure says FAILED with its reason."""
    from missed_checks_local.product.application import firing_line
    from missed_checks_local.scheduler.simulated import Firing

    def line(schedule: str, **outcome: str) -> str:
        return firing_line(Firing(schedule=schedule, scheduled_time=T0, attempts=1, input="{}", **outcome))

    assert line("_d.weekly-ops") == ("2026-03-02T00:00:00Z  _d.weekly-ops: digest of subscription weekly-ops "
                                     "handed to the digest function")
    assert line("_r0.forklift-daily") == ("2026-03-02T00:00:00Z  _r0.forklift-daily: reminder of checklist "
                                          "forklift-daily handed to the notifier")
    assert line("forklift-daily", execution_arn="arn:aws:states:x") == (
        "2026-03-02T00:00:00Z  forklift-daily: evaluation started")
    failed = line("forklift-daily", error_code="AccessDeniedException", error_message="not authorized")
    assert failed.endswith("forklift-daily: evaluation FAILED to start (AccessDeniedException: not authorized)")
    digest_failed = line("_d.weekly-ops", error_code="ResourceNotFoundException", error_message="no function")
    assert "digest of subscription weekly-ops FAILED" in digest_failed and "ResourceNotFoundException" in digest_failed
    for succeeded in (line("_d.weekly-ops"), line("_s1.forklift-daily"), line("c", execution_arn="arn")):
        assert "FAILED" not in succeeded and "None" not in succeeded, succeeded
