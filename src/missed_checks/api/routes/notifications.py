"""The management API's notification log route (#31): ``GET /notifications?from=&to=`` (who was told
what and when, ``read_records`` at the checklists' sites; ``checklist_id``, ``kind`` and ``site_id``
narrow it), a page at a time (:mod:`missed_checks.notifications.listing`, as ``notifications list``)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks.api import http_api, parameters
from missed_checks.api.routes.context import caller, table
from missed_checks.notifications import listing
from missed_checks.paging import page_after

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated

MAX_RANGE_DAYS = 366


@router.get("/notifications")
def list_notifications() -> dict[str, Any]:
    query = http_api.page_query(router, "from", "to", "checklist_id", "kind", "site_id")
    start = parameters.instant(query.filters["from"], "from")
    end = parameters.instant(query.filters["to"], "to")
    parameters.time_range(start, end, max_days=MAX_RANGE_DAYS)
    rows = listing.list_notifications(table(), caller(router), start, end, checklist_id=query.filters["checklist_id"],
                                      kind=query.filters["kind"], site_id=query.filters["site_id"])
    page = page_after(rows, lambda row: f"{row['claimed_at']}#{row['notification_id']}", query.position, query.limit)
    return http_api.page_answer(page.items, page.next_position, query)
