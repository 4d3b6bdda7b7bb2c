"""Window and grace durations: RFC 5545 / ISO 8601 ``dur-value`` with the calendar rules of §3.3.6.

Accepted: ``PnW``, ``PnD``, ``PTnH``, ``PTnM``, ``PTnS`` and combinations such as ``P1DT2H30M``
(weeks may be combined with days). Years and months are rejected (their length depends on the
calendar and RFC 5545 does not allow them), so are negative durations, fractions, empty
durations such as ``P`` or ``PT``, anything longer than :data:`MAX_DURATION_DAYS` days (366: a
window or grace of more than a year is a typo, and the bound keeps every instant computed from
one far from ``datetime``'s limits), text longer than :data:`MAX_DURATION_CHARS` characters, and
values that are not strings (a number stored as ``window`` in a hand-edited item).

A duration is days (nominal) and seconds (exact); adding one to an instant on a zone's clock
(RFC 5545 §3.3.6) is the recurrence's local clock: :func:`missed_checks.checklists.recurrence.windows.add_duration`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

from missed_checks.errors import InvalidRecurrence, describe, shorten

__all__ = ["MAX_DURATION_CHARS", "MAX_DURATION_DAYS", "Duration", "parse_duration"]

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
