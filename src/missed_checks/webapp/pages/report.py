"""The Report page (#32): ``GET /report?site=&from=&to=`` shows the fleet report of the person's sites (one
site, when chosen) for the days ``from`` to ``to`` (both included, in the site's zone: without a site,
the zone all the person's sites share, else UTC; the last four weeks up to today when not given): the
compliance figures, the weekly charts, the heatmap and the lists of the operator's HTML report, the
same sections (:mod:`missed_checks.reporting.report_html`). ``GET /report.csv`` downloads the same
range's rows as ``missed-checks report --format csv`` and ``GET /report`` of the API with ``format=csv``
write them (:func:`missed_checks.reporting.report_formats.csv_text`); ``GET /report-findings.csv`` what the
range's checks found (#33: failed items per checklist and equipment,
:func:`missed_checks.reporting.report_formats.findings_csv_text`), which the page's "What the checks
found" section shows with the defects open at the range's end and the time to resolve. ``GET /static/report.css``: the
sections' stylesheet.

Thin: which checklists' rows the person reads is :func:`missed_checks.reporting.reading.report_for`,
the use case ``GET /report`` of the API calls (``read_records`` at the checklist's site: another
site is a 404 page, a role without the action, such as an operator's, a 403 page). Bounded as that
route is: a range of at most :data:`MAX_RANGE_DAYS` days, building stops after :data:`REPORT_SECONDS`,
and a page larger than a Lambda answer can be is refused; each says how to get the report instead,
next to the range's ``to``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks import clock
from missed_checks.errors import InvalidInput, shorten
from missed_checks.reporting.fleet_report import Report
from missed_checks.reporting.reading import report_for
from missed_checks.reporting.report_formats import csv_text, findings_csv_text
from missed_checks.reporting.report_html import render_sections, report_context, report_css
from missed_checks.sites.site import validate_site_id
from missed_checks.webapp.context import resolver, table
from missed_checks.webapp.pages.missed import day_range, zone_for
from missed_checks.webapp.rendering import SECURITY_HEADERS, page
from missed_checks.webapp.sessions import Person, signed_in

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated

QUERY = ("site", "from", "to")
DEFAULT_DAYS = 28
"""Without ``from``: the four weeks up to today."""
MAX_RANGE_DAYS = 366
"""A range spans at most this many days (as ``GET /report`` of the API)."""
REPORT_SECONDS = 20.0
"""Building the report stops after this long (checked after each checklist is counted): API Gateway
waits 30 s for the page."""
MAX_ANSWER_BYTES = 5_500_000
"""A Lambda answer to API Gateway holds at most 6 MB."""


@dataclass(frozen=True)
class Range:
    """The page's query as given (the form shows it back) and as read: ``[start, end)``, midnights in ``zone``."""

    given: Mapping[str, str]
    zone: str
    start: datetime
    end: datetime
    site: str | None = None
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def query(self) -> str:
        """The query of this range (for the CSV link)."""
        return urlencode({name: value for name, value in self.given.items() if value})


def read_range(person: Person, given: Mapping[str, str], now: datetime) -> Range:
    """The range of ``given`` (a query), each wrong parameter refused next to its field (``errors``),
    an unknown one at the top of the form."""
    errors: dict[str, str] = {}
    unknown = sorted(set(given) - set(QUERY))
    if unknown:
        errors["_form"] = f"{shorten(unknown[0])} is not a parameter of this page: use the form's fields"
    site: str | None = None
    if (given.get("site") or "").strip():
        try:
            site = validate_site_id(given["site"].strip(), "site")
        except InvalidInput as error:
            errors["site"] = error.message
    zone = zone_for(person, site)
    first, last, start, end = day_range(given, zone, now, errors, default_days=DEFAULT_DAYS, max_days=MAX_RANGE_DAYS)
    shown = {"site": site or "", "from": first.isoformat(), "to": last.isoformat()}
    return Range(given=shown, zone=zone, start=start, end=end, site=site, errors=errors)


def _within(seconds: float) -> Callable[[str], None]:
    """A report's progress that gives up after ``seconds``, saying how to get the report."""
    deadline = time.monotonic() + seconds

    def progress(_counted: str) -> None:
        if time.monotonic() > deadline:
            raise InvalidInput("to", f"the report takes longer than a page can wait ({seconds:.0f} s): ask for a "
                                     "shorter range or one site, or download it as CSV")

    return progress


def _build(person: Person, chosen: Range, *, detail: bool) -> Report:
    return report_for(table(), person.caller, chosen.start, chosen.end, now=clock.now(), site_id=chosen.site,
                      detail=detail, progress=_within(REPORT_SECONDS))


def _query() -> dict[str, str]:
    return dict(resolver(router).current_event.query_string_parameters or {})


def report_page(person: Person, chosen: Range) -> Response[str]:
    """The page: the range's form, and the report's sections when the range could be read."""
    context: dict[str, Any] = {}
    errors = dict(chosen.errors)
    if not errors:
        try:
            built = _build(person, chosen, detail=True)
            context = report_context(built, zone=ZoneInfo(chosen.zone))
            context["sections"] = render_sections(context)
        except InvalidInput as error:
            errors[error.field if error.field in QUERY else "_form"] = error.message
            context = {}
    answer = page(router, "report.html.j2", title="Report", status=400 if errors else 200, errors=errors,
                  chosen=chosen, zone=chosen.zone, sites=person.sites, report=context, max_days=MAX_RANGE_DAYS)
    if len(str(answer.body).encode("utf-8")) > MAX_ANSWER_BYTES:
        errors = {"to": "the report is larger than a page of this app can be: ask for a shorter range or one "
                        "site, or download it as CSV"}
        return page(router, "report.html.j2", title="Report", status=400, errors=errors, chosen=chosen,
                    zone=chosen.zone, sites=person.sites, report={}, max_days=MAX_RANGE_DAYS)
    return answer


@router.get("/report")
def show_report() -> Response[str]:
    person = signed_in(router)
    return report_page(person, read_range(person, _query(), clock.now()))


def _download(kind: str, text: Callable[[Report], str], *, detail: bool) -> Response[str]:
    """The range's report written by ``text`` as CSV (an attachment named by ``kind``); a range that
    cannot be read is an error page."""
    person = signed_in(router)
    chosen = read_range(person, _query(), clock.now())
    for name, message in chosen.errors.items():
        raise InvalidInput(name, message)
    body = text(_build(person, chosen, detail=detail))
    if len(body.encode("utf-8")) > MAX_ANSWER_BYTES:
        raise InvalidInput("to", "the report is larger than an answer of this app can be: ask for a shorter range, "
                                 "or run missed-checks report, which has no such limit")
    name = f"missed-checks-{kind}-{chosen.given['site'] or 'all'}-{chosen.given['from']}-{chosen.given['to']}.csv"
    return Response(status_code=200, content_type="text/csv; charset=utf-8", body=body,
                    headers={**SECURITY_HEADERS, "Content-Disposition": f'attachment; filename="{name}"'})


@router.get("/report.csv")
def download_report() -> Response[str]:
    """The range's rows as CSV (an attachment); a range that cannot be read is an error page."""
    return _download("report", csv_text, detail=False)


@router.get("/report-findings.csv")
def download_findings() -> Response[str]:
    """What the range's checks found as CSV (#33; an attachment); a range that cannot be read is an error page."""
    return _download("findings", findings_csv_text, detail=True)


@router.get("/static/report.css")
def report_stylesheet() -> Response[str]:
    """The report sections' stylesheet (no session needed, as every static file)."""
    return Response(status_code=200, content_type="text/css; charset=utf-8", body=str(report_css()),
                    headers={**SECURITY_HEADERS, "Cache-Control": "public, max-age=300"})

