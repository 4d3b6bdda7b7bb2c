"""``GET /me`` (#31): who the API takes the caller for (the principal recorded on what it writes),
whether it is an admin or unscoped, its role at each site and what that role allows there."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks.api import http_api
from missed_checks.api.routes.context import caller, resolver
from missed_checks.permissions.role import ALLOWED, Action

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated


@router.get("/me")
def who_am_i() -> dict[str, Any]:
    http_api.query_parameters(resolver(router))
    me = caller(router)
    return {"principal": me.principal, "admin": me.admin, "unscoped": me.unscoped,
            "roles": {site_id: role.value for site_id, role in sorted(me.roles.items())},
            "actions": {site_id: [action.value for action in Action if action in ALLOWED[role]]
                        for site_id, role in sorted(me.roles.items())}}
