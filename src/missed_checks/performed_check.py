"""Performed checks and how one relates to an occurrence window."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class Timeliness(StrEnum):
    ON_TIME = "on_time"
    LATE = "late"


@dataclass(frozen=True)
class PerformedCheck:
    checklist_id: str
    equipment_id: str
    performed_at: datetime


def timeliness(performed_at: datetime, start: datetime, end: datetime, evaluate_at: datetime) -> Timeliness | None:
    """On time inside ``[start, end)``, late inside ``[end, evaluate_at)`` (end + grace), else ``None``."""
    if start <= performed_at < end:
        return Timeliness.ON_TIME
    if end <= performed_at < evaluate_at:
        return Timeliness.LATE
    return None
