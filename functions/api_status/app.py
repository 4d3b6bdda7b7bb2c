"""HTTP API, status route: ``GET /equipment/{equipment_id}/status``, the equipment's current or next
window on every checklist it is assigned to, done / undone / due by, and its open run of misses
(:mod:`missed_checks.equipment.status`); for a caller with roles (#31), on the checklists at their sites;
and its live readiness (#33, docs/readiness.md)."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.utilities.typing import LambdaContext

from missed_checks import clock
from missed_checks.api import http_api
from missed_checks.api.callers import caller_of
from missed_checks.aws import settings
from missed_checks.aws.observability import lambda_handler
from missed_checks.aws.table import EvaluationTable, NotFound
from missed_checks.aws.table.grants import GrantItems
from missed_checks.aws.table.readiness import ReadinessTable
from missed_checks.equipment.assignments import validate_equipment_id
from missed_checks.equipment.status import readiness_for, status_for
from missed_checks.timefmt import to_utc_iso

app = APIGatewayHttpResolver()
http_api.install_problems(app, not_found_errors=(NotFound,))


class StatusTable(EvaluationTable, ReadinessTable, GrantItems):
    """An equipment's status and readiness (#33), and the caller's grant (#31)."""


def table() -> StatusTable:
    """The stack's table (its client is the process's shared one: created once per environment)."""
    return StatusTable(settings.required("TABLE_NAME"))


@app.get("/equipment/<equipment_id>/status")
def equipment_status(equipment_id: str) -> dict[str, Any]:
    http_api.query_parameters(app)
    # API Gateway hands a path parameter over as sent; an id with '/' is sent as %2F (no id holds '%')
    equipment_id = validate_equipment_id(unquote(equipment_id), "equipment_id")
    now = clock.now()
    store = table()
    caller = caller_of(app.current_event.raw_event, store)
    # a caller with roles (#31): only the checklists at their sites; none of them is a 404, as unknown equipment
    statuses = status_for(store, caller, equipment_id, now)
    if not statuses:
        raise NotFound(f"equipment {equipment_id!r} is not assigned to any checklist now: check the id "
                       "(equipment list --checklist ...)")
    readiness = readiness_for(store, caller, equipment_id, now)
    return {"equipment_id": equipment_id, "now": to_utc_iso(now), "checklists": [s.to_dict() for s in statuses],
            "readiness": readiness.to_dict() if readiness is not None else None}


@lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
