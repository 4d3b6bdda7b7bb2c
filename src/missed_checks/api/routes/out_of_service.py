"""The management API's out-of-service routes (#31): ``GET /equipment/{equipment_id}/out-of-service``
(its periods, past and planned, by ``from``; ``read_records`` at the equipment's site), ``POST
/equipment/{equipment_id}/out-of-service`` (record a period; ``supervise``) and ``POST
/equipment/{equipment_id}/back-in-service`` (end the period in effect at ``at`` early; ``supervise``).
Thin: the rules are :mod:`missed_checks.equipment.taking_out_of_service`'s, the ``equipment
out-of-service`` commands' too; the equipment's site is the registry's."""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks import clock
from missed_checks.api import http_api, parameters
from missed_checks.api.routes.context import caller, table
from missed_checks.equipment import taking_out_of_service as periods
from missed_checks.errors import InvalidInput
from missed_checks.paging import page_after
from missed_checks.timefmt import to_utc_iso

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated

PERIOD_FIELDS = ("from", "to", "reason")
BACK_FIELDS = ("at",)


def _optional_body() -> Any:
    """The request's JSON body, ``{}`` when it has none (every field has a default)."""
    try:
        return http_api.json_body(router)
    except InvalidInput as error:
        if error.field != "body":
            raise
        return {}


@router.get("/equipment/<equipment_id>/out-of-service")
def list_periods(equipment_id: str) -> dict[str, Any]:
    query = http_api.page_query(router)
    found = periods.periods_of(table(), caller(router), unquote(equipment_id))
    page = page_after(found, lambda p: to_utc_iso(p.start), query.position, query.limit)
    return http_api.page_answer((p.to_dict() for p in page.items), page.next_position, query)


@router.post("/equipment/<equipment_id>/out-of-service")
def take_out_of_service(equipment_id: str) -> Response[str]:
    """201 with the period; 200 when the same period was on record already (that first record)."""
    http_api.query_parameters(router)
    body = http_api.fields(http_api.json_body(router), PERIOD_FIELDS, what="an out-of-service period")
    now = clock.now()
    start = now if body.get("from") is None else parameters.instant(body["from"], "from")
    end = None if body.get("to") is None else parameters.instant(body["to"], "to")
    recorded = periods.take_out_of_service(table(), caller(router), unquote(equipment_id), start, end,
                                           reason=body.get("reason"), now=now)
    document = {**recorded.period.to_dict(), "action": "recorded" if recorded.written else "unchanged"}
    return Response(status_code=HTTPStatus.CREATED if recorded.written else HTTPStatus.OK,
                    content_type="application/json", body=json.dumps(document))


@router.post("/equipment/<equipment_id>/back-in-service")
def back_in_service(equipment_id: str) -> dict[str, Any]:
    http_api.query_parameters(router)
    body = http_api.fields(_optional_body(), BACK_FIELDS, what="a return to service")
    now = clock.now()
    at = now if body.get("at") is None else parameters.instant(body["at"], "at")
    return periods.back_in_service(table(), caller(router), unquote(equipment_id), at, now=now).to_dict()
