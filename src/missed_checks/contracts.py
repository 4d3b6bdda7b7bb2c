"""Every payload that crosses a boundary, defined once: a frozen dataclass each, read by :func:`parse`.

The state machine's execution input, each Lambda task's input and output, the ``Occurrence window
judged`` event's detail and the stack's Outputs are defined here (every dead-letter message is in
:mod:`missed_checks.dead_letters`, with the same :func:`parse`):

* the handlers parse their event with :func:`parse` and return :func:`dump` of their answer;
* ``tests/unit/test_contracts.py`` checks that each Task state's ``Parameters.Payload`` (and each Map's
  ``ItemSelector``) of ``statemachines/evaluate_checklist.asl.json`` produces exactly its contract's
  fields, that each dead-letter ``MessageBody`` is its message contract, that ``template.yaml``'s
  Outputs are :class:`StackOutputs`' fields and that every ``events/*.json`` sample parses;
  ``tests/integration/test_contract_samples.py`` runs each sample through its real, built handler;

A payload that does not fit raises :class:`~missed_checks.errors.InvalidInput` naming the field by its
path (``shards[0]``, ``input.instant``): Lambda reports the class name as the error type, which the
state machine's Catch rules and dead letters carry (see ``missed_checks.errors``). Fields a contract
does not declare are ignored (a newer sender, a note in a hand-started run).

Why dataclasses and not pydantic (the Powertools parser): pydantic-core is a compiled extension with
no pure-Python fallback, and the layer holds the functions' arm64 wheels; the embedded AWS
(``missed_checks_local``) runs the built layer on the developer's machine (x86_64 here), where that
extension cannot load. Every package in the layer today is pure Python or falls back to it (wrapt).
pydantic would also have doubled the layer (measured 5.6 -> 12.3 MB unzipped with pydantic 2.14.3).

A window is :class:`missed_checks.checklists.recurrence.OccurrenceWindow` itself (the one window type), in
payloads ``{"start", "end", "evaluate_at"}`` with the checklist's UTC offset (its ``to_dict``).
Other instants keep the text they came with (validated: ISO 8601 with a UTC offset, see
:func:`missed_checks.timefmt.parse_instant`), so that outputs repeat inputs byte for byte.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import cache
from typing import Annotated, Any, Literal, TypeVar, Union

from missed_checks.checklists.checklist import validate_checklist_id
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.equipment.assignments import SHARD_COUNT
from missed_checks.errors import InvalidInput, describe
from missed_checks.evaluation.planning import Outcome
from missed_checks.timefmt import parse_instant

__all__ = [
    "BatchCounts", "CloseWindowInput", "CloseWindowOutput", "ExecutionInput", "FanOutWindow", "JudgedWindowDetail",
    "ReadinessChangedDetail",
    "PlanEvaluationInput", "PlanEvaluationOutput", "RecordMissedChecksInput", "StackOutputs", "dump",
    "field_names", "parse",
]


@dataclass(frozen=True)
class Check:
    """A constraint on a field's value, in ``Annotated[type, Check(fn)]``: ``fn`` returns the value
    (possibly normalised) or raises InvalidInput (its field is replaced by the value's path)."""

    fn: Callable[[Any], Any]


def _checklist_id(value: str) -> str:
    return validate_checklist_id(value, "checklist_id")


def _instant(value: str) -> str:
    parse_instant(value, "instant")
    return value


def _shard(value: int) -> int:
    if not 0 <= value < SHARD_COUNT:
        raise InvalidInput("shard", f"{value} is not a shard: expected a whole number from 0 to {SHARD_COUNT - 1}")
    return value


def _some_shards(value: list[int]) -> list[int]:
    if not value:
        raise InvalidInput("shards", "expected at least one shard, got an empty list")
    return value


def _count(value: int) -> int:
    if value < 0:
        raise InvalidInput("count", f"expected a count (0 or more), got {value}")
    return value


ChecklistId = Annotated[str, Check(_checklist_id)]
"""1-64 letters, digits, ``.``, ``_`` or ``-``, starting with a letter or digit."""
Instant = Annotated[str, Check(_instant)]
"""An ISO 8601 instant with a UTC offset (``2026-03-02T13:30:00Z``), kept as given."""
Shards = Annotated[list[Annotated[int, Check(_shard)]], Check(_some_shards)]
"""Equipment shards (a stable hash of the equipment id, ``missed_checks.equipment.assignments.shard_of``)."""
Count = Annotated[int, Check(_count)]
MANUAL = "manual"
"""The execution a task invoked by hand (without one) records."""
Execution = Annotated[str | None, Check(lambda value: value or MANUAL)]
"""A Step Functions execution ARN (``manual`` for a task invoked by hand without one)."""




@dataclass(frozen=True)
class ExecutionInput:
    """The state machine's input: from a schedule (``instant`` is its scheduled time), a re-run, a
    backfill or a dead-letter replay (which adds ``claimed_window``; an empty one counts as none)."""

    checklist_id: ChecklistId
    instant: Instant
    claimed_window: OccurrenceWindow | None = None


@dataclass(frozen=True)
class PlanEvaluationInput:
    """PlanEvaluation's payload: the execution input as it came, and the execution's id."""

    input: ExecutionInput
    execution: Execution = MANUAL


@dataclass(frozen=True)
class FanOutWindow:
    """One item of JudgeDueWindows (a window PlanEvaluation left to fan out), before its batches are
    judged: JudgeEquipmentBatches maps over ``batches`` and replaces them with their counts."""

    checklist_id: ChecklistId
    window: OccurrenceWindow
    batches: list[Shards]
    execution: Execution = MANUAL


@dataclass(frozen=True)
class BatchCounts:
    """RecordMissedChecks' output for one batch of shards (``missed_checks.evaluation.judging.judge_shards``)."""

    shards: Shards
    counted: Count
    performed: Count
    missed: Count
    recorded: Count
    """Missed checks written by this run (not by an earlier one)."""
    excused: Count = 0
    """Counted equipment out of service during the window, without a check: no missed check (issue #23)."""


@dataclass(frozen=True)
class RecordMissedChecksInput:
    """One item of JudgeEquipmentBatches: a batch of shards of one window."""

    checklist_id: ChecklistId
    window: OccurrenceWindow
    shards: Shards
    execution: Execution = MANUAL


@dataclass(frozen=True)
class CloseWindowInput:
    """A fanned-out window after JudgeEquipmentBatches: its batches' counts."""

    checklist_id: ChecklistId
    window: OccurrenceWindow
    execution: Execution = MANUAL
    batches: list[BatchCounts] = field(default_factory=list)


@dataclass(frozen=True)
class CloseWindowOutput:
    """A closed window (``missed_checks.evaluation.judging.close_window``)."""

    window_start: str
    window_end: str
    missed: Count
    newly_recorded: Count
    announced: bool
    """This execution holds the window's claim."""
    claimed_by: str
    announced_by_it: bool
    """The claim's holder had announced the window already."""
    announced_now: bool
    watermark_advanced: bool


@dataclass(frozen=True)
class PlanEvaluationOutput:
    """PlanEvaluation's answer: the windows it judged itself (``judged``), or those the state machine
    fans out (``windows``, with the fleet's ``batches`` of shards)."""

    checklist_id: ChecklistId
    instant: Instant
    outcome: Outcome
    reason: str
    windows: list[OccurrenceWindow]
    batches: list[Shards]
    more_due: bool
    equipment: Count | None
    """Pieces of equipment assigned (None when nothing was due)."""
    judged: list[CloseWindowOutput]


@dataclass(frozen=True)
class JudgedWindowDetail:
    """The ``Occurrence window judged`` EventBridge event's detail (``source: missed-checks``)."""

    checklist_id: ChecklistId
    window_id: str
    """``<checklist_id>#<window start in UTC>``: consumers de-duplicate on it."""
    window: OccurrenceWindow
    equipment_counted: Count
    performed: Count
    missed: Count
    newly_recorded: Count
    execution: str
    missed_equipment: list[str] | None = None
    """The missed equipment, when at most 100 (left out of the event otherwise)."""
    excused: Count = 0
    """Counted equipment out of service during the window, without a check: not missed (issue #23)."""


@dataclass(frozen=True)
class ReadinessChangedDetail:
    """The ``Equipment readiness changed`` EventBridge event's detail (``source: missed-checks``, #33,
    docs/readiness.md): one event per change of an equipment's readiness; instants in UTC ISO."""

    equipment_id: str
    site_id: str | None
    readiness: str
    """``cleared``, ``not_cleared``, ``unchecked`` or ``out_of_service``."""
    previous: str | None
    """What it was before (None: the first readiness on record for the equipment)."""
    since: Instant | None
    reason: str
    sequence: Count
    """The equipment's change number: 1, 2, ... (a consumer keeps the highest it has seen)."""
    change_id: str
    """``<equipment_id>#<sequence>``: consumers de-duplicate on it (a re-announcement repeats it)."""
    changed_at: Instant
    open_defects: list[str]
    unchecked_checklists: list[str]
    out_of_service_until: Instant | None = None


# -- the stack --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StackOutputs:
    """``template.yaml``'s Outputs, by name: how tools find a deployed (or local) stack's resources."""

    TableName: str
    TableStreamArn: str
    ScheduleGroupName: str
    SchedulerRoleArn: str
    StateMachineArn: str
    ScheduleSyncFunctionName: str
    ScheduleSyncDeadLetterQueueUrl: str
    SchedulerDeadLetterQueueUrl: str
    EvaluationDeadLetterQueueUrl: str
    EventBusName: str
    AlarmTopicArn: str
    EvaluationLogGroupName: str
    HttpApiUrl: str  # the HTTP API's base URL (issue #19)
    # notifications (#18); empty for a stack deployed before them
    NotifyFunctionName: str = ""
    NotificationDeadLetterQueueUrl: str = ""
    # digest (#18): what `digest subscribe` points a subscription's schedule at; empty before it
    DigestFunctionArn: str = ""
    DigestSchedulerRoleArn: str = ""
    DigestDeadLetterQueueArn: str = ""
    # people sign in (#31): the people's API; the user pool and its client unless JwtIssuer is given
    PeopleApiUrl: str = ""
    # the audit trail (#31): stream batches the audit function kept failing on; empty before it
    AuditDeadLetterQueueUrl: str = ""
    UserPoolId: str = ""
    UserPoolClientId: str = ""
    # the fleet manager's web app (#32); empty before it
    WebAppUrl: str = ""
    # readiness (#33): stream batches and recheck firings the readiness function kept failing on; empty before it
    ReadinessDeadLetterQueueUrl: str = ""
    ReadinessFunctionName: str = ""


# -- parsing and dumping ----------------------------------------------------------------------------
C = TypeVar("C")


def parse(contract: type[C], data: object, path: str = "") -> C:
    """``data`` (decoded JSON) as ``contract``; raises InvalidInput naming the first offending field
    by its path (``shards[0]``, ``input.instant``). Unknown fields are ignored."""
    return typing.cast(C, _convert(contract, data, path))


def field_names(contract: type) -> set[str]:
    return {f.name for f in dataclasses.fields(contract)}


def dump(value: Any, *, omit_none: bool = False) -> Any:
    """A contract (or list of them) as JSON-ready data; ``omit_none`` leaves out fields that are None."""
    if isinstance(value, OccurrenceWindow):
        return value.to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: dump(getattr(value, f.name), omit_none=omit_none) for f in dataclasses.fields(value)
                if not (omit_none and getattr(value, f.name) is None)}
    if isinstance(value, list | tuple):
        return [dump(item, omit_none=omit_none) for item in value]
    if isinstance(value, Enum):
        return value.value
    return value


@cache
def _hints(contract: type) -> dict[str, Any]:
    return typing.get_type_hints(contract, include_extras=True)


def _fail(path: str, message: str) -> InvalidInput:
    return InvalidInput(path or "payload", message)


_KINDS = {str: "a string", int: "a whole number", bool: "true or false", dict: "an object"}


def _convert(tp: Any, value: Any, path: str) -> Any:  # noqa: C901 - one branch per kind of type
    origin = typing.get_origin(tp)
    if origin is Annotated:
        base, *checks = typing.get_args(tp)
        value = _convert(base, value, path)
        for check in checks:
            try:
                value = check.fn(value)
            except InvalidInput as invalid:
                raise type(invalid)(path or invalid.field, invalid.message) from None
        return value
    if tp is Any:
        return value
    if origin is Literal:
        if not any(value == option and type(value) is type(option) for option in typing.get_args(tp)):
            raise _fail(path, f"expected {' or '.join(repr(o) for o in typing.get_args(tp))}, got {describe(value)}")
        return value
    if origin in (Union, types.UnionType):
        options = typing.get_args(tp)
        if type(None) in options and value in (None, {}, ""):
            return None
        [given] = [option for option in options if option is not type(None)]
        return _convert(given, value, path)
    if origin is list:
        if not isinstance(value, list):
            raise _fail(path, f"expected a list, got {describe(value)}")
        [item] = typing.get_args(tp)
        return [_convert(item, element, f"{path}[{i}]") for i, element in enumerate(value)]
    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            raise _fail(path, f"expected an object, got {describe(value)}")
        return value
    if isinstance(tp, type) and issubclass(tp, Enum):
        try:
            return tp(value)
        except ValueError:
            raise _fail(path, f"expected one of {', '.join(m.value for m in tp)}, got {describe(value)}") from None
    if tp is OccurrenceWindow:
        return _window(value, path)
    if dataclasses.is_dataclass(tp):
        return _convert_dataclass(typing.cast(type, tp), value, path)
    if tp in _KINDS:
        if type(value) is not tp:  # exactly: no bool for an int, no number for a string
            raise _fail(path, f"expected {_KINDS[tp]}, got {describe(value)}")
        return value
    raise TypeError(f"{path}: no conversion for {tp!r}")


def _window(value: Any, path: str) -> OccurrenceWindow:
    """A window from its payload form, each instant checked as an :data:`Instant` (naming ``window.end``)."""
    if not isinstance(value, Mapping):
        raise _fail(path, f"expected an object, got {describe(value)}")
    instants = {}
    for key in ("start", "end", "evaluate_at"):
        where = f"{path}.{key}" if path else key
        if key not in value:
            raise _fail(where, "is missing")
        instants[key] = _convert(Instant, value[key], where)
    return OccurrenceWindow.from_dict(instants)


def _convert_dataclass(contract: type, value: Any, path: str) -> Any:
    if not isinstance(value, Mapping):
        raise _fail(path, f"expected an object, got {describe(value)}")
    hints = _hints(contract)
    given = {}
    for spec in dataclasses.fields(contract):
        where = f"{path}.{spec.name}" if path else spec.name
        if spec.name in value:
            given[spec.name] = _convert(hints[spec.name], value[spec.name], where)
        elif spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING:
            raise _fail(where, "is missing")
    result = contract(**given)
    check = getattr(result, "_check", None)
    if check is not None:
        try:
            check()
        except InvalidInput as invalid:
            raise type(invalid)(path or invalid.field, invalid.message) from None
    return result
