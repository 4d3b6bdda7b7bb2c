"""Small shared helpers for instants as the table and the command line write them.

Every instant stored or exchanged between components is a UTC ISO 8601 string with second
precision and a ``Z`` (``2026-03-02T05:00:00Z``), so that such strings sort as text.

Instants are accepted in the years :data:`FIRST_YEAR` to :data:`LAST_INSTANT_YEAR` (1970 to
2299): occurrences lie in 1970..2199 (AWS cron's years, see ``missed_checks.checklists.recurrence``) and a
window plus its grace ends at most two years later, so every instant the system writes fits,
and arithmetic on an accepted instant (a day before, a window after) never leaves what
``datetime`` can hold.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TypeVar

from missed_checks.errors import InvalidInput, describe, shorten

__all__ = ["FIRST_YEAR", "LAST_INSTANT_YEAR", "Instant", "parse_instant", "to_utc_iso"]

Instant = TypeVar("Instant", datetime, str)
"""Aware datetimes, or UTC ISO strings (:func:`to_utc_iso`: they sort as the instants do). The rules
that compare instants (a check's timeliness, an out-of-service period's overlap) take either, so the
evaluation (datetimes) and the report (the strings as stored) apply the same definition."""

FIRST_YEAR = 1970
"""No instant, occurrence or DTSTART before this year is accepted (AWS cron's first year)."""

LAST_INSTANT_YEAR = 2299
"""No instant after this year is accepted (occurrences end in 2199; windows and grace add at most two years)."""

_MAX_INSTANT_CHARS = 64


def to_utc_iso(dt: datetime) -> str:
    """``dt`` as ``YYYY-MM-DDTHH:MM:SSZ`` in UTC, microseconds dropped.

    Raises ``ValueError`` for a naive datetime: an instant without an offset is ambiguous.
    """
    if dt.tzinfo is None or dt.utcoffset() is None:
        raise ValueError(f"naive datetime {dt.isoformat()} has no UTC offset")
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def to_utc_iso_micro(dt: datetime) -> str:
    """``dt`` as ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` in UTC, microseconds kept (fixed width, so the text
    sorts as the instant does): when a change was written (the audit trail's ``changed_at``)."""
    if dt.tzinfo is None or dt.utcoffset() is None:
        raise ValueError(f"naive datetime {dt.isoformat()} has no UTC offset")
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_instant(text: str, field: str) -> datetime:
    """Parse an ISO 8601 instant with a UTC offset or ``Z`` into an aware datetime.

    The offset is kept as given (``2026-03-02T06:00:00+01:00`` stays at +01:00). A missing
    offset, an empty string or malformed text raises :class:`InvalidInput` naming ``field``.
    """
    if not isinstance(text, str):
        raise InvalidInput(field, f"is {describe(text)}, not an ISO 8601 instant such as 2026-03-02T05:00:00Z")
    if not text.strip():
        raise InvalidInput(field, "expected an ISO 8601 instant such as 2026-03-02T05:00:00Z")
    raw = text.strip()
    if len(raw) > _MAX_INSTANT_CHARS:
        raise InvalidInput(
            field, f"{shorten(raw)} is too long for an ISO 8601 instant (expected e.g. 2026-03-02T05:00:00Z)"
        )
    candidate = raw[:-1] + "+00:00" if raw[-1:] in ("Z", "z") else raw
    try:
        parsed = datetime.fromisoformat(candidate)
    except ValueError:
        raise InvalidInput(
            field, f"{raw!r} is not an ISO 8601 instant (expected e.g. 2026-03-02T05:00:00Z)"
        ) from None
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise InvalidInput(
            field,
            f"{raw!r} has no UTC offset; give one, e.g. 2026-03-02T05:00:00Z or "
            "2026-03-02T06:00:00+01:00",
        )
    if not FIRST_YEAR <= parsed.year <= LAST_INSTANT_YEAR:
        raise InvalidInput(field, f"{raw!r} is outside the years {FIRST_YEAR} to {LAST_INSTANT_YEAR}")
    return parsed
