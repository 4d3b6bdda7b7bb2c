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

from missed_checks.aws.table import ManagementTable, NotFound
from missed_checks.checklists.schedule import Target
from missed_checks.errors import InvalidInput
from missed_checks.notifications.digest import Subscription, schedule_name, validate_subscription_id
from missed_checks.notifications.digesting import Digest, build_digest
from missed_checks.notifications.subscribing import end_subscription, subscribe_at_site
from missed_checks.permissions.authorizing import at_sites
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Action
from missed_checks_ops.target import StackTarget


def subscriptions(target: StackTarget) -> ManagementTable:
    return ManagementTable(target.output("TableName"), target.client("dynamodb"))


def digest_target(target: StackTarget) -> Target:
    """Where digest schedules point: the stack's digest function, with its scheduler role and the
    notification dead-letter queue."""
    return Target(target.output("DigestFunctionArn"), target.output("DigestSchedulerRoleArn"),
                  target.output("DigestDeadLetterQueueArn"), int(target.parameter("SchedulerMaximumRetryAttempts")))


def subscribe_digest(target: StackTarget, caller: Caller, subscription: Subscription, now: datetime) -> dict[str, Any]:
    """Write the (validated) subscription and its schedule after checking that its checklists exist,
    as ``caller`` (:func:`missed_checks.notifications.subscribing.subscribe_at_site`); what was done,
    the subscription, its next firing and the period that firing will cover."""
    table = target.table()
    for checklist_id in subscription.checklists:
        if table.get_checklist(checklist_id) is None:
            raise InvalidInput("checklist", f"{checklist_id!r} does not exist: create it first, or leave "
                                            "--checklist out for the whole fleet")
    where = digest_target(target)
    created = subscribe_at_site(subscriptions(target), target.schedules(), where, caller, subscription, now)
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


def list_digests(target: StackTarget, caller: Caller) -> tuple[list[Subscription], list[str]]:
    """Every subscription the caller may read (by id), and a line for each item that cannot be read."""
    found, problems = subscriptions(target).digest_subscriptions()
    return at_sites(caller, Action.read_management, found, lambda s: s.site_id), problems


def get_digest(target: StackTarget, subscription_id: str) -> Subscription:
    found = subscriptions(target).get_subscription(validate_subscription_id(subscription_id))
    if found is None:
        raise NotFound(f"digest subscription {subscription_id!r} does not exist")
    return found


def unsubscribe_digest(target: StackTarget, caller: Caller, subscription_id: str) -> dict[str, Any]:
    """Delete the subscription and its schedule, as ``caller``; :class:`NotFound` when there is none."""
    item = end_subscription(subscriptions(target), target.schedules(), caller,
                            validate_subscription_id(subscription_id))
    if item is None:
        raise NotFound(f"digest subscription {subscription_id!r} does not exist")
    addresses = item.get("addresses")  # an item written before several addresses were kept has "address"
    return {"action": "deleted", "subscription_id": subscription_id,
            "addresses": list(addresses) if addresses is not None else [item.get("address")]}


def preview_digest(target: StackTarget, subscription_id: str, instant: datetime) -> Digest:
    """The digest the subscription would get from a firing at ``instant`` (nothing sent or recorded)."""
    return build_digest(target.table(), get_digest(target, subscription_id), instant)
