"""Sending a digest (#18): what a subscription's schedule firing does, once per period.

A firing carries the subscription id and its scheduled time. :func:`send_digest` reads the
subscription (none: it was removed, the schedule is on its way out, nothing is sent), builds the
fleet report of the period just ended with the report's own code
(:func:`missed_checks.reporting.fleet_report.build_report`, as of the scheduled time), renders it
(:mod:`missed_checks.notifications.digest_email`) and hands it to
:func:`missed_checks.notifications.notifying.deliver` as one
``digest`` :class:`~missed_checks.notifications.notification.Notification` per address of the subscription,
whose deterministic id comes from the kind, the period's start, the subscription (its
``occasion``) and the address: a retried, duplicated or replayed firing of the same period finds
each record and sends nothing again.

No AWS calls here: the table and the channels are handed in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from missed_checks.evaluation.ports import NotificationChannel, NotificationRecords
from missed_checks.notifications.digest import Subscription, digest_id
from missed_checks.notifications.digest_email import COUNT_COLUMNS, render_digest, render_text, subject, worst_first
from missed_checks.notifications.notification import Kind, Notification
from missed_checks.notifications.notifying import Delivery, RecipientRefused, deliver
from missed_checks.reporting.fleet_report import Report, build_report
from missed_checks.reporting.ports import ReportReader
from missed_checks.reporting.report import TOTAL
from missed_checks.timefmt import to_utc_iso

__all__ = ["Digest", "DigestStore", "build_digest", "build_digests", "send_digest"]


class DigestStore(NotificationRecords, ReportReader, Protocol):
    """What a digest reads (its subscription; the report's items, :class:`ReportReader`) and writes
    (the notification's once-only record)."""

    def get_subscription(self, subscription_id: str) -> Subscription | None: ...


@dataclass(frozen=True)
class Digest:
    """One digest: the subscription, the period it covers, the report and the message."""

    subscription: Subscription
    start: datetime
    end: datetime
    report: Report
    notification: Notification

    @property
    def digest_id(self) -> str:
        return self.notification.notification_id

    @property
    def subject(self) -> str:
        return self.notification.subject

    @property
    def html(self) -> str:
        return self.notification.html

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.digest_id, "kind": Kind.DIGEST.value, "subscription_id": self.subscription.subscription_id,
                "to": self.notification.recipient, "period_from": to_utc_iso(self.start),
                "period_to": to_utc_iso(self.end), "subject": self.notification.subject,
                "equipment": list(self.notification.equipment), "total": self.report.total.to_dict()}


def build_digest(table: ReportReader, subscription: Subscription, instant: datetime,
                 address: str | None = None) -> Digest:
    """The digest a firing at ``instant`` sends to ``address`` (default the subscription's first):
    :func:`build_digests`' for that address."""
    wanted = address or subscription.address
    return next(d for d in build_digests(table, subscription, instant) if d.notification.recipient == wanted)


def build_digests(table: ReportReader, subscription: Subscription, instant: datetime) -> list[Digest]:
    """The digests a firing at ``instant`` sends, one per address of the subscription: the report of
    the period just ended (as of ``instant``, built once) over the subscription's checklists (a
    checklist deleted since is left out, with a warning in the digest; a site's subscription naming
    none: the checklists at that site now), worst first. ``table``:
    what ``build_report`` reads."""
    start, end = subscription.period_ending(instant)
    found = {c: table.get_checklist(c) for c in subscription.checklists}
    gone = [c for c, checklist in found.items() if checklist is None]
    # a site's subscription (#31): a checklist deleted and made again at another site is not its site's any more
    elsewhere = {c: checklist.site_id for c, checklist in found.items() if checklist is not None
                 and subscription.site_id is not None and checklist.site_id != subscription.site_id}
    kept = [c for c in subscription.checklists if c not in gone and c not in elsewhere]
    if subscription.site_id is not None and not subscription.checklists:  # a site's whole fleet (#31)
        kept = sorted(c.checklist_id for c in table.list_checklists() if c.site_id == subscription.site_id)
    if (subscription.checklists or subscription.site_id is not None) and not kept:
        report = Report(start, end, instant, [], outcomes=[])
    else:
        report = build_report(table, start, end, now=instant, checklist_ids=kept, detail=True)
    report.warnings[:0] = [f"checklist {c} no longer exists; it is not in this digest" for c in gone] + [
        f"checklist {c} is at site {site} now, not {subscription.site_id}; it is not in this digest"
        for c, site in elsewhere.items()]
    missed = tuple(dict.fromkeys(row.equipment_id for row in worst_first(report.rows) if row.missed))
    digests = []
    for address in subscription.addresses:
        reference = digest_id(subscription.subscription_id, address, start)
        notification = Notification(
            kind=Kind.DIGEST, checklist_id=TOTAL, window_start=to_utc_iso(start), recipient=address,
            equipment=missed, subject=subject(subscription, report), body=render_text(subscription, report),
            occasion=subscription.subscription_id,
            details={"subscription_id": subscription.subscription_id, "period": subscription.period.value,
                     "period_from": to_utc_iso(start), "period_to": to_utc_iso(end),
                     "checklists": list(subscription.checklists),
                     # whole numbers only: the record is a DynamoDB item, the event JSON
                     "total": {column: getattr(report.total, column) for column in COUNT_COLUMNS}},
            html=render_digest(subscription, report, reference, address))
        digests.append(Digest(subscription, start, end, report, notification))
    return digests


@dataclass(frozen=True)
class DigestOutcome:
    subscription_id: str
    delivery: Delivery | None
    """None: there is no such subscription (nothing sent). With several addresses: ``sent`` when
    any was sent now, else the first address's."""
    digest: Digest | None = None
    """The first address's digest."""
    deliveries: tuple[tuple[Digest, Delivery], ...] = ()
    """Each address's digest and what became of it."""
    refused: tuple[RecipientRefused, ...] = ()
    """The addresses SES refused for good (#30 item 4): not retried, each named."""

    def to_dict(self) -> dict[str, Any]:
        return {"subscription_id": self.subscription_id,
                "delivery": self.delivery.value if self.delivery else "no-subscription",
                **({"digest": self.digest.to_dict()} if self.digest else {}),
                **({"deliveries": [{"to": d.notification.recipient, "id": d.digest_id, "delivery": delivery.value}
                                   for d, delivery in self.deliveries]} if len(self.deliveries) > 1 else {}),
                **({"refused": [{"to": r.recipient, "error": str(r)} for r in self.refused]} if self.refused else {})}


def send_digest(table: DigestStore, channels: Sequence[NotificationChannel], subscription_id: str,
                instant: datetime, now: Callable[[], datetime]) -> DigestOutcome:
    """Send the digest of the period just ended at ``instant`` (the firing's scheduled time) to each
    of the subscription's addresses, once each. A channel's error is raised once every address was
    tried, after its record is marked failed (a retry or replay sends only what was not sent: the
    other addresses' records say sent, and a failed one uses only the channels that did not deliver)."""
    subscription = table.get_subscription(subscription_id)
    if subscription is None:
        return DigestOutcome(subscription_id, None)
    results: list[tuple[Digest, Delivery]] = []
    failure: Exception | None = None
    refused: list[RecipientRefused] = []
    for digest in build_digests(table, subscription, instant):
        try:
            results.append((digest, deliver(digest.notification, table, channels, now)))
        except RecipientRefused as error:  # permanent for that address (its record says why): not retried
            refused.append(error)
        except Exception as error:  # noqa: BLE001 - raised below, once the other addresses were tried
            failure = failure or error
    if failure is not None:
        raise failure
    if not results:
        raise refused[0]
    summary = Delivery.SENT if any(d is Delivery.SENT for _, d in results) else results[0][1]
    return DigestOutcome(subscription_id, summary, results[0][0], tuple(results), tuple(refused))
