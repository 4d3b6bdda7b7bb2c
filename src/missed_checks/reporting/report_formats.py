"""The fleet report as CSV and JSON: one definition for the ``report`` command
(:mod:`missed_checks_ops.report_output`) and the HTTP API's ``GET /report`` (``functions/api_report``),
so both answer the same rows and columns. What the checks found (#33) has a CSV of its own
(:func:`findings_csv_text`, the web app's ``GET /report-findings.csv``): the rows' columns stay as
they were. Both read the bounds of its range with
:func:`missed_checks.api.parameters.period_bound` and its zone with :func:`missed_checks.identifiers.zone`.

Pure: no AWS call, no file; the report is read by :func:`missed_checks.reporting.fleet_report.build_report`.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from missed_checks.reporting.fleet_report import Report
from missed_checks.reporting.report import COLUMNS


def write_csv(report: Report, out: Any) -> None:
    """The rows and the fleet total (``*``) under a header of :data:`~missed_checks.reporting.report.COLUMNS`;
    an empty cell where a value is None (compliance without a judged window)."""
    writer = csv.writer(out)
    writer.writerow(COLUMNS)
    for row in [*report.rows, report.total]:
        data = row.to_dict()
        writer.writerow(["" if data[c] is None else data[c] for c in COLUMNS])


def csv_text(report: Report) -> str:
    out = io.StringIO(newline="")
    write_csv(report, out)
    return out.getvalue()


def json_text(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=2) + "\n"


FINDINGS_COLUMNS = ("checklist_id", "equipment_id", "checks_performed", "checks_passed", "checks_failed",
                    "checks_critical_failed", "item_id", "label", "critical", "item_failed")
"""The findings CSV's columns: a row's checks, then one of the items they failed."""


def findings_csv_text(report: Report) -> str:
    """What the checks of ``report`` (built with ``detail``; none: nothing) found, as CSV under
    :data:`FINDINGS_COLUMNS`: per (checklist, equipment), then per checklist (equipment ``*``), one
    line per failed item (most failed first), or one with the item's columns empty when none failed."""
    found = report.found
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(FINDINGS_COLUMNS)
    for row in (*found.rows, *found.checklists):
        checks = [row.checklist_id, row.equipment_id, row.performed, row.passed, row.failed, row.critical_failed]
        for item in row.items:
            writer.writerow([*checks, item.item_id, item.label, str(item.critical).lower(), item.failed])
        if not row.items:
            writer.writerow([*checks, "", "", "", ""])
    return out.getvalue()
