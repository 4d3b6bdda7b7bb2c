"""A defect: what a check's failed critical items found on a piece of equipment, open until a
supervisor resolves it with a note, or a later check passing every critical item clears it when its
checklist says that is enough (``clear_on_pass``).

One check opens at most one defect, and always the same one: its id is derived from the check's
key (:func:`defect_id_of`), so a retry, a second writer or a replay finds it on record and leaves it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from missed_checks.performed_checks.answers import FailedItem
from missed_checks.timefmt import to_utc_iso

MAX_NOTE = 1000
"""Characters of a resolution's note."""


class DefectStatus(StrEnum):
    OPEN = "open"
    RESOLVED = "resolved"


class ResolvedHow(StrEnum):
    SUPERVISOR = "supervisor"
    PASSING_CHECK = "passing_check"


def defect_id_of(checklist_id: str, equipment_id: str, performed_at: datetime) -> str:
    """``D-`` and the first 16 hex digits of the SHA-256 of ``checklist|equipment|performed_at``
    (UTC ISO): the same check always names the same defect."""
    key = f"{checklist_id}|{equipment_id}|{to_utc_iso(performed_at)}"
    return "D-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Defect:
    defect_id: str
    checklist_id: str
    equipment_id: str
    site_id: str | None
    failed_items: tuple[FailedItem, ...]
    """The critical items the check failed, as its revision had them."""
    found_by: str | None
    """Who recorded the check (None: a record kept without)."""
    found_at: datetime
    """The check's ``performed_at``."""
    opened_at: datetime
    """The check's ``recorded_at``."""
    status: DefectStatus = DefectStatus.OPEN
    resolved_by: str | None = None
    resolved_at: datetime | None = None
    resolution: str | None = None
    """The note that resolved it."""
    resolved_how: ResolvedHow | None = None
    cleared_by_check: Mapping[str, str] | None = field(default=None)
    """The passing check that cleared it (``checklist_id``, ``equipment_id``, ``performed_at`` UTC ISO)."""
    revision: int = 1
    """1 when opened, 2 once resolved: what ``If-Match`` names (the ETag)."""

    @property
    def is_open(self) -> bool:
        return self.status is DefectStatus.OPEN

    def resolved(self, *, by: str, at: datetime, note: str, how: ResolvedHow,
                 cleared_by_check: Mapping[str, str] | None = None) -> Defect:
        return Defect(self.defect_id, self.checklist_id, self.equipment_id, self.site_id, self.failed_items,
                      self.found_by, self.found_at, self.opened_at, DefectStatus.RESOLVED, by, at, note, how,
                      cleared_by_check, self.revision + 1)

    def describe(self) -> str:
        """What failed, in words: "Brakes work (critical): fail, expected pass"."""
        return "; ".join(item.describe() for item in self.failed_items)

    def to_dict(self) -> dict[str, Any]:
        """The defect as the API and the CLI show it (instants UTC ISO; unset fields null)."""
        return {
            "defect_id": self.defect_id, "checklist_id": self.checklist_id, "equipment_id": self.equipment_id,
            "site_id": self.site_id, "status": self.status.value,
            "failed_items": [item.to_dict() for item in self.failed_items],
            "found_by": self.found_by, "found_at": to_utc_iso(self.found_at), "opened_at": to_utc_iso(self.opened_at),
            "resolved_by": self.resolved_by,
            "resolved_at": to_utc_iso(self.resolved_at) if self.resolved_at is not None else None,
            "resolution": self.resolution,
            "resolved_how": self.resolved_how.value if self.resolved_how is not None else None,
            "cleared_by_check": dict(self.cleared_by_check) if self.cleared_by_check is not None else None,
            "revision": self.revision,
        }
