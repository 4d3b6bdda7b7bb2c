"""What every function of the HTTP API shares (issue #19): the caller's identity from the event API
Gateway sends (payload format 2.0), request bodies and parameters read with errors naming the field,
and every refusal as an ``application/problem+json`` answer (RFC 9457) with the field and what to do.

No AWS call here: the functions (``functions/api_*/app.py``) hand the table to the use cases.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response

from missed_checks.errors import InvalidInput, MissedChecksError
from missed_checks.recording import ChecksRefused, IdempotencyConflict, Refusal
from missed_checks.timefmt import parse_instant

PROBLEM_JSON = "application/problem+json"
PROBLEM_TYPES = "https://github.com/missed-checks/missed-checks/blob/main/docs/http-api.md#errors"
MAX_BODY_BYTES = 256 * 1024
"""Larger bodies are refused with 413 (a batch of :data:`MAX_BATCH` checks is far smaller)."""
MAX_BATCH = 500
"""Checks in one batch request; more is 413 (split the batch)."""


class TooLarge(MissedChecksError):
    """The body or the batch is larger than the API accepts (413)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def problem(status: int, title: str, detail: str, *, field: str | None = None,
            extra: Mapping[str, Any] | None = None) -> Response[str]:
    """An RFC 9457 problem document: ``type``, ``title``, ``status``, ``detail``, and ``field`` (the
    request field at fault) plus ``extra`` members."""
    slug = title.lower().replace(" ", "-")
    body = {"type": f"{PROBLEM_TYPES}-{slug}", "title": title, "status": status, "detail": detail,
            **({"field": field} if field else {}), **(extra or {})}
    return Response(status_code=status, content_type=PROBLEM_JSON, body=json.dumps(body))


def caller_identity(event: Mapping[str, Any]) -> str:
    """Who is calling, as API Gateway authorized it: the IAM principal's ARN (SigV4), or the JWT's
    ``iss`` and ``sub``. A request without either never reaches a function (no route is anonymous);
    an event without one is refused rather than recorded as nobody."""
    authorizer = (event.get("requestContext") or {}).get("authorizer") or {}
    iam = authorizer.get("iam") or {}
    if iam.get("userArn"):
        return str(iam["userArn"])
    claims = (authorizer.get("jwt") or {}).get("claims") or {}
    if claims.get("sub"):
        return f"{claims.get('iss', '')}#{claims['sub']}"
    raise InvalidInput("Authorization", "the request carries no caller identity: sign it (SigV4) or send a "
                                        "bearer token the API's JWT authorizer accepts")


def json_body(app: APIGatewayHttpResolver) -> Any:
    """The request's JSON body; 400 naming ``body`` when it is missing or not JSON, 413 when too large."""
    raw = app.current_event.decoded_body or ""
    if len(raw.encode("utf-8")) > MAX_BODY_BYTES:
        raise TooLarge("body", f"the body is larger than {MAX_BODY_BYTES // 1024} KiB: send fewer checks per request")
    if not raw.strip():
        raise InvalidInput("body", "the request needs a JSON body")
    try:
        return json.loads(raw)
    except ValueError as error:
        raise InvalidInput("body", f"is not JSON ({error}): send a JSON document") from None


def instant_param(app: APIGatewayHttpResolver, name: str) -> datetime:
    value = app.current_event.get_query_string_value(name)
    if value is None:
        raise InvalidInput(name, f"give the query parameter {name}, an ISO 8601 instant with an offset "
                                 "such as 2026-03-02T00:00:00Z")
    return parse_instant(value, name)


def refused(error: ChecksRefused) -> Response[str]:
    """400 when every problem is a malformed value, else 422 (the checks cannot be true as given)."""
    malformed = all(p.kind == Refusal.INVALID for p in error.problems)
    status = HTTPStatus.BAD_REQUEST if malformed else HTTPStatus.UNPROCESSABLE_ENTITY
    return problem(status, "Invalid check" if malformed else "Check refused",
                   f"nothing was written: {error.message}", field=error.field,
                   extra={"errors": [p.to_dict() for p in error.problems]})


def invalid(error: InvalidInput) -> Response[str]:
    return problem(HTTPStatus.BAD_REQUEST, "Invalid request", error.message, field=error.field)


def key_reused(error: IdempotencyConflict) -> Response[str]:
    return problem(HTTPStatus.CONFLICT, "Idempotency key reused", str(error), field="Idempotency-Key")


def conflict(error: Exception) -> Response[str]:
    return problem(HTTPStatus.CONFLICT, "Conflict", str(error))


def not_found(error: Exception) -> Response[str]:
    return problem(HTTPStatus.NOT_FOUND, "Not found", str(error))


def too_large(error: TooLarge) -> Response[str]:
    return problem(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "Request too large", str(error), field=error.field)


def install_problems(app: APIGatewayHttpResolver, *, not_found_errors: tuple[type[Exception], ...] = (),
                     conflict_errors: tuple[type[Exception], ...] = ()) -> None:
    """Every refusal of the use cases as a problem document with its status; ``not_found_errors`` and
    ``conflict_errors``: the adapters' errors that mean 404 and 409 (the functions name them)."""
    app.exception_handler(ChecksRefused)(refused)
    app.exception_handler(InvalidInput)(invalid)
    app.exception_handler(IdempotencyConflict)(key_reused)
    app.exception_handler(TooLarge)(too_large)
    if conflict_errors:
        app.exception_handler(list(conflict_errors))(conflict)
    if not_found_errors:
        app.exception_handler(list(not_found_errors))(not_found)

    def no_route(_error: Exception) -> Response[str]:
        event = app.current_event
        return problem(HTTPStatus.NOT_FOUND, "Not found",
                       f"no route {event.request_context.http.method} {event.path}: see the OpenAPI document "
                       "openapi/missed-checks.yaml")

    app.not_found(no_route)
