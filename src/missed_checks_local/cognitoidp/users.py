"""People in a local stack's user pool (#31): created when ``local serve`` starts, signed in like an app.

Everything goes through the ordinary cognito-idp API of the local endpoint, as an admin and an app
would: groups (CreateGroup), users with a permanent password (AdminCreateUser without a message,
AdminSetUserPassword) in their groups (AdminAddUserToGroup); a token by InitiateAuth
``USER_PASSWORD_AUTH`` with the stack's app client.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["LocalPeople", "NoUserPool", "create_people", "sign_in", "user_pool_of"]


class NoUserPool(LookupError):
    """The stack has no user pool (deployed with ``JwtIssuer``) or no app client for it."""


@dataclass(frozen=True)
class LocalPeople:
    """The users a local stack starts with: user name -> its groups, and their one password."""

    password: str
    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class UserPool:
    pool_id: str
    client_id: str


def user_pool_of(resources: Mapping[str, Mapping[str, Any]]) -> UserPool:
    """The stack's user pool and its app client, from its resources (logical id -> ``Type``, ``Ref``)."""
    pools = [r["Ref"] for r in resources.values() if r.get("Type") == "AWS::Cognito::UserPool"]
    clients = [r["Ref"] for r in resources.values() if r.get("Type") == "AWS::Cognito::UserPoolClient"]
    if len(pools) != 1 or len(clients) != 1:
        raise NoUserPool(f"the stack has {len(pools)} user pool(s) and {len(clients)} app client(s), not one each "
                         f"(a stack deployed with JwtIssuer signs people in elsewhere)")
    return UserPool(str(pools[0]), str(clients[0]))


def create_people(cognito: Any, pool: UserPool, people: LocalPeople) -> None:
    """Every group the people name, and every user with the password (permanent) in its groups."""
    for group in sorted({g for groups in people.groups.values() for g in groups}):
        try:
            cognito.create_group(UserPoolId=pool.pool_id, GroupName=group)
        except cognito.exceptions.GroupExistsException:
            pass
    for user, groups in people.groups.items():
        try:
            cognito.admin_create_user(UserPoolId=pool.pool_id, Username=user, MessageAction="SUPPRESS")
        except cognito.exceptions.UsernameExistsException:
            pass
        cognito.admin_set_user_password(UserPoolId=pool.pool_id, Username=user, Password=people.password,
                                        Permanent=True)
        for group in groups:
            cognito.admin_add_user_to_group(UserPoolId=pool.pool_id, Username=user, GroupName=group)


def sign_in(cognito: Any, client_id: str, user: str, password: str) -> dict[str, Any]:
    """InitiateAuth ``USER_PASSWORD_AUTH``: the ``AuthenticationResult`` (``AccessToken``,
    ``IdToken``, ``RefreshToken``, ``ExpiresIn``). A refused sign-in raises the client's
    ``NotAuthorizedException`` / ``UserNotFoundException``."""
    answer = cognito.initiate_auth(ClientId=client_id, AuthFlow="USER_PASSWORD_AUTH",
                                   AuthParameters={"USERNAME": user, "PASSWORD": password})
    result: dict[str, Any] = answer["AuthenticationResult"]
    return result
