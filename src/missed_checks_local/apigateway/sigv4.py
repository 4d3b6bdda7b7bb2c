"""The HTTP API's IAM authorizer, locally: verify a request's Signature Version 4 as API Gateway does.

The expected signature is computed by botocore's own signer (:class:`botocore.auth.SigV4Auth`) over
the request as received, restricted to the headers the caller says it signed, with the secret of
the access key it names: the local stack's credentials (``testing``/``testing``, what
``local serve`` and its users sign with), an access key created in the local IAM or a role's
temporary credentials from the local STS (with their session token). A request that
is unsigned, names an unknown key, is signed for another service or region, is older than
:data:`MAX_CLOCK_SKEW` or whose signature differs is refused (403 with API Gateway's messages).

The payload's hash in the canonical request is the SHA-256 of the body as received, as API Gateway
computes it for ``execute-api``: a client's ``X-Amz-Content-SHA256`` is not trusted (it is only a
header, signed if the client listed it), so ``UNSIGNED-PAYLOAD`` and a body changed under its
signature do not match.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

SERVICE = "execute-api"
MAX_CLOCK_SKEW_S = 15 * 60
"""API Gateway refuses a signature more than about 15 minutes from its own clock (the wall clock
here: callers sign with theirs, whatever the stack's simulated clock says)."""

_AUTHORIZATION = re.compile(
    r"^AWS4-HMAC-SHA256\s+Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/(?P<service>[^/]+)/aws4_request,"
    r"\s*SignedHeaders=(?P<signed>[^,]+),\s*Signature=(?P<signature>[0-9a-f]{64})$")


@dataclass(frozen=True)
class Caller:
    """Who signed: API Gateway's ``requestContext.authorizer.iam``."""

    access_key: str
    account_id: str
    user_arn: str
    user_id: str

    def to_event(self) -> dict[str, object]:
        return {"accessKey": self.access_key, "accountId": self.account_id, "callerId": self.user_id,
                "cognitoIdentity": None, "principalOrgId": None, "userArn": self.user_arn, "userId": self.user_id}


class Denied(Exception):
    """The request is not authorized (API Gateway answers 403 with this message)."""


@dataclass(frozen=True)
class KeyOwner:
    secret: str
    user_arn: str
    user_id: str
    session_token: str | None = None
    """Temporary credentials' (``sts:AssumeRole``): the request must carry it (``X-Amz-Security-Token``)."""


class _ExactHeaders(SigV4Auth):
    """botocore's signer, signing exactly the headers the caller listed (botocore leaves some out,
    e.g. User-Agent, that a caller such as curl may have signed), over the hash of the body received
    (botocore would take a request's ``X-Amz-Content-SHA256`` instead: the request it is given has
    none; the header's value, when signed, comes from ``received``)."""

    def __init__(self, credentials: Credentials, service: str, region: str, signed: list[str],
                 received: AWSRequest) -> None:
        super().__init__(credentials, service, region)
        self._signed = signed
        self._received = received

    def headers_to_sign(self, request: AWSRequest) -> object:  # type: ignore[override]
        from botocore.awsrequest import HTTPHeaders

        headers = HTTPHeaders()
        for name in self._signed:
            for value in self._received.headers.get_all(name) or []:
                headers.add_header(name, value)
        return headers

    def payload(self, request: AWSRequest) -> str:
        body: object = request.body
        return hashlib.sha256(body if isinstance(body, bytes) else b"").hexdigest()


def verify(method: str, url: str, headers: Mapping[str, str], body: bytes, *, region: str, account_id: str,
           owner_of: Mapping[str, KeyOwner]) -> Caller:
    """The caller of a correctly signed request, or :class:`Denied`."""
    lower = {name.lower(): value for name, value in headers.items()}
    authorization = lower.get("authorization")
    if not authorization:
        raise Denied("Missing Authentication Token")
    parsed = _AUTHORIZATION.match(authorization.strip())
    if parsed is None:
        raise Denied("Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' (AWS4-HMAC-SHA256)")
    if parsed["service"] != SERVICE or parsed["region"] != region:
        raise Denied(f"Credential should be scoped to a valid region and service: {region}/{SERVICE}, "
                     f"not {parsed['region']}/{parsed['service']}")
    owner = owner_of.get(parsed["key"])
    if owner is None or (owner.session_token is not None
                         and lower.get("x-amz-security-token") != owner.session_token):
        raise Denied("The security token included in the request is invalid.")
    amz_date = lower.get("x-amz-date", "")
    try:
        signed_at = datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        raise Denied("Signature not valid: the request needs an X-Amz-Date header (yyyyMMddTHHmmssZ)") from None
    if abs(signed_at.timestamp() - time.time()) > MAX_CLOCK_SKEW_S or amz_date[:8] != parsed["date"]:
        raise Denied(f"Signature expired: {amz_date} is not within 15 minutes of now")
    signed = parsed["signed"].split(";")
    received = AWSRequest(method=method, url=url, data=body, headers={k: v for k, v in headers.items()})
    request = AWSRequest(method=method, url=url, data=body,
                         headers={k: v for k, v in headers.items() if k.lower() != "x-amz-content-sha256"})
    request.context["timestamp"] = amz_date
    signer = _ExactHeaders(Credentials(parsed["key"], owner.secret, lower.get("x-amz-security-token")),
                           SERVICE, region, signed, received)
    canonical = signer.canonical_request(request)
    expected = signer.signature(signer.string_to_sign(request, canonical), request)
    if not hmac.compare_digest(expected, parsed["signature"]):
        raise Denied("The request signature we calculated does not match the signature you provided. Check your "
                     "AWS Secret Access Key and signing method.")
    return Caller(parsed["key"], account_id, owner.user_arn, owner.user_id)
