"""Equipment assignments and the shards that split a fleet into evaluation batches."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from missed_checks import identifiers
from missed_checks.timefmt import to_utc_iso

SHARD_COUNT = 16
"""Every checklist's equipment is stored in this many shards (a stable hash of the equipment id);
one evaluation task judges a batch of shards of one window. 100,000 pieces of equipment make about
6,250 per shard."""

def validate_equipment_id(equipment_id: object, field: str = "equipment") -> str:
    return identifiers.KINDS["equipment id"].validate(equipment_id, field)


def shard_of(equipment_id: str) -> int:
    """The equipment's shard: a stable hash, the same on every machine and Python version."""
    digest = hashlib.sha256(equipment_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") % SHARD_COUNT


def shard_batches(equipment: int, per_task: int) -> list[list[int]]:
    """The stored shards in as few batches (tasks) as keep each near ``per_task`` equipment: one
    batch of every shard for a small fleet, one shard per batch from ``SHARD_COUNT * per_task`` on."""
    tasks = max(1, min(SHARD_COUNT, -(-equipment // max(1, per_task))))
    return [list(range(n * SHARD_COUNT // tasks, (n + 1) * SHARD_COUNT // tasks)) for n in range(tasks)]


@dataclass(frozen=True)
class Assignment:
    """A piece of equipment attached to a checklist from ``assigned_at`` (until ``unassigned_at``)."""

    checklist_id: str
    equipment_id: str
    assigned_at: datetime
    unassigned_at: datetime | None = None
    earlier_periods: tuple[tuple[datetime, datetime], ...] = ()
    """Closed (assigned_at, unassigned_at) periods before a re-assignment: history is kept."""

    def counts_for(self, window_start: datetime, window_end: datetime) -> bool:
        """Equipment counts for a window if one of its assignment periods began no later than the
        window started and did not end before the window ended."""
        periods = ((self.assigned_at, self.unassigned_at), *self.earlier_periods)
        return any(
            assigned <= window_start and (unassigned is None or unassigned >= window_end)
            for assigned, unassigned in periods
        )

    def to_dict(self) -> dict[str, Any]:
        """The assignment as the API and the audit trail show it (instants in UTC ISO)."""
        return {"checklist_id": self.checklist_id, "equipment_id": self.equipment_id,
                "assigned_at": to_utc_iso(self.assigned_at),
                "unassigned_at": to_utc_iso(self.unassigned_at) if self.unassigned_at else None,
                "earlier_periods": [{"assigned_at": to_utc_iso(start), "unassigned_at": to_utc_iso(end)}
                                    for start, end in self.earlier_periods]}

    # -- recording a performed check (issue #19 / #23 item 5) --------------------------------------
    def assigned_at_instant(self, at: datetime) -> bool:
        """The equipment was attached to the checklist at ``at``: one of its periods has
        ``assigned_at <= at`` and no ``unassigned_at`` at or before ``at``."""
        periods = ((self.assigned_at, self.unassigned_at), *self.earlier_periods)
        return any(assigned <= at and (unassigned is None or at < unassigned) for assigned, unassigned in periods)
