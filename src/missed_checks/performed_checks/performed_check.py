"""Performed checks and how one relates to an occurrence window."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from missed_checks.checklists.recurrence import OccurrenceWindow, Recurrence
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
    answers: Mapping[str, Any] | None = field(default=None, hash=False)
    """What the check answered (#33), by item id (None: no answers, as before items existed). Part of
    the check (compared), not of its hash: a check is one per checklist, equipment and instant."""


def timeliness(performed_at: Instant, start: Instant, end: Instant, evaluate_at: Instant) -> Timeliness | None:
    """On time inside ``[start, end)``, late inside ``[end, evaluate_at)`` (end + grace), else ``None``.

    The judging compares datetimes, the report UTC ISO strings (the same order)."""
    if start <= performed_at < end:
        return Timeliness.ON_TIME
    if end <= performed_at < evaluate_at:
        return Timeliness.LATE
    return None


def counting_windows(rule: Recurrence, performed_at: datetime) -> list[OccurrenceWindow]:
    """The windows of ``rule`` a check performed at ``performed_at`` counts in (:func:`timeliness`:
    on time or late), oldest first; at most one for a rule whose windows do not overlap."""
    lookback = rule.evaluation_offset.longest_elapsed() + timedelta(minutes=1)
    at = performed_at.astimezone(UTC)  # elapsed time: a local datetime's arithmetic is wall-clock (DST)
    return [w for w in rule.windows(at - lookback, at + timedelta(seconds=1))
            if timeliness(performed_at, w.start, w.end, w.evaluate_at) is not None]
