"""Window and grace durations: RFC 5545 / ISO 8601 ``dur-value`` with the calendar rules of §3.3.6.

Accepted: ``PnW``, ``PnD``, ``PTnH``, ``PTnM``, ``PTnS`` and combinations such as ``P1DT2H30M``
(weeks may be combined with days). Years and months are rejected (their length depends on the
calendar and RFC 5545 does not allow them), so are negative durations, fractions, empty
durations such as ``P`` or ``PT``, anything longer than :data:`MAX_DURATION_DAYS` days (366: a
window or grace of more than a year is a typo, and the bound keeps every instant computed from
one far from ``datetime``'s limits), text longer than :data:`MAX_DURATION_CHARS` characters, and
values that are not strings (a number stored as ``window`` in a hand-edited item).

Adding a duration to an instant follows RFC 5545 §3.3.6: weeks and days are *nominal* (added on
the local calendar of the zone, keeping the wall-clock time, then resolved as §3.3.5 says: a
wall time in a spring-forward gap is read with the offset before the gap, an ambiguous one is the
first of the two), hours, minutes and seconds are *exact* elapsed time. So in Europe/Berlin
``P1D`` from 2026-03-28T06:00+01:00 ends 2026-03-29T06:00+02:00 (23 hours later) while ``PT24H``
ends 2026-03-29T07:00+02:00.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo

from missed_checks.errors import InvalidRecurrence, describe, shorten

__all__ = ["MAX_DURATION_CHARS", "MAX_DURATION_DAYS", "Duration", "add_duration", "parse_duration", "resolve_local"]

MAX_DURATION_DAYS = 366
"""Longest window or grace accepted: P366D (= P52W2D = PT8784H)."""

MAX_DURATION_CHARS = 32
"""Longest duration text accepted (``P52W2DT23H59M59S`` is 16)."""

_ACCEPTED = (
    "an ISO 8601 duration in weeks, days, hours, minutes, seconds such as PT8H, P1D, P1W, PT30M or P1DT2H"
)

_PATTERN = re.compile(
    r"P(?:(?P<weeks>\d+)W)?(?:(?P<days>\d+)D)?"
    r"(?:T(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?(?:(?P<seconds>\d+)S)?)?"
)

# Generous upper bound on a nominal day's elapsed length (DST changes are at most 2 h today).
_LONGEST_DAY = timedelta(hours=26)


@dataclass(frozen=True, order=True)
class Duration:
    """A duration split into its nominal part (whole days) and its exact part (seconds)."""

    days: int = 0
    seconds: int = 0

    def __post_init__(self) -> None:
        if self.days < 0 or self.seconds < 0:
            raise ValueError("durations are never negative")

    @property
    def is_zero(self) -> bool:
        return self.days == 0 and self.seconds == 0

    @property
    def exact(self) -> timedelta:
        """The exact (elapsed-time) part."""
        return timedelta(seconds=self.seconds)

    def longest_elapsed(self) -> timedelta:
        """An upper bound of the elapsed time this duration can span anywhere on the calendar."""
        return self.days * _LONGEST_DAY + self.exact

    def shortest_elapsed(self) -> timedelta:
        """A lower bound of the elapsed time this duration can span anywhere on the calendar."""
        return self.days * timedelta(hours=22) + self.exact

    def __add__(self, other: object) -> Duration:
        if not isinstance(other, Duration):
            return NotImplemented
        return Duration(self.days + other.days, self.seconds + other.seconds)

    def __str__(self) -> str:
        """Canonical text: ``P2W``, ``P1DT2H30M``, ``PT8H``, ``PT0S``."""
        if self.is_zero:
            return "PT0S"
        if self.seconds == 0 and self.days % 7 == 0:
            return f"P{self.days // 7}W"
        text = "P"
        if self.days:
            text += f"{self.days}D"
        if self.seconds:
            hours, rest = divmod(self.seconds, 3600)
            minutes, seconds = divmod(rest, 60)
            text += "T"
            text += f"{hours}H" if hours else ""
            text += f"{minutes}M" if minutes else ""
            text += f"{seconds}S" if seconds else ""
        return text


def parse_duration(text: object, field: str, *, allow_zero: bool = True) -> Duration:
    """Parse ``text`` for ``field`` ("window", "grace"), raising :class:`InvalidRecurrence`.

    ``allow_zero=False`` rejects ``PT0S`` and the like (a window must have a length). Anything
    that is not such a duration (a number, an empty or overlong string, more than
    :data:`MAX_DURATION_DAYS` days) raises :class:`InvalidRecurrence` naming ``field``, never
    another exception.
    """
    if not isinstance(text, str):
        raise InvalidRecurrence(field, f"is {describe(text)}, not a duration string; expected {_ACCEPTED}")
    if not text.strip():
        raise InvalidRecurrence(field, f"is empty; expected {_ACCEPTED}")
    if len(text) > MAX_DURATION_CHARS:
        raise InvalidRecurrence(
            field,
            f"{shorten(text)} is {len(text)} characters long (at most {MAX_DURATION_CHARS}); expected {_ACCEPTED}",
        )
    raw = text.strip().upper()
    if raw.startswith(("-", "+")):
        raise InvalidRecurrence(
            field, f"{text!r} is signed; durations cannot be negative, expected {_ACCEPTED}"
        )
    match = _PATTERN.fullmatch(raw)
    if match is None or raw in ("P", "PT") or raw.endswith("T"):
        raise InvalidRecurrence(field, f"{text!r} is not {_ACCEPTED}{_why_not(raw)}")
    parts = {name: int(value) for name, value in match.groupdict(default="0").items()}
    days = parts["weeks"] * 7 + parts["days"]
    seconds = parts["hours"] * 3600 + parts["minutes"] * 60 + parts["seconds"]
    if days * 86400 + seconds > MAX_DURATION_DAYS * 86400:
        raise InvalidRecurrence(
            field, f"{text!r} is longer than {MAX_DURATION_DAYS} days (P{MAX_DURATION_DAYS}D), the longest accepted"
        )
    duration = Duration(days=days, seconds=seconds)
    if not allow_zero and duration.is_zero:
        raise InvalidRecurrence(field, f"{text!r} is zero; it must be longer than zero, e.g. PT8H or P1D")
    return duration


def _why_not(raw: str) -> str:
    date_part = raw.split("T", 1)[0]
    if "Y" in date_part or "M" in date_part:
        return " (years and months are not accepted: their length varies; use days or weeks)"
    if "," in raw or "." in raw:
        return " (fractions are not accepted)"
    return ""


def resolve_local(wall: datetime, zone: tzinfo) -> datetime:
    """The instant a naive local wall time denotes in ``zone``, per RFC 5545 §3.3.5.

    A wall time in a spring-forward gap is read with the offset before the gap (02:30 in
    Europe/Berlin on the last Sunday of March becomes 03:30+02:00); an ambiguous wall time in the
    repeated autumn hour is the first of the two (fold=0). The result is expressed in ``zone``.
    """
    if wall.tzinfo is not None:
        raise ValueError("resolve_local takes a naive wall-clock time")
    return wall.replace(tzinfo=zone, fold=0).astimezone(UTC).astimezone(zone)


def add_duration(instant: datetime, duration: Duration, zone: tzinfo | None = None) -> datetime:
    """``instant + duration`` per RFC 5545 §3.3.6, the result expressed in ``zone``.

    Days and weeks are added to the wall-clock date in ``zone`` (default: ``instant``'s own
    zone) and the wall time resolved with :func:`resolve_local`; then hours, minutes and seconds
    are added as exact elapsed time.
    """
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError("add_duration needs a timezone-aware instant")
    target = zone if zone is not None else instant.tzinfo
    local = instant.astimezone(target)
    if duration.days:
        wall = local.replace(tzinfo=None, fold=0) + timedelta(days=duration.days)
        local = resolve_local(wall, target)
    if duration.seconds:
        local = (local.astimezone(UTC) + duration.exact).astimezone(target)
    return local
