"""Subscribing to a digest: the subscription's item, then its EventBridge Scheduler schedule.

The ``digest subscribe`` command (:mod:`missed_checks_ops.digests`, after it has checked the
checklists the subscription names) and a local run's ``subscribe_digest`` event
(:mod:`missed_checks_local.product.digests`) both write a subscription this way. See docs/digest.md
for why the command, not the table stream, keeps the item and its schedule in step.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from missed_checks.checklists.schedule import Target
from missed_checks.errors import InvalidInput, NotFound
from missed_checks.notifications.digest import Subscription, schedule_name, validate_subscription_id
from missed_checks.notifications.ports import DigestSchedules, SubscriptionStore, SubscriptionWriter
from missed_checks.paging import Page, page_after
from missed_checks.permissions.authorizing import at_sites, authorize, authorize_listing
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Action
from missed_checks.sites.saving import require_site


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


# -- for a caller at a site (#31): the management API's /subscriptions, the digest commands --------------
def what(subscription_id: str) -> str:
    return f"digest subscription {subscription_id!r}"


def subscribe_at_site(store: SubscriptionStore, schedules: DigestSchedules, where: Target, caller: Caller,
                      subscription: Subscription, now: datetime) -> bool:
    """:func:`subscribe`, by a caller who may ``manage`` at the subscription's site (NotFound for a site
    they hold no role at, Forbidden for a weaker role). A new one needs a site (an existing one, whose
    checklists it names: InvalidInput ``checklists[i]`` for another site's or a missing one); an existing
    one keeps its site (another site's subscription is NotFound as a missing one). True when new."""
    subscription_id = subscription.subscription_id
    current = store.get_subscription(subscription_id)
    site_id = subscription.site_id
    if current is not None:
        authorize(caller, Action.manage, current.site_id, what=what(subscription_id))
        if site_id != current.site_id:
            raise InvalidInput("site_id", f"{what(subscription_id)} is at site {current.site_id}: a subscription's "
                                          "site never changes (unsubscribe it, then subscribe at the other site)")
    elif site_id is None:
        if not caller.everywhere:
            raise InvalidInput("site_id", "give the site whose checklists the digest covers")
    else:
        authorize(caller, Action.manage, site_id, what=f"site {site_id!r}")
        require_site(store, site_id)
    if site_id is not None:
        for index, checklist_id in enumerate(subscription.checklists):
            found = store.get_checklist(checklist_id)
            if found is None or found.site_id != site_id:
                raise InvalidInput(f"checklists[{index}]", f"there is no checklist {checklist_id!r} at site "
                                                           f"{site_id}: name the site's checklists, or none for all")
    return subscribe(store, schedules, where, subscription, now, by=caller.principal)


def subscriptions_page(store: SubscriptionStore, caller: Caller, site_id: str | None, position: str | None,
                       limit: int) -> Page[Subscription]:
    """The subscriptions at the caller's sites where they may ``read_management`` (at ``site_id`` only,
    when given), by id, after ``position``."""
    authorize_listing(caller, Action.read_management, site_id, what="digest subscriptions")
    found, _ = store.digest_subscriptions()
    return page_after(at_sites(caller, Action.read_management, found, lambda s: s.site_id, site_id),
                      lambda s: s.subscription_id, position, limit)


def end_subscription(store: SubscriptionStore, schedules: DigestSchedules, caller: Caller,
                subscription_id: str) -> dict[str, Any] | None:
    """Delete the subscription's item, then its schedule, as a caller who may ``manage`` at its site;
    the item it was (None: there was none; a schedule an earlier failure left behind is deleted all the
    same, by the operator). Another site's subscription is NotFound, as a missing one."""
    subscription_id = validate_subscription_id(subscription_id)
    if not caller.everywhere:
        current = store.get_subscription(subscription_id)
        if current is None:
            raise NotFound(f"{what(subscription_id)} does not exist")
        authorize(caller, Action.manage, current.site_id, what=what(subscription_id))
    item = store.delete_subscription(subscription_id, by=caller.principal)
    schedules.delete(schedule_name(subscription_id))
    return item
