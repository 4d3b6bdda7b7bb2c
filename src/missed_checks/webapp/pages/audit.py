"""The Audit trail page (#32): ``GET /audit?kind=&id=&cursor=`` shows one object's changes, oldest first,
a page at a time: who changed it, when, what it did (created, changed, deleted) and which fields
changed from what to what.

Thin, as ``GET /audit`` of the API: :func:`missed_checks.audit_trails.reading.trail_of` (``read_management``
at the object's site: an object at a site the person holds no role at is a 404 page, as one never
recorded; a role without the action, such as an operator's or a supervisor's, a 403 page; entries
made while the object was at another site of which they may not read the trail are left out).
A kind or an id that cannot be read is refused next to its field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks.audit_trails import reading
from missed_checks.audit_trails.audit_entry import KINDS, AuditEntry
from missed_checks.errors import InvalidInput, shorten
from missed_checks.webapp.context import resolver, table
from missed_checks.webapp.rendering import errors_of, page
from missed_checks.webapp.sessions import signed_in

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated

PAGE_SIZE = 50
"""Changes a page shows (one Query of the object's trail, and one of its newest entry)."""
QUERY = ("kind", "id", "cursor")
MAX_VALUE_CHARS = 300
"""A field's value is shown up to this long (the API answers it whole)."""


@dataclass(frozen=True)
class Change:
    """One changed field of an entry, its value before and after in words."""

    name: str
    before: str
    after: str


def _shown(value: Any) -> str:
    if value is None:
        return "–"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= MAX_VALUE_CHARS else text[:MAX_VALUE_CHARS - 1] + "…"


def changes_of(entry: AuditEntry) -> list[Change]:
    """The fields ``entry`` changed, each from its value before to its value after."""
    before, after = entry.before or {}, entry.after or {}
    return [Change(name, _shown(before.get(name)), _shown(after.get(name))) for name in entry.changed_fields]


@router.get("/audit")
def show_trail() -> Response[str]:
    person = signed_in(router)
    given: Mapping[str, str] = resolver(router).current_event.query_string_parameters or {}
    errors: dict[str, str] = {}
    unknown = sorted(set(given) - set(QUERY))
    if unknown:
        errors["_form"] = f"{shorten(unknown[0])} is not a parameter of this page: use the form's fields"
    kind, object_id = (given.get("kind") or "").strip(), (given.get("id") or "").strip()
    entries: list[AuditEntry] = []
    next_cursor = None
    if kind and object_id and not errors:
        try:
            found = reading.trail_of(table(), person.caller, kind, object_id, given.get("cursor") or None, PAGE_SIZE)
            entries, next_cursor = list(found.items), found.next_position
        except InvalidInput as error:
            errors.update(errors_of(error, QUERY))
    elif kind or object_id:
        missing = "id" if kind else "kind"
        errors[missing] = ("give the id of the object whose trail you want" if missing == "id"
                           else "choose the kind of object whose trail you want")
    zones = {site.site_id: site.timezone for site in person.sites}
    return page(router, "audit.html.j2", title="Audit trail", status=400 if errors else 200, errors=errors,
                kinds=KINDS, kind=kind, zones=zones, object_id=object_id, entries=entries, changes_of=changes_of,
                asked=bool(kind and object_id and not errors), next_cursor=next_cursor,
                query={"kind": kind, "id": object_id, "cursor": given.get("cursor") or ""})
