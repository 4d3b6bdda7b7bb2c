"""The notification records of a stack (#18): who was told what, when (``notifications list``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from missed_checks.aws.table.notifications import NotificationItems
from missed_checks_ops.target import StackTarget

COLUMNS = ("claimed_at", "kind", "checklist_id", "window_start", "to", "equipment", "status", "sent_at", "channels",
           "attempts", "error", "subject", "notification_id")


def list_notifications(target: StackTarget, start: datetime, end: datetime, *, checklist_id: str | None = None,
                       kind: str | None = None) -> list[dict[str, Any]]:
    """Notification records first claimed in ``[start, end)`` (one ByPeriod Query per month), oldest
    first, as rows of :data:`COLUMNS`; only one checklist's or one kind's when given."""
    records = NotificationItems(target.output("TableName"), target.client("dynamodb")).notifications(start, end)
    rows = []
    for record in records:
        if (checklist_id and record.get("checklist_id") != checklist_id) or (kind and record.get("kind") != kind):
            continue
        channels = record.get("channels_sent") or {}
        rows.append({**{name: record.get(name) for name in COLUMNS},
                     "equipment": list(record.get("equipment") or []),
                     "channels": {name: dict(sent) for name, sent in sorted(channels.items())},
                     "attempts": int(record.get("attempts") or 0)})
    return rows
