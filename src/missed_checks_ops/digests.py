"""Digest subscriptions of a stack: the use cases of the ``digest`` command, and one digest's
report and HTML for a period (what the digest e-mail holds; ``digest preview`` writes it).

A subscription is validated in full before anything is written (addresses, period, local time,
zone, day, and that every checklist it names exists), then written as one table item, and its
EventBridge Scheduler schedule is created or replaced by the same command
(:func:`missed_checks.notifications.subscribing.subscribe`; removed by ``unsubscribe``): see
docs/digest.md for why the command, not the table stream, keeps them in step.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from missed_checks.aws.scheduler import ScheduleStore
from missed_checks.aws.table import NotFound
from missed_checks.aws.table.subscriptions import SubscriptionItems
from missed_checks.checklists.schedule import Target
from missed_checks.errors import InvalidInput
from missed_checks.notifications.digest import Subscription, schedule_name, validate_subscription_id
from missed_checks.notifications.digesting import Digest, build_digest
from missed_checks.notifications.subscribing import subscribe
from missed_checks_ops.target import StackTarget


def subscriptions(target: StackTarget) -> SubscriptionItems:
    return SubscriptionItems(target.output("TableName"), target.client("dynamodb"))


def digest_target(target: StackTarget) -> Target:
    """Where digest schedules point: the stack's digest function, with its scheduler role and the
    notification dead-letter queue."""
    return Target(target.output("DigestFunctionArn"), target.output("DigestSchedulerRoleArn"),
                  target.output("DigestDeadLetterQueueArn"), int(target.parameter("SchedulerMaximumRetryAttempts")))


def remove_digest(items: SubscriptionItems, schedules: ScheduleStore, subscription_id: str, *,
                  by: str) -> dict[str, Any] | None:
    """Delete the subscription's item, then its schedule; the item it was (None: there was none;
    a schedule left by an earlier failure is deleted all the same)."""
    item = items.delete_subscription(subscription_id, by=by)
    schedules.delete(schedule_name(subscription_id))
    return item


def subscribe_digest(target: StackTarget, subscription: Subscription, now: datetime, *, by: str) -> dict[str, Any]:
    """Write the (validated) subscription and its schedule after checking that its checklists exist;
    what was done, the subscription, its next firing and the period that firing will cover."""
    table = target.table()
    for checklist_id in subscription.checklists:
        if table.get_checklist(checklist_id) is None:
            raise InvalidInput("checklist", f"{checklist_id!r} does not exist: create it first, or leave "
                                            "--checklist out for the whole fleet")
    where = digest_target(target)
    created = subscribe(subscriptions(target), target.schedules(), where, subscription, now, by=by)
    return {"action": "created" if created else "updated", **preview(subscription, now)}


def preview(subscription: Subscription, now: datetime) -> dict[str, Any]:
    """The subscription as shown, with its next firing and that firing's period (in its zone)."""
    firing = subscription.next_firing(now)
    start, end = subscription.period_ending(firing)
    return {"subscription": {**subscription.to_dict(), "schedule_name": schedule_name(subscription.subscription_id)},
            "next_digest": {"at": firing.isoformat(), "from": start.isoformat(), "to": end.isoformat(),
                            "id": subscription.digest_id(firing),
                            **({"ids": {a: subscription.digest_id(firing, a) for a in subscription.addresses}}
                               if len(subscription.addresses) > 1 else {})}}


def list_digests(target: StackTarget) -> tuple[list[Subscription], list[str]]:
    """Every subscription (by id), and a line for each item that cannot be read."""
    return subscriptions(target).digest_subscriptions()


def get_digest(target: StackTarget, subscription_id: str) -> Subscription:
    found = subscriptions(target).get_subscription(validate_subscription_id(subscription_id))
    if found is None:
        raise NotFound(f"digest subscription {subscription_id!r} does not exist")
    return found


def unsubscribe_digest(target: StackTarget, subscription_id: str, *, by: str) -> dict[str, Any]:
    """Delete the subscription; :class:`NotFound` when there is none."""
    item = remove_digest(subscriptions(target), target.schedules(), validate_subscription_id(subscription_id), by=by)
    if item is None:
        raise NotFound(f"digest subscription {subscription_id!r} does not exist")
    addresses = item.get("addresses")  # an item written before several addresses were kept has "address"
    return {"action": "deleted", "subscription_id": subscription_id,
            "addresses": list(addresses) if addresses is not None else [item.get("address")]}


def preview_digest(target: StackTarget, subscription_id: str, instant: datetime) -> Digest:
    """The digest the subscription would get from a firing at ``instant`` (nothing sent or recorded)."""
    return build_digest(target.table(), get_digest(target, subscription_id), instant)
