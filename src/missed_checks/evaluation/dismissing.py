"""Dismissing a missed check (#31): excusing it with a reason (it still counts as missed, shown as
dismissed; never deleted), by a caller who may ``supervise`` at its checklist's site. The operator's
``missed dismiss`` and the HTTP API's ``POST /missed/dismissals`` both dismiss this way. Another
site's checklist is NotFound, as a missing one; a role that may not supervise there is Forbidden; a
deleted checklist's missed checks (no site any more) are the admins' and the operator's."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from missed_checks.checklists.managing import get_checklist
from missed_checks.evaluation.ports import Dismissals
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Action


def dismiss(store: Dismissals, caller: Caller, checklist_id: str, window_start: datetime, equipment_id: str, *,
            reason: str, at: datetime, by: str | None = None) -> dict[str, Any]:
    """Dismiss the missed check; its record as it now is. ``by``: who the dismissal names (default the
    caller; the operator's ``--by``)."""
    if not caller.everywhere:
        get_checklist(store, caller, checklist_id, action=Action.supervise)
    return store.dismiss_missed_check(checklist_id, window_start, equipment_id, reason=reason,
                                      by=by or caller.principal, at=at)
