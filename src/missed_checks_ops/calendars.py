"""Closure calendars (#23 item 2): the ``calendar`` command group's files and use cases (the product's
:mod:`missed_checks.checklists.closing`, as the operator or the person ``--as`` names), and the
calendars a checklist file names, checked before anything is written."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from typing import Any

import yaml

from missed_checks.checklists import closing
from missed_checks.checklists.closure_calendar import (
    ClosureCalendar,
    parse_dates,
    validate_calendar_id,
    validate_closed_on,
    validate_description,
)
from missed_checks.errors import InvalidInput
from missed_checks.permissions.caller import Caller
from missed_checks_ops.inputs import read_text, refuse_repeated_ids
from missed_checks_ops.target import StackTarget

CALENDAR_FIELDS = ("id", "dates", "description")


def calendar_specs(path: str) -> list[dict[str, Any]]:
    """One calendar or a list of them from a YAML or JSON file: ``{id, dates: [...], description}``,
    every entry validated (``entries[1].dates[2]: ...``) and no id repeated, before anything is written."""
    try:
        document = yaml.safe_load(read_text(path, "file"))
    except yaml.YAMLError as error:
        raise InvalidInput("file", f"{path} is not valid YAML or JSON: {error}") from None
    entries = document if isinstance(document, list) else [document]
    specs = []
    for index, entry in enumerate(entries):
        where = f"entries[{index}]." if isinstance(document, list) else ""
        if not isinstance(entry, dict):
            raise InvalidInput(f"{where or 'file'}", f"{path}: expected a mapping with id, dates, description")
        unknown = sorted(str(key) for key in set(entry) - set(CALENDAR_FIELDS))
        if unknown:
            raise InvalidInput(f"{where}{unknown[0]}", f"unknown field; expected {', '.join(CALENDAR_FIELDS)}")
        # YAML reads an unquoted 2026-04-03 as a date: take it as written
        dates = [d.isoformat() if isinstance(d, date) else d for d in entry.get("dates") or []] \
            if isinstance(entry.get("dates"), list) else entry.get("dates")
        specs.append({"id": validate_calendar_id(entry.get("id"), f"{where}id"),
                      "dates": parse_dates(dates, f"{where}dates"),
                      # absent: an existing calendar keeps its description
                      "description": (validate_description(entry["description"], f"{where}description")
                                      if "description" in entry else None)})
    refuse_repeated_ids([spec["id"] for spec in specs])
    return specs


def put_calendar(target: StackTarget, caller: Caller, calendar_id: str, dates: Sequence[date], now: datetime,
                 description: str | None = None, *, by: str | None = None) -> ClosureCalendar:
    """A new revision of the calendar, put by ``by`` (default the caller) at ``now`` (kept on the revision's
    record)."""
    return closing.put_calendar(target.table(), caller, calendar_id, dates, now, description=description, by=by)


def get_calendar(target: StackTarget, caller: Caller, calendar_id: str, revision: int | None = None) -> ClosureCalendar:
    """The calendar (or one of its revisions); :class:`NotFound`."""
    return closing.get_calendar(target.table(), caller, calendar_id, revision)


def list_calendars(target: StackTarget, caller: Caller) -> list[ClosureCalendar]:
    return closing.list_calendars(target.table(), caller)


def delete_calendar(target: StackTarget, caller: Caller, calendar_id: str) -> None:
    """Delete the calendar as the caller; refused (Conflict naming them) while checklists reference it; NotFound."""
    closing.delete_calendar(target.table(), caller, calendar_id)


def closures_of_specs(target: StackTarget, specs: Sequence[Mapping[str, Any]]) -> list[frozenset[date]]:
    """The closed dates of each checklist spec's ``closed_on`` (each spec validated first); every
    calendar named must exist (``entries[2].closed_on[0]: no calendar 'x'``), so that a file is
    refused whole before any checklist of it is written."""
    named = [validate_closed_on(spec.get("closed_on"), _where(specs, i) + "closed_on") for i, spec in enumerate(specs)]
    calendars = target.table().get_calendars(c for ids in named for c in ids) if any(named) else {}
    closures = []
    for index, ids in enumerate(named):
        missing = [(n, c) for n, c in enumerate(ids) if calendars.get(c) is None]
        if missing:
            n, calendar_id = missing[0]
            raise InvalidInput(f"{_where(specs, index)}closed_on[{n}]",
                               f"no calendar {calendar_id!r} (create it first: missed-checks calendar put "
                               f"{calendar_id} --date YYYY-MM-DD)")
        closures.append(frozenset(d for c in ids for d in calendars[c].dates))  # type: ignore[union-attr]
    return closures


def _where(specs: Sequence[Any], index: int) -> str:
    return f"entries[{index}]." if len(specs) > 1 else ""


def ids_of(calendars: Iterable[ClosureCalendar]) -> list[str]:
    return [c.calendar_id for c in calendars]
