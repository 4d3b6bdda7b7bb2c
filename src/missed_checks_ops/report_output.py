"""The fleet report written out: a table for people, CSV, JSON or one HTML file.

``missed-checks report`` and the local runs (``local demo/run --report``) both print through
:func:`write_report`, so a demo shows exactly what the product's report says.
"""

from __future__ import annotations

import sys
from datetime import UTC, tzinfo
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table

from missed_checks.reporting.fleet_report import Report
from missed_checks.reporting.report import OUTCOMES, ReportRow, why_no_compliance
from missed_checks.reporting.report_formats import json_text, write_csv
from missed_checks.timefmt import to_utc_iso

FORMATS = ("table", "json", "csv", "html")

OUTCOME_LABELS = {"on_time": "on time", "late": "late", "missed": "missed", "recorded_late": "recorded late",
                  "dismissed": "dismissed", "excused": "excused", "pending": "pending"}
"""How people read each of :data:`missed_checks.reporting.report.OUTCOMES` (table and HTML)."""

DEFINITION = ("expected = on time + late + missed + recorded late + dismissed (judged windows); recorded late = "
              "judged missed, then a check done in the window was recorded; excused = out of service; pending = "
              "closed windows the evaluation has not reached yet; compliance = (on time + late) / (on time + late + "
              "missed + recorded late), dismissed and excused left out")


def write_report(report: Report, fmt: str, out: TextIO, *, zone: tzinfo = UTC, zone_name: str = "UTC",
                 title: str | None = None, subtitle: str = "", console: Console | None = None) -> None:
    """Write ``report`` as ``fmt`` (one of :data:`FORMATS`) to ``out``. ``html`` needs a report
    built with ``detail``; ``console`` (table only) prints with colour on a terminal."""
    if fmt == "json":
        out.write(json_text(report))
    elif fmt == "csv":
        write_csv(report, out)
    elif fmt == "html":
        from missed_checks_ops.html_report import render_html  # deferred: Jinja2, only for --format html

        if title:
            out.write(render_html(report, zone=zone, zone_name=zone_name, subtitle=subtitle, title=title))
        else:
            out.write(render_html(report, zone=zone, zone_name=zone_name, subtitle=subtitle))
    elif fmt == "table":
        print_table(report, out, console=console)
    else:
        raise ValueError(f"unknown report format {fmt!r}; one of {', '.join(FORMATS)}")


def pct(row: ReportRow) -> str:
    value = row.compliance
    return "-" if value is None else f"{value:.1f}%"


def print_table(report: Report, out: Any, *, console: Console | None = None) -> None:
    """The rows and the fleet total; ``console`` when printing to a terminal, else plain text on
    ``out``, wide enough that no column is squeezed."""
    target = console or Console(file=out, highlight=False, no_color=True, width=200)
    view = Table("checklist", "equipment", "expected", *(OUTCOME_LABELS[name] for name in OUTCOMES), "compliance",
                 title=f"Checks from {to_utc_iso(report.start)} to {to_utc_iso(report.end)} "
                       f"(as of {to_utc_iso(report.as_of)})",
                 show_footer=True)
    for column in list(view.columns)[2:]:
        column.justify = "right"
    for row in report.rows:
        compliance = row.compliance
        style = None if compliance is None else ("red" if compliance < 90 else "green" if compliance >= 99 else None)
        view.add_row(row.checklist_id, row.equipment_id, str(row.expected),
                     *(str(getattr(row, name)) for name in OUTCOMES), pct(row), style=style)
    fleet = report.total
    footers = ["fleet total", f"{len(report.rows)} rows", fleet.expected, *(getattr(fleet, name) for name in OUTCOMES),
               pct(fleet)]
    for column, footer in zip(view.columns, footers, strict=True):
        column.footer = str(footer)
    target.print(view)
    reason = why_no_compliance(fleet)
    if reason is not None:  # the footer's "-", in words
        target.print(f"No compliance figure: {reason}.")
    target.print(DEFINITION, style="dim")


def stdout_console(out: Any) -> Console | None:
    """The CLI's terminal console when ``out`` is a terminal's stdout (colours), else None."""
    from missed_checks_ops.cli.common import console  # deferred: only on a terminal; ops modules do not load the CLI

    return console() if out is sys.stdout and console().is_terminal else None
