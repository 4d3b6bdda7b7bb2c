"""Two ``local serve`` servers, one after the other, in one process (as tests run them)."""

from __future__ import annotations

import socket
from datetime import UTC, datetime
from pathlib import Path

import pytest

from missed_checks.aws.table import ChecklistTable
from missed_checks.checklists.saving import save_checklist
from missed_checks_local.serve import LocalServer

pytestmark = pytest.mark.stack  # serves the local stack on a port: not in the fast lane

START = datetime(2026, 3, 2, 5, 30, tzinfo=UTC)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_stopped_server_leaves_nothing_for_the_next_one(tmp_path: Path) -> None:
    first = LocalServer(port=free_port(), start=START, speed=1.0, log_path=tmp_path / "first.log")
    try:
        stack = first.start()
        name = stack.stack_name
        save_checklist(ChecklistTable(stack.table_name),
            "left-behind", recurrence="DTSTART;TZID=UTC:20260302T080000\nRRULE:FREQ=DAILY", window="PT1H", now=START,
                by="tests"
        )
    finally:
        first.stop()
    second = LocalServer(port=free_port(), start=START, speed=1.0, log_path=tmp_path / "second.log")
    try:
        stack = second.start()  # was: DeployError "Stack missed-checks-local already exists"
        assert stack.stack_name == name
        assert ChecklistTable(stack.table_name).list_checklists() == []
    finally:
        second.stop()
