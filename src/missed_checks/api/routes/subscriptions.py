"""The management API's digest subscription routes (#31): ``GET /subscriptions`` (the caller's sites',
``read_management``), ``POST /subscriptions`` (subscribe at ``site_id``, or replace a subscription of
that site: ``manage``) and ``DELETE /subscriptions/{subscription_id}`` (``manage``). The item is
written, then its EventBridge Scheduler schedule pointed at the digest function
(:mod:`missed_checks.notifications.subscribing`, as ``digest subscribe``/``unsubscribe`` do)."""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks import clock
from missed_checks.api import http_api
from missed_checks.api.routes.context import caller, table
from missed_checks.aws import settings
from missed_checks.aws.scheduler import ScheduleStore
from missed_checks.checklists.schedule import Target
from missed_checks.errors import InvalidInput, NotFound
from missed_checks.notifications import subscribing
from missed_checks.notifications.digest import Subscription

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated

SUBSCRIPTION_FIELDS = ("id", "site_id", "to", "period", "time", "timezone", "day", "checklists")


def schedules() -> ScheduleStore:
    """The stack's schedule group, where digest schedules live."""
    return ScheduleStore(settings.required("SCHEDULE_GROUP_NAME"))


def digest_target() -> Target:
    """Where digest schedules point: the digest function, its scheduler role, the notification DLQ."""
    return Target(settings.required("DIGEST_FUNCTION_ARN"), settings.required("DIGEST_SCHEDULER_ROLE_ARN"),
                  settings.required("DIGEST_DLQ_ARN"), settings.required_int("SCHEDULER_MAX_RETRY_ATTEMPTS"))


def subscription_document(subscription: Subscription) -> dict[str, Any]:
    return {**subscription.to_dict(), "site_id": subscription.site_id}


@router.get("/subscriptions")
def list_subscriptions() -> dict[str, Any]:
    query = http_api.page_query(router, "site_id")
    page = subscribing.subscriptions_page(table(), caller(router), query.filters["site_id"], query.position,
                                          query.limit)
    return http_api.page_answer((subscription_document(s) for s in page.items), page.next_position, query)


@router.post("/subscriptions")
def subscribe() -> Response[str]:
    """201 with the subscription (200 when it replaced one of the same id)."""
    http_api.query_parameters(router)
    body = http_api.fields(http_api.json_body(router), SUBSCRIPTION_FIELDS, what="a digest subscription")
    if body.get("site_id") is None:
        raise InvalidInput("site_id", "give the site whose checklists the digest covers (GET /sites lists yours)")
    now = clock.now()
    subscription = Subscription.create(body.get("id"), address=body.get("to"), period=body.get("period"),
                                       at=body.get("time"), timezone=body.get("timezone"), day=body.get("day"),
                                       checklists=body.get("checklists"), now=now, site_id=body["site_id"])
    created = subscribing.subscribe_at_site(table(), schedules(), digest_target(), caller(router), subscription, now)
    return Response(status_code=HTTPStatus.CREATED if created else HTTPStatus.OK, content_type="application/json",
                    body=json.dumps({"action": "created" if created else "updated",
                                     **subscription_document(subscription)}))


@router.delete("/subscriptions/<subscription_id>")
def end_subscription(subscription_id: str) -> Response[str]:
    http_api.query_parameters(router)
    subscription_id = unquote(subscription_id)
    if subscribing.end_subscription(table(), schedules(), caller(router), subscription_id) is None:
        raise NotFound(f"digest subscription {subscription_id!r} does not exist")
    return Response(status_code=HTTPStatus.NO_CONTENT, body="")
