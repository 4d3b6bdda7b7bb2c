"""Closure calendars: named sets of local dates (site holidays, planned shutdowns) on which the
checklists that reference them (``closed_on``) have no window due, exactly as an EXDATE would.

A calendar is managed once and referenced by any number of checklists. Its dates are *local*
dates: a checklist's window is closed when its start, on the checklist's own clock (its time
zone), falls on one of them, so the same calendar closes 3 April in Berlin and in Chicago at
their own midnights. Pure domain: the table adapter (:mod:`missed_checks.aws.table.calendars`)
reads and writes the items.

Bounds: an id is 1-64 letters, digits, ``.``, ``_`` or ``-`` starting with a letter or digit;
at most :data:`MAX_DATES` dates, each an ISO date (``2026-04-03``) in the years the recurrence
engine accepts; a description of at most :data:`MAX_DESCRIPTION` characters; a checklist
references at most :data:`MAX_CALENDARS_PER_CHECKLIST` calendars.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from missed_checks import identifiers
from missed_checks.checklists.recurrence import LAST_YEAR
from missed_checks.errors import InvalidInput, describe, shorten
from missed_checks.timefmt import FIRST_YEAR, to_utc_iso

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")

MAX_DATES = 1000
"""Dates per calendar: about three years of every day, far more than any holiday list; keeps the
item (and its revision records) well under DynamoDB's 400 KB."""
MAX_DESCRIPTION = 500
MAX_CALENDARS_PER_CHECKLIST = 20
"""A checklist put is one transaction with one action per calendar it references or drops (at
most 100 actions): 20 + 20 + the checklist itself stays inside it."""


def validate_calendar_id(calendar_id: object, field: str = "id") -> str:
    return identifiers.KINDS["calendar id"].validate(calendar_id, field)


def parse_date(value: object, field: str) -> date:
    """One ISO local date (``2026-04-03``) in the recurrence engine's years; InvalidInput naming ``field``."""
    if not isinstance(value, str):
        raise InvalidInput(field, f"is {describe(value)}, not an ISO date such as 2026-04-03")
    text = value.strip()
    if not _ISO_DATE.fullmatch(text):
        raise InvalidInput(field, f"{shorten(value)} is not an ISO date such as 2026-04-03 (a local date, no time)")
    try:
        parsed = date.fromisoformat(text)
    except ValueError as error:
        raise InvalidInput(field, f"{text!r} is not a calendar date ({error})") from None
    if not FIRST_YEAR <= parsed.year <= LAST_YEAR:
        raise InvalidInput(field, f"{text} is outside the years {FIRST_YEAR} to {LAST_YEAR}")
    return parsed


def parse_dates(values: object, field: str = "dates") -> tuple[date, ...]:
    """A list of ISO dates: validated one by one (``dates[2]: ...``), de-duplicated and sorted."""
    if isinstance(values, str) or not isinstance(values, list | tuple):
        raise InvalidInput(field, f"is {describe(values)}, not a list of ISO dates such as [\"2026-04-03\"]")
    parsed = {parse_date(value, f"{field}[{index}]") for index, value in enumerate(values)}
    if len(parsed) > MAX_DATES:
        raise InvalidInput(field, f"{len(parsed)} distinct dates; a calendar holds at most {MAX_DATES}")
    return tuple(sorted(parsed))


def validate_description(value: object, field: str = "description") -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInput(field, f"is {describe(value)}, not text")
    if len(value) > MAX_DESCRIPTION:
        raise InvalidInput(field, f"is {len(value)} characters; at most {MAX_DESCRIPTION}")
    return value


def validate_closed_on(values: object, field: str = "closed_on") -> tuple[str, ...]:
    """A checklist's calendar ids: a list of valid ids, none repeated (``closed_on[2]: 'x' repeats
    closed_on[0]``), at most :data:`MAX_CALENDARS_PER_CHECKLIST`. Order is kept."""
    if values is None:
        return ()
    if isinstance(values, str) or not isinstance(values, list | tuple):
        raise InvalidInput(field, f"is {describe(values)}, not a list of calendar ids")
    seen: dict[str, int] = {}
    for index, value in enumerate(values):
        calendar_id = validate_calendar_id(value, f"{field}[{index}]")
        if calendar_id in seen:
            raise InvalidInput(f"{field}[{index}]", f"{calendar_id!r} repeats {field}[{seen[calendar_id]}]")
        seen[calendar_id] = index
    if len(seen) > MAX_CALENDARS_PER_CHECKLIST:
        raise InvalidInput(field, f"{len(seen)} calendars; a checklist references at most "
                                  f"{MAX_CALENDARS_PER_CHECKLIST}")
    return tuple(seen)


def validate_author(value: object, field: str = "by") -> str:
    """Who puts a calendar revision: one line of text (:func:`missed_checks.identifiers.one_line`,
    1-128 characters), or InvalidInput naming ``field``."""
    return identifiers.one_line(value, field, "who puts the calendar")


@dataclass(frozen=True)
class ClosureCalendar:
    """A named calendar of closed local dates."""

    calendar_id: str
    dates: tuple[date, ...]
    description: str = ""
    revision: int = 0
    """1 for a new calendar, +1 on every put: judged windows record the revision they were judged by."""
    updated_at: datetime | None = None
    used_by: frozenset[str] = frozenset()
    """The checklists that reference it (kept by the same transaction that puts the checklist)."""
    updated_by: str | None = None
    """Who put this revision (None: a revision written before authors were kept). With
    :attr:`updated_at`, kept for good on the revision's own record."""
    site_id: str | None = None
    """The site whose checklists may reference it (#31); None for one made before sites existed
    (any checklist without a site may). Never changes once set."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.calendar_id,
            "site_id": self.site_id,
            "description": self.description,
            "dates": [d.isoformat() for d in self.dates],
            "revision": self.revision,
            "updated_at": to_utc_iso(self.updated_at) if self.updated_at else None,
            "updated_by": self.updated_by,
            "used_by": sorted(self.used_by),
        }


def closed_dates(calendars: Iterable[ClosureCalendar]) -> frozenset[date]:
    """Every date closed by any of ``calendars``."""
    return frozenset(d for calendar in calendars for d in calendar.dates)

