"""The management API's readiness route (#33): ``GET /sites/{site_id}/readiness``, the stored readiness
of each piece of the site's equipment (what was last announced: state, since, reason, its change's
sequence), by equipment id, a page at a time (``read`` at the site; another site 404). Thin: the rule
is :func:`missed_checks.readiness.listing.site_readiness`'s, ``equipment readiness --site``'s too. An
equipment's live readiness is on its status route (``GET /equipment/{equipment_id}/status``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks.api import http_api
from missed_checks.api.routes.context import caller, table
from missed_checks.readiness.listing import site_readiness

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated


@router.get("/sites/<site_id>/readiness")
def list_readiness(site_id: str) -> dict[str, Any]:
    query = http_api.page_query(router)
    page = site_readiness(table(), unquote(site_id), caller=caller(router), limit=query.limit,
                          cursor=query.position)
    return http_api.page_answer((record.to_dict() for record in page.items), page.next_position, query)
