"""ETags and ``If-Match`` of the management API (issue #31): an object a person edits carries a
revision (a whole number the adapter raises on every write); its ETag is that revision quoted,
``"<revision>"`` (strong). A read answers it in the ``ETag`` header; an edit (PUT, DELETE, pause,
resume of an object that exists) must send it back in ``If-Match``:

* no ``If-Match``: 428 (:class:`PreconditionRequired`): an edit that does not say which revision
  it was made on could silently overwrite another person's;
* ``If-Match: *``: whatever the object is now (:data:`ANY`, ``None``), for a tool that means to
  overwrite;
* ``If-Match: "7"``: only if the object is still at revision 7, else 412 with the current ETag
  (:class:`missed_checks.errors.PreconditionFailed`, raised by the conditional write itself, never
  by a read before it);
* anything else (a weak ``W/"7"``, which ``If-Match`` never matches, a list, an unquoted or a
  non-numeric tag): 400 naming ``If-Match``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import BaseRouter

from missed_checks.errors import InvalidInput, MissedChecksError, shorten

ANY = None
"""What :func:`if_match` answers for ``If-Match: *``: the edit applies to whatever revision is current."""
HEADER = "If-Match"
_STRONG = re.compile(r'"(0|[1-9][0-9]{0,17})"')


class PreconditionRequired(MissedChecksError):
    """An edit came without ``If-Match`` (HTTP 428): read the object, then send its ETag."""

    field = HEADER


def etag(revision: int) -> str:
    """The ETag of an object at ``revision``: the number in double quotes (a strong validator)."""
    return f'"{int(revision)}"'


def revision_of(value: str, field: str = HEADER) -> int:
    """The revision an ETag names (``"7"`` -> 7); 400 naming ``field`` when it is not one of ours."""
    text = value.strip()
    if text.startswith("W/"):
        raise InvalidInput(field, f"{shorten(text)} is a weak ETag, which If-Match never matches: send the ETag "
                                  "the object was read with, e.g. \"3\"")
    if "," in text:
        raise InvalidInput(field, f"{shorten(text)} names several ETags: send the one the object was read with")
    found = _STRONG.fullmatch(text)
    if found is None:
        raise InvalidInput(field, f"{shorten(text)} is not an ETag of this API: send the ETag header of the object "
                                  "as it was answered (a number in double quotes, e.g. \"3\"), or * for any revision")
    return int(found.group(1))


def if_match(app: BaseRouter) -> int | None:
    """The revision the request's ``If-Match`` names, :data:`ANY` (None) for ``*``; 428 when the
    header is absent, 400 when it is not an ETag of this API."""
    headers = app.current_event.headers or {}
    value = next((v for name, v in headers.items() if name.lower() == HEADER.lower()), None)
    if value is None or not value.strip():
        raise PreconditionRequired(f"{app.current_event.http_method} {app.current_event.path} "
                                   "changes an object: send If-Match with the ETag you read it with (GET it "
                                   "first), or If-Match: * to change whatever it is now")
    if value.strip() == "*":
        return ANY
    return revision_of(value)


def tagged(body: Mapping[str, Any], revision: int, *, status: int = HTTPStatus.OK,
           location: str | None = None) -> Response[str]:
    """A JSON answer carrying the object's ``ETag`` (and ``Location`` for a created one)."""
    headers = {"ETag": etag(revision)}
    if location is not None:
        headers["Location"] = location
    return Response(status_code=status, content_type="application/json", body=json.dumps(body), headers=headers)
