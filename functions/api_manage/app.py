"""HTTP API, the management routes (#31): sites, equipment, checklists and their equipment (and
items, #33), closure calendars, out-of-service periods, digest subscriptions, the notification log,
the audit trail, grants and ``GET /me``, defects and a site's readiness (#33), on both APIs
(HttpApi for IAM callers, PeopleApi for people).

Thin: one Powertools ``Router`` per feature (:mod:`missed_checks.api.routes`), each reading its
request and calling the scoped use cases the operator's commands call too; every refusal is a
problem document (:func:`missed_checks.api.http_api.install_problems`: 400, 403, 404, 409, 412, 413,
428). openapi/missed-checks.yaml documents every route; tests/unit/api/test_http_api_contract.py
keeps it, the template and :data:`ROUTERS` equal.

Environment (template.yaml): ``TABLE_NAME``; and where a subscription's digest schedule goes, as
``digest subscribe`` makes it (:func:`missed_checks.notifications.subscribing.subscribe`):
``SCHEDULE_GROUP_NAME``, ``DIGEST_FUNCTION_ARN``, ``DIGEST_SCHEDULER_ROLE_ARN``, ``DIGEST_DLQ_ARN``
and ``SCHEDULER_MAX_RETRY_ATTEMPTS``. Its role may create, update and delete only the digest
schedules (``_d.*``) of the stack's group, and pass only the digest scheduler role."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.utilities.typing import LambdaContext

from missed_checks.api import http_api
from missed_checks.api.routes import (
    audit,
    calendars,
    checklists,
    defects,
    equipment,
    grants,
    me,
    notifications,
    out_of_service,
    readiness,
    sites,
    subscriptions,
)
from missed_checks.aws.observability import lambda_handler

ROUTERS = (me.router, sites.router, equipment.router, out_of_service.router, checklists.router, calendars.router,
           subscriptions.router, notifications.router, grants.router, audit.router, defects.router, readiness.router)
"""Every feature's routes, listed (not discovered): a router that is not here is not served."""

app = APIGatewayHttpResolver()
http_api.install_problems(app)
for router in ROUTERS:
    app.include_router(router)


@lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
