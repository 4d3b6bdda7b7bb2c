"""The ``report`` command's use case: the fleet report of a stack's table
(:func:`missed_checks.reporting.fleet_report.build_report`, which the digest Lambda shares)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from missed_checks.reporting.fleet_report import Report, build_report
from missed_checks_ops.target import StackTarget


def read_report(target: StackTarget, start: datetime, end: datetime, **options: Any) -> Report:
    """:func:`build_report` of the stack's table (the ``report`` command)."""
    return build_report(target.table(), start, end, **options)
