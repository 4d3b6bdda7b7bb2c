"""Dismissing a missed check (#31): excusing it with a reason (it still counts as missed, shown as
dismissed; never deleted), by a caller who may ``supervise`` at its checklist's site. The operator's
``missed dismiss`` and the HTTP API's ``POST /missed/dismissals`` both dismiss this way. Another
site's checklist is NotFound, as a missing one; a role that may not supervise there is Forbidden; a
deleted checklist's missed checks (no site any more) are the admins' and the operator's."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from missed_checks.checklists.managing import get_checklist
from missed_checks.errors import InvalidInput
from missed_checks.evaluation.ports import Dismissals
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Action

MAX_REASON_CHARS = 1000
"""A dismissal's reason, given through the HTTP API or the web app, is at most this long."""


def validate_reason(value: object) -> str:
    """A dismissal's reason as a person gives it: text, not blank, at most :data:`MAX_REASON_CHARS`;
    InvalidInput naming ``reason`` otherwise."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput("reason", "give the reason the check was missed, as text")
    if len(value) > MAX_REASON_CHARS:
        raise InvalidInput("reason", f"keep the reason to {MAX_REASON_CHARS} characters at most")
    return value


def dismiss(store: Dismissals, caller: Caller, checklist_id: str, window_start: datetime, equipment_id: str, *,
            reason: str, at: datetime, by: str | None = None) -> dict[str, Any]:
    """Dismiss the missed check; its record as it now is. ``by``: who the dismissal names (default the
    caller; the operator's ``--by``)."""
    if not caller.everywhere:
        get_checklist(store, caller, checklist_id, action=Action.supervise)
    return store.dismiss_missed_check(checklist_id, window_start, equipment_id, reason=reason,
                                      by=by or caller.principal, at=at)
