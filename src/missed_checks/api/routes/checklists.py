"""The management API's checklist routes (#31): ``/checklists`` (list, create, preview), one
checklist (read, edit, delete, pause, resume) and its equipment (assignments: list, assign,
unassign). Thin: the body and the query are read here; the rules are the use cases the operator's
commands call too (:mod:`missed_checks.checklists.managing`, :mod:`~missed_checks.checklists.previewing`,
:mod:`missed_checks.equipment.assigning`), each scoped by the caller's role at the checklist's site.

An edit (PUT, DELETE, pause, resume) needs ``If-Match`` with the ETag it read (428 without; 412 when
the checklist moved on). Lists answer ``{"items": [...], "next_cursor": ...}``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from http import HTTPStatus
from typing import Any
from urllib.parse import quote, unquote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks import clock
from missed_checks.api import etags, http_api, parameters
from missed_checks.api.routes.context import caller, table
from missed_checks.checklists import managing, previewing
from missed_checks.checklists.checklist import Checklist, validate_checklist_id
from missed_checks.checklists.closure_calendar import validate_closed_on
from missed_checks.checklists.recurrence import Recurrence
from missed_checks.equipment import assigning
from missed_checks.equipment.assignments import Assignment, validate_equipment_id
from missed_checks.errors import InvalidInput, describe
from missed_checks.notifications.notification import NotifySettings
from missed_checks.permissions.authorizing import authorize
from missed_checks.permissions.role import Action
from missed_checks.sites.site import validate_site_id
from missed_checks.timefmt import to_utc_iso

router = Router()  # type: ignore[no-untyped-call]

RULE_FIELDS = ("name", "recurrence", "timezone", "window", "grace", "closed_on", "notify",
               "items", "pre_use", "clear_on_pass")
ITEM_FIELDS = ("items", "pre_use", "clear_on_pass")
"""What a check finds (#33): the items asked, whether the checklist clears equipment before use, and
whether a later passing check resolves its open defects; left out of an edit, the checklist's are kept."""
CREATE_FIELDS = ("id", "site_id", *RULE_FIELDS)
EDIT_FIELDS = RULE_FIELDS
PREVIEW_FIELDS = ("site_id", "recurrence", "timezone", "window", "grace", "closed_on", "windows")
DEFAULT_WINDOWS = 10
ASSIGN_FIELDS = ("equipment", "at")
MAX_ASSIGN = 1000
"""Equipment ids one assignment request may name (the command line takes a file of any size)."""


def checklist_document(checklist: Checklist) -> dict[str, Any]:
    """A checklist as the API answers it: its fields, its site, and schedule-sync's notes."""
    document = checklist.to_dict()
    document["site_id"] = checklist.site_id
    document.update({k: v for k, v in checklist.extra.items() if k in ("schedule", "sync_error")})
    return document


def _tagged(checklist: Checklist, status: int = HTTPStatus.OK, *, created: bool = False) -> Response[str]:
    location = f"/checklists/{quote(checklist.checklist_id, safe='')}" if created else None
    return etags.tagged(checklist_document(checklist), checklist.revision, status=status, location=location)


def _path_id(checklist_id: str) -> str:
    # API Gateway hands a path parameter over as sent; an id with '/' is sent as %2F
    return unquote(checklist_id)


def _text(body: Mapping[str, Any], name: str) -> str | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(name, f"is {describe(value)}, not a string")
    return value


def _spec(body: Mapping[str, Any], checklist_id: str, site_id: str | None) -> tuple[dict[str, Any], Recurrence]:
    """The checklist spec a body gives, its rule validated (and ``notify`` against it)."""
    recurrence = _text(body, "recurrence")
    if not recurrence:
        raise InvalidInput("recurrence", "give the rule as RFC 5545 text (DTSTART and RRULE lines)")
    spec: dict[str, Any] = {"id": checklist_id, "site_id": site_id, "recurrence": recurrence,
                            **{name: _text(body, name) for name in ("name", "timezone", "window", "grace")}}
    if "closed_on" in body:
        spec["closed_on"] = validate_closed_on(body["closed_on"])
    spec = managing.with_site_defaults(table(), spec)
    rule = previewing.validate_rule(recurrence, spec.get("timezone"), spec.get("window"), spec.get("grace"))
    if "notify" in body:
        spec["notify"] = NotifySettings.parse(body["notify"], rule)
    spec.update({name: body[name] for name in ITEM_FIELDS if body.get(name) is not None})
    return spec, rule


@router.get("/checklists")
def list_checklists() -> dict[str, Any]:
    query = http_api.page_query(router, "site_id")
    page = managing.checklists_page(table(), caller(router), query.filters["site_id"], query.position, query.limit)
    return http_api.page_answer((checklist_document(c) for c in page.items), page.next_position, query)


@router.post("/checklists")
def create_checklist() -> Response[str]:
    http_api.query_parameters(router)
    body = http_api.fields(http_api.json_body(router), CREATE_FIELDS, what="a checklist")
    checklist_id = validate_checklist_id(body.get("id"), "id")
    if body.get("site_id") is None:
        raise InvalidInput("site_id", "give the site the checklist belongs to (GET /sites lists yours)")
    who = caller(router)
    site_id = validate_site_id(body["site_id"])
    # before the site is read for its time zone: a site the caller holds no role at is 404 whether it
    # exists or not (the read would answer 400 "there is no site" for a missing one only)
    authorize(who, Action.manage, site_id, what=f"site {site_id!r}")
    spec, _ = _spec(body, checklist_id, site_id)
    written = managing.put_checklist(table(), who, spec, clock.now(), validated=True, create=True)
    return _tagged(written, HTTPStatus.CREATED, created=True)


@router.post("/checklists/preview")
def preview_checklist() -> dict[str, Any]:
    """What a rule would do at a site (``read`` there): writes nothing."""
    http_api.query_parameters(router)
    body = http_api.fields(http_api.json_body(router), PREVIEW_FIELDS, what="a rule to preview")
    who = caller(router)
    site_id = body.get("site_id")
    if site_id is not None:
        authorize(who, Action.read, validate_site_id(site_id), what=f"site {site_id!r}")
    count = body.get("windows", DEFAULT_WINDOWS)
    if isinstance(count, bool) or not isinstance(count, int):
        raise InvalidInput("windows", f"is {describe(count)}, not a whole number")
    spec, rule = _spec(body, "preview", site_id)
    closed = previewing.closures_of(table(), spec.get("closed_on") or (), site_id)
    shown = previewing.preview_at_site(who, site_id, rule.with_closures(closed), clock.now(), count)
    return {"site_id": site_id, "timezone": rule.timezone, **shown.to_detail()}


@router.get("/checklists/<checklist_id>")
def get_checklist(checklist_id: str) -> Response[str]:
    http_api.query_parameters(router)
    return _tagged(managing.get_checklist(table(), caller(router), _path_id(checklist_id)))


@router.put("/checklists/<checklist_id>")
def edit_checklist(checklist_id: str) -> Response[str]:
    http_api.query_parameters(router)
    revision = etags.if_match(router)
    body = http_api.fields(http_api.json_body(router), EDIT_FIELDS, what="a checklist's rule")
    who = caller(router)
    current = managing.get_checklist(table(), who, _path_id(checklist_id), action=Action.manage)
    spec, _ = _spec(body, current.checklist_id, current.site_id)
    written = managing.put_checklist(table(), who, spec, clock.now(), validated=True, if_match=revision,
                                     create=False)
    return _tagged(written)


@router.delete("/checklists/<checklist_id>")
def delete_checklist(checklist_id: str) -> Response[str]:
    http_api.query_parameters(router)
    revision = etags.if_match(router)
    managing.delete_checklist(table(), caller(router), _path_id(checklist_id), if_match=revision)
    return Response(status_code=HTTPStatus.NO_CONTENT, body="")


@router.post("/checklists/<checklist_id>/pause")
def pause_checklist(checklist_id: str) -> Response[str]:
    return _change_status(managing.pause_checklist, checklist_id)


@router.post("/checklists/<checklist_id>/resume")
def resume_checklist(checklist_id: str) -> Response[str]:
    return _change_status(managing.resume_checklist, checklist_id)


def _change_status(change: Callable[..., Checklist], checklist_id: str) -> Response[str]:
    """Pause or resume, with the If-Match the edit names."""
    http_api.query_parameters(router)
    revision = etags.if_match(router)
    return _tagged(change(table(), caller(router), _path_id(checklist_id), clock.now(), if_match=revision))


@router.get("/checklists/<checklist_id>/items")
def get_items(checklist_id: str) -> dict[str, Any]:
    """A revision of the checklist's items (``read``): ``revision=N``, or the current one. A checklist
    that never had items answers revision 0 with none; a revision it never had is 404."""
    query = http_api.query_parameters(router, "revision")
    revision = None if query.get("revision") is None else parameters.whole_number(query["revision"], "revision",
                                                                                   minimum=1)
    checklist_id = _path_id(checklist_id)
    found = managing.checklist_items(table(), caller(router), checklist_id, revision)
    if found is None:
        return {"checklist_id": checklist_id, "revision": 0, "effective_from": None, "items": []}
    return {"checklist_id": checklist_id, **found.to_dict()}


def assignment_document(assignment: Assignment) -> dict[str, Any]:
    return {"equipment_id": assignment.equipment_id, "assigned_at": to_utc_iso(assignment.assigned_at),
            "unassigned_at": to_utc_iso(assignment.unassigned_at) if assignment.unassigned_at else None}


@router.get("/checklists/<checklist_id>/equipment")
def list_equipment(checklist_id: str) -> dict[str, Any]:
    query = http_api.page_query(router)
    page = assigning.assignments_page(table(), caller(router), _path_id(checklist_id), query.position, query.limit)
    return http_api.page_answer((assignment_document(a) for a in page.items), page.next_position, query)


@router.post("/checklists/<checklist_id>/equipment")
def assign_equipment(checklist_id: str) -> dict[str, Any]:
    http_api.query_parameters(router)
    body = http_api.fields(http_api.json_body(router), ASSIGN_FIELDS, what="an assignment")
    ids = body.get("equipment")
    if not isinstance(ids, list) or not ids:
        raise InvalidInput("equipment", f"is {describe(ids)}: give a list of equipment ids")
    if len(ids) > MAX_ASSIGN:
        raise http_api.TooLarge("equipment", f"{len(ids)} equipment ids in one request: send at most {MAX_ASSIGN}")
    equipment = [validate_equipment_id(e, f"equipment[{n}]") for n, e in enumerate(ids)]
    now = clock.now()
    at = now if body.get("at") is None else parameters.instant(body["at"], "at")
    checklist_id = _path_id(checklist_id)
    changed = assigning.change_assignments(table(), table(), caller(router), checklist_id, equipment, at, assign=True)
    return {"checklist_id": checklist_id, "action": "assign", "at": to_utc_iso(at), "requested": len(equipment),
            "changed": changed, "skipped": len(equipment) - changed}


@router.delete("/checklists/<checklist_id>/equipment/<equipment_id>")
def unassign_equipment(checklist_id: str, equipment_id: str) -> dict[str, Any]:
    query = http_api.query_parameters(router, "at")
    equipment = validate_equipment_id(unquote(equipment_id), "equipment_id")
    at = clock.now() if query.get("at") is None else parameters.instant(query["at"], "at")
    checklist_id = _path_id(checklist_id)
    changed = assigning.change_assignments(table(), table(), caller(router), checklist_id, [equipment], at,
                                           assign=False)
    return {"checklist_id": checklist_id, "equipment_id": equipment, "action": "unassign", "at": to_utc_iso(at),
            "changed": changed}
