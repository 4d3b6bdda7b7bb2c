"""Missed checks one by one: listing them (``missed list``) and excusing one (``missed dismiss``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from missed_checks.evaluation.dismissing import dismiss
from missed_checks.permissions.caller import Caller
from missed_checks_ops.target import StackTarget

PAGE = 1000
"""Missed checks read per page (the HTTP API's largest page); the list holds them all."""
COLUMNS = ("checklist_id", "equipment_id", "window_start", "window_end", "judged_at", "execution", "dismissal")


def list_missed(target: StackTarget, start: datetime, end: datetime, *, checklist_id: str | None = None,
                equipment_id: str | None = None) -> list[dict[str, Any]]:
    """Missed checks whose window started in ``[start, end)``, as rows of :data:`COLUMNS`: of one piece
    of equipment (on one checklist, when given too), else of one checklist."""
    table = target.table()
    if equipment_id:
        items = [item for item in table.checks_of_equipment(equipment_id, start, end)
                 if item.get("type") == "missed_check" and (not checklist_id or item["checklist_id"] == checklist_id)]
    else:
        items, after = [], None
        while True:  # the HTTP API's pages (GET /missed), followed to the last
            page, after = table.missed_checks_page(start, end, limit=PAGE, checklist_id=str(checklist_id), after=after)
            items += page
            if after is None:
                break
    return [{name: item.get(name) for name in COLUMNS} for item in items]


def dismiss_missed(target: StackTarget, caller: Caller, checklist_id: str, window_start: datetime, equipment_id: str,
                   *, reason: str, by: str, at: datetime) -> dict[str, Any]:
    """Excuse one missed check (it still counts as missed, shown as dismissed), as ``caller``
    (:func:`missed_checks.evaluation.dismissing.dismiss`); returns its record."""
    return dismiss(target.table(), caller, checklist_id, window_start, equipment_id, reason=reason, by=by, at=at)
