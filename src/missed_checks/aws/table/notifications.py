"""Notification records (#18): one item per notification, keyed by its deterministic id, written
with a conditional put so that exactly one sender claims it (who was told what, when).

States: ``SENDING`` (claimed; its channels are being used), ``SENT``, ``FAILED`` (a channel refused
or kept failing: the dead letter names it). A retry, a replay or a concurrent execution finds the
record: ``SENT`` means done; ``FAILED``, or ``SENDING`` older than the lease (a sender that died), is
taken over by one caller in a conditional update. A sender that dies between a channel's send and
its note on the record is the one gap: the take-over sends that channel again (docs/notifications.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from missed_checks.aws.table import keys
from missed_checks.aws.table.assignments import AssignmentItems
from missed_checks.aws.table.base import TableClient, condition_item, deserialize, error_code, serialize
from missed_checks.aws.table.out_of_service import OutOfServiceItems
from missed_checks.aws.table.windows import READ_THREADS, WindowItems
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.equipment.assignments import SHARD_COUNT
from missed_checks.evaluation.ports import NotificationClaim
from missed_checks.notifications.notification import Notification
from missed_checks.timefmt import parse_instant, to_utc_iso

SENDING, SENT, FAILED = "SENDING", "SENT", "FAILED"


class NotificationItems(TableClient):
    """The once-only records (:class:`missed_checks.evaluation.ports.NotificationRecords`)."""

    def claim_notification(self, notification: Notification, now: datetime, lease: timedelta) -> NotificationClaim:
        notification_id = notification.notification_id
        at = to_utc_iso(now)
        item = {
            **keys.notification_key(notification_id),
            "type": "notification",
            "gsi2pk": keys.notifications_pk(at[:7]),
            "gsi2sk": keys.notifications_sk(at, notification_id),
            **{k: v for k, v in notification.to_dict().items() if k not in ("body", "details")},
            "details": dict(notification.details) or None,
            "status": SENDING,
            "claimed_at": at,
            "attempts": 1,
            "channels_sent": {},
        }
        try:
            self._request("put_item", Item=serialize(item), ConditionExpression="attribute_not_exists(pk)",
                          ReturnValuesOnConditionCheckFailure="ALL_OLD")
            return NotificationClaim(won=True, sent=False)
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise
            existing = condition_item(error) or self._get(keys.notification_key(notification_id)) or {}
        if existing.get("status") == SENT:
            return NotificationClaim(won=False, sent=True)
        taken = self._conditional(
            "update_item", Key=serialize(keys.notification_key(notification_id)),
            UpdateExpression="SET #status = :sending, claimed_at = :now ADD attempts :one",
            ConditionExpression="#status = :failed OR (#status = :sending AND claimed_at < :stale)",
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues=serialize({":sending": SENDING, ":failed": FAILED, ":now": at, ":one": 1,
                                                 ":stale": to_utc_iso(now - lease)}))
        done = tuple(sorted((existing.get("channels_sent") or {}).keys()))
        return NotificationClaim(won=taken, sent=False, channels_done=done)

    def mark_channel_sent(self, notification_id: str, channel: str, at: datetime, message_id: str) -> None:
        self._request("update_item", Key=serialize(keys.notification_key(notification_id)),
                      UpdateExpression="SET channels_sent.#channel = :sent",
                      ExpressionAttributeNames={"#channel": channel},
                      ExpressionAttributeValues=serialize({":sent": {"at": to_utc_iso(at), "message_id": message_id}}))

    def mark_notification_sent(self, notification_id: str, at: datetime) -> None:
        self._request("update_item", Key=serialize(keys.notification_key(notification_id)),
                      UpdateExpression="SET #status = :sent, sent_at = :at REMOVE #error",
                      ExpressionAttributeNames={"#status": "status", "#error": "error"},
                      ExpressionAttributeValues=serialize({":sent": SENT, ":at": to_utc_iso(at)}))

    def mark_notification_failed(self, notification_id: str, at: datetime, error: str) -> None:
        self._request("update_item", Key=serialize(keys.notification_key(notification_id)),
                      UpdateExpression="SET #status = :failed, failed_at = :at, #error = :error",
                      ExpressionAttributeNames={"#status": "status", "#error": "error"},
                      ExpressionAttributeValues=serialize({":failed": FAILED, ":at": to_utc_iso(at),
                                                           ":error": error[:1000]}))

    def get_notification(self, notification_id: str) -> dict[str, Any] | None:
        return self._get(keys.notification_key(notification_id))

    def notification_sent(self, notification_id: str) -> bool:
        """Its record says SENT (one strongly consistent GetItem)."""
        return (self.get_notification(notification_id) or {}).get("status") == SENT

    def notifications(self, start: datetime, end: datetime) -> Iterator[dict[str, Any]]:
        """Notification records first claimed in ``[start, end)``, oldest first: one ByPeriod Query per month."""
        low, high = to_utc_iso(start), to_utc_iso(end)
        month = low[:7]
        while month <= high[:7]:
            for item in self._query_range(keys.notifications_pk(month), low, high, keys.BY_PERIOD_INDEX):
                if str(item.get("claimed_at", "")) < high:
                    yield item
            year, number = int(month[:4]), int(month[5:7])
            month = f"{year + number // 12:04d}-{number % 12 + 1:02d}"


class NotifierTable(AssignmentItems, WindowItems, OutOfServiceItems, NotificationItems):
    """What the notifier reads (checklists, judged windows, missed and performed checks,
    assignments) and writes (notification records): :class:`missed_checks.notifications.notifier.NotifierStore`."""

    def recent_judged_windows(self, checklist_id: str, up_to: datetime, limit: int) -> list[OccurrenceWindow]:
        """The last ``limit`` judged windows that started at or before ``up_to``, oldest first: one
        Query page, newest first (judged windows only: an opened, unclaimed record is skipped)."""
        high = keys.judged_window_key(checklist_id, to_utc_iso(up_to))["sk"]
        response = self._request(
            "query", KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high", ScanIndexForward=False,
            Limit=limit, ExpressionAttributeValues=serialize({":pk": keys.checklist_pk(checklist_id),
                                                              ":low": keys.judged_window_key(checklist_id, "")["sk"],
                                                              ":high": high}))
        items = [deserialize(item) for item in response.get("Items", [])]
        return [OccurrenceWindow(parse_instant(item["window_start"], "window_start"),
                                 parse_instant(item["window_end"], "window_end"),
                                 parse_instant(item.get("evaluate_at") or item["window_end"], "evaluate_at"))
                for item in reversed(items) if item.get("execution")]

    def missed_by_window(self, checklist_id: str, start: datetime, end: datetime) -> dict[str, set[str]]:
        """Missed equipment by window start (UTC ISO) for the windows that started in ``[start, end]``:
        one Query per write partition of the checklist's missed checks, :data:`READ_THREADS` in flight."""
        found: dict[str, set[str]] = {}
        for item in self._query_partitions(keys.missed_pks(checklist_id), to_utc_iso(start),
                                           to_utc_iso(end) + keys.HIGH, ("window_start", "equipment_id"),
                                           threads=READ_THREADS):
            found.setdefault(str(item["window_start"]), set()).add(str(item["equipment_id"]))
        return found

    def performed_by(self, checklist_id: str, start: datetime, until: datetime, recorded_by: datetime,
                     shards: Iterable[int] | None = None) -> set[str]:
        """Equipment with a check performed in ``[start, until]`` and recorded at or before ``recorded_by``:
        one Query per write partition of each shard (of ``shards`` only, when given)."""
        low, high, recorded = to_utc_iso(start), to_utc_iso(until), to_utc_iso(recorded_by)
        done: set[str] = set()
        for shard in sorted(shards) if shards is not None else range(SHARD_COUNT):
            for item in self._query_partitions(keys.performed_pks(checklist_id, shard), low, high + keys.HIGH,
                                               ("equipment_id", "performed_at", "recorded_at")):
                if str(item["performed_at"]) <= high and str(item.get("recorded_at") or "") <= recorded:
                    done.add(str(item["equipment_id"]))
        return done
