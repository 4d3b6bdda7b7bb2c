"""Which region the ops CLI targets when none is given: the error names a variable boto3 reads."""

from __future__ import annotations

import os

import pytest

from missed_checks_ops.target import TargetError, resolve_target


@pytest.fixture
def no_region(monkeypatch: pytest.MonkeyPatch, tmp_path: os.PathLike[str]) -> pytest.MonkeyPatch:
    for name in ("AWS_DEFAULT_REGION", "AWS_REGION", "AWS_PROFILE", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path) + "/none")  # no profile region either
    return monkeypatch


def test_without_a_region_the_error_names_the_variable_that_sets_it(no_region: pytest.MonkeyPatch) -> None:
    with pytest.raises(TargetError, match="AWS_DEFAULT_REGION") as raised:
        resolve_target(overrides={"table": "checklists"})
    assert raised.value.field == "region"


def test_with_neither_a_stack_nor_a_region_the_error_says_first_that_no_stack_is_named(
        no_region: pytest.MonkeyPatch) -> None:
    """The region is not what a new user lacks first: every way to name a stack is said."""
    no_region.delenv("MISSED_CHECKS_STACK", raising=False)
    with pytest.raises(TargetError) as raised:
        resolve_target()
    assert raised.value.field == "stack"
    message = str(raised.value)
    assert "region" not in message.lower()
    for way in ("--stack NAME", "MISSED_CHECKS_STACK", "--endpoint URL", "AWS_ENDPOINT_URL"):
        assert way in message, way


def test_the_variable_the_error_names_is_the_one_that_works(no_region: pytest.MonkeyPatch) -> None:
    no_region.setenv("AWS_DEFAULT_REGION", "eu-west-3")
    assert resolve_target(overrides={"table": "checklists"}).region == "eu-west-3"


def test_a_commands_clock_and_target_share_one_describe_stacks(no_region: pytest.MonkeyPatch) -> None:
    """A command against ``local serve`` reads the stack's clock, then finds its target: one
    DescribeStacks answers both; the next resolution asks the stack again."""
    from datetime import UTC, datetime

    from missed_checks.aws.stacks import StackDescription
    from missed_checks_ops import target

    anchor = target.ClockAnchor(datetime(2026, 3, 2, 5, tzinfo=UTC), 0.0, 0.0)
    found = StackDescription({"TableName": "checklists"}, {}, {target.CLOCK_TAG: anchor.to_tag()})
    asked: list[str] = []
    no_region.setattr(target, "describe_stack", lambda client, name: asked.append(name) or found)
    endpoint = "http://127.0.0.1:1"
    assert target.stack_clock(None, "eu-west-1", endpoint).now() == anchor.instant
    first = target.resolve_target(None, "eu-west-1", endpoint)
    assert (asked, first.output("TableName")) == (["missed-checks-local"], "checklists")
    target.resolve_target(None, "eu-west-1", endpoint)
    assert asked == ["missed-checks-local"] * 2
