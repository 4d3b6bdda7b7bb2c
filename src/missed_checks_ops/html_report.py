"""The fleet report as one self-contained HTML file: inline CSS and SVG, no script, no fetch.

:func:`render_html` takes a :class:`~missed_checks.reporting.fleet_report.Report` built with ``detail``
(its window outcomes); the figures, the charts and the lists are the product's
(:mod:`missed_checks.reporting.report_html`, which the web app's report page shows too), and the
Jinja2 template ``templates/report.html.j2`` makes them one page (autoescaped): its title and
period, the sections, their stylesheet inlined. ``@page { size: A4 }`` and print rules keep sections
and charts whole on paper. Times are in each checklist's zone; the period in the zone the report was
asked in.
"""

from __future__ import annotations

from datetime import UTC, tzinfo
from functools import cache

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from missed_checks.reporting.fleet_report import Report
from missed_checks.reporting.report_html import HEATMAP_ROWS, render_sections, report_context, report_css

__all__ = ["HEATMAP_ROWS", "render_html"]


@cache
def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("missed_checks_ops", "templates"),
        autoescape=select_autoescape(("html", "j2")),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_html(report: Report, *, zone: tzinfo = UTC, zone_name: str = "UTC",
                title: str = "Missed checks: fleet report", subtitle: str = "",
                heatmap_rows: int = HEATMAP_ROWS) -> str:
    """The report as an HTML document (a string). ``zone``/``zone_name``: the zone the period was
    asked in (``--tz``); window times are shown in each checklist's own zone."""
    context = report_context(report, zone=zone, heatmap_rows=heatmap_rows)
    return _environment().get_template("report.html.j2").render(
        title=title, subtitle=subtitle, zone_name=zone_name, period_from=context["period_from"],
        period_to=context["period_to"], as_of=context["as_of"], css=report_css(), sections=render_sections(context))
