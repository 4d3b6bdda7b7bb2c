"""Listing the notification log (#18, #31): who was told what and when, for a caller at the
checklists' sites (``read_records`` there). The operator's ``notifications list`` and the management
API's ``GET /notifications`` both list it this way; each record is a row of :data:`COLUMNS`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from missed_checks.checklists.managing import get_checklist, scope_of
from missed_checks.errors import InvalidInput, describe
from missed_checks.notifications.notification import Kind
from missed_checks.notifications.ports import NotificationLog
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Action

COLUMNS = ("claimed_at", "kind", "checklist_id", "window_start", "to", "equipment", "status", "sent_at", "channels",
           "attempts", "error", "subject", "notification_id")


def list_notifications(store: NotificationLog, caller: Caller, start: datetime, end: datetime, *,
                       checklist_id: str | None = None, kind: str | None = None,
                       site_id: str | None = None) -> list[dict[str, Any]]:
    """Notification records first claimed in ``[start, end)``, oldest first, as rows of :data:`COLUMNS`;
    only one checklist's, one kind's or one site's when given. A caller with roles sees the records of
    the checklists at their sites where they may ``read_records`` (a digest, of no one checklist, is
    the admins' and the operator's); another site's checklist named is NotFound, as a missing one."""
    if kind is not None and kind not in tuple(Kind):
        raise InvalidInput("kind", f"is {describe(kind)}: give one of {', '.join(k.value for k in Kind)}")
    scope = scope_of(store, caller, Action.read_records, site_id)
    if checklist_id is not None and scope is not None and checklist_id not in scope:
        get_checklist(store, caller, checklist_id, action=Action.read_records)
        scope = frozenset()  # another site's than site_id's, or deleted (its site unknown)
    rows = []
    for record in store.notifications(start, end):
        if (checklist_id and record.get("checklist_id") != checklist_id) or (kind and record.get("kind") != kind):
            continue
        if scope is not None and record.get("checklist_id") not in scope:
            continue
        channels = record.get("channels_sent") or {}
        rows.append({**{name: record.get(name) for name in COLUMNS},
                     "equipment": list(record.get("equipment") or []),
                     "channels": {name: dict(sent) for name, sent in sorted(channels.items())},
                     "attempts": int(record.get("attempts") or 0)})
    return rows
