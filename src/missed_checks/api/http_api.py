"""What every function of the HTTP API shares (issue #19): the caller's identity from the event API
Gateway sends (payload format 2.0), request bodies and parameters read with errors naming the field,
and every refusal as an ``application/problem+json`` answer (RFC 9457) with the field and what to do.

**The edge** (:func:`install_problems` puts it before every route): a body the API cannot keep is
refused before any route's code runs: larger than :data:`MAX_BODY_BYTES` (413), not base64 when
API Gateway says it is, not UTF-8, not JSON, JSON nested deeper than :data:`MAX_JSON_DEPTH`, an
object with a member twice, a number JSON cannot round-trip (``NaN``, ``1e999``), text that is not
Unicode (a lone surrogate), or any body on a ``GET`` (400). Query parameters are read by
:func:`query_parameters`, which refuses those a route does not take; their values by one function
per kind (:mod:`missed_checks.api.parameters`, shared with the command line). Request bodies are closed
(:func:`fields`): an unknown member is refused naming it, as the OpenAPI document says
(``additionalProperties: false``).

No AWS call here: the functions (``functions/api_*/app.py``) hand the table to the use cases.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.api_gateway import BaseRouter

from missed_checks.api import parameters
from missed_checks.api.etags import PreconditionRequired, if_match
from missed_checks.errors import (
    Conflict,
    Forbidden,
    InvalidInput,
    MissedChecksError,
    NotFound,
    PreconditionFailed,
    describe,
)
from missed_checks.paging import MAX_PAGE
from missed_checks.performed_checks.recording import ChecksRefused, IdempotencyConflict, Refusal

PROBLEM_JSON = "application/problem+json"
PROBLEM_TYPES = "https://github.com/missed-checks/missed-checks/blob/main/docs/http-api.md#errors"
MAX_BODY_BYTES = 256 * 1024
"""Larger bodies are refused with 413 (a batch of :data:`MAX_BATCH` checks is far smaller)."""
MAX_BATCH = 500
"""Checks in one batch request; more is 413 (split the batch)."""
MAX_JSON_DEPTH = 8
"""Arrays and objects nested in a body, at most (a batch of checks is 3 deep)."""
_NO_BODY = object()
_SIGNIFICANT = re.compile(r'[\\"\[\]{}]')
"""What the depth scan looks at: quotes and backslashes (strings) and brackets."""
_BODY = "missed_checks.body"
"""The request's parsed body in the resolver's context (read once, by the edge)."""


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


def json_body(app: BaseRouter) -> Any:
    """The request's JSON body (read by the edge, :func:`read_body`); 400 naming ``body`` when it is
    missing."""
    if _BODY not in app.context:
        app.context[_BODY] = read_body(app.current_event.raw_event)
    body = app.context[_BODY]
    if body is _NO_BODY:
        raise InvalidInput("body", "the request needs a JSON body")
    return body


def read_body(event: Mapping[str, Any]) -> Any:
    """The body of an API Gateway event as JSON (``_NO_BODY`` when there is none), or the refusal:
    413 when larger than :data:`MAX_BODY_BYTES`, 400 naming ``body`` when it is not base64 as
    announced, not UTF-8, not JSON, too deep, has a member twice or a number or text JSON cannot
    carry unchanged."""
    raw = event.get("body")
    if raw is None or raw == "":
        return _NO_BODY
    if not isinstance(raw, str):
        raise InvalidInput("body", "is not text: send a JSON document")
    data: bytes
    if event.get("isBase64Encoded"):
        if len(raw) > (MAX_BODY_BYTES * 4) // 3 + 4:
            raise TooLarge("body", f"the body is larger than {MAX_BODY_BYTES // 1024} KiB: send fewer checks per "
                                   "request")
        try:
            data = base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError):
            raise InvalidInput("body", "is marked base64 but is not: send a JSON document") from None
    else:
        if len(raw) > MAX_BODY_BYTES:
            raise TooLarge("body", f"the body is larger than {MAX_BODY_BYTES // 1024} KiB: send fewer checks per "
                                   "request")
        try:
            data = raw.encode("utf-8")
        except UnicodeEncodeError as error:
            raise InvalidInput("body", f"is not Unicode text ({error.reason} at offset {error.start}): send "
                                       "UTF-8 JSON") from None
    if len(data) > MAX_BODY_BYTES:
        raise TooLarge("body", f"the body is larger than {MAX_BODY_BYTES // 1024} KiB: send fewer checks per request")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InvalidInput("body", f"is not UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start}): send "
                                   "the JSON document as UTF-8") from None
    if not text.strip():
        return _NO_BODY
    _depth_of_text(text)
    try:
        document = json.loads(text, object_pairs_hook=_unique_members, parse_constant=_no_constant,
                              parse_float=_finite)
    except RecursionError:
        raise InvalidInput("body", f"is nested deeper than {MAX_JSON_DEPTH} levels: send a flat document") from None
    except ValueError as error:
        raise InvalidInput("body", f"is not JSON ({error}): send a JSON document") from None
    _check_text(document)
    return document


def _depth_of_text(text: str) -> None:
    """Refuse JSON nested deeper than :data:`MAX_JSON_DEPTH` before parsing it (a parser recurses
    once per level: 100,000 levels exhaust it). Brackets inside strings do not count."""
    depth = 0
    in_string = False
    escaped_until = -1  # one scan, linear in the body (a string regex went quadratic on `"\"\"\"...`)
    for match in _SIGNIFICANT.finditer(text):
        at, char = match.start(), match.group()
        if at < escaped_until:
            continue
        if in_string:
            if char == "\\":
                escaped_until = at + 2
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise InvalidInput("body", f"is nested deeper than {MAX_JSON_DEPTH} levels: send a flat document")
        elif char in "]}":
            depth -= 1


def _unique_members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document: dict[str, Any] = {}
    for name, value in pairs:
        if not name:
            raise InvalidInput("body", "has a member with an empty name: no field of the API has one")
        if name in document:
            raise InvalidInput(name, "is given twice in one object: give each field once")
        document[name] = value
    return document


def _no_constant(name: str) -> Any:
    raise InvalidInput("body", f"{name} is not a JSON number: send finite numbers only")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise InvalidInput("body", f"{text[:40]} is too large a number for JSON: send finite numbers only")
    return value


def _check_text(document: Any) -> None:
    """Every string of the document (member names too) is Unicode that UTF-8 can carry: a JSON
    escape may name half a surrogate pair (``"\\ud800"``), which no table or answer can hold."""
    pending = [document]
    while pending:
        value = pending.pop()
        texts: Iterable[Any] = ()
        if isinstance(value, dict):
            texts = value
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
        elif isinstance(value, str):
            texts = (value,)
        for text in texts:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidInput("body", "holds text that is not Unicode (a lone surrogate escape such as "
                                           "\\ud800): send UTF-8 text") from None


def fields(body: object, allowed: Iterable[str], *, what: str) -> Mapping[str, Any]:
    """``body`` as an object with no member but ``allowed`` (a closed schema); 400 naming the first
    unknown member, or ``body`` when it is not an object."""
    names = tuple(allowed)
    if not isinstance(body, dict):
        raise InvalidInput("body", f"is {describe(body)}: send {what}, an object with {', '.join(names)}")
    unknown = sorted(str(name) for name in body if name not in names)
    if unknown:
        raise InvalidInput(unknown[0], f"unknown field(s) {', '.join(unknown)}: {what} has only {', '.join(names)}")
    return body


def query_parameters(app: BaseRouter, *names: str) -> dict[str, str]:
    """The request's query parameters, each one the route takes (``names``); 400 naming the first
    parameter the route does not take (it would be silently ignored)."""
    given = app.current_event.query_string_parameters or {}
    unknown = sorted(str(name) for name in given if name not in names)
    if unknown:
        takes = ", ".join(names) if names else "none"
        if not unknown[0]:
            raise InvalidInput("query", f"has a parameter without a name: {app.current_event.path} takes {takes}")
        raise InvalidInput(unknown[0], f"is not a query parameter of {app.current_event.path}: it takes {takes}")
    return {str(name): value for name, value in given.items()}


def _edge(app: APIGatewayHttpResolver, next_middleware: Callable[[APIGatewayHttpResolver], Response[Any]]
          ) -> Response[Any]:
    """Before every route: the body is read (and refused when it cannot be kept); a ``GET`` takes none."""
    body = read_body(app.current_event.raw_event)
    if body is not _NO_BODY and app.current_event.request_context.http.method.upper() == "GET":
        raise InvalidInput("body", "a GET request takes no body: send the parameters in the query string")
    app.context[_BODY] = body
    return next_middleware(app)


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


def forbidden(error: Forbidden) -> Response[str]:
    """403: the caller's role at the object's site does not allow this (a caller with no role there
    gets 404 from the use case instead: another site's objects are never confirmed)."""
    return problem(HTTPStatus.FORBIDDEN, "Forbidden", str(error))


def precondition_failed(error: PreconditionFailed) -> Response[str]:
    """412: the object changed since the ETag the edit sent; the problem names the current one
    (``current_etag``, also the ``ETag`` header) so that the caller can read it again and redo the edit."""
    answer = problem(HTTPStatus.PRECONDITION_FAILED, "Precondition failed", str(error), field="If-Match",
                     extra={"current_etag": error.current_etag})
    if error.current_etag is not None:
        answer.headers["ETag"] = error.current_etag
    return answer


def precondition_required(error: PreconditionRequired) -> Response[str]:
    """428: an edit without ``If-Match``."""
    return problem(HTTPStatus.PRECONDITION_REQUIRED, "Precondition required", str(error), field=error.field)


def install_problems(app: APIGatewayHttpResolver, *, not_found_errors: tuple[type[Exception], ...] = (),
                     conflict_errors: tuple[type[Exception], ...] = ()) -> None:
    """Every refusal of the use cases as a problem document with its status: the domain's
    :class:`~missed_checks.errors.NotFound` 404, :class:`~missed_checks.errors.Conflict` 409,
    :class:`~missed_checks.errors.Forbidden` 403, :class:`~missed_checks.errors.PreconditionFailed` 412
    and :class:`~missed_checks.api.etags.PreconditionRequired` 428 always; ``not_found_errors`` and
    ``conflict_errors``: other errors that mean 404 and 409 (a function names them)."""
    app.exception_handler(ChecksRefused)(refused)
    app.exception_handler(InvalidInput)(invalid)
    app.exception_handler(IdempotencyConflict)(key_reused)
    app.exception_handler(TooLarge)(too_large)
    app.exception_handler(Forbidden)(forbidden)
    app.exception_handler(PreconditionFailed)(precondition_failed)
    app.exception_handler(PreconditionRequired)(precondition_required)
    app.use([_edge])
    app.exception_handler([Conflict, *conflict_errors])(conflict)
    app.exception_handler([NotFound, *not_found_errors])(not_found)

    def no_route(_error: Exception) -> Response[str]:
        event = app.current_event
        return problem(HTTPStatus.NOT_FOUND, "Not found",
                       f"no route {event.request_context.http.method} {event.path}: see the OpenAPI document "
                       "openapi/missed-checks.yaml")

    app.not_found(no_route)


# -- paging (#31): every management list answers {"items": [...], "next_cursor": ...} ---------------
DEFAULT_PAGE = 100
"""Items in a page of a management list when ``limit`` is not given."""


@dataclass(frozen=True)
class PageQuery:
    """A list request: its filters (what a cursor is bound to), where its page starts (after
    ``position``, a key of the list; None: the first page) and how many items it may hold."""

    filters: Mapping[str, str | None]
    position: str | None
    limit: int


def page_query(app: BaseRouter, *filters: str, default: int = DEFAULT_PAGE) -> PageQuery:
    """The request's filters (each query parameter in ``filters``; any other but ``limit`` and
    ``cursor`` is refused), its page size (:func:`~missed_checks.api.parameters.page_size`, at most
    :data:`missed_checks.paging.MAX_PAGE`) and its position (:func:`~missed_checks.api.parameters.cursor`:
    400 naming ``cursor`` when it was edited or written for other filters)."""
    given = query_parameters(app, *filters, "limit", "cursor")
    chosen = {name: given.get(name) for name in filters}
    limit = parameters.page_size(given.get("limit"), default=default, maximum=MAX_PAGE)
    position = parameters.cursor(given.get("cursor"), chosen)
    if position is None:
        return PageQuery(chosen, None, limit)
    after = position.get("after") if isinstance(position, dict) else None
    if not isinstance(after, str) or not after:
        raise InvalidInput("cursor", "is not a cursor of this list: pass next_cursor exactly as the previous page "
                                     "answered it")
    return PageQuery(chosen, after, limit)


def page_answer(items: Iterable[Mapping[str, Any]], next_position: str | None, query: PageQuery) -> dict[str, Any]:
    """A page as the API answers it: its items and ``next_cursor`` (None on the last page)."""
    cursor = None if next_position is None else parameters.next_cursor({"after": next_position}, query.filters)
    return {"items": list(items), "next_cursor": cursor}


# -- a write's request (#31) ---------------------------------------------------------------------------
def write_body(app: BaseRouter, allowed: Iterable[str], *, what: str) -> Mapping[str, Any]:
    """A create's request: no query parameter, a closed JSON object body (:func:`fields`)."""
    query_parameters(app)
    return fields(json_body(app), allowed, what=what)


def edit_body(app: BaseRouter, allowed: Iterable[str], *, what: str) -> tuple[int | None, Mapping[str, Any]]:
    """An edit's request: no query parameter, the revision its ``If-Match`` names (428 without it,
    None for ``*``: :func:`missed_checks.api.etags.if_match`), then its closed JSON object body."""
    query_parameters(app)
    revision = if_match(app)
    return revision, fields(json_body(app), allowed, what=what)
