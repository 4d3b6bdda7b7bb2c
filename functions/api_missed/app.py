"""HTTP API, missed-check routes: ``GET /missed`` (of a checklist, or of the fleet, over a range, with
their dismissals, one page at a time: ``limit`` and ``cursor``) and ``POST /missed/dismissals`` (dismiss
one; who dismissed it is the caller). A caller with roles (#31) reads the missed checks of the
checklists at their sites where they may ``read_records`` (``site_id``: one of them), and dismisses
where they may ``supervise``; another site's checklist is a 404, a role without the action a 403.

A page is bounded three ways, so that no list, however large, outgrows an answer: at most ``limit``
missed checks (:data:`MAX_PAGE`), at most :data:`MAX_PAGE_BYTES` of them as JSON (Lambda answers API
Gateway with 6 MB at most), and at most :data:`PAGE_SECONDS` of reading (API Gateway waits 30 s); a
page cut short by bytes or time still carries ``next_cursor``."""

from __future__ import annotations

import json
import time
from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.utilities.typing import LambdaContext

from missed_checks import clock
from missed_checks.api import http_api, parameters
from missed_checks.api.callers import caller_of
from missed_checks.aws import settings
from missed_checks.aws.observability import lambda_handler
from missed_checks.aws.table import ChecklistTable, Conflict, NotFound
from missed_checks.aws.table.windows import MissedPosition, missed_position, missed_position_of
from missed_checks.checklists.checklist import validate_checklist_id
from missed_checks.equipment.assignments import validate_equipment_id
from missed_checks.evaluation import dismissing, listing
from missed_checks.timefmt import parse_instant, to_utc_iso

app = APIGatewayHttpResolver()
http_api.install_problems(app, not_found_errors=(NotFound,), conflict_errors=(Conflict,))
MISSED_FIELDS = ("checklist_id", "equipment_id", "window_start", "window_end", "judged_at", "dismissal")
MAX_RANGE_DAYS = 366
"""A range spans at most this many days (of 24 hours: its bounds are instants in UTC)."""
DISMISSAL_FIELDS = ("checklist_id", "equipment_id", "window_start", "reason")
"""A dismissal's body, closed (``additionalProperties: false``): who dismissed is the caller, when is now."""
DEFAULT_PAGE = 500
"""Missed checks in a page when ``limit`` is not given."""
MAX_PAGE = 1000
"""The largest ``limit``: 1,000 missed checks are about 250 KB of JSON, their dismissals' reasons at most."""
MAX_PAGE_BYTES = 4_000_000
"""A page's missed checks as JSON stop before this many bytes (a page of long, escaped reasons): the
answer stays well under Lambda's 6 MB."""
PAGE_SECONDS = 10.0
"""A page stops reading after this long (the function may run 29 s, API Gateway waits 30 s)."""


def table() -> ChecklistTable:
    """The stack's table (its client is the process's shared one: created once per environment)."""
    return ChecklistTable(settings.required("TABLE_NAME"))


@app.get("/missed")
def list_missed() -> dict[str, Any]:
    given = http_api.query_parameters(app, "from", "to", "checklist_id", "site_id", "limit", "cursor")
    start, end = parameters.instant(given.get("from"), "from"), parameters.instant(given.get("to"), "to")
    parameters.time_range(start, end, max_days=MAX_RANGE_DAYS)
    checklist = given.get("checklist_id")
    if checklist is not None:
        validate_checklist_id(checklist, "checklist_id")
    limit = parameters.page_size(given.get("limit"), "limit", default=DEFAULT_PAGE, maximum=MAX_PAGE)
    site = given.get("site_id")
    query = {"from": to_utc_iso(start), "to": to_utc_iso(end), "checklist_id": checklist,
             **({"site_id": site} if site is not None else {})}
    state = parameters.cursor(given.get("cursor"), query)
    after = None if state is None else missed_position(state, start, end, checklist)
    store = table()
    # a caller with roles (#31): the missed checks of the checklists at their sites where they may read them
    caller = caller_of(app.current_event.raw_event, store)
    scope = listing.missed_scope(store, caller, checklist, site)
    items, following = store.missed_checks_page(start, end, limit=limit, checklist_id=checklist, after=after,
                                                deadline=time.monotonic() + PAGE_SECONDS)
    rows, following = _bounded(items, following, fleet=checklist is None)
    rows = listing.in_scope(rows, scope)  # a page may come out short: next_cursor goes on where the table's page ended
    return {**query, "missed": rows,
            "next_cursor": None if following is None else parameters.next_cursor(following._asdict(), query)}


def _bounded(items: list[dict[str, Any]], following: MissedPosition | None, *, fleet: bool
             ) -> tuple[list[dict[str, Any]], MissedPosition | None]:
    """The page's rows, cut before they reach :data:`MAX_PAGE_BYTES` of JSON (the next page starts
    after the last row kept), and where the next page starts."""
    rows: list[dict[str, Any]] = []
    size = 0
    for index, item in enumerate(items):
        row = {name: item.get(name) for name in MISSED_FIELDS}
        size += len(json.dumps(row, separators=(",", ":"))) + 1
        if size > MAX_PAGE_BYTES and rows:
            return rows, missed_position_of(items[index - 1], fleet=fleet)
        rows.append(row)
    return rows, following


@app.post("/missed/dismissals")
def dismiss() -> Response[Any]:
    http_api.query_parameters(app)
    body = http_api.fields(http_api.json_body(app), DISMISSAL_FIELDS, what="a dismissal")
    reason = dismissing.validate_reason(body.get("reason"))
    checklist_id = validate_checklist_id(body.get("checklist_id"), "checklist_id")
    window_start = parse_instant(body.get("window_start"), "window_start")  # type: ignore[arg-type]
    equipment_id = validate_equipment_id(body.get("equipment_id"), "equipment_id")
    store = table()  # a caller with roles (#31): supervise at the checklist's site
    record = dismissing.dismiss(store, caller_of(app.current_event.raw_event, store), checklist_id, window_start,
                                equipment_id, reason=reason, at=clock.now())  # by the caller's principal
    return Response(status_code=HTTPStatus.OK, content_type="application/json",
                    body={name: record.get(name) for name in MISSED_FIELDS})


@lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
