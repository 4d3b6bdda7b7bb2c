"""The management API's defect routes (#33): ``GET /defects`` (the caller's sites' defects, filtered by
``site``, ``equipment`` and ``status``, a page at a time; ``read``), ``GET /defects/{defect_id}``
(``read`` at its site, with its ETag) and ``POST /defects/{defect_id}/resolve`` (``{"note"}`` with
``If-Match``; ``supervise`` at the defect's site). Thin: the rules are
:mod:`missed_checks.defects.listing`'s and :mod:`missed_checks.defects.resolving`'s, the ``defect``
commands' too; another site's defect is 404 as a missing one."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks import clock
from missed_checks.api import etags, http_api, parameters
from missed_checks.api.routes.context import caller, table
from missed_checks.defects import listing, resolving
from missed_checks.defects.defect import Defect, DefectStatus

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated

RESOLVE_FIELDS = ("note",)
STATUSES = tuple(status.value for status in DefectStatus)


def _tagged(defect: Defect) -> Response[str]:
    return etags.tagged(defect.to_dict(), defect.revision)


@router.get("/defects")
def list_defects() -> dict[str, Any]:
    query = http_api.page_query(router, "site", "equipment", "status")
    given = query.filters.get("status")
    status = None if given is None else DefectStatus(parameters.choice(given, "status", STATUSES))
    page = listing.list_defects(table(), caller(router), site_id=query.filters["site"],
                                equipment_id=query.filters["equipment"], status=status,
                                position=query.position, limit=query.limit)
    return http_api.page_answer((defect.to_dict() for defect in page.items), page.next_position, query)


@router.get("/defects/<defect_id>")
def get_defect(defect_id: str) -> Response[str]:
    http_api.query_parameters(router)
    return _tagged(listing.get_defect(table(), caller(router), unquote(defect_id)))


@router.post("/defects/<defect_id>/resolve")
def resolve_defect(defect_id: str) -> Response[str]:
    """The defect as resolved, with its new ETag: 428 without ``If-Match``, 412 when it changed since
    (resolved meanwhile by a passing check), 409 when it was resolved already."""
    revision, body = http_api.edit_body(router, RESOLVE_FIELDS, what="a resolution")
    resolved = resolving.resolve_defect(table(), unquote(defect_id), body.get("note"), caller=caller(router),
                                        now=clock.now(), if_match=revision)
    return _tagged(resolved)
