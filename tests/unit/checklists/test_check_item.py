"""Items on a checklist (#33): parsing every problem at once with the field naming the item, the
document form round-tripping, and the revision in force at an instant."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from missed_checks.checklists.check_item import (
    MAX_ITEMS,
    CheckItem,
    ItemKind,
    ItemList,
    ItemsRefused,
    in_force,
    item_of,
    parse_items,
)
from missed_checks.errors import InvalidInput

BRAKES = {"id": "brakes", "label": "Brakes work", "kind": "pass_fail", "critical": True}
TYRES = {"id": "tyre_pressure", "label": "Tyre pressure", "kind": "number", "unit": "bar", "minimum": 2,
         "maximum": 3.5}
FLUID = {"id": "hydraulics", "label": "Hydraulic fluid", "kind": "choice", "choices": ["ok", "low", "leaking"],
         "failing_choices": ["leaking"], "critical": True}
NOTE = {"id": "notes", "label": "Anything else", "kind": "text", "required": False}


def test_every_kind_parses_and_its_document_round_trips() -> None:
    items = parse_items([BRAKES, TYRES, FLUID, NOTE])
    assert [item.kind for item in items] == [ItemKind.PASS_FAIL, ItemKind.NUMBER, ItemKind.CHOICE, ItemKind.TEXT]
    assert items[1] == CheckItem("tyre_pressure", "Tyre pressure", ItemKind.NUMBER, unit="bar",
                                 minimum=Decimal(2), maximum=Decimal("3.5"))
    assert [item.to_dict() for item in items] == [BRAKES, TYRES, FLUID, NOTE]
    assert parse_items([item.to_dict() for item in items]) == items
    assert item_of({**TYRES, "minimum": Decimal(2), "maximum": Decimal("3.5")}) == items[1]  # as DynamoDB gives it


def test_expected_in_words() -> None:
    brakes, tyres, fluid, note = parse_items([BRAKES, TYRES, FLUID, NOTE])
    assert [brakes.expected(), tyres.expected(), fluid.expected(), note.expected()] == [
        "pass", "between 2 and 3.5 bar", "not one of: leaking", "any text"]
    assert parse_items([{**TYRES, "maximum": None}])[0].expected() == "at least 2 bar"


@pytest.mark.parametrize(("items", "field", "words"), [
    ([BRAKES, {**TYRES, "minimum": 4}], "items[1].minimum", "4 is above maximum 3.5"),
    ([{**BRAKES, "kind": "yes_no"}], "items[0].kind", "use one of pass_fail, number, choice, text"),
    ([BRAKES, {**BRAKES, "label": "Again"}], "items[1].id", "'brakes' repeats items[0].id"),
    ([{**BRAKES, "id": "brakes check"}], "items[0].id", "not a valid item id"),
    ([{**BRAKES, "unit": "bar"}], "items[0].unit", "is for a number item, not a pass_fail item"),
    ([{**FLUID, "failing_choices": ["smoking"]}], "items[0].failing_choices[0]", "'smoking' is not one of choices"),
    ([{**FLUID, "choices": ["ok"], "failing_choices": []}], "items[0].choices", "has 1 choices; give 2-20"),
    ([{**FLUID, "choices": None, "failing_choices": None}], "items[0].choices", "is missing"),
    ([{**BRAKES, "label": ""}], "items[0].label", "give the question in words"),
    ([{**BRAKES, "critical": "yes"}], "items[0].critical", "not true or false"),
    ([{**TYRES, "minimum": "2"}], "items[0].minimum", "not a finite number"),
    ([{**TYRES, "maximum": float("nan")}], "items[0].maximum", "not a finite number"),
    ([{**BRAKES, "colour": "red"}], "items[0].colour", "is not a field of an item"),
    (["brakes"], "items[0]", "not an item"),
    ("brakes", "items", "not a list of items"),
])
def test_a_bad_item_is_refused_naming_it(items: object, field: str, words: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        parse_items(items)
    assert refused.value.field == field
    assert words in refused.value.message


def test_every_problem_at_once() -> None:
    with pytest.raises(ItemsRefused) as refused:
        parse_items([{**BRAKES, "kind": "nope"}, BRAKES, {**TYRES, "minimum": "x", "unit": ""}])
    assert [problem.field for problem in refused.value.problems] == [
        "items[0].kind", "items[2].unit", "items[2].minimum"]
    assert str(refused.value).endswith("(and 2 more)")


def test_at_most_fifty_items() -> None:
    many = [{"id": f"i{n}", "label": f"Item {n}", "kind": "text"} for n in range(MAX_ITEMS + 1)]
    assert len(parse_items(many[:MAX_ITEMS])) == MAX_ITEMS
    with pytest.raises(InvalidInput, match=r"items: has 51 items; a checklist has at most 50"):
        parse_items(many)


def test_no_items() -> None:
    assert parse_items(None) == ()
    assert parse_items([]) == ()


T0 = datetime(2026, 3, 1, tzinfo=UTC)


def test_in_force_is_the_latest_revision_in_effect_at_the_instant() -> None:
    one = ItemList(1, T0, parse_items([BRAKES]))
    two = ItemList(2, T0 + timedelta(days=2), parse_items([BRAKES, TYRES]))
    three = ItemList(3, T0 + timedelta(days=5), ())
    revisions = [one, two, three]
    assert in_force(revisions, T0 - timedelta(seconds=1)) is None
    assert in_force(revisions, T0) is one
    assert in_force(revisions, T0 + timedelta(days=2) - timedelta(microseconds=1)) is one
    assert in_force(revisions, T0 + timedelta(days=2)) is two
    assert in_force(revisions, T0 + timedelta(days=9)) is three  # the items were dropped: a revision with none
    assert in_force([], T0) is None


@given(st.lists(st.integers(min_value=0, max_value=100), min_size=1, max_size=8, unique=True),
       st.integers(min_value=-5, max_value=110))
def test_in_force_whatever_the_order(days: list[int], at: int) -> None:
    revisions = [ItemList(n + 1, T0 + timedelta(days=d), ()) for n, d in enumerate(sorted(days))]
    found = in_force(list(reversed(revisions)), T0 + timedelta(days=at))
    earlier = [r for r in revisions if r.effective_from <= T0 + timedelta(days=at)]
    assert found == (earlier[-1] if earlier else None)


JSON = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8)),
                    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner,
                                                                                         max_size=3)), max_leaves=8)
FIELD_VALUES = {"id": st.one_of(st.sampled_from(["brakes", "tyres", "b-1"]), JSON),
                "label": st.one_of(st.just("Brakes work"), JSON),
                "kind": st.one_of(st.sampled_from(["pass_fail", "number", "choice", "text"]), JSON),
                "critical": st.one_of(st.booleans(), JSON), "required": st.one_of(st.booleans(), JSON),
                "unit": st.one_of(st.just("bar"), JSON), "minimum": st.one_of(st.integers(-5, 5), JSON),
                "maximum": st.one_of(st.integers(-5, 5), JSON),
                "choices": st.one_of(st.just(["ok", "leaking"]), JSON),
                "failing_choices": st.one_of(st.just(["leaking"]), JSON), "colour": JSON}
ITEM_DOCUMENTS = st.fixed_dictionaries({}, optional=FIELD_VALUES)


@given(st.one_of(st.lists(ITEM_DOCUMENTS, max_size=4), JSON))
def test_any_document_is_parsed_or_refused_naming_a_field_of_items(values: object) -> None:
    try:
        items = parse_items(values)
    except InvalidInput as refused:
        assert refused.field == "items" or refused.field.startswith("items[")
        return
    assert parse_items([item.to_dict() for item in items]) == items  # what parses reads back the same
