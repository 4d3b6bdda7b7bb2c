"""A checklist's recurrence: RFC 5545 text parsed into occurrence windows.

Input is what calendar tools export::

    DTSTART;TZID=Europe/Berlin:20260105T060000
    RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,FR
    EXDATE;TZID=Europe/Berlin:20260406T060000

``DTSTART`` may also be a floating local time (``20260105T060000``), a UTC time (``...Z``) or a
date (``20260105`` or ``;VALUE=DATE``), with the zone then given separately (``timezone``;
a UTC ``DTSTART`` without one is read in UTC). ``EXDATE`` and ``RDATE`` lines may repeat and carry
several comma-separated values; a date-only ``EXDATE`` removes every occurrence starting on
that local date (holidays). The RRULE's semantics are dateutil's; this module only chooses the
zone, resolves local times and derives windows.

Every occurrence becomes an :class:`OccurrenceWindow` ``[start, end)``, ``evaluate_at = end +
grace`` (:mod:`.windows` says how local times and durations resolve across DST).

The package follows dateutil's seams: :mod:`.text` reads and validates the text into one built
``rrule`` (and the zone, EXDATEs, RDATEs); :mod:`.rule` reads the rule's normalised parts back
from it; :mod:`.windows` turns occurrences into windows on the local clock; :mod:`.feasibility`
refuses rules that never occur or whose windows overlap; :mod:`.limits` holds the bounds.

Bounds (anything outside raises :class:`InvalidRecurrence`, never another exception): the text
is at most :data:`MAX_TEXT_CHARS` characters; DTSTART, UNTIL, EXDATE and RDATE lie in the years
:data:`FIRST_YEAR` to :data:`LAST_YEAR` (AWS cron's years: no schedule can fire outside them);
occurrences after :data:`LAST_YEAR` are not produced (a COUNT that reaches further ends there);
each BYxxx list has at most as many values as it has distinct ones (24 for BYHOUR); window and
grace are at most ``P366D`` (``missed_checks.checklists.durations``); the time zone is a string naming an
IANA zone.
"""

from __future__ import annotations

from functools import lru_cache

from dateutil.rrule import rruleset

from missed_checks.checklists.recurrence.feasibility import check_feasible
from missed_checks.checklists.recurrence.limits import LAST_YEAR, MAX_COUNT, MAX_TEXT_CHARS, range_end
from missed_checks.checklists.recurrence.rule import RuleParts, rule_count, rule_parts, yearly_day_filter
from missed_checks.checklists.recurrence.text import read_text
from missed_checks.checklists.recurrence.windows import DueWindows, OccurrenceWindow, Recurrence, resolve_local
from missed_checks.timefmt import FIRST_YEAR

__all__ = [
    "FIRST_YEAR",
    "LAST_YEAR",
    "MAX_COUNT",
    "MAX_TEXT_CHARS",
    "DueWindows",
    "OccurrenceWindow",
    "Recurrence",
    "RuleParts",
    "parse_recurrence",
    "yearly_day_filter",
]


def parse_recurrence(
    text: object,
    *,
    timezone: object = None,
    window: object = None,
    grace: object = None,
) -> Recurrence:
    """Parse and validate a checklist's recurrence, raising :class:`InvalidRecurrence`.

    ``timezone`` is the checklist's IANA zone, needed when DTSTART has no TZID (it must agree
    with a TZID). ``window`` defaults to ``P1D``, ``grace`` to ``PT0S`` (only when not given:
    an empty string is refused). Rejected, naming the field: garbage lines, a missing DTSTART or
    RRULE, sub-hourly rules, COUNT above :data:`MAX_COUNT`, dates outside
    :data:`FIRST_YEAR`..:data:`LAST_YEAR`, oversized text or BYxxx lists, rules that never occur,
    unknown zones, bad or overlong durations, a zero window, values that are not strings, and a
    window (or window + grace) longer than the shortest gap between consecutive occurrences, so
    that a performed check can never count for two windows. Whatever the arguments, the only
    exception raised is :class:`InvalidRecurrence`.

    A valid recurrence of text arguments is kept (the last :data:`PARSED_KEPT` used): parsing is pure,
    the :class:`Recurrence` frozen, and the feasibility check of a rule that fires often is the most
    expensive step a page or a recheck takes (an hourly rule's year of windows, about 70 ms on the
    2-core machine), so a checklist read again parses once per process.
    """
    arguments = (text, timezone, window, grace)
    if all(value is None or type(value) is str for value in arguments):
        return _parsed(*arguments)
    return _parse(text, timezone, window, grace)


PARSED_KEPT = 32
"""Parsed recurrences kept per process (:func:`parse_recurrence`): a site's checklists, which a page
or a recheck reads again and again. Each keeps the occurrences its rule set has generated (dateutil's
cache, from DTSTART to the latest instant asked about): an hourly rule asked about November 2026
from a DTSTART in March 2025 grew by 0.49 MB (tracemalloc, 2026-11-28), so 32 such stay far inside a
function's 512 MB."""


@lru_cache(maxsize=PARSED_KEPT)
def _parsed(text: str, timezone: str | None, window: str | None, grace: str | None) -> Recurrence:
    return _parse(text, timezone, window, grace)  # an error is raised, never kept


def _parse(text: object, timezone: object, window: object, grace: object) -> Recurrence:
    read = read_text(text, timezone, window, grace)
    # Without COUNT or UNTIL the rule ends with LAST_YEAR: dateutil would otherwise walk to 9999.
    count = rule_count(read.rule)
    bounded = read.until is not None or count is not None
    rule_set = rruleset(cache=True)
    rule_set.rrule(read.rule if bounded else read.rule.replace(until=range_end(read.zone)))
    for rdate in read.rdates:
        rule_set.rdate(rdate)
    recurrence = Recurrence(
        text=read.text,
        timezone=read.timezone,
        zone=read.zone,
        dtstart=read.dtstart,
        window=read.window,
        grace=read.grace,
        date_only=read.date_only,
        until=read.until,
        count=count,
        rule=read.rule,
        parts=rule_parts(read.rule),
        rule_set=rule_set,
        exdates=read.exdates,
        exdate_dates=read.exdate_dates,
        rdates=tuple(resolve_local(rdate.replace(tzinfo=None), read.zone) for rdate in read.rdates),
    )
    check_feasible(recurrence)
    return recurrence
