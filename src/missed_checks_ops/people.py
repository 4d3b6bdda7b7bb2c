"""Who the operator's commands act as (#31): the stack's credentials (every site, every action), or a
person of the stack's user pool with that person's roles at sites (``--as USER`` or ``--token JWT``).

``--as`` signs the user in (InitiateAuth ``USER_PASSWORD_AUTH`` with the stack's app client, against
the local endpoint with ``--endpoint``); ``--token`` takes an access or id token someone already
has. Either way the person is built as the people's API builds them (their ``cognito:groups`` and
their grant record, :func:`missed_checks.api.callers.caller_of`), and the commands act through the
same scoped use cases. It narrows what a command does; it authenticates nothing the stack's
credentials would not allow anyway (the token's signature is API Gateway's to verify, not ours:
its issuer, app client and expiry are checked here so that a token of another stack or an expired
one is refused by name).
"""

from __future__ import annotations

import base64
import json
import os
import time
from typing import Any

from missed_checks.errors import InvalidInput
from missed_checks.permissions.caller import Caller
from missed_checks_ops.target import StackTarget, TargetError

__all__ = ["PASSWORD_VARIABLE", "claims_of", "password_for", "person", "sign_in"]

PASSWORD_VARIABLE = "MISSED_CHECKS_PASSWORD"
"""Where ``--as`` finds the password when ``--password`` is not given."""


def password_for(given: str | None, *, local: bool) -> str:
    """``--password``, else $MISSED_CHECKS_PASSWORD, else (a local stack) the password ``local serve``
    printed; InvalidInput naming ``password`` otherwise."""
    if given:
        return given
    if os.environ.get(PASSWORD_VARIABLE):
        return os.environ[PASSWORD_VARIABLE]
    if local:
        from missed_checks_local.product.people import LOCAL_PASSWORD  # deferred: the emulator, locally only

        return LOCAL_PASSWORD
    raise InvalidInput("password", f"--as needs the user's password: give --password or set ${PASSWORD_VARIABLE}")


def sign_in(target: StackTarget, user: str, password: str, *, field: str = "as") -> dict[str, Any]:
    """``user`` signed in to the stack's user pool: the ``AuthenticationResult`` (``AccessToken``,
    ``IdToken``, ...). InvalidInput naming ``field`` (the option that named the user) when the pool
    refuses (wrong user or password, or a challenge such as a new password to set first)."""
    client_id = _client_id(target)
    cognito = target.client("cognito-idp")
    try:
        answer = cognito.initiate_auth(ClientId=client_id, AuthFlow="USER_PASSWORD_AUTH",
                                       AuthParameters={"USERNAME": user, "PASSWORD": password})
    except (cognito.exceptions.NotAuthorizedException, cognito.exceptions.UserNotFoundException) as error:
        raise InvalidInput(field, f"{user} cannot sign in to {target.where}: "
                                 f"{error.response['Error'].get('Message', 'refused')}") from None
    result = answer.get("AuthenticationResult")
    if not result:
        raise InvalidInput(field, f"{user} must first answer the user pool's challenge {answer.get('ChallengeName')} "
                                 f"(e.g. set a new password) in an app")
    return dict(result)


def claims_of(target: StackTarget, token: str, *, now: float | None = None) -> dict[str, Any]:
    """The claims of an access or id token of the stack's user pool: refused (InvalidInput naming
    ``token``) when it is not a JWT, names another issuer or app client, or has expired."""
    parts = token.strip().removeprefix("Bearer ").strip().split(".")
    try:
        if len(parts) != 3:
            raise ValueError("not three dot-separated parts")
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError as error:
        raise InvalidInput("token", f"is not a JWT ({error})") from None
    if not isinstance(claims, dict):
        raise InvalidInput("token", "is not a JWT (its payload is not an object)")
    pool_id = target.outputs.get("UserPoolId")
    if pool_id:
        issuer = f"https://cognito-idp.{target.region}.amazonaws.com/{pool_id}"
        if claims.get("iss") != issuer:
            raise InvalidInput("token", f"was issued by {claims.get('iss')!r}, not this stack's user pool {issuer}")
    audience = claims.get("client_id") if claims.get("token_use") == "access" else claims.get("aud")
    if audience != _client_id(target):
        raise InvalidInput("token", f"is for app client {audience!r}, not this stack's {_client_id(target)}")
    exp = claims.get("exp")
    if not isinstance(exp, (int, float)) or exp <= (time.time() if now is None else now):
        raise InvalidInput("token", "has expired (or has no exp): sign in again")
    return claims


def person(target: StackTarget, claims: dict[str, Any]) -> Caller:
    """The person the claims name with their roles: token groups merged with their grant record,
    as the people's API builds them."""
    from missed_checks.api.callers import caller_of
    from missed_checks.aws.table.grants import GrantItems

    event = {"requestContext": {"authorizer": {"jwt": {"claims": claims}}}}
    grants = GrantItems(target.output("TableName"), target.client("dynamodb"))
    return caller_of(event, grants)


def _client_id(target: StackTarget) -> str:
    client_id = target.outputs.get("UserPoolClientId")
    if not client_id:
        raise TargetError(f"{target.where} has no user pool (output UserPoolClientId): it was deployed with "
                          f"JwtIssuer, or before people signed in; get a token from its issuer and give --token")
    return client_id
