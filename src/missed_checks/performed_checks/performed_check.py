"""Performed checks and how one relates to an occurrence window."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from missed_checks.timefmt import Instant


class Timeliness(StrEnum):
    """How a performed check relates to an occurrence window: the one definition of on time and late."""

    ON_TIME = "on_time"
    LATE = "late"


@dataclass(frozen=True)
class PerformedCheck:
    checklist_id: str
    equipment_id: str
    performed_at: datetime


def timeliness(performed_at: Instant, start: Instant, end: Instant, evaluate_at: Instant) -> Timeliness | None:
    """On time inside ``[start, end)``, late inside ``[end, evaluate_at)`` (end + grace), else ``None``.

    The judging compares datetimes, the report UTC ISO strings (the same order)."""
    if start <= performed_at < end:
        return Timeliness.ON_TIME
    if end <= performed_at < evaluate_at:
        return Timeliness.LATE
    return None
