"""Who calls the HTTP APIs, as a :class:`~missed_checks.permissions.caller.Caller`: the identity API
Gateway authorized (an IAM principal's ARN from SigV4, or a JWT's claims) plus the grant record of
that principal (one GetItem).

* An IAM caller (``requestContext.authorizer.iam.userArn``) is scoped by its grant record: the
  record of its exact ARN, else, for an assumed role's session
  (``arn:aws:sts::<account>:assumed-role/<role>/<session>``), the record of the role
  (``arn:aws:iam::<account>:role/<role>``). Without a record it is unscoped: integrations made
  before roles existed keep working, their IAM policy being their scope.
* A person (``requestContext.authorizer.jwt.claims``) is named by the ``username`` claim (an access
  token), else ``cognito:username`` (an id token), else ``sub``; their roles are the
  ``cognito:groups`` claim (``admin``, ``<role>@<site id>``) merged with their grant record, which
  wins for a site both name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from missed_checks import identifiers
from missed_checks.errors import InvalidInput
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.grant import Grant, machine_caller, person_caller, roles_from_groups
from missed_checks.permissions.ports import GrantReader

__all__ = ["GROUPS_CLAIM", "PRINCIPAL_CLAIMS", "caller_of", "role_arn_of"]

PRINCIPAL_CLAIMS = ("username", "cognito:username", "sub")
"""The claims naming a person, the first present wins."""
GROUPS_CLAIM = "cognito:groups"
_ASSUMED_ROLE = re.compile(r"arn:(?P<partition>[\w-]+):sts::(?P<account>\d{12}):assumed-role/(?P<role>[^/]+)/[^/]+")


def role_arn_of(user_arn: str) -> str | None:
    """The IAM role an assumed role's session ARN belongs to (a path the role has is not in the
    session's ARN, so it is not in this one either); None for any other ARN."""
    match = _ASSUMED_ROLE.fullmatch(user_arn)
    if match is None:
        return None
    return f"arn:{match['partition']}:iam::{match['account']}:role/{match['role']}"


def _grant(grants: GrantReader, *principals: str | None) -> Grant | None:
    principal_kind = identifiers.KINDS["principal"]
    for principal in principals:
        if principal and principal_kind.pattern.fullmatch(principal):
            grant = grants.get_grant(principal)
            if grant is not None:
                return grant
    return None


def caller_of(event: Mapping[str, Any], grants: GrantReader) -> Caller:
    """The caller of an API Gateway payload 2.0 ``event`` with its grant record read from ``grants``.
    InvalidInput naming ``Authorization`` when the event names no one (no route is anonymous: such an
    event never came through API Gateway's authorizers)."""
    authorizer = (event.get("requestContext") or {}).get("authorizer") or {}
    iam = authorizer.get("iam") or {}
    user_arn = iam.get("userArn")
    if isinstance(user_arn, str) and user_arn:
        return machine_caller(user_arn, _grant(grants, user_arn, role_arn_of(user_arn)))
    claims = (authorizer.get("jwt") or {}).get("claims") or {}
    principal = next((str(claims[name]) for name in PRINCIPAL_CLAIMS
                      if isinstance(claims.get(name), str) and claims[name].strip()), None)
    if principal is None:
        raise InvalidInput("Authorization", "the request carries no caller identity: sign it (SigV4) or send a "
                                            "bearer token the API's JWT authorizer accepts (with a username or "
                                            "sub claim)")
    return person_caller(principal, roles_from_groups(claims.get(GROUPS_CLAIM)), _grant(grants, principal))
