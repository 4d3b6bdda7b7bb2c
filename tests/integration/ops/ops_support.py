"""Shared by the test_ops_* modules: the local runtime with its outputs published as a stack, and
a way to run ``missed-checks`` commands in-process against it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from missed_checks_local.clock import SimulatedClock
from missed_checks_local.runtime import LocalRuntime
from missed_checks_local.stack import EmbeddedStack
from missed_checks_ops.cli.main import main

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)  # a Sunday
BERLIN_WORKDAYS = ["DTSTART;TZID=Europe/Berlin:20260302T060000", "RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"]
TARGET = ["--stack", "missed-checks-local", "--region", "us-east-1"]


@contextmanager
def ops_runtime(start: datetime = START, parameters: dict[str, str] | None = None) -> Iterator[LocalRuntime]:
    """The built template deployed into the embedded AWS as the CloudFormation stack
    ``missed-checks-local`` (call inside the ``embedded`` fixture; ``parameters`` override the
    template's), and the local runtime (streams, scheduler, Lambda workers) on a simulated clock."""
    stack = EmbeddedStack.provision(parameters=parameters)
    with LocalRuntime(stack, SimulatedClock(start)) as runtime:
        yield runtime


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def json(self) -> Any:
        # In this process the in-process Lambda runtime may print its START/END lines on stdout
        # while a command waits for an execution; the command's own document follows them.
        lines = self.out.splitlines()
        for first, line in enumerate(lines):
            if line[:1] in ("{", "["):
                try:
                    return json.loads("\n".join(lines[first:]))
                except ValueError:
                    continue
        raise AssertionError(f"no JSON document on stdout: {self.out!r}")


class Cli:
    """Runs ``missed-checks ARGS --stack missed-checks-local`` in this process."""

    def __init__(self, capsys: Any) -> None:
        self.capsys = capsys

    def __call__(self, *argv: str, target: bool = True) -> Result:
        self.capsys.readouterr()
        try:
            code = main([*argv, *(TARGET if target else [])])
        except SystemExit as exit_:  # argparse's own usage errors
            code = int(exit_.code or 0)
        captured = self.capsys.readouterr()
        return Result(code, captured.out, captured.err)

    def ok(self, *argv: str) -> Any:
        """Run with --format json, expect exit 0, return the parsed output."""
        result = self(*argv, "--format", "json")
        assert result.code == 0, result.err
        return result.json


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
