"""HTTP API, report route: ``GET /report?from=&to=[&checklist=][&equipment=][&site_id=][&tz=][&format=]``, the
fleet report over a range (:func:`missed_checks.reporting.fleet_report.build_report`) as JSON, or as CSV with
``Accept: text/csv`` or ``format=csv``: the same rows and columns as ``missed-checks report``
(:mod:`missed_checks.reporting.report_formats`). Reads only. A caller with roles (#31) gets the rows
of the checklists at their sites where they may ``read_records`` (``site_id``: one of them).

One answer, never pages (a report's rows are totals over the whole range: a page of them would not
add up), bounded twice: a report whose answer would pass :data:`MAX_ANSWER_BYTES`, or whose building
takes longer than :data:`REPORT_SECONDS`, is refused with 413 saying how to get it (a shorter range,
named checklists or equipment, CSV, or ``missed-checks report``, which has neither bound)."""

from __future__ import annotations

import time
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.utilities.typing import LambdaContext

from missed_checks import clock
from missed_checks.api import http_api, parameters
from missed_checks.api.callers import caller_of
from missed_checks.aws import settings
from missed_checks.aws.observability import lambda_handler
from missed_checks.aws.table import EvaluationTable, NotFound
from missed_checks.aws.table.grants import GrantItems
from missed_checks.errors import InvalidInput
from missed_checks.reporting.reading import report_for
from missed_checks.reporting.report_formats import csv_text, json_text

app = APIGatewayHttpResolver()
http_api.install_problems(app, not_found_errors=(NotFound,))
MAX_RANGE_DAYS = 366
"""A range spans at most this many calendar days in ``tz``."""
PARAMETERS = ("from", "to", "checklist", "equipment", "site_id", "tz", "format")
MAX_IDS = 50
"""Checklists or equipment named in one request (``checklist=a,b``); more: ask for the fleet."""
MAX_ANSWER_BYTES = 5_500_000
"""A Lambda answer to API Gateway holds at most 6 MB; a larger report is refused with 413."""
FORMATS = ("json", "csv")
REPORT_SECONDS = 20.0
"""Building a report stops after this long, checked after each checklist (or named equipment) is
counted: API Gateway waits 30 s for an answer and cannot be made to wait longer."""


class ReportTable(EvaluationTable, GrantItems):
    """The report's items, and the caller's grant (#31)."""


def table() -> ReportTable:
    """The stack's table (its client is the process's shared one: created once per environment)."""
    return ReportTable(settings.required("TABLE_NAME"))


def _format(given: dict[str, str]) -> str:
    fmt = given.get("format")
    if fmt is None:
        accept = (app.current_event.headers or {}).get("accept", "")
        return "csv" if "text/csv" in accept.lower() else "json"
    return parameters.choice(fmt, "format", FORMATS)


@app.get("/report")
def report() -> Response[str]:
    given = http_api.query_parameters(app, *PARAMETERS)
    zone = parameters.timezone(given.get("tz"), "tz")
    bounds = {}
    for name in ("from", "to"):
        value = given.get(name)
        if value is None:
            raise InvalidInput(name, f"give the query parameter {name}, a date (YYYY-MM-DD, midnight in tz) "
                                     "or an instant with an offset")
        bounds[name] = parameters.period_bound(value, name, zone.key)
    start, end = bounds["from"], bounds["to"]
    parameters.time_range(start, end, max_days=MAX_RANGE_DAYS, zone=zone)
    fmt = _format(given)
    checklists = parameters.id_list(given.get("checklist"), "checklist", "checklist id", MAX_IDS)
    equipment = parameters.id_list(given.get("equipment"), "equipment", "equipment id", MAX_IDS)
    store = table()
    # a caller with roles (#31): the rows of the checklists at their sites where they may read records
    built = report_for(store, caller_of(app.current_event.raw_event, store), start, end, now=clock.now(),
                       site_id=given.get("site_id"), checklist_ids=checklists, equipment_ids=equipment,
                       detail=fmt == "json", progress=_within(time.monotonic() + REPORT_SECONDS))
    body = json_text(built) if fmt == "json" else csv_text(built)
    if len(body.encode("utf-8")) > MAX_ANSWER_BYTES:
        raise http_api.TooLarge("to", "the report is larger than an answer of the API can be: ask for a "
                                      "shorter range, name checklists or equipment, or use format=csv")
    content_type = "application/json" if fmt == "json" else "text/csv; charset=utf-8"
    return Response(status_code=HTTPStatus.OK, content_type=content_type, body=body)


def _within(deadline: float) -> Callable[[str], None]:
    """A report's progress that gives up past ``deadline`` (:func:`time.monotonic`): 413, and how to
    get the report in time."""

    def progress(_counted: str) -> None:
        if time.monotonic() > deadline:
            raise http_api.TooLarge("to", f"the report takes longer than the API can wait ({REPORT_SECONDS:.0f} s "
                                          "of the 30 s API Gateway allows): ask for a shorter range, name checklists "
                                          "or equipment (checklist=, equipment=), or run missed-checks report, "
                                          "which has no such limit")

    return progress


@lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
