"""Digest subscriptions in a local run (#18): the scenario's ``subscribe_digest`` event writes the
subscription and its schedule exactly as ``missed-checks digest subscribe`` does
(:func:`missed_checks.notifications.subscribing.subscribe`), pointed at the embedded stack's digest function;
the simulated Scheduler then fires it like any schedule, and what it sends is in the run's
``notifications`` (kind ``digest``). :func:`digest_html` builds a digest's HTML for ``local demo``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from missed_checks.aws.scheduler import ScheduleStore
from missed_checks.aws.table.subscriptions import SubscriptionItems
from missed_checks.checklists.schedule import Target
from missed_checks.notifications.digest import Subscription
from missed_checks.notifications.subscribing import subscribe as write_subscription

__all__ = ["subscribe"]


def _target(stack: Any) -> Target:
    outputs, parameters = stack.outputs, stack.parameters
    return Target(outputs["DigestFunctionArn"], outputs["DigestSchedulerRoleArn"], outputs["DigestDeadLetterQueueArn"],
                  int(parameters["SchedulerMaximumRetryAttempts"]))


def subscribe(stack: Any, subscription: Subscription, at: datetime) -> bool:
    """Write the subscription and its schedule in the embedded stack; True when it is new."""
    items = SubscriptionItems(stack.table_name, stack.client("dynamodb"))
    schedules = ScheduleStore(stack.schedule_group, stack.client("scheduler"))
    return write_subscription(items, schedules, _target(stack), subscription, at, by="scenario")



def last_digest_html(runtime: Any, end: datetime) -> str:
    """The HTML of the last digest the run e-mailed (what the embedded SES kept); with none, the
    weekly digest of the whole fleet for the last week before ``end`` (UTC, Monday to Monday),
    built from the run's table and sent nowhere."""
    from moto.ses.models import ses_backends  # deferred: moto is a dev dependency and slow to import

    from missed_checks.aws.table import ChecklistTable
    from missed_checks.notifications.digesting import build_digest

    stack = runtime.stack
    sent = [message.body for message in ses_backends[stack.account_id][stack.region].sent_messages
            if str(getattr(message, "body", "")).startswith("<!DOCTYPE html>")]
    if sent:
        return str(sent[-1])
    weekly = Subscription.create("local-weekly", address="fleet@example.com", period="weekly", at="00:00",
                                 timezone="UTC", day="MO")
    return build_digest(ChecklistTable(stack.table_name, stack.client("dynamodb")), weekly, end).html
