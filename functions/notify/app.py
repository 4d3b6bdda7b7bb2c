"""Notify: tells people (#18). Invoked asynchronously by EventBridge for every ``Occurrence window
judged`` event (missed alert, escalation), by the reminder schedules (``{"kind": "reminder", ...}``)
and by ``dlq replay`` with a dead letter of its own queue.

Thin handler: the work is :mod:`missed_checks.notifications.notifier`; the channels are SES (when the stack has a
sender, ``NOTIFICATION_SENDER``) and one ``Checklist notification`` event on the stack's bus. Each
notification is claimed in the table before it is sent, so a retry, a duplicate event, a replay or
a concurrent invocation never sends it twice. A notification that fails (a rejected address, a
channel still failing after botocore's retries) is written to the notification dead-letter queue
and the others still go out; only when that is impossible (the table or the queue unreachable)
does the invocation fail: Lambda retries it twice, then puts the input itself in the same queue.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from missed_checks import clock
from missed_checks.aws import settings
from missed_checks.aws.events import WINDOW_JUDGED
from missed_checks.aws.notify_channels import stack_channels
from missed_checks.aws.observability import lambda_handler, logger, metrics
from missed_checks.aws.queues import send_json
from missed_checks.aws.table.notifications import NotifierTable
from missed_checks.contracts import JudgedWindowDetail, dump, parse
from missed_checks.dead_letters import NotificationLetter, ReminderLetter
from missed_checks.errors import InvalidInput
from missed_checks.evaluation.ports import NotificationChannel
from missed_checks.notifications import notifier
from missed_checks.notifications.notification import Notification
from missed_checks.notifications.notifying import Delivery
from missed_checks.timefmt import parse_instant, to_utc_iso


def channels() -> list[NotificationChannel]:
    """The stack's channels, as the digest function sends through them."""
    return stack_channels(settings.optional("NOTIFICATION_SENDER"), settings.required("EVENT_BUS_NAME"))


def dead_letter(notification: Notification, error: Exception) -> None:
    logger.error("notification not sent", notification_id=notification.notification_id,
                 kind=notification.kind.value, error=f"{type(error).__name__}: {error}")
    letter = NotificationLetter(kind="notification", source="notify", notification=notification.to_dict(),
                                error=f"{type(error).__name__}: {error}"[:2000], failed_at=to_utc_iso(clock.now()))
    send_json(settings.required("NOTIFICATION_DLQ_URL"), dump(letter))


def _window_start(event: dict[str, Any]) -> tuple[str, datetime]:
    detail = parse(JudgedWindowDetail, event.get("detail"), "detail")
    return detail.checklist_id, detail.window.start


@lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger.remove_keys(["checklist_id", "window_start", "lead", "instant", "trigger"])  # a warm start's earlier input
    table = NotifierTable(settings.required("TABLE_NAME"))
    used = channels()
    if not isinstance(event, dict):
        raise InvalidInput("event", "expected an object: a window event, a reminder firing or a notification letter")
    if event.get("detail-type") == WINDOW_JUDGED:
        checklist_id, window_start = _window_start(event)
        logger.append_keys(checklist_id=checklist_id, window_start=to_utc_iso(window_start), trigger="window")
        outcomes = notifier.notify_judged_window(table, used, checklist_id, window_start, clock.now, dead_letter)
    elif event.get("kind") == "reminder":
        firing = parse(ReminderLetter, event)
        logger.append_keys(checklist_id=firing.checklist_id, lead=firing.lead, instant=firing.instant,
                           trigger="reminder")
        outcomes = notifier.remind(table, used, firing.checklist_id, firing.lead,
                                   parse_instant(firing.instant, "instant"), clock.now, dead_letter)
    elif event.get("kind") == "notification":
        letter = parse(NotificationLetter, event)
        logger.append_keys(trigger="replay")
        outcomes = notifier.deliver_each([Notification.from_dict(letter.notification)], table, used, clock.now,
                                         dead_letter)
    else:
        raise InvalidInput("event", "not a window event, a reminder firing or a notification dead letter")
    counts = {delivery.value: 0 for delivery in Delivery} | {"failed": 0}
    for outcome in outcomes:
        counts[outcome.delivery.value if outcome.delivery else "failed"] += 1
    metrics.add_metric(name="NotificationsSent", unit=MetricUnit.Count, value=counts[Delivery.SENT.value])
    if counts["failed"]:
        metrics.add_metric(name="NotificationsFailed", unit=MetricUnit.Count, value=counts["failed"])
    logger.info("notifications handled", **counts)
    return {**counts, "notifications": [{"notification_id": o.notification.notification_id,
                                         "kind": o.notification.kind.value, "to": o.notification.recipient,
                                         "delivery": o.delivery.value if o.delivery else "failed"} for o in outcomes]}
