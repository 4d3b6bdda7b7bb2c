"""Defect alerts (#33): a failed critical item tells the checklist's people at once, once.

:func:`defect_alerts` builds one :class:`~missed_checks.notifications.notification.Notification`
(kind ``defect``) per recipient of the checklist's ``notify.to`` and ``notify.escalate_to``, about
the defect's check (``window_start`` = the check's ``performed_at``, ``occasion`` = the defect id),
with every time on the checklist's clock. :func:`alert_defect` sends each once through
:func:`missed_checks.notifications.notifying.deliver` (its record claimed first), so a retried or
replayed stream record never sends it twice. Domain only: no AWS call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from missed_checks.checklists.checklist import Checklist
from missed_checks.defects.defect import Defect
from missed_checks.errors import InvalidRecurrence
from missed_checks.evaluation.ports import NotificationChannel, NotificationRecords
from missed_checks.notifications.notification import Kind, Notification, local_time
from missed_checks.notifications.notifier import OnFailure, Outcome, deliver_each
from missed_checks.timefmt import to_utc_iso

__all__ = ["alert_defect", "defect_alerts"]


def _zone(checklist: Checklist) -> Any:
    try:
        return checklist.parsed().zone
    except InvalidRecurrence:  # a hand-edited rule: the alert still goes out, in UTC
        return UTC


def defect_alerts(checklist: Checklist, defect: Defect) -> list[Notification]:
    """One message per recipient of ``notify.to`` and ``notify.escalate_to`` (each address once)."""
    settings = checklist.notify
    if settings is None:
        return []
    recipients: dict[str, str] = {}
    for address in (*settings.to, *settings.escalate_to):
        recipients.setdefault(address.lower(), address)
    if not recipients:
        return []
    zone = _zone(checklist)
    name = checklist.name or checklist.checklist_id
    found = local_time(defect.found_at, zone)
    kind = "pre-use check" if checklist.pre_use else "check"
    failed = "; ".join(item.describe() for item in defect.failed_items) or "a critical item"
    until = f"a supervisor resolves defect {defect.defect_id}"
    if checklist.clear_on_pass:
        until += f" or a later {kind} passes every critical item"
    by = f" (recorded by {defect.found_by})" if defect.found_by else ""
    subject = f"Not cleared: {defect.equipment_id} failed {name} at {found}"
    body = (f"{defect.equipment_id} failed its {kind} {name} ({checklist.checklist_id}) at {found}{by}: {failed}.\n\n"
            f"{defect.equipment_id} is not cleared to operate until {until}.\n\n"
            f"A supervisor resolves it with a note once it is repaired (POST /defects/{defect.defect_id}/resolve, "
            "or the equipment's page of the web app).\n")
    details = {"defect_id": defect.defect_id, "equipment_id": defect.equipment_id,
               "found_at": to_utc_iso(defect.found_at), "failed_items": [i.to_dict() for i in defect.failed_items]}
    return [Notification(kind=Kind.DEFECT, checklist_id=checklist.checklist_id,
                         window_start=to_utc_iso(defect.found_at), recipient=address,
                         equipment=(defect.equipment_id,), subject=subject, body=body, occasion=defect.defect_id,
                         details=details)
            for address in recipients.values()]


def alert_defect(records: NotificationRecords, channels: Sequence[NotificationChannel], checklist: Checklist,
                 defect: Defect, now: Callable[[], datetime], on_failure: OnFailure) -> list[Outcome]:
    """Send the defect's alerts, each once; a recipient's failure goes to ``on_failure``."""
    return deliver_each(defect_alerts(checklist, defect), records, channels, now, on_failure)
