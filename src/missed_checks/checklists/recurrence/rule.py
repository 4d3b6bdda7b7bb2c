"""The RRULE's parts as dateutil applies them, read from the built :class:`~dateutil.rrule.rrule`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dateutil.rrule import DAILY, HOURLY, WEEKLY, YEARLY, rrule


@dataclass(frozen=True)
class RuleParts:
    """The RRULE's parts as the rule applies them, RFC 5545's defaults from DTSTART filled in.

    Read from the rule dateutil built (:func:`rule_parts`), so code reasoning about the rule (such
    as the schedule converter) sees dateutil's own normalisation: lists sorted and unique; a YEARLY
    rule without a day filter gets DTSTART's month and day, a MONTHLY one DTSTART's day, a WEEKLY
    one DTSTART's weekday; BYHOUR (except for HOURLY), BYMINUTE and BYSECOND default to DTSTART's;
    an HOURLY rule's BYHOUR keeps only hours its INTERVAL can reach. ``freq`` is one of dateutil's
    ``YEARLY`` .. ``HOURLY``; weekdays are 0=Monday..6=Sunday.
    """

    freq: int
    interval: int
    wkst: int
    bysetpos: tuple[int, ...] | None
    bymonth: tuple[int, ...] | None
    bymonthday: tuple[int, ...]  # positive days first, then negative ones; () when none
    byyearday: tuple[int, ...] | None
    byweekno: tuple[int, ...] | None
    weekdays: tuple[int, ...] | None  # plain weekdays (and, above MONTHLY, ordinals' weekdays)
    nweekdays: tuple[tuple[int, int], ...] | None  # (weekday, n) ordinals, MONTHLY and YEARLY only
    byhour: tuple[int, ...] | None  # None: every hour (HOURLY without BYHOUR)
    byminute: tuple[int, ...]
    bysecond: tuple[int, ...]


def rule_parts(rule: rrule) -> RuleParts:
    """The parts of ``rule`` after dateutil's normalisation (defaults from DTSTART included).

    dateutil keeps them only in private attributes (``_freq``, ``_byweekday``, ...; its public
    API is iteration and ``str()``, which re-renders the rule as text): this is the one place that
    reads them. BYHOUR/BYMINUTE/BYSECOND defaulted from DTSTART are sets there, hence the sorting.
    """
    state: dict[str, Any] = vars(rule)

    def ordered(name: str) -> tuple[int, ...] | None:
        values = state[f"_{name}"]
        return None if values is None else tuple(sorted(values))

    return RuleParts(
        freq=state["_freq"],
        interval=state["_interval"],
        wkst=state["_wkst"],
        bysetpos=state["_bysetpos"],
        bymonth=ordered("bymonth"),
        bymonthday=tuple(state["_bymonthday"]) + tuple(state["_bynmonthday"]),
        byyearday=ordered("byyearday"),
        byweekno=ordered("byweekno"),
        weekdays=ordered("byweekday"),
        nweekdays=state["_bynweekday"],
        byhour=ordered("byhour"),
        byminute=ordered("byminute") or (),
        bysecond=ordered("bysecond") or (),
    )


def rule_count(rule: rrule) -> int | None:
    """The rule's COUNT (see :func:`rule_parts` for why a private attribute)."""
    count: int | None = vars(rule)["_count"]
    return count


def yearly_day_filter(parts: RuleParts, dtstart: datetime, until: datetime | None = None) -> rrule | None:
    """A YEARLY rule (naive, interval 1) matching the dates a DAILY/WEEKLY/HOURLY rule's
    day filters (BYMONTH, BYMONTHDAY, BYDAY, BYYEARDAY, BYWEEKNO) allow, with ``dtstart``'s time.

    None when the rule (its ``parts``) has another frequency, uses BYSETPOS (which selects per period), or has no
    day filter (every date matches).
    """
    if parts.freq not in (DAILY, WEEKLY, HOURLY) or parts.bysetpos:
        return None
    bymonthday, byweekday = parts.bymonthday or None, parts.weekdays or None
    byyearday, byweekno = parts.byyearday or None, parts.byweekno or None
    if all(value is None for value in (bymonthday, byweekday, byyearday, byweekno)):
        if parts.bymonth is None:
            return None
        bymonthday = tuple(range(1, 32))
    return rrule(
        YEARLY, dtstart=dtstart, until=until, bymonth=parts.bymonth, wkst=parts.wkst, bymonthday=bymonthday,
        byweekday=byweekday, byyearday=byyearday, byweekno=byweekno,
    )
