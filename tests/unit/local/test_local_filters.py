"""Lambda FilterCriteria matching (the EventBridge pattern subset the local runtime supports)."""

from __future__ import annotations

import pytest

from missed_checks_local.streams.filters import FilterPatternError, matches, matches_any

CHECKLIST_ONLY = {"dynamodb": {"Keys": {"sk": {"S": ["CHECKLIST"]}}}}


def record(sk: str, event_name: str = "INSERT", **extra) -> dict:
    return {"eventName": event_name, "dynamodb": {"Keys": {"pk": {"S": "CHECKLIST#a"}, "sk": {"S": sk}}, **extra}}


def test_template_filter_keeps_checklist_items_only() -> None:
    assert matches(CHECKLIST_ONLY, record("CHECKLIST"))
    assert not matches(CHECKLIST_ONLY, record("EQUIPMENT#03#fl-01"))
    assert not matches(CHECKLIST_ONLY, {"dynamodb": {"Keys": {"pk": {"S": "x"}}}})  # key missing
    assert not matches(CHECKLIST_ONLY, {"dynamodb": {"Keys": {"sk": "CHECKLIST"}}})  # not nested as the pattern


def test_no_patterns_means_everything_and_patterns_are_ored() -> None:
    assert matches_any((), record("anything"))
    patterns = (CHECKLIST_ONLY, {"eventName": ["REMOVE"]})
    assert matches_any(patterns, record("EQUIPMENT#1", "REMOVE"))
    assert not matches_any(patterns, record("EQUIPMENT#1", "MODIFY"))


@pytest.mark.parametrize(
    ("pattern", "value", "expected"),
    [
        ({"prefix": "EQUIPMENT#"}, "EQUIPMENT#01#x", True),
        ({"prefix": "EQUIPMENT#"}, "CHECKLIST", False),
        ({"suffix": "LIST"}, "CHECKLIST", True),
        ({"equals-ignore-case": "checklist"}, "CHECKLIST", True),
        ({"anything-but": "CHECKLIST"}, "EQUIPMENT", True),
        ({"anything-but": ["CHECKLIST", "X"]}, "X", False),
        ({"anything-but": {"prefix": "EQ"}}, "EQUIPMENT", False),
        ({"numeric": [">", 0, "<=", 5]}, 5, True),
        ({"numeric": [">", 0, "<=", 5]}, 6, False),
        ({"numeric": [">", 0]}, "5", False),
        ({"exists": True}, "x", True),
    ],
)
def test_content_filters(pattern: dict, value: object, expected: bool) -> None:
    assert matches({"field": [pattern]}, {"field": value}) is expected


def test_exists_false_and_missing_keys() -> None:
    assert matches({"field": [{"exists": False}]}, {"other": 1})
    assert not matches({"field": [{"exists": False}]}, {"field": 1})
    assert not matches({"field": [{"exists": True}]}, {"other": 1})
    assert not matches({"field": [{"anything-but": "x"}]}, {"other": 1})


def test_exact_values_do_not_coerce_types_and_lists_match_any_element() -> None:
    assert not matches({"n": [1]}, {"n": "1"})
    assert matches({"n": [1]}, {"n": 1.0})
    assert not matches({"b": [True]}, {"b": 1})
    assert matches({"b": [None]}, {"b": None})
    assert matches({"tags": ["red"]}, {"tags": ["blue", "red"]})


def test_or_operator() -> None:
    pattern = {"$or": [{"eventName": ["INSERT"]}, {"eventName": ["REMOVE"]}]}
    assert matches(pattern, {"eventName": "REMOVE"})
    assert not matches(pattern, {"eventName": "MODIFY"})


@pytest.mark.parametrize(
    "pattern",
    [
        {"field": "CHECKLIST"},
        {"field": [{"wildcard": "a*"}]},
        {"field": [{"prefix": "a", "suffix": "b"}]},
        {"field": [{"numeric": [">", "x"]}]},
    ],
)
def test_unsupported_or_malformed_patterns_are_refused(pattern: dict) -> None:
    with pytest.raises(FilterPatternError):
        matches(pattern, {"field": "abc"})


def test_what_motos_matcher_lacks_is_kept() -> None:
    """moto's EventPattern compares with Python's ==, where True == 1, and matches a filter it
    does not know; Lambda's grammar and JSON's types are kept here."""
    assert matches({"b": [{"anything-but": True}]}, {"b": 1})
    assert not matches({"b": [{"anything-but": [False]}]}, {"b": False})
    assert not matches({"n": [1]}, {"n": True})
    assert not matches({"n": [{"numeric": [">", 0]}]}, {"n": True})
    assert matches({"tags": [False]}, {"tags": [0, False]})
    with pytest.raises(FilterPatternError):
        matches({"ip": [{"cidr": "10.0.0.0/24"}]}, {"ip": "10.0.0.1"})
