"""The stack's Cognito user pool, as the web app signs people in (#32): InitiateAuth
``USER_PASSWORD_AUTH`` with the pool's app client (an unauthenticated call: no IAM permission).

The tokens come straight from Cognito over TLS in answer to this call, so the id token's claims are
read without checking its signature; none of the tokens is kept (the web app's session is its own).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from botocore.exceptions import ClientError

from missed_checks.aws.clients import ServiceAdapter
from missed_checks.errors import Forbidden, InvalidInput

__all__ = ["WRONG_PASSWORD", "UserPool"]

WRONG_PASSWORD = "That user name and password do not match a person of this app: check both and try again."
"""The one answer to a user who does not exist and to a wrong password (which of them was wrong is not said)."""
_REFUSED = {"NotAuthorizedException", "UserNotFoundException", "UserNotConfirmedException",
            "PasswordResetRequiredException"}


def _claims(token: str) -> dict[str, Any]:
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError, binascii.Error) as error:
        raise InvalidInput("IdToken", "the user pool answered with an id token that is no JWT") from error
    if not isinstance(claims, dict):
        raise InvalidInput("IdToken", "the user pool's id token holds no claims")
    return claims


class UserPool(ServiceAdapter):
    """The pool's app client ``client_id`` (the stack's ``USER_POOL_CLIENT_ID``)."""

    service_name = "cognito-idp"

    def __init__(self, client_id: str, cognito: Any | None = None) -> None:
        super().__init__(cognito)
        self.client_id = client_id

    def signed_in_claims(self, user: str, password: str) -> Mapping[str, Any]:
        """The id token's claims (``cognito:username``, ``cognito:groups``, ``name``/``email``...) of the
        person whose user name and password these are. Forbidden (:data:`WRONG_PASSWORD`) when they do
        not match; Forbidden naming the challenge when the pool asks for more than a password."""
        try:
            answer = self.client.initiate_auth(ClientId=self.client_id, AuthFlow="USER_PASSWORD_AUTH",
                                               AuthParameters={"USERNAME": user, "PASSWORD": password})
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") in _REFUSED:
                raise Forbidden(WRONG_PASSWORD) from error
            raise
        result = answer.get("AuthenticationResult")
        if not result:
            challenge = answer.get("ChallengeName", "another step")
            raise Forbidden(f"The user pool asks this person for {challenge} before they can sign in: "
                            "ask an administrator to finish setting up the account.")
        return _claims(str(result["IdToken"]))
