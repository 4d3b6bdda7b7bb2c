"""Digest (#18): fired by a subscription's EventBridge Scheduler schedule with
``{"kind": "digest", "subscription_id": ..., "instant": <scheduled time>}``; sends the fleet report
of the period just ended to the subscription's address, once per period.

Thin handler: the work is :func:`missed_checks.notifications.digesting.send_digest`; the channels are SES (when
the stack has a sender, ``NOTIFICATION_SENDER``) and one ``Checklist notification`` event on the
stack's bus. The digest is claimed in the table (its deterministic id) before it is sent, so a
retried, duplicated or replayed firing never sends it twice. A failure is raised: Lambda retries the
asynchronous invocation twice, then puts the firing in the notification dead-letter queue. An
address SES refuses for good (the sandbox's unverified recipient) is not retried: the others are
sent, and the function's own letter (the firing, naming each refused address and why) goes to the
same queue: ``dlq replay`` fires it again once the address is verified.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from missed_checks import clock
from missed_checks.aws import settings
from missed_checks.aws.notify_channels import stack_channels
from missed_checks.aws.observability import lambda_handler, logger, metrics
from missed_checks.aws.queues import send_json
from missed_checks.aws.table.subscriptions import DigestTable
from missed_checks.contracts import dump, parse
from missed_checks.dead_letters import DigestLetter
from missed_checks.notifications.digest import validate_subscription_id
from missed_checks.notifications.digesting import send_digest
from missed_checks.notifications.notifying import Delivery
from missed_checks.timefmt import parse_instant


@lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    firing = parse(DigestLetter, event, "event")  # the schedule's input (and a replayed dead letter)
    subscription_id = validate_subscription_id(firing.subscription_id, "event.subscription_id")
    instant = parse_instant(firing.instant, "event.instant")
    logger.append_keys(subscription_id=subscription_id, instant=firing.instant)
    table = DigestTable(settings.required("TABLE_NAME"))
    channels = stack_channels(settings.optional("NOTIFICATION_SENDER"), settings.required("EVENT_BUS_NAME"))
    outcome = send_digest(table, channels, subscription_id, instant, clock.now)
    if outcome.refused:  # final for those addresses (#30 item 4): not retried, named in a dead letter
        for refused in outcome.refused:
            logger.error("digest not sent: SES refused the recipient", to=refused.recipient, error=str(refused))
        metrics.add_metric(name="NotificationsFailed", unit=MetricUnit.Count, value=len(outcome.refused))
        letter = DigestLetter(kind="digest", subscription_id=subscription_id, instant=firing.instant,
                              error="; ".join(str(refused) for refused in outcome.refused)[:2000])
        send_json(settings.required("NOTIFICATION_DLQ_URL"), dump(letter))
    if outcome.delivery is Delivery.SENT:
        metrics.add_metric(name="DigestsSent", unit=MetricUnit.Count, value=1)
    logger.info("digest handled", delivery=outcome.delivery.value if outcome.delivery else "no-subscription")
    return outcome.to_dict()
