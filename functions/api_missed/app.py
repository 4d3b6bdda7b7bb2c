"""HTTP API, missed-check routes: ``GET /missed`` (of a checklist, or of the fleet, over a range, with
their dismissals) and ``POST /missed/dismissals`` (dismiss one; who dismissed it is the caller)."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.utilities.typing import LambdaContext

from missed_checks import clock
from missed_checks.api import http_api, parameters
from missed_checks.aws import settings
from missed_checks.aws.observability import lambda_handler
from missed_checks.aws.table import ChecklistTable, Conflict, NotFound
from missed_checks.checklists.checklist import validate_checklist_id
from missed_checks.equipment.assignments import validate_equipment_id
from missed_checks.errors import InvalidInput
from missed_checks.timefmt import parse_instant, to_utc_iso

app = APIGatewayHttpResolver()
http_api.install_problems(app, not_found_errors=(NotFound,), conflict_errors=(Conflict,))
MISSED_FIELDS = ("checklist_id", "equipment_id", "window_start", "window_end", "judged_at", "dismissal")
MAX_RANGE_DAYS = 366
"""A range spans at most this many days (of 24 hours: its bounds are instants in UTC)."""
DISMISSAL_FIELDS = ("checklist_id", "equipment_id", "window_start", "reason")
"""A dismissal's body, closed (``additionalProperties: false``): who dismissed is the caller, when is now."""
MAX_REASON_CHARS = 1000


def table() -> ChecklistTable:
    """The stack's table (its client is the process's shared one: created once per environment)."""
    return ChecklistTable(settings.required("TABLE_NAME"))


@app.get("/missed")
def list_missed() -> dict[str, Any]:
    given = http_api.query_parameters(app, "from", "to", "checklist_id")
    start, end = parameters.instant(given.get("from"), "from"), parameters.instant(given.get("to"), "to")
    parameters.time_range(start, end, max_days=MAX_RANGE_DAYS)
    checklist = given.get("checklist_id")
    if checklist is not None:
        validate_checklist_id(checklist, "checklist_id")
        items = table().missed_checks_of_checklist(checklist, start, end)
    else:
        items = table().missed_checks_of_fleet(start, end)
    return {"from": to_utc_iso(start), "to": to_utc_iso(end), "checklist_id": checklist,
            "missed": [{name: item.get(name) for name in MISSED_FIELDS} for item in items]}


@app.post("/missed/dismissals")
def dismiss() -> Response[Any]:
    http_api.query_parameters(app)
    body = http_api.fields(http_api.json_body(app), DISMISSAL_FIELDS, what="a dismissal")
    reason = body.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidInput("reason", "give the reason the check was missed, as text")
    if len(reason) > MAX_REASON_CHARS:
        raise InvalidInput("reason", f"keep the reason to {MAX_REASON_CHARS} characters at most")
    checklist_id = validate_checklist_id(body.get("checklist_id"), "checklist_id")
    window_start = parse_instant(body.get("window_start"), "window_start")  # type: ignore[arg-type]
    equipment_id = validate_equipment_id(body.get("equipment_id"), "equipment_id")
    record = table().dismiss_missed_check(checklist_id, window_start, equipment_id, reason=reason,
                                          by=http_api.caller_identity(app.current_event.raw_event), at=clock.now())
    return Response(status_code=HTTPStatus.OK, content_type="application/json",
                    body={name: record.get(name) for name in MISSED_FIELDS})


@lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
