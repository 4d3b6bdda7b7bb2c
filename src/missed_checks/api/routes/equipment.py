"""The management API's equipment registry routes (#31): ``/equipment`` (list the caller's sites',
register) and one piece of equipment (read with its moves, edit or move, retire). Thin: the body,
the query and ``If-Match`` are read here; the rules are :mod:`missed_checks.equipment.registering`'s
(``manage`` at its site, at both for a move; ``read`` to see it; another site's equipment is 404).

A move or a retirement ends the equipment's open assignments (to the old site's checklists, or to
every checklist) at ``at``; the answer names the checklists whose assignment it ended
(``ended_assignments``). Equipment's status is ``GET /equipment/{equipment_id}/status``
(``ApiStatusFunction``); its out-of-service periods are :mod:`.out_of_service`'s."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any
from urllib.parse import quote, unquote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks import clock
from missed_checks.api import etags, http_api, parameters
from missed_checks.api.routes.context import caller, resolver, table
from missed_checks.equipment import registering
from missed_checks.equipment.registration import RegisteredEquipment

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated
REGISTER_FIELDS = ("equipment_id", "name", "kind", "site_id", "attributes")
EDIT_FIELDS = ("name", "kind", "attributes", "site_id", "at")


def _tagged(equipment: RegisteredEquipment, status: int = HTTPStatus.OK, *, created: bool = False,
            ended: tuple[str, ...] | None = None) -> Response[str]:
    document: dict[str, Any] = equipment.to_dict()
    if ended is not None:
        document["ended_assignments"] = list(ended)
    location = f"/equipment/{quote(equipment.equipment_id, safe='')}" if created else None
    return etags.tagged(document, equipment.revision, status=status, location=location)


@router.get("/equipment")
def list_equipment() -> dict[str, Any]:
    query = http_api.page_query(resolver(router), "site_id")
    page = registering.list_equipment(table(), caller(router), query.filters["site_id"], query.position, query.limit)
    return http_api.page_answer((equipment.to_dict() for equipment in page.items), page.next_position, query)


@router.post("/equipment")
def register_equipment() -> Response[str]:
    body = http_api.write_body(resolver(router), REGISTER_FIELDS, what="equipment to register")
    equipment = registering.register_equipment(
        table(), caller(router), body.get("equipment_id"), name=body.get("name"), kind=body.get("kind"),
        site_id=body.get("site_id"), attributes=body.get("attributes"), now=clock.now())
    return _tagged(equipment, HTTPStatus.CREATED, created=True)


@router.get("/equipment/<equipment_id>")
def get_equipment(equipment_id: str) -> Response[str]:
    http_api.query_parameters(resolver(router))
    return _tagged(registering.get_equipment(table(), caller(router), unquote(equipment_id)))


@router.put("/equipment/<equipment_id>")
def edit_equipment(equipment_id: str) -> Response[str]:
    if_match, body = http_api.edit_body(resolver(router), EDIT_FIELDS, what="equipment's changes")
    at = None if body.get("at") is None else parameters.instant(body["at"], "at")
    change = registering.edit_equipment(
        table(), caller(router), unquote(equipment_id), if_match, name=body.get("name"), kind=body.get("kind"),
        attributes=body.get("attributes"), site_id=body.get("site_id"), at=at, now=clock.now())
    return _tagged(change.equipment, ended=change.ended)


@router.delete("/equipment/<equipment_id>")
def retire_equipment(equipment_id: str) -> Response[str]:
    app = resolver(router)
    given = http_api.query_parameters(app, "at")
    if_match = etags.if_match(app)
    at = None if given.get("at") is None else parameters.instant(given["at"], "at")
    change = registering.retire_equipment(table(), caller(router), unquote(equipment_id), if_match, at=at,
                                          now=clock.now())
    return _tagged(change.equipment, ended=change.ended)
