"""Recording performed checks: the one use case every writer goes through (the HTTP API's record
routes, the command line's ``check record`` and ``check import``).

A performed check is refused, with every problem named before anything is written, when:

* an id breaks its alphabet (:func:`missed_checks.checklists.checklist.validate_checklist_id`,
  :func:`missed_checks.equipment.assignments.validate_equipment_id`);
* ``performed_at`` is not an ISO 8601 instant with an offset, or lies more than
  :data:`MAX_FUTURE_SKEW` after now (a device's clock may run a little ahead; a check cannot have
  been performed in the future);
* the checklist does not exist;
* the equipment is not assigned to the checklist at ``performed_at`` (a typo in an id would
  otherwise go unnoticed while the real unit is marked missed);
* its ``answers`` (#33) do not answer the checklist's items in force at ``performed_at`` (read once
  per checklist): every bad answer is named (``answers.<item id>``,
  :func:`missed_checks.performed_checks.answers.answer_problems`); a checklist with no items then
  takes no answers.

Each check is stored with its answers and what they found (its items' revision, ``result``, the
failed items with their labels as that revision had them: a later edit of the items never changes
how it reads). Once written, the defects of its failed critical items are opened and a passing
check clears those its checklist lets it clear (:mod:`missed_checks.defects.opening`).

A check that is accepted but will count in no report (performed before its checklist existed, or
outside every occurrence window of the checklist's current rule) is written with a **warning**
saying so (:func:`warnings_for`): it may be a typo in a date, or a clock far from the stack's.

A batch is all or nothing on validation. A performed check is written once: the store's write is
conditional, so a check on record already (the same checklist, equipment and instant) keeps who
recorded it and when, whoever posts it again, and the answer gives that first record; a request
whose checks were all on record already wrote nothing and answers ``replayed`` (with or without an
idempotency key). With a client idempotency key, the request's checks are fingerprinted; once they
pass validation a (caller, key) item is claimed in a conditional write before the checks are
written (a refused request claims nothing, so its corrected body may reuse the key): a retry with
the same key and the same checks answers as the first attempt did (an attempt that died half way
is finished with the same ``recorded_at``: the checks it wrote are recognised as its own); the same
key with other checks is :class:`IdempotencyConflict`. No AWS call here: the store is a
:class:`missed_checks.evaluation.ports.RecordingStore`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from missed_checks import identifiers
from missed_checks.checklists.check_item import ItemList, in_force
from missed_checks.checklists.checklist import Checklist, validate_checklist_id
from missed_checks.defects.opening import CheckFound, open_and_clear
from missed_checks.equipment.assignments import validate_equipment_id
from missed_checks.errors import InvalidInput, MissedChecksError, describe
from missed_checks.evaluation.ports import CheckKey, CheckRecord, ClientRequest, RecordingStore, check_key
from missed_checks.performed_checks.answers import Findings, answer_document, answer_problems, findings_of, kept_answers
from missed_checks.performed_checks.performed_check import PerformedCheck, counting_windows
from missed_checks.performed_checks.problem import ChecksRefused as ChecksRefused  # re-exported: callers' names
from missed_checks.performed_checks.problem import Problem as Problem
from missed_checks.performed_checks.problem import Refusal as Refusal
from missed_checks.permissions.authorizing import authorize, visible
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Action
from missed_checks.timefmt import parse_instant, to_utc_iso

MAX_FUTURE_SKEW = timedelta(minutes=5)
"""How far after now a ``performed_at`` may lie (clocks of phones and tablets drift a little)."""

WRITE_CHUNK = 500
"""Checks written per call to the store (and per progress step)."""

CHECK_FIELDS = ("checklist_id", "equipment_id", "performed_at", "answers")
"""A check's fields; ``answers`` (#33) is optional."""
REQUIRED_FIELDS = CHECK_FIELDS[:3]

class IdempotencyConflict(MissedChecksError):
    """The idempotency key was used before for other checks: use a new key for a new request."""

    def __init__(self, idempotency_key: str) -> None:
        super().__init__(f"idempotency key {idempotency_key!r} was used for a different request; "
                         "send a new key with a new request (the same key only to retry the same request)")
        self.idempotency_key = idempotency_key


@dataclass(frozen=True)
class Row:
    """A check to record and where it came from (``checks[2]``, ``line 5``; None for a single one)."""

    check: PerformedCheck
    label: str | None = None


@dataclass(frozen=True)
class Recorded:
    """What a request recorded (or, ``replayed``, what was on record already: its first attempt's
    answer, or the checks' first records)."""

    checks: list[PerformedCheck]
    written: int
    """Distinct checks this request wrote (the same checklist, equipment and instant twice is one);
    a retry with the same idempotency key answers what its first attempt wrote."""
    recorded_at: datetime
    recorded_by: str | None
    """This request's caller; replayed, who recorded the first check (None: a record kept without)."""
    replayed: bool = False
    """Nothing was written: a retry with the same idempotency key, or checks that were all on record
    already (posted before, with or without a key); every record stays as it was."""
    idempotency_key: str | None = None
    warnings: tuple[str, ...] = ()
    """Checks written that will count in no report, and why (:func:`warnings_for`)."""
    records: tuple[CheckRecord, ...] = ()
    """Per check, in order: who recorded it and when (this request, or the check's first record)."""
    already_recorded: int = 0
    """Distinct checks that were on record before this request (left exactly as they were)."""
    written_now: int = 0
    """Distinct checks whose write succeeded in this very call: what the ``ChecksRecorded`` metric
    counts. Less than ``written`` when a concurrent or earlier attempt of the same request (same
    idempotency key) wrote some of them: those are the request's, but not this call's."""
    findings: tuple[Findings, ...] = ()
    """Per check, in order (#33): what its answers found, as on record (a check on record already:
    its first record's)."""
    defects_opened: tuple[tuple[str, ...], ...] = ()
    """Per check, in order: the defect its failed critical items opened (or found open already)."""
    defects_closed: tuple[tuple[str, ...], ...] = ()
    """Per check, in order: the defects it cleared (``clear_on_pass``)."""

    def to_dict(self, with_checks: bool = True) -> dict[str, Any]:
        document: dict[str, Any] = {
            "written": self.written, "already_recorded": self.already_recorded,
            "recorded_at": to_utc_iso(self.recorded_at), "recorded_by": self.recorded_by,
            "replayed": self.replayed, "idempotency_key": self.idempotency_key, "warnings": list(self.warnings)}
        if with_checks:
            count = len(self.checks)
            records = self.records or (None,) * count
            findings = self.findings or (None,) * count
            opened = self.defects_opened or ((),) * count
            closed = self.defects_closed or ((),) * count
            document["checks"] = [
                {**check_document(c), **({"recorded_at": r.recorded_at, "recorded_by": r.recorded_by}
                                         if r is not None else {}),
                 **({"findings": f.to_dict(), "defects_opened": list(o), "defects_closed": list(d)}
                    if f is not None else {})}
                for c, r, f, o, d in zip(self.checks, records, findings, opened, closed, strict=True)]
        return document


def check_document(check: PerformedCheck) -> dict[str, Any]:
    document: dict[str, Any] = {"checklist_id": check.checklist_id, "equipment_id": check.equipment_id,
                                "performed_at": to_utc_iso(check.performed_at)}
    if check.answers is not None:  # #33
        document["answers"] = {item_id: answer_document(value) for item_id, value in check.answers.items()}
    return document


# -- reading checks from a client's document ------------------------------------------------------
def check_from(values: object, label: str | None = None) -> PerformedCheck:
    """One check from ``{"checklist_id", "equipment_id", "performed_at"}``; every bad field at once
    in :class:`ChecksRefused`."""
    problems: list[Problem] = []
    check = _check_or_problems(values, label, problems)
    if check is None:
        raise ChecksRefused(problems)
    return check


def rows_from(values: object, name: str = "checks") -> list[Row]:
    """A batch (a list of check documents), each labelled ``<name>[<index>]``; every bad field of
    every row at once in :class:`ChecksRefused`."""
    if not isinstance(values, list) or not values:
        raise ChecksRefused([Problem(name, f"is {describe(values)}: give a non-empty list of checks, each "
                                           f"with {', '.join(REQUIRED_FIELDS)}")])
    problems: list[Problem] = []
    rows = []
    for index, value in enumerate(values):
        label = f"{name}[{index}]"
        check = _check_or_problems(value, label, problems)
        if check is not None:
            rows.append(Row(check, label))
    if problems:
        raise ChecksRefused(problems)
    return rows


def _check_or_problems(values: object, label: str | None, problems: list[Problem]) -> PerformedCheck | None:
    if not isinstance(values, Mapping):
        problems.append(Problem("check", f"is {describe(values)}: give an object with {', '.join(REQUIRED_FIELDS)}",
                                row=label))
        return None
    found = len(problems)
    unknown = sorted(str(k) for k in values if k not in CHECK_FIELDS)
    if unknown:
        problems.append(Problem(unknown[0], f"unknown field(s) {', '.join(unknown)}; a check has "
                                            f"{', '.join(REQUIRED_FIELDS)} and optionally answers", row=label))
    answers = values.get("answers")
    if answers is not None and not isinstance(answers, Mapping):
        problems.append(Problem("answers", f"is {describe(answers)}: give a map of item id to answer, such as "
                                           '{"brakes": "pass", "tyre_pressure": 2.4}', Refusal.BAD_ANSWER, label))
    parsed: dict[str, Any] = {}
    readers: dict[str, Callable[[Any, str], Any]] = {
        "checklist_id": validate_checklist_id, "equipment_id": validate_equipment_id, "performed_at": parse_instant}
    for name, read in readers.items():
        if name not in values:
            problems.append(Problem(name, "is missing", row=label))
            continue
        try:
            parsed[name] = read(values[name], name)
        except InvalidInput as error:
            problems.append(Problem(name, error.message, row=label))
    if len(problems) > found:
        return None
    return PerformedCheck(parsed["checklist_id"], parsed["equipment_id"], parsed["performed_at"],
                          None if answers is None else dict(answers))


def validate_idempotency_key(key: object, field: str = "Idempotency-Key") -> str:
    return identifiers.KINDS["idempotency key"].validate(key, field)


def fingerprint(checks: Sequence[PerformedCheck]) -> str:
    """The request's checks, as a hash (instants in UTC, order kept): two bodies that ask for the
    same checks have the same fingerprint, however their offsets were written."""
    canonical = json.dumps([check_document(c) for c in checks], separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


# -- the rules -------------------------------------------------------------------------------------
def checklists_of(store: RecordingStore, rows: Sequence[Row],
                  caller: Caller | None = None) -> dict[str, Checklist | None]:
    """Each checklist the rows name, read once (None: it does not exist). For a ``caller`` (#31), a
    checklist at a site they hold no role at is None too (refused exactly as a missing one, never
    confirmed), and one at a site where their role may not ``record`` is :class:`Forbidden`."""
    read = {checklist_id: store.get_checklist(checklist_id)
            for checklist_id in dict.fromkeys(row.check.checklist_id for row in rows)}
    if caller is None or caller.everywhere:
        return read
    return {checklist_id: _recordable(caller, checklist) for checklist_id, checklist in read.items()}


def _recordable(caller: Caller, checklist: Checklist | None) -> Checklist | None:
    if checklist is None or not visible(caller, checklist.site_id):
        return None
    authorize(caller, Action.record, checklist.site_id, what=f"checklist {checklist.checklist_id!r}")
    return checklist


def item_lists_of(store: RecordingStore, checklists: Mapping[str, Checklist | None]) -> dict[str, list[ItemList]]:
    """The revisions of the items of each checklist that ever had items (#33), read once each."""
    return {checklist_id: store.item_lists(checklist_id) for checklist_id, checklist in checklists.items()
            if checklist is not None and checklist.items_revision}


def revision_at(item_lists: Mapping[str, Sequence[ItemList]], check: PerformedCheck) -> ItemList | None:
    """The items in force for ``check`` (None: its checklist had none at ``performed_at``)."""
    found = in_force(item_lists.get(check.checklist_id, ()), check.performed_at)
    return found if found is not None and found.items else None


def _answer_refusals(row: Row, item_list: ItemList | None) -> list[Problem]:
    check = row.check
    if item_list is None:
        if check.answers:
            return [Problem("answers", f"checklist {check.checklist_id!r} has no items at "
                                       f"{to_utc_iso(check.performed_at)}: send the check without answers",
                            Refusal.BAD_ANSWER, row.label)]
        return []
    return answer_problems(item_list.items, check.answers, row.label, checklist_id=check.checklist_id,
                           revision=item_list.revision)


def refusals(store: RecordingStore, rows: Sequence[Row], now: datetime,
             checklists: Mapping[str, Checklist | None] | None = None,
             item_lists: Mapping[str, Sequence[ItemList]] | None = None) -> list[Problem]:
    """Every reason the store would refuse these checks (empty when all may be written);
    ``checklists``: :func:`checklists_of` these rows, and ``item_lists``: :func:`item_lists_of`
    them, when the caller read them already."""
    problems: list[Problem] = []
    latest = now + MAX_FUTURE_SKEW
    read = checklists_of(store, rows) if checklists is None else checklists
    lists = item_lists_of(store, read) if item_lists is None else item_lists
    existing = {checklist_id: checklist is not None for checklist_id, checklist in read.items()}
    pairs = {(r.check.checklist_id, r.check.equipment_id) for r in rows if existing[r.check.checklist_id]}
    assignments = store.assignments_of_pairs(pairs) if pairs else {}
    for row in rows:
        check = row.check
        at = to_utc_iso(check.performed_at)
        if check.performed_at > latest:
            problems.append(Problem(
                "performed_at", f"{at} is in the future (now is {to_utc_iso(now)}; at most "
                                f"{int(MAX_FUTURE_SKEW.total_seconds() // 60)} minutes ahead are accepted): "
                                "send the instant the check was performed, with its offset",
                Refusal.IN_FUTURE, row.label))
        if not existing[check.checklist_id]:
            problems.append(Problem("checklist_id", f"checklist {check.checklist_id!r} does not exist",
                                    Refusal.UNKNOWN_CHECKLIST, row.label))
            continue
        assignment = assignments.get((check.checklist_id, check.equipment_id))
        if assignment is None or not assignment.assigned_at_instant(check.performed_at):
            when = "was never assigned to" if assignment is None else f"was not assigned at {at} to"
            problems.append(Problem(
                "equipment_id", f"equipment {check.equipment_id!r} {when} checklist {check.checklist_id!r}: "
                                "check the id, or assign the equipment (equipment assign --at) first",
                Refusal.NOT_ASSIGNED, row.label))
        problems.extend(_answer_refusals(row, revision_at(lists, check)))  # #33
    return problems


def examined(rows: Sequence[Row],
             item_lists: Mapping[str, Sequence[ItemList]]) -> list[tuple[PerformedCheck, Findings]]:
    """Each valid row's check as it is written (its answers as kept: numbers as Decimal) and what its
    answers found under the revision in force at its ``performed_at``."""
    found = []
    for row in rows:
        check = row.check
        item_list = revision_at(item_lists, check)
        answers = None if check.answers is None else kept_answers(item_list.items if item_list else (), check.answers)
        found.append((replace(check, answers=answers), findings_of(item_list, answers or {})))
    return found


def warnings_for(checklist: Checklist, row: Row) -> str | None:
    """Why ``row``'s check, though valid, will count in no report of ``checklist``, or None: it was
    performed before any window the checklist judges (one ending after it was created), or, under
    the rule in force since ``effective_from``, in no window ``[start, end + grace)``."""
    check = row.check
    at = to_utc_iso(check.performed_at)
    where = f"{row.label}: " if row.label else ""
    created = checklist.created_at
    try:
        rule = checklist.parsed()
    except InvalidInput:  # a broken rule: its checklist's own record says so (checklist show)
        return None
    containing = counting_windows(rule, check.performed_at)
    if created is not None and check.performed_at < created and all(w.settled_by(created) for w in containing):
        return (f"{where}{check.equipment_id} at {at}: recorded, but it was performed before checklist "
                f"{check.checklist_id!r} was created ({to_utc_iso(created)}), so no window of it judges this check "
                "and it counts in no report: is the date right?")
    effective = checklist.effective_from or created
    if not containing and (effective is None or check.performed_at >= effective):
        return (f"{where}{check.equipment_id} at {at}: recorded, but it lies in no occurrence window of checklist "
                f"{check.checklist_id!r} (start to end + grace), so it counts in no report: is the date right?")
    return None


def record_checks(store: RecordingStore, rows: Sequence[Row], *, now: datetime, recorded_by: str,
                  idempotency_key: str | None = None,
                  progress: Callable[[int], None] | None = None, caller: Caller | None = None) -> Recorded:
    """Validate every row, then write them all (:class:`ChecksRefused` and nothing written when one
    is refused). A check on record already is never rewritten (its ``recorded_by`` and
    ``recorded_at`` stay the first writer's) and is answered with that record; when every check
    was, the answer is ``replayed``. With ``idempotency_key``, a retry of the same request answers
    as the first did (``replayed``) and the same key for other checks is :class:`IdempotencyConflict`.
    With ``caller`` (#31), only at the checklists' sites where their role may ``record``
    (:func:`checklists_of`); None: the operator's and the emulator's own writes, every site."""
    checks = [row.check for row in rows]
    if not checks:
        raise ChecksRefused([Problem("checks", "no checks given")])
    digest = ""
    if idempotency_key is not None:
        validate_idempotency_key(idempotency_key)
        digest = fingerprint(checks)
        earlier = store.client_request(recorded_by, idempotency_key)
        if earlier is not None and (replay := _replay(store, earlier, digest, idempotency_key, rows, recorded_by)):
            return replay
    checklists = checklists_of(store, rows, caller)  # read once: for the refusals and the warnings
    item_lists = item_lists_of(store, checklists)  # #33: the items' revisions, read once per checklist
    problems = refusals(store, rows, now, checklists, item_lists)
    if problems:  # nothing claimed: the key stays free for the corrected request
        raise ChecksRefused(problems)
    written_checks = examined(rows, item_lists)
    findings = {check_key(check): found for check, found in reversed(written_checks)}  # the first of a key
    recorded_at = now
    if idempotency_key is not None:
        claim = store.claim_client_request(recorded_by, idempotency_key, digest, now)
        if replay := _replay(store, claim, digest, idempotency_key, rows, recorded_by):
            return replay
        recorded_at = parse_instant(claim.recorded_at, "recorded_at")  # a retry of an unfinished attempt
    own = CheckRecord(to_utc_iso(recorded_at), recorded_by)
    mine: set[CheckKey] = set()
    now_written: set[CheckKey] = set()
    kept: dict[CheckKey, CheckRecord] = {}
    stored: dict[CheckKey, Findings] = {}
    for offset in range(0, len(checks), WRITE_CHUNK):
        chunk = [check for check, _ in written_checks[offset:offset + WRITE_CHUNK]]
        result = store.record_performed_checks(chunk, recorded_at, recorded_by,
                                               {key: findings[key] for key in map(check_key, chunk)})
        stored.update(result.kept_findings)
        for key in dict.fromkeys(map(check_key, chunk)):
            record = result.kept.get(key)
            if record is None:
                mine.add(key)
                now_written.add(key)
            elif key in mine:
                continue  # this request wrote it, earlier in the batch
            elif idempotency_key is not None and record == own:
                mine.add(key)  # written by this request's unfinished first attempt
            else:
                kept[key] = record
        if progress is not None:
            progress(len(chunk))
    found = {**findings, **stored}  # a check on record already: what its record found
    answer = _answer(store, rows, len(mine), kept, own, idempotency_key, replayed=not mine,
                     written_now=len(now_written), checklists=checklists, item_lists=item_lists, found=found)
    if idempotency_key is not None:  # after the defects: a finished request opened all of its own
        store.finish_client_request(recorded_by, idempotency_key, len(mine))
    return answer


def _answer(store: RecordingStore, rows: Sequence[Row], written: int, kept: Mapping[CheckKey, CheckRecord],
            own: CheckRecord, idempotency_key: str | None, *, replayed: bool, written_now: int = 0,
            checklists: Mapping[str, Checklist | None] | None = None,
            item_lists: Mapping[str, Sequence[ItemList]] | None = None,
            found: Mapping[CheckKey, Findings] | None = None) -> Recorded:
    """The answer: each check with its record (``kept``'s, else ``own``) and what it found
    (``found``'s, else its answers' under the items in force), once the defects its findings open or
    clear are (:func:`missed_checks.defects.opening.open_and_clear`: idempotent, so a replay finds
    them as they are); replayed, the first check's record is the answer's ``recorded_at``/``recorded_by``."""
    checks = [row.check for row in rows]
    records = tuple(kept.get(check_key(c), own) for c in checks)
    first = records[0] if replayed else own
    read = checklists_of(store, rows) if checklists is None else checklists
    lists = item_lists_of(store, read) if item_lists is None else item_lists
    examined_checks = examined(rows, lists)
    findings = tuple((found or {}).get(check_key(check), computed) for check, computed in examined_checks)
    changes = open_and_clear(store, [
        CheckFound(check, each, parse_instant(record.recorded_at, "recorded_at"), record.recorded_by)
        for (check, _), each, record in zip(examined_checks, findings, records, strict=True)],
        read, by=own.recorded_by or "missed-checks")
    return Recorded(checks, written, parse_instant(first.recorded_at, "recorded_at"), first.recorded_by,
                    replayed=replayed, idempotency_key=idempotency_key, warnings=_warnings(rows, read),
                    records=records, already_recorded=len(kept), written_now=written_now, findings=findings,
                    defects_opened=tuple(changes.opened.get(i, ()) for i in range(len(checks))),
                    defects_closed=tuple(changes.closed.get(i, ()) for i in range(len(checks))))


def _warnings(rows: Sequence[Row], checklists: Mapping[str, Checklist | None]) -> tuple[str, ...]:
    found = [warnings_for(checklist, row) for row in rows
             if (checklist := checklists[row.check.checklist_id]) is not None]
    return tuple(dict.fromkeys(w for w in found if w is not None))


def _replay(store: RecordingStore, earlier: ClientRequest, digest: str, idempotency_key: str, rows: Sequence[Row],
            recorded_by: str) -> Recorded | None:
    """The first attempt's answer when it finished (each check with its record as it stands);
    :class:`IdempotencyConflict` for other checks."""
    if earlier.fingerprint != digest:
        raise IdempotencyConflict(idempotency_key)
    if earlier.written is None:
        return None
    own = CheckRecord(earlier.recorded_at, recorded_by)
    found = store.performed_check_records(row.check for row in rows)
    kept = {key: record for key, record in found.items() if record != own}
    answer = _answer(store, rows, earlier.written, kept, own, idempotency_key, replayed=True)
    if earlier.written:  # the first attempt wrote: its own recorded_at and caller, as it answered
        answer = replace(answer, recorded_at=parse_instant(earlier.recorded_at, "recorded_at"), recorded_by=recorded_by)
    return answer
