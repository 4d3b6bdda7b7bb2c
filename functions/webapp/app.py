"""The fleet manager's web app (#32): HTML pages behind the ``WebApp`` HTTP API (one ``$default`` route,
no authorizer: every page but the sign-in page and ``/static`` requires a signed-in session,
:mod:`missed_checks.webapp.sessions`).

Thin: one Powertools ``Router`` per page (:mod:`missed_checks.webapp.pages`), each reading its request
and calling the scoped use cases the people's API calls, with the signed-in person's caller. Refusals
are pages (:func:`missed_checks.webapp.rendering.install_errors`).

Environment (template.yaml): ``TABLE_NAME``, ``USER_POOL_CLIENT_ID`` (the user pool's app client
people sign in with).
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.utilities.typing import LambdaContext

from missed_checks.aws.observability import lambda_handler
from missed_checks.webapp import rendering
from missed_checks.webapp.pages import (
    audit,
    calendars,
    checklists,
    equipment,
    missed,
    record,
    report,
    sign_in,
    static,
    subscriptions,
    today,
)

ROUTERS = (sign_in.router, static.router, today.router, record.router, checklists.router, missed.router,
           equipment.router, calendars.router, report.router, subscriptions.router, audit.router)
"""Every page's routes, listed (not discovered): a router that is not here is not served."""

app = APIGatewayHttpResolver()
rendering.install_errors(app)
for router in ROUTERS:
    app.include_router(router)


@lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
