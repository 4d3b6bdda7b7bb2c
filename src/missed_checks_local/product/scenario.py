"""Scenarios: a timeline of checklist changes and performed checks, played on the local runtime.

A scenario file is JSON::

    {"name": "...", "start": "2026-03-02T00:00:00Z", "end": "2026-04-06T00:00:00Z",
     "events": [
       {"at": "...", "put_checklist": {"id": "forklift-daily", "name": "...", "recurrence": "...",
                                       "timezone": "...", "window": "PT8H", "grace": "PT30M",
                                       "validate": true, "notify": {"to": ["crew@example.com"],
                                       "remind_before": ["PT1H"], "escalate_to": ["lead@example.com"],
                                       "escalate_after": 3}}},
       {"at": "...", "assign": {"checklist": "forklift-daily", "equipment": ["fl-01", "fl-02"]}},
       {"at": "...", "unassign": {"checklist": "forklift-daily", "equipment": ["fl-02"]}},
       {"at": "...", "performed": {"checklist": "forklift-daily", "equipment": "fl-01",
                                   "performed_at": "...", "by": "j.doe"}},
       {"at": "...", "pause_checklist": "forklift-daily"},
       {"at": "...", "resume_checklist": "forklift-daily"},
       {"at": "...", "delete_checklist": "forklift-daily"},
       {"at": "...", "fail_next_firing": {"checklist": "forklift-daily", "count": 1}},
       {"at": "...", "dismiss": {"checklist": "forklift-daily", "equipment": "fl-02",
                                 "window_start": "...", "reason": "in the workshop", "by": "j.doe"}},
       {"at": "...", "out_of_service": {"equipment": "fl-01", "from": "...", "to": "...",
                                        "reason": "gearbox", "by": "j.doe"}},
       {"at": "...", "back_in_service": {"equipment": "fl-01", "by": "j.doe"}},
       {"at": "...", "put_calendar": {"id": "site-holidays", "dates": ["2026-04-03"],
                                      "description": "...", "by": "j.doe"}},
       {"at": "...", "subscribe_digest": {"id": "fleet-daily", "to": "fleet@example.com", "period": "daily",
                                          "time": "07:00", "timezone": "Europe/Berlin"}}]}

``put_calendar`` creates or replaces a closure calendar; ``put_checklist``'s ``closed_on`` lists
the calendars whose dates close its windows (each must have been put earlier).

``put_checklist`` on an existing id is an edit; ``"validate": false`` writes the rule unchecked,
as a hand edit in the console would. ``performed_at`` defaults to ``at``; ``by`` (default
``scenario``), of ``performed`` and ``put_calendar``, is kept as who recorded the check or put the
calendar revision (a check performed again keeps its first record). ``fail_next_firing``
makes the next firing(s) of the checklist's schedule fail to start the evaluation (an
``AccessDeniedException``, as when the scheduler role lost its permission): the firing lands in
the scheduler dead-letter queue and the next firing must catch up. ``dismiss`` excuses a missed
check (``missed-checks missed dismiss``) at ``at``; when its record is not written yet (its
window's firing was late or dropped, as under ``local chaos``), the dismissal waits for it and
is applied as soon as the record exists; a record that never comes fails the run, naming the
event. ``out_of_service`` records a period of equipment assigned earlier in the timeline (``to``
may be left out or null: until further notice; ``by`` defaults to ``scenario``), recorded at
``at``; ``back_in_service`` ends the period in effect at ``at`` early, at ``at``
(docs/out-of-service.md). What the table would refuse when an event plays is refused with the
file: a period overlapping an earlier one of the same equipment, ``back_in_service`` with no period
in effect. Events at the same instant keep their file order and come before
schedule firings at that instant.
``subscribe_digest`` (#18) writes a digest subscription and its schedule as ``missed-checks digest
subscribe`` does (``day`` and ``checklists`` optional); its digests are in the run's
``notifications`` with kind ``digest``.

Cleared to operate (#33, docs/defects.md, docs/readiness.md): ``put_checklist`` takes ``items``
(what a check answers, as ``checklist put --file``: ``[{"id": "brakes", "label": "Brakes work",
"kind": "pass_fail", "critical": true}, ...]``), ``pre_use`` and ``clear_on_pass``; ``performed``
takes ``answers`` (``{"brakes": "fail"}``), checked against the items in force at its
``performed_at`` when it plays (a bad answer fails the run naming the event and the item);
``{"at": "...", "resolve_defect": {"checklist", "equipment", "found_at", "note", "by"}}`` resolves,
as a supervisor, the defect the check performed at ``found_at`` opened. The run's ``readiness`` lists
every ``Equipment readiness changed`` event a subscriber received, ``defects`` every defect.

Every problem in a file is reported as :class:`~missed_checks.errors.InvalidInput` naming the
event and field (``events[3].put_checklist.recurrence: ...``).
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from missed_checks.aws.table.item_size import within_item_size
from missed_checks.checklists.checklist import Checklist, validate_checklist_id
from missed_checks.checklists.closure_calendar import (
    parse_dates,
    validate_author,
    validate_calendar_id,
    validate_closed_on,
    validate_description,
)
from missed_checks.checklists.saving import save_checklist
from missed_checks.equipment.assignments import Assignment, validate_equipment_id
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.errors import InvalidInput
from missed_checks.notifications.digest import Subscription
from missed_checks.notifications.notification import NotifySettings
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks.performed_checks.recording import Row, record_checks
from missed_checks.timefmt import parse_instant
from missed_checks_local.product.faults import FaultInjector, parse_faults

LATEST_INSTANT = datetime.max.replace(tzinfo=UTC)

__all__ = ["ACTIONS", "Scenario", "ScenarioEvent", "parse_scenario", "run_scenario"]

ACTIONS = (
    "put_checklist",
    "assign",
    "unassign",
    "performed",
    "pause_checklist",
    "resume_checklist",
    "delete_checklist",
    "fail_next_firing",
    "dismiss",
    # out of service (issue #23 item 1)
    "out_of_service",
    "back_in_service",
    "put_calendar",  # closure calendars (#23 item 2)
    "subscribe_digest",  # digest (#18): a subscription and its schedule, as `digest subscribe` writes them
    "resolve_defect",  # cleared to operate (#33): a supervisor resolves the defect a failed check opened
)
_EQUIPMENT_ACTIONS = ("out_of_service", "back_in_service")
"""Events about one piece of equipment, on all its checklists (no ``checklist`` field)."""
_PUT_KEYS = {"id", "name", "recurrence", "timezone", "window", "grace", "validate", "closed_on",
             "notify",  # notify: who is told (#18), as `checklist put --file` takes it
             "items", "pre_use", "clear_on_pass"}  # what a check answers, and readiness (#33)
_TOP_KEYS = {"name", "description", "start", "end", "events", "parameters", "faults"}


@dataclass(frozen=True)
class ScenarioEvent:
    index: int
    """Position in the file's ``events`` list (error messages and logs use it)."""
    at: datetime
    action: str
    args: Any

    @property
    def where(self) -> str:
        return f"events[{self.index}].{self.action}"


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    start: datetime
    end: datetime
    events: tuple[ScenarioEvent, ...]
    parameters: dict[str, str]
    """Template parameter overrides (``{"MaxWindowsPerRun": "5"}``)."""
    faults: tuple[Any, ...] = ()
    """Faults to inject (:mod:`missed_checks_local.product.faults`); none by default."""

    @property
    def equipment_ids(self) -> list[str]:
        """Every piece of equipment the timeline assigns, in order of first assignment."""
        ids: dict[str, None] = {}
        for event in self.events:
            if event.action == "assign":
                ids.update(dict.fromkeys(event.args["equipment"]))
        return list(ids)

    @property
    def checklist_ids(self) -> list[str]:
        ids: dict[str, None] = {}
        for event in self.events:
            if event.action == "put_checklist":
                ids[event.args["id"]] = None
        return list(ids)

    @classmethod
    def from_dict(cls, data: Any, *, name: str = "scenario") -> Scenario:
        if not isinstance(data, Mapping):
            raise InvalidInput("scenario", "must be a JSON object with start, end and events")
        unknown = sorted(set(data) - _TOP_KEYS)
        if unknown:
            raise InvalidInput(unknown[0], f"unknown scenario key; expected some of {sorted(_TOP_KEYS)}")
        for key in ("start", "end", "events"):
            if key not in data:
                raise InvalidInput(key, "is required")
        start = parse_instant(data["start"], "start")
        end = parse_instant(data["end"], "end")
        if end <= start:
            raise InvalidInput("end", "must be after start")
        if not isinstance(data["events"], list):
            raise InvalidInput("events", "must be a list of events")
        parameters = data.get("parameters") or {}
        if not isinstance(parameters, Mapping) or not all(isinstance(v, str | int) for v in parameters.values()):
            raise InvalidInput("parameters", "must map template parameter names to values")
        events = [_event(index, raw, start, end) for index, raw in enumerate(data["events"])]
        events.sort(key=lambda event: (event.at, event.index))
        _check_references(events)

        faults = parse_faults(data["faults"]) if "faults" in data else []
        return cls(
            name=str(data.get("name") or name),
            description=str(data.get("description") or ""),
            start=start,
            end=end,
            events=tuple(events),
            parameters={str(k): str(v) for k, v in parameters.items()},
            faults=tuple(faults),
        )


def parse_scenario(text: str, source: str, name: str) -> Scenario:
    """A scenario from its file's text (JSON; ``source`` names the file in the error when it is not,
    ``name`` is the scenario's name when the file gives none). The ``missed-checks local`` commands
    read the file (:func:`missed_checks_ops.cli.local.load_scenario`)."""
    try:
        data = json.loads(text)
    except ValueError as error:
        raise InvalidInput("SCENARIO", f"{source} is not valid JSON: {error}") from None
    return Scenario.from_dict(data, name=name)


# -- validation ---------------------------------------------------------------------------------
def _event(index: int, raw: Any, start: datetime, end: datetime) -> ScenarioEvent:
    where = f"events[{index}]"
    if not isinstance(raw, Mapping):
        raise InvalidInput(where, "must be an object with 'at' and one action")
    if "at" not in raw:
        raise InvalidInput(f"{where}.at", "is required")
    at = parse_instant(raw["at"], f"{where}.at")
    if not start <= at <= end:
        raise InvalidInput(f"{where}.at", f"{raw['at']} is outside the scenario's start..end")
    actions = [key for key in raw if key != "at"]
    unknown = [key for key in actions if key not in ACTIONS]
    if unknown:
        raise InvalidInput(f"{where}.{unknown[0]}", f"unknown action; expected one of {', '.join(ACTIONS)}")
    if len(actions) != 1:
        raise InvalidInput(where, f"needs exactly one action ({', '.join(ACTIONS)}), found {len(actions)}")
    action = actions[0]
    args = _ARGUMENT_CHECKS[action](f"{where}.{action}", raw[action], at)
    return ScenarioEvent(index=index, at=at, action=action, args=args)


def _text(where: str, value: Any, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(where, "must be a non-empty string")
    return value


def _checklist_id(where: str, value: Any) -> str:

    return validate_checklist_id(_text(where, value), where)


def _equipment_id(where: str, value: Any) -> str:

    text = _text(where, value)
    try:
        return validate_equipment_id(text)
    except InvalidInput as error:
        raise InvalidInput(where, error.message) from None


def _fields(where: str, value: Any, allowed: set[str], required: set[str]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidInput(where, f"must be an object with {', '.join(sorted(required))}")
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise InvalidInput(f"{where}.{unknown[0]}", f"unknown field; expected some of {sorted(allowed)}")
    for key in sorted(required):
        if key not in value:
            raise InvalidInput(f"{where}.{key}", "is required")
    return value


def _put(where: str, value: Any, at: datetime) -> dict[str, Any]:
    fields = _fields(where, value, _PUT_KEYS, {"id", "recurrence"})
    args: dict[str, Any] = {"id": _checklist_id(f"{where}.id", fields["id"])}
    args["recurrence"] = _text(f"{where}.recurrence", fields["recurrence"])
    for key in ("name", "timezone", "window", "grace"):
        args[key] = _text(f"{where}.{key}", fields.get(key), optional=True)
    validate = fields.get("validate", True)
    if not isinstance(validate, bool):
        raise InvalidInput(f"{where}.validate", "must be true or false")
    args["validate"] = validate
    within_item_size({key: args[key] for key in ("name", "recurrence", "timezone", "window", "grace")}, f"{where}.")
    # closure calendars: absent keeps an existing checklist's list
    args["closed_on"] = validate_closed_on(fields["closed_on"], f"{where}.closed_on") if "closed_on" in fields else None
    if validate:

        checklist = Checklist(
            checklist_id=args["id"],
            recurrence=args["recurrence"],
            timezone=args["timezone"],
            window=args["window"],
            grace=args["grace"],
        )
        try:
            checklist.parsed()
        except InvalidInput as error:
            raise InvalidInput(f"{where}.{error.field}", error.message) from None
    # notifications (#18): the same notify object as `checklist put --file`, validated against the window
    args["notify"] = None
    if "notify" in fields:
        rule = Checklist(checklist_id=args["id"], recurrence=args["recurrence"], timezone=args["timezone"],
                         window=args["window"], grace=args["grace"]).parsed() if validate else None
        args["notify"] = NotifySettings.parse(fields["notify"], rule, f"{where}.notify")
    # cleared to operate (#33): absent keeps an existing checklist's items and flags
    args["items"] = _items(f"{where}.items", fields["items"]) if "items" in fields else None
    for flag in ("pre_use", "clear_on_pass"):
        if flag in fields and not isinstance(fields[flag], bool):
            raise InvalidInput(f"{where}.{flag}", "must be true or false")
        args[flag] = fields.get(flag)
    return args


def _items(where: str, value: Any) -> tuple[Any, ...]:
    """A checklist's items (#33), as ``checklist put --file`` takes them (every problem named
    ``events[i].put_checklist.items[2].minimum``)."""
    from missed_checks.checklists.check_item import parse_items

    try:
        return parse_items(value, "items")
    except InvalidInput as error:
        raise InvalidInput(f"{where.removesuffix('.items')}.{error.field}", error.message) from None


def _assignment(where: str, value: Any, at: datetime) -> dict[str, Any]:
    fields = _fields(where, value, {"checklist", "equipment"}, {"checklist", "equipment"})
    equipment = fields["equipment"]
    items = [equipment] if isinstance(equipment, str) else equipment
    if not isinstance(items, list) or not items:
        raise InvalidInput(f"{where}.equipment", "must be an equipment id or a non-empty list of them")
    return {
        "checklist": _checklist_id(f"{where}.checklist", fields["checklist"]),
        "equipment": [_equipment_id(f"{where}.equipment[{i}]", item) for i, item in enumerate(items)],
    }


def _performed(where: str, value: Any, at: datetime) -> dict[str, Any]:
    fields = _fields(where, value, {"checklist", "equipment", "performed_at", "by", "answers"},
                     {"checklist", "equipment"})
    performed_at = at
    if fields.get("performed_at") is not None:
        performed_at = parse_instant(fields["performed_at"], f"{where}.performed_at")
        if performed_at > at:
            raise InvalidInput(
                f"{where}.performed_at", "cannot be after the event's 'at' (a check is recorded after it is done)"
            )
    return {
        "checklist": _checklist_id(f"{where}.checklist", fields["checklist"]),
        "equipment": _equipment_id(f"{where}.equipment", fields["equipment"]),
        "performed_at": performed_at,
        "by": _author(f"{where}.by", fields.get("by", _SCENARIO_BY)),  # kept as recorded_by
        # what the check found (#33): checked against the items in force at performed_at when played
        "answers": _answers(f"{where}.answers", fields["answers"]) if "answers" in fields else None,
    }


def _answers(where: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidInput(where, "must be an object of answers by item id, e.g. {\"brakes\": \"pass\"}")
    return dict(value)


def _resolve_defect(where: str, value: Any, at: datetime) -> dict[str, Any]:
    """A supervisor resolves the defect a failed check opened (#33): the check named by its
    checklist, equipment and ``found_at`` (its performed_at), with a note."""
    fields = _fields(where, value, {"checklist", "equipment", "found_at", "note", "by"},
                     {"checklist", "equipment", "found_at", "note", "by"})
    found_at = parse_instant(fields["found_at"], f"{where}.found_at")
    if found_at > at:
        raise InvalidInput(f"{where}.found_at", "is after the event's 'at' (a defect is resolved after it is found)")
    return {"checklist": _checklist_id(f"{where}.checklist", fields["checklist"]),
            "equipment": _equipment_id(f"{where}.equipment", fields["equipment"]),
            "found_at": found_at, "note": _text(f"{where}.note", fields["note"]),
            "by": _author(f"{where}.by", fields["by"])}


def _dismiss(where: str, value: Any, at: datetime) -> dict[str, Any]:
    fields = _fields(where, value, {"checklist", "equipment", "window_start", "reason", "by"},
                     {"checklist", "equipment", "window_start", "reason", "by"})
    window_start = parse_instant(fields["window_start"], f"{where}.window_start")
    if window_start > at:
        raise InvalidInput(f"{where}.window_start", "is after the event's 'at' (only a past window can be missed)")
    within_item_size({"reason": fields["reason"], "by": fields["by"]}, f"{where}.")
    return {
        "checklist": _checklist_id(f"{where}.checklist", fields["checklist"]),
        "equipment": _equipment_id(f"{where}.equipment", fields["equipment"]),
        "window_start": window_start,
        "reason": _text(f"{where}.reason", fields["reason"]),
        "by": _text(f"{where}.by", fields["by"]),
    }


def _plain_id(where: str, value: Any, at: datetime) -> str:
    return _checklist_id(where, value)


def _fail(where: str, value: Any, at: datetime) -> dict[str, Any]:
    if isinstance(value, str):
        value = {"checklist": value}
    fields = _fields(where, value, {"checklist", "count", "error"}, {"checklist"})
    count = fields.get("count", 1)
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise InvalidInput(f"{where}.count", "must be a whole number of at least 1")
    error = _text(f"{where}.error", fields.get("error"), optional=True) or "AccessDeniedException"
    return {"checklist": _checklist_id(f"{where}.checklist", fields["checklist"]), "count": count, "error": error}


# -- out of service (issue #23 item 1) ------------------------------------------------------------
_SCENARIO_BY = "scenario"
"""Who records an out-of-service event that names nobody."""


def _out_of_service(where: str, value: Any, at: datetime) -> OutOfServicePeriod:
    fields = _fields(where, value, {"equipment", "from", "to", "reason", "by"}, {"equipment", "from", "reason"})
    start = parse_instant(fields["from"], f"{where}.from")
    end = None if fields.get("to") is None else parse_instant(fields["to"], f"{where}.to")
    try:
        return OutOfServicePeriod.create(equipment_id=fields["equipment"], start=start, end=end,
                                         reason=fields["reason"], recorded_by=fields.get("by", _SCENARIO_BY),
                                         recorded_at=at)
    except InvalidInput as error:
        raise InvalidInput(f"{where}.{error.field}", error.message) from None


def _back_in_service(where: str, value: Any, at: datetime) -> dict[str, Any]:
    fields = _fields(where, value, {"equipment", "by"}, {"equipment"})
    return {"equipment": _equipment_id(f"{where}.equipment", fields["equipment"]),
            "by": _text(f"{where}.by", fields.get("by", _SCENARIO_BY))}


def _put_calendar(where: str, value: Any, at: datetime) -> dict[str, Any]:
    """Closure calendars (#23 item 2): ``{"id", "dates": [...], "description", "by"}``."""
    fields = _fields(where, value, {"id", "dates", "description", "by"}, {"id", "dates"})
    return {"id": validate_calendar_id(fields["id"], f"{where}.id"),
            "dates": parse_dates(fields["dates"], f"{where}.dates"),
            "description": validate_description(fields.get("description"), f"{where}.description"),
            "by": _author(f"{where}.by", fields.get("by", _SCENARIO_BY))}  # kept on the revision


def _author(where: str, value: Any) -> str:
    """Who an event says made a record (a performed check, a calendar revision): kept as given, so
    one line of text, without surrounding blanks (InvalidInput naming ``where`` otherwise)."""
    try:
        author = validate_author(value, where)
    except InvalidInput as error:
        raise InvalidInput(where, error.message) from None
    if author != value:
        raise InvalidInput(where, f"{value!r} has blanks around it: give the name as it is to be kept")
    return author


def _digest(where: str, value: Any, at: datetime) -> Subscription:
    """A digest subscription (#18), validated as ``digest subscribe`` validates it."""
    fields = _fields(where, value, {"id", "to", "period", "time", "timezone", "day", "checklists"},
                     {"id", "to", "period", "time", "timezone"})
    try:
        return Subscription.create(fields["id"], address=fields["to"], period=fields["period"], at=fields["time"],
                                   timezone=fields["timezone"], day=fields.get("day"),
                                   checklists=fields.get("checklists"), now=at)
    except InvalidInput as error:
        raise InvalidInput(f"{where}.{error.field}", error.message) from None


_ARGUMENT_CHECKS: dict[str, Callable[[str, Any, datetime], Any]] = {
    "put_checklist": _put,
    "assign": _assignment,
    "unassign": _assignment,
    "performed": _performed,
    "pause_checklist": _plain_id,
    "resume_checklist": _plain_id,
    "delete_checklist": _plain_id,
    "fail_next_firing": _fail,
    "dismiss": _dismiss,
    "out_of_service": _out_of_service,
    "back_in_service": _back_in_service,
    "put_calendar": _put_calendar,
    "subscribe_digest": _digest,  # digest (#18)
    "resolve_defect": _resolve_defect,  # cleared to operate (#33)
}


def _check_references(events: list[ScenarioEvent]) -> None:
    """Every event names a checklist that exists at that point of the timeline."""
    existing: set[str] = set()
    ever: set[str] = set()
    assigned: set[str] = set()  # equipment assigned so far (out-of-service events name one of them)
    held: dict[tuple[str, str], Assignment] = {}  # by (checklist, equipment): performed checks need one
    calendars: set[str] = set()
    periods: dict[str, list[OutOfServicePeriod]] = {}  # out of service so far, by equipment (as the table keeps them)
    for event in events:
        if event.action in _EQUIPMENT_ACTIONS:
            _check_equipment_reference(event, assigned)
            _check_out_of_service(event, periods)
            continue
        if event.action == "put_calendar":  # closure calendars: put before a checklist names them
            calendars.add(event.args["id"])
            continue
        if event.action == "assign":
            assigned.update(event.args["equipment"])
        if event.action == "put_checklist":
            for index, calendar_id in enumerate(event.args["closed_on"] or ()):
                if calendar_id not in calendars:
                    raise InvalidInput(f"{event.where}.closed_on[{index}]",
                                       f"no calendar {calendar_id!r} exists at {event.at.isoformat()} "
                                       "(put_calendar it earlier)")
            existing.add(event.args["id"])
            ever.add(event.args["id"])
            continue
        if event.action == "subscribe_digest":  # digest (#18): the checklists it names exist by then
            missing = [c for c in event.args.checklists if c not in existing]
            if missing:
                raise InvalidInput(f"{event.where}.checklists", f"no checklist {missing[0]!r} exists at "
                                                                 f"{event.at.isoformat()} (put_checklist it earlier)")
            continue
        if isinstance(event.args, str):
            checklist, field = event.args, event.where
        else:
            checklist, field = event.args["checklist"], f"{event.where}.checklist"
        # a check is recorded as POST /checks records it; a dismissal or a resolution may follow a deletion
        known = ever if event.action in ("dismiss", "resolve_defect") else existing
        if checklist not in known:
            raise InvalidInput(
                field,
                f"no checklist {checklist!r} exists at {event.at.isoformat()} (put_checklist it earlier"
                + (", and not after deleting it)" if checklist in ever else ")"),
            )
        if event.action == "delete_checklist":
            existing.discard(checklist)
        if event.action in ("assign", "unassign", "delete_checklist", "performed"):
            _follow_assignments(event, held)


def _follow_assignments(event: ScenarioEvent, held: dict[tuple[str, str], Assignment]) -> None:
    """The timeline's assignments, as the table keeps them, so that a ``performed`` check by equipment
    not assigned to its checklist at ``performed_at`` is refused before anything runs (playing it,
    :func:`missed_checks.performed_checks.recording.record_checks` would refuse it, as ``POST /checks`` does)."""
    if event.action == "delete_checklist":  # its open assignments end with it
        for key, kept in held.items():
            if key[0] == event.args and kept.unassigned_at is None:
                held[key] = replace(kept, unassigned_at=max(event.at, kept.assigned_at))
        return
    checklist = event.args["checklist"]
    if event.action == "performed":
        equipment, at = event.args["equipment"], event.args["performed_at"]
        current = held.get((checklist, equipment))
        if current is None or not current.assigned_at_instant(at):
            raise InvalidInput(f"{event.where}.equipment", f"{equipment!r} is not assigned to checklist {checklist!r} "
                                                            f"at {at.isoformat()} (assign it earlier)")
        return
    for equipment in event.args["equipment"]:
        current = held.get((checklist, equipment))
        if event.action == "assign" and current is None:
            held[(checklist, equipment)] = Assignment(checklist, equipment, event.at)
        elif event.action == "assign" and current is not None and current.unassigned_at is not None:
            held[(checklist, equipment)] = Assignment(checklist, equipment, event.at, None, (
                *current.earlier_periods, (current.assigned_at, current.unassigned_at)))
        elif event.action == "unassign" and current is not None and current.unassigned_at is None \
                and event.at >= current.assigned_at:
            held[(checklist, equipment)] = replace(current, unassigned_at=event.at)


def _check_out_of_service(event: ScenarioEvent, periods: dict[str, list[OutOfServicePeriod]]) -> None:
    """The timeline's out-of-service periods, checked as the table will check them when the event
    plays (so that a file is refused before anything runs): a period must not overlap another of
    the same equipment (the same period again changes nothing); back in service needs a period in
    effect at ``at``, which it ends there."""
    if isinstance(event.args, OutOfServicePeriod):
        period = event.args
        earlier = periods.setdefault(period.equipment_id, [])
        for other in earlier:
            if other.same_as(period):
                return
            if other.overlaps(period.start, period.end or LATEST_INSTANT):
                until = f"until {other.end.isoformat()}" if other.end else "until further notice"
                raise InvalidInput(f"{event.where}.from",
                                   f"{period.equipment_id} is already out of service from {other.start.isoformat()} "
                                   f"{until} (an earlier event): a new period must not overlap it")
        earlier.append(period)
        return
    equipment = event.args["equipment"]
    current = next((p for p in periods.get(equipment, []) if p.in_effect_at(event.at)), None)
    if current is None:
        raise InvalidInput(f"{event.where}.equipment", f"{equipment} is not out of service at {event.at.isoformat()} "
                                                       "(no out_of_service event before covers it): nothing to end")
    try:
        ended = current.ended(event.at, by=event.args["by"], now=event.at)
    except InvalidInput as error:
        where = f"events[{event.index}].at" if error.field in ("at", "now") else f"{event.where}.{error.field}"
        raise InvalidInput(where, error.message) from None
    periods[equipment][periods[equipment].index(current)] = ended


def _check_equipment_reference(event: ScenarioEvent, assigned: set[str]) -> None:
    equipment = event.args.equipment_id if isinstance(event.args, OutOfServicePeriod) else event.args["equipment"]
    if equipment not in assigned:
        raise InvalidInput(f"{event.where}.equipment",
                           f"{equipment!r} is not assigned to any checklist at {event.at.isoformat()} (assign it "
                           "earlier)")


# -- running ------------------------------------------------------------------------------------
ProgressCallback = Callable[[datetime], None]


def run_scenario(
    scenario: Scenario,
    *,
    progress: ProgressCallback | None = None,
    log_path: str | Path | None = None,
    template_path: str | Path | None = None,
    faults: Any = None,
    recover: DeadLetterReplay | None = None,
    observe: Callable[[Any], None] | None = None,
    prepare: Callable[[Any], None] | None = None,
    settle: timedelta | None = None,
) -> dict[str, Any]:
    """Provision a fresh embedded stack, play ``scenario`` and return what it produced: the fleet
    report and the run's diagnostics (see :func:`missed_checks_local.product.run_result.build_result`).

    ``faults`` (a :class:`~missed_checks_local.product.faults.FaultInjector`) overrides the scenario's
    own. ``recover`` (the operator's replay of every dead-letter queue) then does what the README
    tells an operator to do at the end: re-run executions that were stopped and replay every
    dead-letter queue. ``prepare(runtime)`` is called once
    the runtime runs, ``observe(runtime)`` before the report is built (the chaos run subscribes to
    the announcements, then counts them). ``settle`` plays on past the end, with no events and no
    more faults, so that what the faults delayed (a dropped firing's catch-up) can happen."""
    from missed_checks_local.clock import SimulatedClock
    from missed_checks_local.embedded import embedded_aws  # deferred (and below): the embedded AWS imports moto
    from missed_checks_local.product.readiness import ReadinessCapture
    from missed_checks_local.product.run_result import build_result
    from missed_checks_local.runtime import LocalRuntime
    from missed_checks_local.stack import EmbeddedStack

    started = time.monotonic()
    with embedded_aws():
        stack = EmbeddedStack.provision(template_path, parameters=scenario.parameters)
        clock = SimulatedClock(scenario.start)
        if faults is None and scenario.faults:

            faults = FaultInjector(list(copy.deepcopy(scenario.faults)))
        with LocalRuntime(stack, clock, log_path=log_path, faults=faults) as runtime, _denials_first(runtime):
            if progress is not None:
                runtime.on_step = lambda: progress(clock.now())
            from missed_checks.aws.table import ChecklistTable  # deferred: boto3, not needed to parse a scenario

            readiness = ReadinessCapture()  # #33: a subscriber of the readiness events, as an interlock would be
            readiness.prepare(runtime)
            if prepare is not None:
                prepare(runtime)
            table = ChecklistTable(stack.table_name)
            waiting = play_events(scenario.events, scenario.end, runtime, table, clock, progress)
            if settle is not None:
                if faults is not None:
                    faults.active = False
                runtime.advance_to(scenario.end + settle, inclusive=True)
            if recover is not None:
                report_recovery = recover_as_an_operator(runtime, clock.now(), recover)
            waiting = _dismiss_waiting(waiting, table, clock.now())
            if waiting:
                event = waiting[0]
                raise InvalidInput(f"{event.where}.window_start",
                                   f"no missed check of {event.args['equipment']} on {event.args['checklist']} for the "
                                   f"window starting {event.args['window_start']:%Y-%m-%dT%H:%M:%SZ} was recorded by "
                                   "the end of the scenario: nothing to dismiss")
            if observe is not None:
                observe(runtime)
            report = build_result(scenario, runtime, table, readiness=readiness.read(runtime))
            report.update({"denials": denials} if (denials := runtime.denials()) else {})
            if recover is not None:
                report["recovery"] = report_recovery
    report["elapsed_s"] = round(time.monotonic() - started, 2)
    if log_path:
        report["log_file"] = str(log_path)
    return report


def play_events(events: Sequence[ScenarioEvent], end: datetime, runtime: Any, table: Any, clock: Any,
                progress: ProgressCallback | None = None) -> list[ScenarioEvent]:
    """Play ``events`` in order on a running runtime whose simulated ``clock`` stands before the first
    (each at its instant, what falls due on the way fired first), then run on to ``end``; the
    dismissals whose missed check was still not recorded by then (the caller decides)."""
    waiting: list[ScenarioEvent] = []  # dismissals whose record is not written yet
    for event in events:
        runtime.advance_to(event.at, inclusive=False)
        waiting = _dismiss_waiting(waiting, table, clock.now())
        if not _apply(event, table, runtime):
            waiting.append(event)
        runtime.settle()
        if progress is not None:
            progress(clock.now())
    runtime.advance_to(end, inclusive=True)
    return _dismiss_waiting(waiting, table, clock.now())


@contextmanager
def _denials_first(runtime: Any) -> Iterator[None]:
    """A run that fails carries what IAM refused (``error.denials``): the cause, which the command
    line says before the failure it led to (a dismissal with nothing to dismiss...)."""
    try:
        yield
    except Exception as error:
        error.denials = runtime.denials()  # type: ignore[attr-defined]
        raise


class ReplayedLetter(Protocol):
    """One dead letter replayed (the operator's ``missed_checks_ops.dlq.Replayed``)."""

    ok: bool


DeadLetterReplay = Callable[[Any, datetime], Sequence[ReplayedLetter]]
"""Replays every dead-letter queue of the embedded stack (given) at an instant, deleting what it
replayed, as ``missed-checks dlq replay`` does: the operator's tool, which ``missed-checks local
chaos`` hands in (``missed_checks_ops.cli.local.replay_dead_letters``); the scenario player imports
nothing of the operator's package."""


def recover_as_an_operator(runtime: Any, now: datetime, replay: DeadLetterReplay) -> dict[str, Any]:
    """What README "Operate" tells an operator to do after an incident: re-run executions that were
    stopped (the console's Redrive; moto has none, so the same input is started again), then
    ``missed-checks dlq replay`` of every queue (``replay``), until nothing is left to replay (bounded)."""
    stack = runtime.stack
    sqs = stack.client("sqs")
    dead_lettered = {
        logical_id: int(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
                        ["Attributes"]["ApproximateNumberOfMessages"])
        for logical_id, url in sorted(stack.queue_urls.items())
    }
    rerun = 0
    # Stopped (ABORTED; moto reports a stop as FAILED with States.Runtime), or failed without
    # reaching the evaluation DLQ (whose failures end in the EvaluationFailed state).
    stopped = [record for record in runtime.executions
               if record.status == "ABORTED" or (record.status == "FAILED" and record.error != "EvaluationFailed")]
    for record in stopped:
        runtime.start_execution(record.input)
        rerun += 1
    runtime.settle()
    replayed = failed = 0
    for _ in range(3):
        results = replay(stack, now)
        runtime.settle()
        replayed += sum(1 for result in results if result.ok)
        failed = sum(1 for result in results if not result.ok)
        if not failed:
            break
    return {"dead_lettered": dead_lettered, "stopped_executions_rerun": rerun, "dead_letters_replayed": replayed,
            "dead_letters_left": failed}


def _dismiss_waiting(waiting: list[ScenarioEvent], table: Any, now: datetime) -> list[ScenarioEvent]:
    """Apply the dismissals whose record exists by now; return those still waiting."""
    return [event for event in waiting if not _dismiss_record(event, table, now)]


def _dismiss_record(event: ScenarioEvent, table: Any, at: datetime) -> bool:
    """Dismiss the event's missed check at ``at``; False when it is not recorded yet."""
    from missed_checks.aws.table import Conflict, NotFound  # deferred: boto3, not needed to parse a scenario

    args = event.args
    try:
        table.dismiss_missed_check(args["checklist"], args["window_start"], args["equipment"], reason=args["reason"],
                                   by=args["by"], at=at)
    except NotFound:
        return False
    except Conflict as error:
        raise InvalidInput(event.where, f"that missed check is {error}") from None
    return True


def _apply_out_of_service(event: ScenarioEvent, table: Any) -> None:
    """Record an out-of-service period, or end one early, as the commands do."""
    from missed_checks.aws.table import NotFound  # deferred: boto3, not needed to parse a scenario
    from missed_checks.equipment.taking_out_of_service import record_period

    if event.action == "out_of_service":
        record_period(table, event.args)
        return
    try:
        table.end_out_of_service(event.args["equipment"], event.at, by=event.args["by"], now=event.at)
    except NotFound as error:
        raise InvalidInput("equipment", str(error)) from None


def _apply_to_runtime(event: ScenarioEvent, runtime: Any) -> None:
    """A failure injected into the scheduler, or a digest subscription with its schedule."""
    args = event.args
    if event.action == "fail_next_firing":
        runtime.scheduler.inject_failure(args["checklist"], count=args["count"], error_code=args["error"])
        return
    from missed_checks_local.product.digests import subscribe  # deferred: boto3, as the table in _apply

    subscribe(runtime.stack, args, event.at)  # digest (#18)
    runtime.scheduler.refresh()  # written here, not by schedule-sync: the scheduler must look now


def _resolve(event: ScenarioEvent, table: Any) -> None:
    from missed_checks.defects.defect import defect_id_of
    from missed_checks.defects.resolving import resolve_defect
    from missed_checks.permissions.caller import Caller

    args = event.args
    resolve_defect(table, defect_id_of(args["checklist"], args["equipment"], args["found_at"]), args["note"],
                   caller=Caller.operator(args["by"]), now=event.at)


def _apply(event: ScenarioEvent, table: Any, runtime: Any) -> bool:
    """Play one event; False for a dismissal whose missed check is not recorded yet."""

    at, args = event.at, event.args
    if event.action == "dismiss":
        return _dismiss_record(event, table, at)
    try:
        if event.action == "put_checklist":
            save_checklist(
                table,
                args["id"],
                recurrence=args["recurrence"],
                now=at,
                name=args["name"] or "",
                timezone=args["timezone"],
                window=args["window"],
                grace=args["grace"],
                validate=args["validate"],
                closed_on=args["closed_on"],
                notify=args.get("notify"),
                items=args.get("items"),  # cleared to operate (#33)
                pre_use=args.get("pre_use"),
                clear_on_pass=args.get("clear_on_pass"),
                by=_SCENARIO_BY,
                site_id=args.get("site_id"),  # local serve --scenario puts them at a site (#32)
            )
        elif event.action == "put_calendar":
            table.put_calendar(args["id"], args["dates"], now=at, description=args["description"], by=args["by"])
        elif event.action == "assign":
            table.assign_equipment(args["checklist"], args["equipment"], at, by=_SCENARIO_BY)
        elif event.action == "unassign":
            table.unassign_equipment(args["checklist"], args["equipment"], at, by=_SCENARIO_BY)
        elif event.action == "performed":
            check = PerformedCheck(args["checklist"], args["equipment"], args["performed_at"], answers=args["answers"])
            record_checks(table, [Row(check)], now=at, recorded_by=args["by"])  # a re-post keeps the first
        elif event.action == "pause_checklist":
            table.pause_checklist(args, at, by=_SCENARIO_BY)
        elif event.action == "resume_checklist":
            table.resume_checklist(args, at, by=_SCENARIO_BY)
        elif event.action == "delete_checklist":
            table.delete_checklist(args, by=_SCENARIO_BY)
        elif event.action in ("fail_next_firing", "subscribe_digest"):
            _apply_to_runtime(event, runtime)
        elif event.action in _EQUIPMENT_ACTIONS:
            _apply_out_of_service(event, table)
        elif event.action == "resolve_defect":  # cleared to operate (#33), as `defect resolve` does
            _resolve(event, table)
    except InvalidInput as error:
        raise InvalidInput(f"{event.where}.{error.field}", error.message) from None
    return True
