"""Checklists: a routine on equipment with a recurrence, time zone, window and grace."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from missed_checks import keys
from missed_checks.errors import InvalidInput
from missed_checks.recurrence import Recurrence, parse_recurrence
from missed_checks.timefmt import parse_instant, to_utc_iso

# Schedule names allow [0-9a-zA-Z-_.]{1,64}; the schedule is named after the checklist id.
_CHECKLIST_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")

# The fields that decide the schedule and the windows: a change to any of them is a
# "recurrence change" (the watermark jumps forward, the schedule is replaced).
RULE_FIELDS = ("recurrence", "timezone", "window", "grace")


class Status(StrEnum):
    ACTIVE = "ACTIVE"
    PAUSED = "PAUSED"


def validate_checklist_id(checklist_id: object, field: str = "id") -> str:
    if not isinstance(checklist_id, str) or not _CHECKLIST_ID.match(checklist_id):
        raise InvalidInput(
            field,
            f"{checklist_id!r} is not a valid checklist id: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit (it names the checklist's schedule)",
        )
    return checklist_id


@dataclass(frozen=True)
class Checklist:
    checklist_id: str
    recurrence: str
    name: str = ""
    timezone: str | None = None
    window: str | None = None
    grace: str | None = None
    status: Status = Status.ACTIVE
    created_at: datetime | None = None
    updated_at: datetime | None = None
    evaluated_until: datetime | None = None
    """Advanced only by the evaluation (CloseWindow), forward only."""
    effective_from: datetime | None = None
    """When the current rule took effect: creation, the last rule change or the last resume.
    Written only by edits, so an edit can never move the evaluation's watermark back."""
    revision: int = 0
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def parsed(self) -> Recurrence:
        """The recurrence engine's view; raises InvalidRecurrence naming the bad field."""
        return parse_recurrence(self.recurrence, timezone=self.timezone, window=self.window, grace=self.grace)

    def rule(self) -> dict[str, str | None]:
        return {name: getattr(self, name) for name in RULE_FIELDS}

    @property
    def watermark(self) -> datetime | None:
        """Windows ending at or before this instant are never judged (again): the later of what the
        evaluation judged and when the current rule took effect."""
        candidates = [t for t in (self.evaluated_until, self.effective_from, self.created_at) if t is not None]
        return max(candidates) if candidates else None

    def with_changes(self, **changes: Any) -> Checklist:
        return replace(self, **changes)

    # -- table item ---------------------------------------------------------------------
    def to_item(self) -> dict[str, Any]:
        item: dict[str, Any] = {
            **keys.checklist_key(self.checklist_id),
            "type": "checklist",
            "gsi2pk": keys.CHECKLISTS_INDEX_PK,
            "gsi2sk": self.checklist_id,
            "checklist_id": self.checklist_id,
            "name": self.name,
            "recurrence": self.recurrence,
            "status": self.status.value,
            "revision": self.revision,
        }
        for name in ("timezone", "window", "grace"):
            value = getattr(self, name)
            if value:
                item[name] = value
        for name in ("created_at", "updated_at", "evaluated_until", "effective_from"):
            value = getattr(self, name)
            if value is not None:
                item[name] = to_utc_iso(value)
        return item

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> Checklist:
        """Read a table item, tolerating a hand-edited one: a missing attribute is a clear error."""

        def instant(name: str) -> datetime | None:
            value = item.get(name)
            return parse_instant(value, name) if value else None

        if not item.get("recurrence"):
            raise InvalidInput("recurrence", "the checklist item has no recurrence attribute")
        status_text = str(item.get("status") or Status.ACTIVE.value).upper()
        try:
            status = Status(status_text)
        except ValueError:
            raise InvalidInput("status", f"{item.get('status')!r} is not ACTIVE or PAUSED") from None
        known = {"pk", "sk", "type", "gsi2pk", "gsi2sk", "checklist_id", "name", "recurrence", "status",
                 "revision", "timezone", "window", "grace", "created_at", "updated_at", "evaluated_until",
                 "effective_from"}
        return cls(
            checklist_id=str(item.get("checklist_id") or item["pk"].removeprefix("CHECKLIST#")),
            name=str(item.get("name") or ""),
            recurrence=str(item["recurrence"]),
            timezone=item.get("timezone") or None,
            window=item.get("window") or None,
            grace=item.get("grace") or None,
            status=status,
            created_at=instant("created_at"),
            updated_at=instant("updated_at"),
            evaluated_until=instant("evaluated_until"),
            effective_from=instant("effective_from"),
            revision=int(item.get("revision") or 0),
            extra={k: v for k, v in item.items() if k not in known},
        )
