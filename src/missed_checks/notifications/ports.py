"""What the notifications' use cases write through, as small Protocols: they never name an adapter.

Subscribing to a digest (:mod:`missed_checks.notifications.subscribing`) takes these; the operator's
``digest`` commands and the emulator's scenario player hand it the table
(:class:`missed_checks.aws.table.subscriptions.SubscriptionItems`) and the schedule group
(:class:`missed_checks.aws.scheduler.ScheduleStore`).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from missed_checks.checklists.schedule import DesiredSchedule, Target
    from missed_checks.notifications.digest import Subscription


class SubscriptionWriter(Protocol):
    def put_subscription(self, subscription: Subscription, now: datetime, *, by: str) -> bool:
        """Create or replace the subscription (its first ``created_at`` stays), stamped by ``by``;
        True when it is new."""
        ...


class DigestSchedules(Protocol):
    """The schedule group the digests' schedules live in."""

    @property
    def group_name(self) -> str:
        ...

    def upsert(self, desired: DesiredSchedule, target: Target, *, probably_exists: bool) -> str:
        """Create the schedule or replace it whole: "created" or "updated"."""
        ...
