"""The fleet report as CSV and JSON, and the bounds of its range: one definition for the
``report`` command (:mod:`missed_checks_ops.report_output`) and the HTTP API's ``GET /report``
(``functions/api_report``), so both answer the same rows and columns.

Pure: no AWS call, no file; the report is read by :func:`missed_checks.fleet_report.build_report`.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, time
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from missed_checks.errors import InvalidInput
from missed_checks.fleet_report import Report
from missed_checks.report import COLUMNS
from missed_checks.timefmt import parse_instant


def write_csv(report: Report, out: Any) -> None:
    """The rows and the fleet total (``*``) under a header of :data:`~missed_checks.report.COLUMNS`;
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


def zone_of(name: str, field: str = "tz") -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidInput(field, f"{name!r} is not an IANA time zone (such as Europe/Berlin)") from None


def period_bound(text: str, field: str, zone_name: str) -> datetime:
    """A date (``YYYY-MM-DD``: its midnight in ``zone_name``) or an instant with an offset."""
    zone = zone_of(zone_name)
    if len(text.strip()) == 10:
        try:
            day = datetime.strptime(text.strip(), "%Y-%m-%d").date()
        except ValueError:
            raise InvalidInput(field, f"{text!r} is not a date (YYYY-MM-DD) or an instant") from None
        return datetime.combine(day, time(0), tzinfo=zone).astimezone(UTC)
    return parse_instant(text, field)
