"""One entry of the audit trail: one change of one managed object, as it was written."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from missed_checks.errors import InvalidInput, describe
from missed_checks.timefmt import to_utc_iso_micro

KINDS = ("site", "equipment", "checklist", "assignment", "calendar", "out_of_service", "subscription", "dismissal",
         "grant", "defect")
"""What the trail records changes of (the ``kind`` of an entry)."""

UNKNOWN_WRITER = "unknown (written without missed-checks)"
"""``changed_by`` of a change the product did not write: the item's stamp did not move (a hand edit in
the console, a script writing the table directly), or a deletion that was not stamped first."""


class ChangeAction(StrEnum):
    created = "created"
    changed = "changed"
    deleted = "deleted"


@dataclass(frozen=True)
class AuditEntry:
    """One change: ``before`` and ``after`` are the object as the API shows it (None: it did not exist
    before / does not any more); ``site_id`` the site it was at (None: an object with no site);
    ``event_id`` the stream record it was made from (what makes it once-only)."""

    kind: str
    object_id: str
    site_id: str | None
    changed_at: datetime
    changed_by: str
    action: ChangeAction
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    event_id: str
    sequence: str = ""
    """The stream record's sequence number (zero-padded): orders two changes written in one microsecond."""

    @property
    def changed_fields(self) -> list[str]:
        """The top-level fields that differ between ``before`` and ``after``, sorted."""
        before, after = self.before or {}, self.after or {}
        return sorted(name for name in {*before, *after} if before.get(name) != after.get(name))

    def to_dict(self) -> dict[str, Any]:
        """The entry as the API answers it."""
        return {"kind": self.kind, "object_id": self.object_id, "site_id": self.site_id,
                "changed_at": to_utc_iso_micro(self.changed_at), "changed_by": self.changed_by,
                "action": self.action.value, "changed_fields": self.changed_fields,
                "before": None if self.before is None else dict(self.before),
                "after": None if self.after is None else dict(self.after), "event_id": self.event_id}


def validate_kind(value: object, field: str = "kind") -> str:
    """``value`` when it is one of :data:`KINDS`; InvalidInput naming ``field`` otherwise."""
    if not isinstance(value, str) or value not in KINDS:
        raise InvalidInput(field, f"is {describe(value)}: give one of {', '.join(KINDS)}")
    return value
