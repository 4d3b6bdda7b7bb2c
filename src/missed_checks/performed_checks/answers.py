"""Answers on a check (#33): validated against the checklist's items in force at ``performed_at``,
and what they found.

An answer is keyed by its item's id: ``"pass"`` or ``"fail"`` for a pass/fail item, a finite number
(a JSON number or a string holding one) for a number item, one of the item's choices for a choice
item, a string of at most :data:`MAX_TEXT` characters for a text item. A check must answer every
required item of the revision in force; an answer to an item that revision does not have, or of
the wrong kind, is refused (:func:`answer_problems`, naming ``answers.<item id>``). What the answers
found (:func:`findings_of`) never refuses: a fail, a number outside the item's bounds, a failing
choice each *fail* the item, and the check was still performed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from missed_checks.checklists.check_item import MAX_ITEMS, CheckItem, ItemKind, ItemList, to_decimal
from missed_checks.errors import InvalidInput, describe, shorten
from missed_checks.performed_checks.problem import Problem, Refusal

MAX_TEXT = 1000
"""Characters of a text answer."""
PASS = "pass"
FAIL = "fail"

Answer = str | Decimal
"""An answer as kept: a number item's as a Decimal (as DynamoDB stores it), the others' as text."""


def _what(item: CheckItem, checklist_id: str | None, revision: int | None) -> str:
    of = f" of checklist {checklist_id!r}" if checklist_id else ""
    at = f" revision {revision}" if revision is not None else ""
    return f"item {item.item_id!r} ({item.label}){of}{at}"


def answer_problems(items: Sequence[CheckItem], answers: object, label: str | None, *,
                    checklist_id: str | None = None, revision: int | None = None) -> list[Problem]:
    """Every reason ``answers`` do not answer ``items`` (empty: they do), each a :class:`Problem` of
    kind ``bad_answer`` naming ``answers.<item id>`` in row ``label``: an answer to an item the
    revision does not have, a required item unanswered (missing or null), a value of the wrong kind
    or not one of the choices. ``checklist_id`` and ``revision`` name the revision in the details."""
    if answers is None:
        answers = {}
    if not isinstance(answers, Mapping):
        return [Problem("answers", f"is {describe(answers)}: give a map of item id to answer, such as "
                                   '{"brakes": "pass", "tyre_pressure": 2.4}', Refusal.BAD_ANSWER, label)]
    if len(answers) > 2 * MAX_ITEMS:
        return [Problem("answers", f"has {len(answers)} answers; a checklist has at most {MAX_ITEMS} items",
                        Refusal.BAD_ANSWER, label)]
    problems: list[Problem] = []
    known = {item.item_id: item for item in items}
    revision_words = f" revision {revision}" if revision is not None else ""
    of = f"checklist {checklist_id!r}{revision_words}" if checklist_id else f"the checklist{revision_words}"
    for key in answers:
        if key not in known:
            field = f"answers.{key}" if isinstance(key, str) and key else "answers"
            listed = ", ".join(known) or "none"
            problems.append(Problem(field, f"{of} has no item {shorten(key)} (its items: {listed})",
                                    Refusal.BAD_ANSWER, label))
    for item in items:
        value = answers.get(item.item_id)
        field = f"answers.{item.item_id}"
        if value is None:
            if item.required:
                problems.append(Problem(field, f"{_what(item, checklist_id, revision)} is required: answer it "
                                               f"({_takes(item)})", Refusal.BAD_ANSWER, label))
            continue
        wrong = _wrong(item, value)
        if wrong is not None:
            problems.append(Problem(field, f"{_what(item, checklist_id, revision)} needs {wrong}",
                                    Refusal.BAD_ANSWER, label))
    return problems


def _takes(item: CheckItem) -> str:
    if item.kind is ItemKind.PASS_FAIL:
        return "pass or fail"
    if item.kind is ItemKind.NUMBER:
        return f"a number{' in ' + item.unit if item.unit else ''}"
    if item.kind is ItemKind.CHOICE:
        return f"one of: {', '.join(item.choices)}"
    return f"a text of at most {MAX_TEXT} characters"


def _wrong(item: CheckItem, value: object) -> str | None:
    """What ``item`` takes and ``value`` is not, in words; None: ``value`` answers it."""
    shown = shorten(value) if isinstance(value, str) else describe(value)
    if item.kind is ItemKind.PASS_FAIL:
        return None if value in (PASS, FAIL) else f"pass or fail, not {shown}"
    if item.kind is ItemKind.NUMBER:
        return None if to_decimal(value) is not None else f"a finite number, not {shown}"
    if item.kind is ItemKind.CHOICE:
        return None if isinstance(value, str) and value in item.choices else f"{_takes(item)}; not {shown}"
    if not isinstance(value, str):
        return f"a text, not {shown}"
    return None if len(value) <= MAX_TEXT else f"a text of at most {MAX_TEXT} characters, not {len(value)}"


def kept_answers(items: Sequence[CheckItem], answers: Mapping[str, Any]) -> dict[str, Answer]:
    """Valid ``answers`` (:func:`answer_problems` found none) as kept: numbers as Decimal, nulls left out."""
    kinds = {item.item_id: item.kind for item in items}
    kept: dict[str, Answer] = {}
    for item_id, value in answers.items():
        if value is None:
            continue
        number = to_decimal(value) if kinds.get(item_id) is ItemKind.NUMBER else None
        kept[item_id] = number if number is not None else str(value)
    return kept


def answer_document(value: object) -> Any:
    """An answer as JSON shows it: a Decimal as an int or a float, the rest as it is."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


@dataclass(frozen=True)
class FailedItem:
    """An item a check failed, as the check's revision had it (an edit never changes it)."""

    item_id: str
    label: str
    critical: bool
    answer: Any
    expected: str
    """A passing answer in words: "pass", "between 2 and 3 bar", "not one of: leaking"."""

    def to_dict(self) -> dict[str, Any]:
        return {"item_id": self.item_id, "label": self.label, "critical": self.critical,
                "answer": answer_document(self.answer), "expected": self.expected}

    def describe(self) -> str:
        """In words: "Brakes work (critical): fail, expected pass"."""
        critical = " (critical)" if self.critical else ""
        return f"{self.label}{critical}: {answer_document(self.answer)}, expected {self.expected}"


def failed_item_of(document: Mapping[str, Any]) -> FailedItem:
    """A failed item as stored (:meth:`FailedItem.to_dict`; numbers as DynamoDB gives them);
    InvalidInput naming ``failed_items`` when a hand edit left out its id or label."""
    item_id, label = document.get("item_id"), document.get("label")
    if not isinstance(item_id, str) or not isinstance(label, str):
        raise InvalidInput("failed_items", f"an item has id {describe(item_id)} and label {describe(label)}")
    return FailedItem(item_id, label, document.get("critical") is True, document.get("answer"),
                      str(document.get("expected") or ""))


class Result:
    PASSED = "passed"
    FAILED = "failed"
    NO_ITEMS = "no_items"


@dataclass(frozen=True)
class Findings:
    """What a check's answers found under the revision in force at its ``performed_at``."""

    items_revision: int | None
    """None: the checklist had no items then."""
    failed: tuple[FailedItem, ...] = ()

    @property
    def passed(self) -> bool:
        return not self.failed

    @property
    def critical_failed(self) -> tuple[FailedItem, ...]:
        return tuple(item for item in self.failed if item.critical)

    @property
    def passed_critical(self) -> bool:
        """No critical item failed (a check of a checklist without items passes)."""
        return not self.critical_failed

    @property
    def result(self) -> str:
        if self.items_revision is None:
            return Result.NO_ITEMS
        return Result.PASSED if self.passed else Result.FAILED

    def to_dict(self) -> dict[str, Any]:
        return {"items_revision": self.items_revision, "result": self.result,
                "failed_items": [item.to_dict() for item in self.failed]}


def fails(item: CheckItem, value: object) -> bool:
    """Whether a valid answer ``value`` fails ``item`` (an unanswered item never fails)."""
    if value is None:
        return False
    if item.kind is ItemKind.PASS_FAIL:
        return value == FAIL
    if item.kind is ItemKind.CHOICE:
        return value in item.failing_choices
    if item.kind is ItemKind.NUMBER:
        number = to_decimal(value)
        if number is None:
            return False
        return (item.minimum is not None and number < item.minimum) or \
            (item.maximum is not None and number > item.maximum)
    return False


def findings_of(item_list: ItemList | None, answers: Mapping[str, Any]) -> Findings:
    """The items ``answers`` fail under ``item_list`` (None: no items in force, nothing to fail), in
    the list's order, with the labels and bounds that revision had."""
    if item_list is None:
        return Findings(None)
    failed = []
    for item in item_list.items:
        value = answers.get(item.item_id)
        if fails(item, value):
            number = to_decimal(value) if item.kind is ItemKind.NUMBER else None
            failed.append(FailedItem(item.item_id, item.label, item.critical,
                                     number if number is not None else value, item.expected()))
    return Findings(item_list.revision, tuple(failed))
