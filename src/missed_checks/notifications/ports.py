"""What the notifications' use cases write through, as small Protocols: they never name an adapter.

Subscribing to a digest (:mod:`missed_checks.notifications.subscribing`) takes these; the operator's
``digest`` commands and the emulator's scenario player hand it the table
(:class:`missed_checks.aws.table.subscriptions.SubscriptionItems`) and the schedule group
(:class:`missed_checks.aws.scheduler.ScheduleStore`).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from missed_checks.checklists.ports import ChecklistListing
from missed_checks.sites.ports import SiteReader

if TYPE_CHECKING:
    from missed_checks.checklists.checklist import Checklist
    from missed_checks.checklists.schedule import DesiredSchedule, Target
    from missed_checks.notifications.digest import Subscription


class SubscriptionWriter(Protocol):
    def put_subscription(self, subscription: Subscription, now: datetime, *, by: str) -> bool:
        """Create or replace the subscription (its first ``created_at`` stays), stamped by ``by``;
        True when it is new."""
        ...


class SubscriptionStore(SubscriptionWriter, SiteReader, Protocol):
    """What the subscriptions' use cases for a caller read and write (#31)."""

    def get_subscription(self, subscription_id: str) -> Subscription | None:
        ...

    def digest_subscriptions(self) -> tuple[list[Subscription], list[str]]:
        """Every subscription by id, and a line for each item that cannot be read."""
        ...

    def delete_subscription(self, subscription_id: str, *, by: str) -> dict[str, Any] | None:
        """Delete the subscription's item (stamped by ``by`` first); the item it was, None when none."""
        ...

    def get_checklist(self, checklist_id: str) -> Checklist | None:
        ...


class DigestSchedules(Protocol):
    """The schedule group the digests' schedules live in."""

    @property
    def group_name(self) -> str:
        ...

    def upsert(self, desired: DesiredSchedule, target: Target, *, probably_exists: bool) -> str:
        """Create the schedule or replace it whole: "created" or "updated"."""
        ...

    def delete(self, name: str) -> bool:
        """Delete the schedule; False when there was none."""
        ...


class NotificationLog(ChecklistListing, Protocol):
    """What listing the notification log reads (:mod:`missed_checks.notifications.listing`)."""

    def notifications(self, start: datetime, end: datetime) -> Iterator[dict[str, Any]]:
        """Notification records first claimed in ``[start, end)``, oldest first."""
        ...
