"""Digest subscriptions of a stack: the use cases of the ``digest`` command, and one digest's
report and HTML for a period (what the digest e-mail holds; ``digest preview`` writes it).

A subscription is validated in full before anything is written (address, period, local time,
zone, day, and that every checklist it names exists), then written as one table item.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from missed_checks.aws.table import ChecklistTable, NotFound
from missed_checks.aws.table.subscriptions import SubscriptionItems
from missed_checks.digest import Subscription, validate_subscription_id
from missed_checks.digest_email import render_digest, subject
from missed_checks.errors import InvalidInput
from missed_checks.fleet_report import Report, build_report
from missed_checks.timefmt import to_utc_iso
from missed_checks_ops.target import StackTarget


def subscriptions(target: StackTarget) -> SubscriptionItems:
    return SubscriptionItems(target.output("TableName"), target.client("dynamodb"))


def subscribe_digest(target: StackTarget, subscription: Subscription, now: datetime) -> dict[str, Any]:
    """Write the (validated) subscription after checking that its checklists exist; what was done,
    the subscription, its next firing and the period that firing will cover."""
    table = target.table()
    for checklist_id in subscription.checklists:
        if table.get_checklist(checklist_id) is None:
            raise InvalidInput("checklist", f"{checklist_id!r} does not exist: create it first, or leave "
                                            "--checklist out for the whole fleet")
    created = subscriptions(target).put_subscription(subscription, now)
    return {"action": "created" if created else "updated", **preview(subscription, now)}


def preview(subscription: Subscription, now: datetime) -> dict[str, Any]:
    """The subscription as shown, with its next firing and that firing's period (in its zone)."""
    firing = subscription.next_firing(now)
    start, end = subscription.period_ending(firing)
    return {"subscription": subscription.to_dict(),
            "next_digest": {"at": firing.isoformat(), "from": start.isoformat(), "to": end.isoformat(),
                            "id": subscription.digest_id(firing)}}


def list_digests(target: StackTarget) -> tuple[list[Subscription], list[str]]:
    """Every subscription (by id), and a line for each item that cannot be read."""
    return subscriptions(target).digest_subscriptions()


def get_digest(target: StackTarget, subscription_id: str) -> Subscription:
    found = subscriptions(target).get_subscription(validate_subscription_id(subscription_id))
    if found is None:
        raise NotFound(f"digest subscription {subscription_id!r} does not exist")
    return found


def unsubscribe_digest(target: StackTarget, subscription_id: str) -> dict[str, Any]:
    """Delete the subscription; :class:`NotFound` when there is none."""
    item = subscriptions(target).delete_subscription(validate_subscription_id(subscription_id))
    if item is None:
        raise NotFound(f"digest subscription {subscription_id!r} does not exist")
    return {"action": "deleted", "subscription_id": subscription_id, "address": item.get("address")}


@dataclass(frozen=True)
class Digest:
    """One digest: the subscription, the period it covers, its id, the report and the message."""

    subscription: Subscription
    start: datetime
    end: datetime
    digest_id: str
    report: Report
    subject: str
    html: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.digest_id, "subscription_id": self.subscription.subscription_id,
                "to": self.subscription.address, "from": to_utc_iso(self.start), "to_instant": to_utc_iso(self.end),
                "subject": self.subject, "total": self.report.total.to_dict()}


def preview_digest(target: StackTarget, subscription_id: str, instant: datetime) -> Digest:
    """The digest the subscription would get from a firing at ``instant`` (nothing sent)."""
    return build_digest(target.table(), get_digest(target, subscription_id), instant)


def build_digest(table: ChecklistTable, subscription: Subscription, instant: datetime) -> Digest:
    """The digest a firing at ``instant`` sends: the report of the period just ended (as of
    ``instant``), worst first, as the e-mail's HTML. A checklist the subscription names that was
    deleted since is left out, with a warning in the digest."""
    start, end = subscription.period_ending(instant)
    gone = [c for c in subscription.checklists if table.get_checklist(c) is None]
    kept = [c for c in subscription.checklists if c not in gone]
    if subscription.checklists and not kept:
        report = Report(start, end, instant, [], outcomes=[])
    else:
        report = build_report(table, start, end, now=instant, checklist_ids=kept, detail=True)
    report.warnings[:0] = [f"checklist {c} no longer exists; it is not in this digest" for c in gone]
    return Digest(subscription, start, end, subscription.digest_id(instant), report,
                  subject(subscription, report), render_digest(subscription, report))
