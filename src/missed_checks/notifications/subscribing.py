"""Subscribing to a digest: the subscription's item, then its EventBridge Scheduler schedule.

The ``digest subscribe`` command (:mod:`missed_checks_ops.digests`, after it has checked the
checklists the subscription names) and a local run's ``subscribe_digest`` event
(:mod:`missed_checks_local.product.digests`) both write a subscription this way. See docs/digest.md
for why the command, not the table stream, keeps the item and its schedule in step.
"""

from __future__ import annotations

from datetime import datetime

from missed_checks.checklists.schedule import Target
from missed_checks.notifications.digest import Subscription
from missed_checks.notifications.ports import DigestSchedules, SubscriptionWriter


def subscribe(subscriptions: SubscriptionWriter, schedules: DigestSchedules, where: Target,
              subscription: Subscription, now: datetime, *, by: str) -> bool:
    """Write the (validated) subscription's item, then its schedule (created, or replaced whole)
    pointed at ``where`` (the digest function); True when the subscription is new. ``by``: who
    subscribes (the audit trail names them). The item is the
    truth: a schedule whose item is gone sends nothing (the digest function finds no subscription),
    and subscribing again repairs a schedule a failure left behind."""
    created = subscriptions.put_subscription(subscription, now, by=by)
    schedules.upsert(subscription.desired_schedule(schedules.group_name), where, probably_exists=not created)
    return created
