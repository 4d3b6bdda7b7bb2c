"""The management API's site routes (#31): ``/sites`` (list the caller's, create) and one site
(read, edit). Thin: the body, the query and ``If-Match`` are read here; the rules are
:mod:`missed_checks.sites.saving`'s (creating and editing: admins only; reading: a role at the
site, else 404 as for a site that does not exist). A site is never deleted."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any
from urllib.parse import quote, unquote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks import clock
from missed_checks.api import etags, http_api
from missed_checks.api.routes.context import caller, resolver, table
from missed_checks.errors import InvalidInput
from missed_checks.sites import saving
from missed_checks.sites.site import Site

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated
CREATE_FIELDS = ("site_id", "name", "timezone")
EDIT_FIELDS = ("name", "timezone")


def site_document(site: Site) -> dict[str, Any]:
    return site.to_dict()


def _tagged(site: Site, status: int = HTTPStatus.OK, *, created: bool = False) -> Response[str]:
    location = f"/sites/{quote(site.site_id, safe='')}" if created else None
    return etags.tagged(site_document(site), site.revision, status=status, location=location)


@router.get("/sites")
def list_sites() -> dict[str, Any]:
    query = http_api.page_query(resolver(router))
    page = saving.list_sites(table(), caller(router), query.position, query.limit)
    return http_api.page_answer((site_document(site) for site in page.items), page.next_position, query)


@router.post("/sites")
def create_site() -> Response[str]:
    body = http_api.write_body(resolver(router), CREATE_FIELDS, what="a site")
    site = saving.create_site(table(), caller(router), body.get("site_id"), name=body.get("name"),
                              timezone=body.get("timezone"), now=clock.now())
    return _tagged(site, HTTPStatus.CREATED, created=True)


@router.get("/sites/<site_id>")
def get_site(site_id: str) -> Response[str]:
    http_api.query_parameters(resolver(router))
    return _tagged(saving.get_site(table(), caller(router), unquote(site_id)))


@router.put("/sites/<site_id>")
def edit_site(site_id: str) -> Response[str]:
    if_match, body = http_api.edit_body(resolver(router), EDIT_FIELDS, what="a site's changes")
    if not body:
        raise InvalidInput("body", "changes nothing: give name, timezone or both")
    site = saving.edit_site(table(), caller(router), unquote(site_id), if_match, name=body.get("name"),
                            timezone=body.get("timezone"), now=clock.now())
    return _tagged(site)
