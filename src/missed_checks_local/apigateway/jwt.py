"""The JWT authorizer of an HTTP API (the people's API, #31), as API Gateway runs it.

API Gateway's JWT authorizer (its "Validating JWTs" rules) takes the token from the identity source
(``Authorization``, with or without ``Bearer``), reads the issuer's key set, and lets the request
through only when: the header names a key of the set (``kid``) and the algorithm is RS256; the
signature verifies; ``exp`` is after now, ``nbf`` and ``iat`` (when present) not after it; ``iss``
is the authorizer's issuer; ``aud`` or, without it, ``client_id`` is one of its audiences. Here, as
the brief of the local user pool asks, ``token_use`` must also fit: an ``access`` token's audience
is its ``client_id``, an ``id`` token's its ``aud``. Anything else is a 401 before any function
runs. The claims go to the function in ``requestContext.authorizer.jwt.claims``, each value a
string as API Gateway writes them (``"1700000000"``, a list ``"[a b]"``).

Locally the issuer is the embedded user pool: moto signs every pool's tokens with one key, whose
public half moto ships (``moto/cognitoidp/resources/jwks-public.json``; what its
``/<pool>/.well-known/jwks.json`` answers). Another issuer (a stack deployed locally with
``JwtIssuer``) has no key set here: its tokens are refused, saying so.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["JwtAuthorizer", "Unauthorized", "bearer_token", "cognito_key_set", "event_claims", "verify_token"]

_COGNITO_ISSUER = re.compile(r"^https://cognito-idp\.[a-z0-9-]+\.amazonaws\.com/[\w-]+$")
_ACCEPTED_ALGORITHMS = ["RS256"]
"""API Gateway's JWT authorizer verifies RS256 signatures only."""


class Unauthorized(Exception):
    """401: the token is missing or not one the authorizer accepts; the message says why (API
    Gateway says it in ``www-authenticate``'s ``error_description``)."""


@dataclass(frozen=True)
class JwtAuthorizer:
    """An API's ``JWT`` authorizer: its ``JwtConfiguration`` (GetAuthorizer)."""

    issuer: str
    audiences: tuple[str, ...]


def cognito_key_set(issuer: str) -> dict[str, Any] | None:
    """The JWKS of a Cognito user pool issuer as the embedded AWS signs its tokens (moto's one key);
    None for an issuer that is not a Cognito user pool's."""
    if not _COGNITO_ISSUER.match(issuer):
        return None
    from moto.utilities.utils import load_resource  # deferred: moto is a dev dependency and slow to import

    keys: dict[str, Any] = load_resource("cognitoidp/resources/jwks-public.json")
    return keys


def bearer_token(headers: Mapping[str, str]) -> str:
    """The token of the ``Authorization`` header (``Bearer`` optional, as API Gateway takes it)."""
    value = next((v for k, v in headers.items() if k.lower() == "authorization"), "").strip()
    scheme, _, rest = value.partition(" ")
    if scheme.lower() == "bearer":
        value = rest.strip()
    if not value:
        raise Unauthorized("no bearer token in the Authorization header")
    return value


def verify_token(token: str, authorizer: JwtAuthorizer, key_set: Mapping[str, Any] | None, *,
                 now: float | None = None) -> dict[str, Any]:
    """The token's claims when ``authorizer`` accepts it (see the module's rules); raises
    :class:`Unauthorized` naming the first rule it breaks. ``now``: seconds since the epoch
    (default: the wall clock, which the tokens' ``exp`` is written in)."""
    from joserfc import jwt  # deferred: moto's dependency, the emulator's only
    from joserfc.errors import JoseError
    from joserfc.jwk import KeySet

    if key_set is None:
        raise Unauthorized(f"no key set for issuer {authorizer.issuer} here: the local API verifies tokens of the "
                           f"embedded user pool only")
    try:
        keys: Any = dict(key_set)  # a JWKS document: joserfc's KeySetSerialization
        decoded = jwt.decode(token, KeySet.import_key_set(keys), algorithms=_ACCEPTED_ALGORITHMS)
    except JoseError as error:
        raise Unauthorized(f"the token is not a JWT signed by the issuer's keys: {error.error}") from None
    except ValueError as error:  # not three base64url parts, not JSON
        raise Unauthorized(f"the token is not a JWT: {error}") from None
    claims = dict(decoded.claims)
    _check_times(claims, time.time() if now is None else now)
    if claims.get("iss") != authorizer.issuer:
        raise Unauthorized(f"the token's issuer {claims.get('iss')!r} is not {authorizer.issuer}")
    _check_audience(claims, authorizer)
    return claims


def _check_times(claims: Mapping[str, Any], now: float) -> None:
    exp = claims.get("exp")
    if not isinstance(exp, (int, float)) or isinstance(exp, bool):
        raise Unauthorized("the token has no expiry (exp)")
    if exp <= now:
        raise Unauthorized("the token has expired")
    for name in ("nbf", "iat"):
        value = claims.get(name)
        if value is not None and (not isinstance(value, (int, float)) or value > now):
            raise Unauthorized(f"the token is not valid yet ({name})")


def _check_audience(claims: Mapping[str, Any], authorizer: JwtAuthorizer) -> None:
    use = claims.get("token_use")
    if use == "access":
        audience, claim = claims.get("client_id"), "client_id"
    elif use == "id":
        audience, claim = claims.get("aud"), "aud"
    elif use is None:  # another OIDC issuer's token: aud, else client_id, as API Gateway reads them
        claim = "aud" if "aud" in claims else "client_id"
        audience = claims.get(claim)
    else:
        raise Unauthorized(f"a {use!r} token is neither an access token nor an id token")
    given = audience if isinstance(audience, list) else [audience]
    if not any(isinstance(a, str) and a in authorizer.audiences for a in given):
        raise Unauthorized(f"the token's {claim} {audience!r} is not an audience of the authorizer")


def event_claims(claims: Mapping[str, Any]) -> dict[str, str]:
    """The claims as API Gateway hands them to the function: every value a string (a number as
    its digits, a boolean ``true``/``false``, a list ``[a b]``)."""
    return {name: _claim_text(value) for name, value in claims.items()}


def _claim_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (list, tuple)):
        return "[" + " ".join(_claim_text(item) for item in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{key}:{_claim_text(item)}" for key, item in sorted(value.items())) + "]"
    if isinstance(value, str):
        return value
    return json.dumps(value)
