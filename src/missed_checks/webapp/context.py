"""What every page needs, built per request: the resolver its router is part of, the stack's table
(every kind of item a person manages, and the web app's sessions) and the user pool people sign in to."""

from __future__ import annotations

from typing import cast

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks.aws import settings
from missed_checks.aws.table import ManagementTable
from missed_checks.aws.table.sessions import SessionItems
from missed_checks.aws.user_pool import UserPool
from missed_checks.errors import Forbidden

__all__ = ["WebAppTable", "resolver", "table", "user_pool"]


class WebAppTable(ManagementTable, SessionItems):
    """Every kind of item a person manages, and the sessions of people signed in to the web app."""


def table() -> WebAppTable:
    """The stack's table (its client is the process's shared one)."""
    return WebAppTable(settings.required("TABLE_NAME"))


def user_pool() -> UserPool:
    """The stack's user pool, through its app client (``USER_POOL_CLIENT_ID``). Forbidden, said on the
    sign-in page, when the stack has none (deployed with ``JwtIssuer``: people sign in elsewhere)."""
    client_id = settings.optional("USER_POOL_CLIENT_ID")
    if not client_id:
        raise Forbidden("This stack signs people in with another identity provider (its JwtIssuer), not a user "
                        "pool of its own: the web app cannot sign anyone in with a password here.")
    return UserPool(client_id)


def resolver(router: Router) -> APIGatewayHttpResolver:
    """The HTTP API resolver ``router`` was included in (its current event, its body, its context)."""
    return cast(APIGatewayHttpResolver, router.api_resolver)
