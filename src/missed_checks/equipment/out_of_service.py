"""Out of service: a piece of equipment taken out of use over ``[from, to)`` for all its checklists.

A window whose ``[start, end)`` overlaps such a period for any part is *excused* for that equipment:
the evaluation writes no missed check for it and counts it apart (``excused``). A check performed
anyway still counts as performed: excusing only replaces what would have been a miss.

A period is recorded with a reason, who recorded it and when (never rewritten: recording the same
period again answers the first record). ``to`` may be open (back in service not known yet). Ending
it early sets a new ``to`` (:meth:`OutOfServicePeriod.ended`): never at or before its ``from`` and
never before "now", because windows judged meanwhile were excused and stay so (history never
changes); ending it again, earlier still, keeps the earlier ending (who, when) on the record.
See docs/out-of-service.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.equipment.assignments import validate_equipment_id
from missed_checks.errors import InvalidInput, describe
from missed_checks.identifiers import one_line
from missed_checks.timefmt import Instant, parse_instant, to_utc_iso

MAX_REASON_CHARS = 500
"""A reason is a sentence or two ("gearbox replaced in the workshop"), not a document."""


def _aware(value: object, field: str) -> datetime:
    if not isinstance(value, datetime):
        raise InvalidInput(field, f"is {describe(value)}, not an instant")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidInput(field, f"{value.isoformat()} has no UTC offset; give one, e.g. 2026-03-02T05:00:00Z")
    # Round trip through the stored form: the years accepted are timefmt's, and sub-seconds are dropped
    # exactly as the table drops them (so a period compares equal to itself read back).
    return parse_instant(to_utc_iso(value), field).astimezone(value.tzinfo)


@dataclass(frozen=True)
class OutOfServicePeriod:
    """Equipment out of service over ``[start, end)`` (``end`` None: until further notice).

    ``start`` and ``end`` are the user's ``from`` and ``to``. Build one with :meth:`create`, which
    validates every field; the table adapter reads stored ones back as they were written."""

    equipment_id: str
    start: datetime
    end: datetime | None
    reason: str
    recorded_by: str
    recorded_at: datetime
    planned_end: datetime | None = None
    """The ``to`` it had before it was ended early (None: it was open-ended, or never ended early)."""
    ended_by: str | None = None
    ended_at: datetime | None = None
    """When it was ended early (the recording instant, not the new ``to``)."""
    earlier_endings: tuple[dict[str, str], ...] = ()
    """Earlier early endings, oldest first, each as it was recorded (``to``, ``ended_by``,
    ``ended_at``): ending a period again, earlier still, keeps who ended it before and when."""

    @classmethod
    def create(cls, *, equipment_id: object, start: object, end: object, reason: object, recorded_by: object,
               recorded_at: object) -> OutOfServicePeriod:
        """A validated period; raises InvalidInput naming ``equipment``, ``from``, ``to``, ``reason``
        or ``by``."""
        equipment = validate_equipment_id(equipment_id, "equipment")
        begins = _aware(start, "from")
        ends = None if end is None else _aware(end, "to")
        if ends is not None and ends <= begins:
            raise InvalidInput("to", f"{to_utc_iso(ends)} is not after from ({to_utc_iso(begins)}): a period "
                                     "out of service ends after it starts (leave to out while the end is not known)")
        return cls(
            equipment_id=equipment,
            start=begins,
            end=ends,
            reason=one_line(reason, "reason", "the reason it is out of service", MAX_REASON_CHARS),
            recorded_by=one_line(recorded_by, "by", "who records it"),
            recorded_at=_aware(recorded_at, "recorded_at"),
        )

    # -- what it excuses ---------------------------------------------------------------------------
    def overlaps(self, start: datetime, end: datetime | None) -> bool:
        """True when the period and ``[start, end)`` (``end`` None: open-ended) share any instant."""
        return overlaps(self.start, self.end, start, end)

    def excuses(self, window: OccurrenceWindow) -> bool:
        """True when the equipment is out of service for any part of the window's ``[start, end)``."""
        return overlaps(self.start, self.end, window.start, window.end)

    def in_effect_at(self, instant: datetime) -> bool:
        return in_effect(self.start, self.end, instant)

    def same_as(self, other: OutOfServicePeriod) -> bool:
        """Recording ``other`` again changes nothing (a re-run of the same command or scenario event)."""
        return (self.equipment_id, self.start, self.end, self.reason) == (
            other.equipment_id, other.start, other.end, other.reason)

    # -- ending it early ---------------------------------------------------------------------------
    def ended(self, at: object, *, by: object, now: datetime) -> OutOfServicePeriod:
        """This period back in service from ``at``; raises InvalidInput naming ``at`` when that cannot be:

        * at or before its ``from`` (a period ends after it starts);
        * before ``now``: windows judged meanwhile were excused and stay so, so the past is not rewritten;
        * not before its current ``to`` (that would lengthen it: record a new period instead)."""
        when = _aware(at, "at")
        now = _aware(now, "now")  # to the second, as ``at`` and the stored instants are
        if when <= self.start:
            raise InvalidInput("at", f"{to_utc_iso(when)} is not after the period's from ({to_utc_iso(self.start)}): "
                                     "a period out of service ends after it starts")
        if when < now:
            raise InvalidInput("at", f"{to_utc_iso(when)} is before now ({to_utc_iso(now)}): a period is ended from "
                                     "now on, never in the past (windows judged meanwhile were excused and stay so)")
        if self.end is not None and when >= self.end:
            raise InvalidInput("at", f"{to_utc_iso(when)} is not before the period's to ({to_utc_iso(self.end)}): "
                                     "ending early shortens a period; record a new period to lengthen it")
        ended_by = one_line(by, "by", "who ends it")
        if self.ended_at is None:
            return replace(self, end=when, planned_end=self.end, ended_by=ended_by, ended_at=now)
        # ended early before: that ending stays on record as it was, and the plan stays the first one
        earlier = {"to": to_utc_iso(self.end) if self.end else "", "ended_by": self.ended_by or "",
                   "ended_at": to_utc_iso(self.ended_at)}
        return replace(self, end=when, ended_by=ended_by, ended_at=now,
                       earlier_endings=(*self.earlier_endings, earlier))

    def require_planned(self, now: datetime) -> None:
        """Only a period that has not started may be cancelled (deleted): no window overlapping it can
        have been judged yet, so history stays as it is. InvalidInput naming ``from`` otherwise."""
        if self.start <= _aware(now, "now"):
            raise InvalidInput("from", f"the period of {self.equipment_id} from {to_utc_iso(self.start)} has started "
                                       f"(now is {to_utc_iso(now)}): only a planned period can be cancelled; end this "
                                       "one with back-in-service")

    # -- the stored form ---------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The period as the commands print it and the table stores it: ``from``/``to`` in UTC ISO."""
        document: dict[str, Any] = {
            "equipment_id": self.equipment_id,
            "from": to_utc_iso(self.start),
            "to": to_utc_iso(self.end) if self.end else None,
            "reason": self.reason,
            "recorded_by": self.recorded_by,
            "recorded_at": to_utc_iso(self.recorded_at),
        }
        if self.ended_at is not None:
            document.update(planned_to=to_utc_iso(self.planned_end) if self.planned_end else None,
                            ended_by=self.ended_by, ended_at=to_utc_iso(self.ended_at))
        if self.earlier_endings:
            document["earlier_endings"] = [dict(ending) for ending in self.earlier_endings]
        return document


def overlaps(start: Instant, end: Instant | None, other_start: Instant, other_end: Instant | None) -> bool:
    """The one definition of *excused*: a period out of service ``[start, end)`` excuses a window
    ``[other_start, other_end)`` when they share any instant (``None``: open-ended). Datetimes (the
    evaluation, the notifier) or UTC ISO strings as stored (the report): the same order."""
    return (other_end is None or start < other_end) and (end is None or other_start < end)


def in_effect(start: Instant, end: Instant | None, instant: Instant) -> bool:
    """A period ``[start, end)`` (``end`` None: open-ended) is in effect at ``instant``."""
    return start <= instant and (end is None or instant < end)


def excused_equipment(window: OccurrenceWindow, periods: Iterable[OutOfServicePeriod]) -> frozenset[str]:
    """Equipment out of service for any part of the window."""
    return frozenset(period.equipment_id for period in periods if period.excuses(window))


def overlapping(periods: Iterable[OutOfServicePeriod], start: datetime,
                end: datetime | None) -> list[OutOfServicePeriod]:
    """The periods sharing an instant with ``[start, end)`` (``end`` None: open-ended)."""
    return [p for p in periods if p.overlaps(start, end)]
