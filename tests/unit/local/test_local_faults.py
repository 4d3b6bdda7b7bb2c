"""Fault plans: declared in a scenario or a file, checked like any input, struck in order."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from missed_checks.errors import InvalidInput
from missed_checks_local.product.chaos import compare, survived_by_retry
from missed_checks_local.product.faults import KINDS, FaultInjector, parse_faults, random_faults
from missed_checks_ops.cli.local import load_faults


def test_a_fault_strikes_after_its_skips_for_its_count_then_never() -> None:
    injector = FaultInjector(parse_faults([{"kind": "firing_drop", "count": 2, "skip": 1}]))
    assert [injector.strike("firing_drop") is not None for _ in range(5)] == [False, True, True, False, False]
    assert injector.injected == Counter({"firing_drop": 2})
    assert injector.strike("firing_late") is None


def test_a_fault_for_one_function_or_operation_leaves_the_others_alone() -> None:
    injector = FaultInjector(parse_faults([
        {"kind": "lambda_error", "function": "CloseWindowFunction", "transient": False},
        {"kind": "dynamodb_throttle", "operation": "read"},
    ]))
    assert injector.strike("lambda_error", function="PlanEvaluationFunction") is None
    fault = injector.strike("lambda_error", function="CloseWindowFunction")
    assert fault is not None and fault.transient is False
    assert injector.strike("dynamodb_throttle", operation="write") is None
    assert injector.strike("dynamodb_throttle", operation="read") is not None


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"kind": "lambda_error"}, "faults"),
        ([{"kind": "meteor"}], "faults[0].kind"),
        ([{"kind": "firing_drop", "count": 0}], "faults[0].count"),
        ([{"kind": "firing_drop", "count": True}], "faults[0].count"),
        ([{"kind": "firing_late", "hours": 100}], "faults[0].hours"),
        ([{"kind": "dynamodb_throttle", "operation": "scan"}], "faults[0].operation"),
        ([{"kind": "lambda_error", "transient": "yes"}], "faults[0].transient"),
        ([{"kind": "firing_drop", "when": "now"}], "faults[0]"),
        (["firing_drop"], "faults[0]"),
    ],
)
def test_a_bad_plan_is_refused_naming_the_field(raw, field) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_faults(raw)
    assert caught.value.field == field


def test_a_plan_file_may_be_a_list_or_an_object_with_faults(tmp_path) -> None:
    listed, wrapped = tmp_path / "a.json", tmp_path / "b.json"
    listed.write_text(json.dumps([{"kind": "firing_drop"}]))
    wrapped.write_text(json.dumps({"faults": [{"kind": "stream_duplicate", "count": 2}]}))
    assert [f.kind for f in load_faults(listed)] == ["firing_drop"]
    assert [(f.kind, f.count) for f in load_faults(wrapped)] == [("stream_duplicate", 2)]
    with pytest.raises(InvalidInput, match="no such file"):
        load_faults(tmp_path / "missing.json")


def test_a_random_plan_is_reproducible_from_its_seed_and_covers_every_kind() -> None:
    first = [f.describe() for f in random_faults(7, functions=["CloseWindowFunction"])]
    assert first == [f.describe() for f in random_faults(7, functions=["CloseWindowFunction"])]
    assert first != [f.describe() for f in random_faults(8, functions=["CloseWindowFunction"])]
    assert {f["kind"] for f in first} == set(KINDS)


def test_the_invariants_count_what_was_lost_added_duplicated_and_announced_twice() -> None:
    a, b, c = ("c", "e1", "w1"), ("c", "e2", "w1"), ("c", "e3", "w2")
    assert compare([a, b, c], [a, b, c], Counter(w1=1, w2=1), Counter(w1=1, w2=1), 0) == dict.fromkeys(
        ["missed_checks_lost", "missed_checks_extra", "missed_checks_duplicated", "windows_announced_twice",
         "announcements_lost", "stream_shards_blocked",
         "notifications_lost", "notifications_extra", "notifications_duplicated"], 0)
    broken = compare([a, b], [a, a, c], Counter(w1=1, w2=1), Counter(w1=2), 3)
    assert broken == {"missed_checks_lost": 1, "missed_checks_extra": 1, "missed_checks_duplicated": 1,
                      "windows_announced_twice": 1, "announcements_lost": 1, "stream_shards_blocked": 3,
                      "notifications_lost": 0, "notifications_extra": 0, "notifications_duplicated": 0}


def test_the_notification_invariants_count_by_deterministic_id() -> None:
    """#18: a notification the faulty run never sent, one it sent that the clean run did not, one it
    e-mailed twice."""
    counts = compare([], [], Counter(), Counter(), 0, ["n1", "n2", "n3"], ["n1", "n1", "n3", "n4"])
    assert {k: v for k, v in counts.items() if k.startswith("notifications")} == {
        "notifications_lost": 1, "notifications_extra": 1, "notifications_duplicated": 1}


def test_survived_by_retry_counts_the_faults_a_retry_absorbs() -> None:
    injector = FaultInjector(parse_faults([
        {"kind": "lambda_error"}, {"kind": "lambda_error", "transient": False}, {"kind": "dynamodb_throttle"},
        {"kind": "firing_drop"},
    ]))
    injector.strike("lambda_error")
    injector.strike("lambda_error")
    injector.strike("dynamodb_throttle", operation="write")
    injector.strike("firing_drop")
    assert survived_by_retry(injector) == 2  # the transient error and the throttle
