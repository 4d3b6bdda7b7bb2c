"""HTTP API, report route: ``GET /report?from=&to=[&checklist=][&equipment=][&tz=][&format=]``, the
fleet report over a range (:func:`missed_checks.fleet_report.build_report`) as JSON, or as CSV with
``Accept: text/csv`` or ``format=csv``: the same rows and columns as ``missed-checks report``
(:mod:`missed_checks.report_formats`). Reads only."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.utilities.typing import LambdaContext

from missed_checks import clock, http_api
from missed_checks.aws import settings
from missed_checks.aws.observability import lambda_handler
from missed_checks.aws.table import ChecklistTable, NotFound
from missed_checks.checklist import validate_checklist_id
from missed_checks.equipment import validate_equipment_id
from missed_checks.errors import InvalidInput
from missed_checks.fleet_report import build_report
from missed_checks.report_formats import csv_text, json_text, period_bound

app = APIGatewayHttpResolver()
http_api.install_problems(app, not_found_errors=(NotFound,))
MAX_RANGE_DAYS = 366
MAX_IDS = 50
"""Checklists or equipment named in one request (``checklist=a,b``); more: ask for the fleet."""
MAX_ANSWER_BYTES = 5_500_000
"""A Lambda answer to API Gateway holds at most 6 MB; a larger report is refused with 413."""
FORMATS = ("json", "csv")


def table() -> ChecklistTable:
    """The stack's table (its client is the process's shared one: created once per environment)."""
    return ChecklistTable(settings.required("TABLE_NAME"))


def _ids(name: str, validate: Any) -> list[str]:
    """``name=a,b`` (payload 2.0 joins a repeated parameter with commas; no id holds a comma)."""
    value = app.current_event.get_query_string_value(name)
    if value is None:
        return []
    ids = [validate(part.strip(), name) for part in value.split(",")]
    if len(ids) > MAX_IDS:
        raise InvalidInput(name, f"{len(ids)} ids; name at most {MAX_IDS}, or leave {name} out for the fleet")
    return list(dict.fromkeys(ids))


def _format() -> str:
    fmt = app.current_event.get_query_string_value("format")
    if fmt is None:
        accept = (app.current_event.headers or {}).get("accept", "")
        return "csv" if "text/csv" in accept.lower() else "json"
    if fmt not in FORMATS:
        raise InvalidInput("format", f"{fmt!r} is not a report format: json or csv")
    return fmt


@app.get("/report")
def report() -> Response[str]:
    zone = app.current_event.get_query_string_value("tz") or "UTC"
    bounds = {}
    for name in ("from", "to"):
        value = app.current_event.get_query_string_value(name)
        if value is None:
            raise InvalidInput(name, f"give the query parameter {name}, a date (YYYY-MM-DD, midnight in tz) "
                                     "or an instant with an offset")
        bounds[name] = period_bound(value, name, zone)
    start, end = bounds["from"], bounds["to"]
    if end <= start:
        raise InvalidInput("to", "must be after from")
    if (end - start).days > MAX_RANGE_DAYS:
        raise InvalidInput("to", f"a range spans at most {MAX_RANGE_DAYS} days: ask for shorter ranges")
    fmt = _format()
    checklists = _ids("checklist", validate_checklist_id)
    equipment = _ids("equipment", validate_equipment_id)
    built = build_report(table(), start, end, now=clock.now(), checklist_ids=checklists, equipment_ids=equipment,
                         detail=fmt == "json")
    body = json_text(built) if fmt == "json" else csv_text(built)
    if len(body.encode("utf-8")) > MAX_ANSWER_BYTES:
        raise http_api.TooLarge("to", "the report is larger than an answer of the API can be: ask for a "
                                      "shorter range, name checklists or equipment, or use format=csv")
    content_type = "application/json" if fmt == "json" else "text/csv; charset=utf-8"
    return Response(status_code=HTTPStatus.OK, content_type=content_type, body=body)


@lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
