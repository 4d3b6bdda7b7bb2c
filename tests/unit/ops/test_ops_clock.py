"""One clock: the ops commands take "now" from a local stack's published clock, the wall clock
against AWS (the end-to-end proof is tests/e2e/test_local_clock.py)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta

import pytest

from missed_checks import clock
from missed_checks_local import endpoint
from missed_checks_ops.cli import common
from missed_checks_ops.target import ClockAnchor, TargetError

INSTANT = datetime(2026, 3, 2, 5, 10, tzinfo=UTC)


def test_an_anchor_follows_the_clock_at_its_speed(monkeypatch: pytest.MonkeyPatch) -> None:
    anchor = ClockAnchor(INSTANT, wall=1000.0, speed=600.0)
    assert ClockAnchor.from_tag(anchor.to_tag()) == anchor
    monkeypatch.setattr(endpoint.time, "time", lambda: 1002.5)  # the anchor is the emulator's (endpoint.py)
    assert anchor.now() == INSTANT + timedelta(seconds=1500)
    assert ClockAnchor(INSTANT, wall=1000.0, speed=0.0).now() == INSTANT  # a clock that stands still


@pytest.mark.parametrize("text", ["", "{}", '{"now": "2026-03-02T05:10:00", "wall": 1, "speed": 1}',
                                  '{"now": "2026-03-02T05:10:00Z", "wall": 1, "speed": -1}', "[1]"])
def test_a_tag_that_is_not_a_clock_is_refused(text: str) -> None:
    with pytest.raises(TargetError, match="missed-checks:clock"):
        ClockAnchor.from_tag(text)


def test_without_an_endpoint_the_wall_clock_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    args = argparse.Namespace(stack="missed-checks", region="eu-west-1", endpoint=None)
    with common.target_clock(args):
        assert abs(clock.now() - datetime.now(UTC)) < timedelta(minutes=1)
        assert common.clock_kind() == "wall"
    assert clock.source() is None


def test_a_local_stack_gives_its_clock_once_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[str | None, str | None, str | None]] = []

    def published(stack: str | None, region: str | None, endpoint: str | None) -> ClockAnchor:
        asked.append((stack, region, endpoint))
        return ClockAnchor(INSTANT, wall=datetime.now(UTC).timestamp(), speed=0.0)

    monkeypatch.setattr(common, "stack_clock", published)
    args = argparse.Namespace(stack=None, region="us-east-1", endpoint="http://127.0.0.1:5000")
    with common.target_clock(args):
        assert asked == []  # nothing asked before a command needs "now"
        assert clock.now() == INSTANT
        assert common.clock_kind() == "simulated"
        assert clock.now() == INSTANT
    assert asked == [(None, "us-east-1", "http://127.0.0.1:5000")]  # once per command
    assert clock.source() is None


def test_a_process_that_runs_the_stack_keeps_its_own_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "stack_clock", lambda *_: pytest.fail("the running stack's clock rules"))
    clock.set_source(lambda: INSTANT)
    try:
        with common.target_clock(argparse.Namespace(stack=None, region=None, endpoint="http://127.0.0.1:5000")):
            assert clock.now() == INSTANT
        assert clock.now() == INSTANT
    finally:
        clock.set_source(None)


def test_a_stack_without_a_clock_means_the_wall_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "stack_clock", lambda *_: None)
    with common.target_clock(argparse.Namespace(stack="x", region="us-east-1", endpoint="http://127.0.0.1:1")):
        assert abs(clock.now() - datetime.now(UTC)) < timedelta(minutes=1)
        assert common.clock_kind() == "wall"
