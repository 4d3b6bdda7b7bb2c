"""What a checklist rule will do, shown before it is written: its next windows and its schedule."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from missed_checks.recurrence import OccurrenceWindow, Recurrence, parse_recurrence
from missed_checks.schedule_expression import schedule_for
from missed_checks.timefmt import to_utc_iso

HORIZONS = (timedelta(days=40), timedelta(days=400), timedelta(days=366 * 5))


@dataclass(frozen=True)
class Preview:
    windows: list[OccurrenceWindow]
    expression: str
    timezone: str
    exact: bool
    start_date: datetime | None
    end_date: datetime | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "next_windows": [w.to_dict() for w in self.windows],
            "schedule": {
                "expression": self.expression,
                "timezone": self.timezone,
                "exact": self.exact,
                "start_date": to_utc_iso(self.start_date) if self.start_date else None,
                "end_date": to_utc_iso(self.end_date) if self.end_date else None,
            },
        }


def validate_rule(recurrence: str, timezone: str | None, window: str | None, grace: str | None) -> Recurrence:
    """The recurrence engine's verdict; raises InvalidRecurrence naming the field."""
    return parse_recurrence(recurrence, timezone=timezone, window=window, grace=grace)


def next_windows(rule: Recurrence, now: datetime, count: int) -> list[OccurrenceWindow]:
    """The next ``count`` windows starting at or after ``now`` (fewer when the rule ends)."""
    for horizon in HORIZONS:
        windows = rule.windows(now, now + horizon)
        if len(windows) >= count:
            break
    return list(windows[:count])


def preview(rule: Recurrence, now: datetime, count: int = 5) -> Preview:
    spec = schedule_for(rule)
    return Preview(next_windows(rule, now, count), spec.expression, spec.timezone, spec.exact, spec.start_date,
                   spec.end_date)
