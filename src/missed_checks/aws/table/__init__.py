"""The single DynamoDB table: every read is a Query or GetItem, every idempotent write conditional.

Each caller builds the composition of item kinds it needs and is typed against the domain's port it
uses: :class:`EvaluationTable` (the evaluation, the report, an equipment's status),
:class:`RecordingTable` (recording performed checks), :class:`.checklists.ChecklistItems` (schedule-sync),
:class:`.notifications.NotifierTable`, :class:`.subscriptions.DigestTable`; :class:`ChecklistTable`, every
kind, is the operator's and the emulator's (their commands touch every kind).

Shared by the Lambda handlers, the command line and the local runtime, so all of them write the
same items (see README "Data model"). One module per kind of item, over one low-level client
(:mod:`.base`); the keys are :mod:`.keys`' alone:

* :mod:`.checklists`: checklists and their evaluated-until watermark;
* :mod:`.assignments`: equipment assignments;
* :mod:`.performed_checks`: performed checks;
* :mod:`.windows`: judged windows (the evaluation's claim and announcement) and missed checks;
* :mod:`.out_of_service`: out-of-service periods of equipment.
* :mod:`.client_requests`: the HTTP API's idempotency keys.
* :mod:`.sites`, :mod:`.registry`, :mod:`.grants`: sites, the equipment registry and grants (#31),
  written by revision (:mod:`.revised`).
* :mod:`.defects`: defects a check's failed critical items opened (#33).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from missed_checks.aws.table import keys
from missed_checks.aws.table.assignments import AssignmentItems
from missed_checks.aws.table.audit import AuditItems  # the audit trail (#31)
from missed_checks.aws.table.base import (
    THROTTLING_CODES,
    Conflict,
    NotFound,
    deserialize,
    error_code,
    raise_transient,
    serialize,
)
from missed_checks.aws.table.client_requests import ClientRequestItems  # the HTTP API's idempotency keys (#19)
from missed_checks.aws.table.defects import DefectItems  # defects (#33)
from missed_checks.aws.table.grants import GrantItems  # grants (#31)
from missed_checks.aws.table.notifications import NotificationItems
from missed_checks.aws.table.out_of_service import OutOfServiceItems
from missed_checks.aws.table.performed_checks import PerformedCheckItems
from missed_checks.aws.table.readiness import ReadinessItems  # readiness (#33)
from missed_checks.aws.table.registry import RegistryItems  # the equipment registry (#31)
from missed_checks.aws.table.sites import SiteItems  # sites (#31)
from missed_checks.aws.table.subscriptions import SubscriptionItems
from missed_checks.aws.table.windows import WindowItems
from missed_checks.evaluation.ports import WindowClaim
from missed_checks.timefmt import to_utc_iso

__all__ = ["THROTTLING_CODES", "ChecklistTable", "Conflict", "EvaluationTable", "ManagementTable", "NotFound",
           "RecordingTable",
           "WindowClaim", "calendar_named_by", "checklist_named_by", "deserialize", "error_code", "raise_transient",
           "serialize"]


def checklist_named_by(pk: str) -> str | None:
    """The checklist whose item a partition key (a stream record's ``pk``) belongs to; None for any other."""
    return keys.checklist_id_of(pk)


def calendar_named_by(pk: str) -> str | None:
    """The closure calendar whose item a partition key belongs to; None for any other."""
    return keys.calendar_id_of(pk)


class EvaluationTable(AssignmentItems, PerformedCheckItems, WindowItems, OutOfServiceItems, DefectItems):
    """Checklists, assignments, performed checks, judged windows and missed checks, out-of-service
    periods, defects: the evaluation's :class:`missed_checks.evaluation.ports.EvaluationStore`, the report's
    :class:`missed_checks.reporting.ports.ReportReader`, an equipment's status
    (:class:`missed_checks.equipment.status.StatusReader`)."""


class RecordingTable(AssignmentItems, PerformedCheckItems, ClientRequestItems, DefectItems):
    """Recording performed checks and the defects they open (#33):
    :class:`missed_checks.evaluation.ports.RecordingStore`."""


class ChecklistTable(AssignmentItems, PerformedCheckItems, WindowItems, OutOfServiceItems, ClientRequestItems,
                     RegistryItems, GrantItems, AuditItems, DefectItems):
    """Typed access to every kind of item of the table (the evaluation's
    :class:`missed_checks.evaluation.ports.EvaluationStore`; sites, the equipment registry and grants,
    #31)."""

    def checks_of_equipment(self, equipment_id: str, start: datetime, end: datetime) -> list[dict[str, Any]]:
        """Performed and missed checks of one piece of equipment in ``[start, end)``, oldest first, on
        the checklists it is assigned to (performed checks: one ByEquipment Query; missed checks:
        :meth:`missed_checks_of_equipment`)."""
        low, high = to_utc_iso(start), to_utc_iso(end)
        performed = [item for item in self._query_range(keys.equipment_pk(equipment_id), low, high,
                                                        keys.BY_EQUIPMENT_INDEX)
                     if item.get("type") == "performed_check" and item["gsi1sk"][:20] < high]
        checklists = {a.checklist_id for a in self.assignments_of_equipment(equipment_id)}
        missed = self.missed_checks_of_equipment(equipment_id, checklists, start, end)
        return sorted([*performed, *missed],
                      key=lambda item: str(item.get("performed_at") or item.get("window_start")))


class ManagementTable(ChecklistTable, SiteItems, SubscriptionItems, NotificationItems, ReadinessItems):
    """Every kind of item a person manages (#31): the management API's routes and the operator's
    commands that act for a caller (sites, digest subscriptions, the notification log besides
    :class:`ChecklistTable`'s; readiness's state items, #33)."""
