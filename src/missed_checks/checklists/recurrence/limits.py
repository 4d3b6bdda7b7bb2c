"""The bounds every recurrence lies in (see :mod:`missed_checks.checklists.recurrence`)."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from missed_checks.timefmt import FIRST_YEAR

MAX_COUNT = 100_000
"""Largest accepted ``COUNT``."""

LAST_YEAR = 2199
"""AWS cron's last year: DTSTART, UNTIL, EXDATE and RDATE after it are rejected (leave UNTIL out
for open-ended), no occurrence after it is produced, and a rule with no occurrence up to its end
is rejected as never occurring."""

MAX_TEXT_CHARS = 4096
"""Longest recurrence text accepted (about 400 EXDATE dates: enough holidays for a decade)."""

EARLIEST = datetime(FIRST_YEAR - 1, 12, 30, tzinfo=UTC)
"""Iteration never starts earlier than this (no occurrence can: DTSTART is local 1970 or later)."""
LATEST = datetime(LAST_YEAR + 4, 1, 1, tzinfo=UTC)
"""Every window has been judged by this: the last start (end of 2199) plus a P366D window and a
P366D grace is early January 2202."""


def range_end(zone: ZoneInfo) -> datetime:
    """The last instant an occurrence may start: the end of :data:`LAST_YEAR` on the local clock."""
    return datetime(LAST_YEAR, 12, 31, 23, 59, 59, tzinfo=zone)


def iso(value: datetime) -> str:
    """``value`` in ISO 8601 with its UTC offset, to the second (windows and error messages)."""
    return value.isoformat(timespec="seconds")
