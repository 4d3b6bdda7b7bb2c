"""Digest subscriptions: one item each, listed through the ByPeriod index (never a Scan)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from missed_checks.aws.table import keys
from missed_checks.aws.table.assignments import AssignmentItems
from missed_checks.aws.table.base import STAMP_ATTRIBUTES, TableClient, deserialize, serialize, stamp
from missed_checks.aws.table.defects import DefectItems
from missed_checks.aws.table.notifications import NotificationItems
from missed_checks.aws.table.out_of_service import OutOfServiceItems
from missed_checks.aws.table.performed_checks import PerformedCheckItems
from missed_checks.aws.table.windows import WindowItems
from missed_checks.errors import InvalidInput
from missed_checks.notifications.digest import Subscription
from missed_checks.timefmt import parse_instant, to_utc_iso


class SubscriptionItems(TableClient):
    def put_subscription(self, subscription: Subscription, now: datetime, *, by: str) -> bool:
        """Create or replace the subscription (its ``created_at`` stays from the first write); True
        when it is new. One UpdateItem: attributes the subscription no longer has are removed.
        Stamped by ``by`` (the audit trail)."""
        fields = {**subscription.to_fields(), "type": "digest_subscription", **stamp(by),
                  "gsi2pk": keys.SUBSCRIPTIONS_INDEX_PK, "gsi2sk": subscription.subscription_id,
                  "updated_at": to_utc_iso(now),
                  "address": None}  # removed: an item of an earlier version named one address there
        fields.pop("created_at", None)
        present = {name: value for name, value in fields.items() if value is not None}
        absent = [name for name, value in fields.items() if value is None]
        names = {f"#f{i}": name for i, name in enumerate([*present, *absent, "created_at"])}
        by_name = {name: alias for alias, name in names.items()}
        values = {f":v{i}": value for i, value in enumerate(present.values())}
        update = "SET " + ", ".join([*(f"{by_name[name]} = :v{i}" for i, name in enumerate(present)),
                                     f"{by_name['created_at']} = if_not_exists({by_name['created_at']}, :now)"])
        if absent:
            update += " REMOVE " + ", ".join(by_name[name] for name in absent)
        response = self._request(
            "update_item", Key=serialize(keys.subscription_key(subscription.subscription_id)),
            UpdateExpression=update, ExpressionAttributeNames=names,
            ExpressionAttributeValues=serialize({**values, ":now": to_utc_iso(now)}), ReturnValues="ALL_OLD")
        return not response.get("Attributes")

    def get_subscription(self, subscription_id: str) -> Subscription | None:
        """The subscription, or None; a hand-edited item that is not valid raises InvalidInput
        naming the attribute."""
        item = self._get(keys.subscription_key(subscription_id))
        return None if item is None else subscription_of(item)

    def digest_subscriptions(self) -> tuple[list[Subscription], list[str]]:
        """Every subscription, by id; and what is wrong with the items that cannot be read (each
        named by its key, so a hand edit gone wrong is found rather than hidden)."""
        found: list[Subscription] = []
        problems: list[str] = []
        for item in self.query(keys.BY_PERIOD_INDEX, KeyConditionExpression="gsi2pk = :pk",
                               ExpressionAttributeValues=serialize({":pk": keys.SUBSCRIPTIONS_INDEX_PK})):
            try:
                found.append(subscription_of(item))
            except InvalidInput as error:
                problems.append(f"subscription item {item.get('pk')}: {error}")
        found.sort(key=lambda s: s.subscription_id)
        return found, problems

    def delete_subscription(self, subscription_id: str, *, by: str) -> dict[str, Any] | None:
        """Delete the subscription's item; the item it was (None: there was none). Stamped by ``by``
        first (``deleting``: the audit trail's removal names who deleted it)."""
        if not self._stamp_deletion(keys.subscription_key(subscription_id), by):
            return None
        response = self._request("delete_item", Key=serialize(keys.subscription_key(subscription_id)),
                                 ReturnValues="ALL_OLD")
        item = response.get("Attributes")
        return deserialize(item) if item else None


class DigestTable(AssignmentItems, PerformedCheckItems, WindowItems, OutOfServiceItems, NotificationItems,
                  SubscriptionItems, DefectItems):
    """What the digest function reads (the subscription, the report's items, its defects: #33) and
    writes (the notification record): :class:`missed_checks.notifications.digesting.DigestStore`."""


def subscription_of(item: Mapping[str, Any]) -> Subscription:
    """Read a subscription item; a hand-edited one that is not valid any more raises InvalidInput naming
    the attribute (the same rules as :meth:`Subscription.create`, except the DST-gap check)."""

    def instant(name: str) -> datetime | None:
        value = item.get(name)
        return None if value is None or value == "" else parse_instant(value, name)

    addresses = item.get("addresses")  # an item written before several addresses were kept has "address"
    subscription = Subscription.create(item.get("subscription_id"),
                                       address=list(addresses) if addresses is not None else item.get("address"),
                                       period=item.get("period"), at=item.get("time"), timezone=item.get("timezone"),
                                       day=item.get("day"), checklists=item.get("checklists") or (),
                                       site_id=item.get("site_id"))
    known = {"pk", "sk", "type", "gsi2pk", "gsi2sk", "created_at", "updated_at", "address", *STAMP_ATTRIBUTES,
             *subscription.to_fields()}
    return replace(subscription, created_at=instant("created_at"), updated_at=instant("updated_at"),
                   extra={k: v for k, v in item.items() if k not in known})
