"""What every management route needs, built per request: the resolver the router is part of (its
event and body), the stack's table (every kind of item a person manages), and the caller
(:func:`missed_checks.api.callers.caller_of`: the identity API Gateway authorized plus its grant record).
"""

from __future__ import annotations

from typing import cast

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks.api.callers import caller_of
from missed_checks.aws import settings
from missed_checks.aws.table import ManagementTable
from missed_checks.permissions.caller import Caller

__all__ = ["ManagementTable", "caller", "resolver", "table"]


def table() -> ManagementTable:
    """The stack's table (its client is the process's shared one: created once per environment)."""
    return ManagementTable(settings.required("TABLE_NAME"))


def resolver(router: Router) -> APIGatewayHttpResolver:
    """The HTTP API resolver ``router`` was included in (its current event, its body)."""
    return cast(APIGatewayHttpResolver, router.api_resolver)


def caller(router: Router) -> Caller:
    """Who calls, with their roles by site (one GetItem of their grant)."""
    return caller_of(router.current_event.raw_event, table())
