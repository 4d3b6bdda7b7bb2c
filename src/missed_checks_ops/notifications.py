"""The notification records of a stack (#18): who was told what, when (``notifications list``), as the
operator or the person ``--as`` names (:mod:`missed_checks.notifications.listing`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from missed_checks.aws.table import ManagementTable
from missed_checks.notifications import listing
from missed_checks.notifications.listing import COLUMNS
from missed_checks.permissions.caller import Caller
from missed_checks_ops.target import StackTarget

__all__ = ["COLUMNS", "list_notifications"]


def list_notifications(target: StackTarget, caller: Caller, start: datetime, end: datetime, *,
                       checklist_id: str | None = None, kind: str | None = None) -> list[dict[str, Any]]:
    """Notification records first claimed in ``[start, end)`` (one ByPeriod Query per month), oldest
    first, as rows of :data:`COLUMNS`; only one checklist's or one kind's when given."""
    store = ManagementTable(target.output("TableName"), target.client("dynamodb"))
    return listing.list_notifications(store, caller, start, end, checklist_id=checklist_id, kind=kind)
