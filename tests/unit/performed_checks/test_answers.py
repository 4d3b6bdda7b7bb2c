"""Answers on a check (#33): every bad answer named (answers.<item id>, the label and the revision
in the words), and what valid answers found: a fail, a number outside the bounds, a failing choice
fail the item; nothing else does."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from missed_checks.checklists.check_item import ItemKind, ItemList, parse_items
from missed_checks.performed_checks.answers import (
    MAX_TEXT,
    FailedItem,
    Findings,
    answer_problems,
    findings_of,
    kept_answers,
)
from missed_checks.performed_checks.problem import Refusal

ITEMS = parse_items([
    {"id": "brakes", "label": "Brakes work", "kind": "pass_fail", "critical": True},
    {"id": "tyre_pressure", "label": "Tyre pressure", "kind": "number", "unit": "bar", "minimum": 2, "maximum": 3},
    {"id": "hydraulics", "label": "Hydraulic fluid", "kind": "choice", "choices": ["ok", "low", "leaking"],
     "failing_choices": ["leaking"], "critical": True},
    {"id": "notes", "label": "Anything else", "kind": "text", "required": False},
])
LIST = ItemList(3, datetime(2026, 3, 1, tzinfo=UTC), ITEMS)
GOOD = {"brakes": "pass", "tyre_pressure": 2.4, "hydraulics": "ok"}


def test_good_answers_have_no_problem_and_pass() -> None:
    assert answer_problems(ITEMS, GOOD, None) == []
    assert answer_problems(ITEMS, {**GOOD, "tyre_pressure": "2.5", "notes": "scratch on the mast"}, None) == []
    findings = findings_of(LIST, GOOD)
    assert findings == Findings(3, ())
    assert findings.passed and findings.passed_critical
    assert findings.to_dict() == {"items_revision": 3, "result": "passed", "failed_items": []}


def test_the_detail_names_the_item_its_label_the_checklist_and_the_revision() -> None:
    problems = answer_problems(ITEMS, {**GOOD, "brakes": "ok"}, "checks[1]", checklist_id="forklift-daily",
                               revision=3)
    assert [(p.field, p.kind, p.row) for p in problems] == [("answers.brakes", Refusal.BAD_ANSWER, "checks[1]")]
    assert problems[0].detail == ("item 'brakes' (Brakes work) of checklist 'forklift-daily' revision 3 needs "
                                  "pass or fail, not 'ok'")


def test_every_bad_answer_is_named() -> None:
    problems = answer_problems(ITEMS, {"tyre_pressure": "high", "hydraulics": "LEAKING", "horn": "pass",
                                       "notes": "x" * (MAX_TEXT + 1)}, None, checklist_id="forklift-daily", revision=3)
    assert {p.field: p.detail for p in problems} == {
        "answers.horn": "checklist 'forklift-daily' revision 3 has no item 'horn' (its items: brakes, tyre_pressure, "
                        "hydraulics, notes)",
        "answers.brakes": "item 'brakes' (Brakes work) of checklist 'forklift-daily' revision 3 is required: answer "
                          "it (pass or fail)",
        "answers.tyre_pressure": "item 'tyre_pressure' (Tyre pressure) of checklist 'forklift-daily' revision 3 "
                                 "needs a finite number, not 'high'",
        "answers.hydraulics": "item 'hydraulics' (Hydraulic fluid) of checklist 'forklift-daily' revision 3 needs "
                              "one of: ok, low, leaking; not 'LEAKING'",
        "answers.notes": "item 'notes' (Anything else) of checklist 'forklift-daily' revision 3 needs a text of at "
                         "most 1000 characters, not 1001",
    }


def test_answers_that_are_not_a_map() -> None:
    [problem] = answer_problems(ITEMS, ["pass"], None)
    assert (problem.field, problem.kind) == ("answers", Refusal.BAD_ANSWER)
    assert "give a map of item id to answer" in problem.detail


def test_a_null_answer_is_no_answer() -> None:
    assert answer_problems(ITEMS, {**GOOD, "notes": None}, None) == []
    assert [p.field for p in answer_problems(ITEMS, {**GOOD, "brakes": None}, None)] == ["answers.brakes"]
    assert kept_answers(ITEMS, {**GOOD, "notes": None}) == {"brakes": "pass", "tyre_pressure": Decimal("2.4"),
                                                             "hydraulics": "ok"}


def test_what_fails() -> None:
    findings = findings_of(LIST, {"brakes": "fail", "tyre_pressure": Decimal("1.8"), "hydraulics": "leaking",
                                  "notes": "fail"})
    assert findings.failed == (
        FailedItem("brakes", "Brakes work", True, "fail", "pass"),
        FailedItem("tyre_pressure", "Tyre pressure", False, Decimal("1.8"), "between 2 and 3 bar"),
        FailedItem("hydraulics", "Hydraulic fluid", True, "leaking", "not one of: leaking"),
    )
    assert [item.item_id for item in findings.critical_failed] == ["brakes", "hydraulics"]
    assert not findings.passed_critical
    assert findings.to_dict()["failed_items"][1] == {"item_id": "tyre_pressure", "label": "Tyre pressure",
                                                     "critical": False, "answer": 1.8,
                                                     "expected": "between 2 and 3 bar"}
    assert findings.failed[0].describe() == "Brakes work (critical): fail, expected pass"


def test_a_non_critical_failure_still_passes_every_critical_item() -> None:
    findings = findings_of(LIST, {**GOOD, "tyre_pressure": 3.01})
    assert not findings.passed
    assert findings.passed_critical
    assert findings.to_dict()["result"] == "failed"


def test_no_items_in_force() -> None:
    findings = findings_of(None, {})
    assert findings.to_dict() == {"items_revision": None, "result": "no_items", "failed_items": []}
    assert findings.passed_critical


# -- properties: answers against items -------------------------------------------------------------
def _answer(kind: ItemKind) -> st.SearchStrategy[Any]:
    if kind is ItemKind.PASS_FAIL:
        return st.sampled_from(["pass", "fail"])
    if kind is ItemKind.NUMBER:
        return st.one_of(st.integers(-100, 100), st.floats(-100, 100, allow_nan=False),
                         st.decimals(-100, 100, allow_nan=False, allow_infinity=False, places=3))
    if kind is ItemKind.CHOICE:
        return st.sampled_from(["ok", "low", "leaking"])
    return st.text(max_size=50)


@st.composite
def valid_answers(draw: st.DrawFn) -> dict[str, Any]:
    answers = {}
    for item in ITEMS:
        if item.required or draw(st.booleans()):
            answers[item.item_id] = draw(_answer(item.kind))
    return answers


ANYTHING = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20),
                     st.lists(st.integers(), max_size=2),
                     st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


@given(valid_answers())
def test_valid_answers_are_never_refused(answers: dict[str, Any]) -> None:
    assert answer_problems(ITEMS, answers, None) == []
    findings = findings_of(LIST, kept_answers(ITEMS, answers))
    assert findings.items_revision == 3
    failed = {item.item_id for item in findings.failed}
    assert ("brakes" in failed) == (answers["brakes"] == "fail")
    assert ("hydraulics" in failed) == (answers["hydraulics"] == "leaking")
    pressure = Decimal(str(answers["tyre_pressure"]))
    assert ("tyre_pressure" in failed) == (not Decimal(2) <= pressure <= Decimal(3))
    assert "notes" not in failed
    assert findings.passed_critical == (answers["brakes"] == "pass" and answers["hydraulics"] != "leaking")


@given(valid_answers(), st.sampled_from([item.item_id for item in ITEMS] + ["horn", ""]), ANYTHING)
def test_a_changed_answer_is_refused_only_naming_its_own_item(answers: dict[str, Any], key: str,
                                                              value: object) -> None:
    changed = {**answers, key: value}
    problems = answer_problems(ITEMS, changed, "checks[0]")
    assert {p.field for p in problems} <= {f"answers.{key}" if key else "answers"}
    assert all(p.kind == Refusal.BAD_ANSWER and p.row == "checks[0]" for p in problems)
    if not problems:  # accepted: findings never raise
        findings_of(LIST, kept_answers(ITEMS, changed))
