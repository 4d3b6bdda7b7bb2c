"""Failures of the terminal, not of the input (issue 22): one exit-code table for every command, and a
closed or full standard stream is one line on stderr and the documented code, never a traceback.
(Every command of the parser against each stream: tests/e2e/test_cli_every_command_streams.py.)"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from missed_checks_ops.cli.main import build_parser, main
from missed_checks_ops.cli.streams import EXIT_CODES, GuardedOutput

ROOT = Path(__file__).resolve().parents[3]
CLI = [sys.executable, "-c", "import sys; from missed_checks_ops.cli.main import main; sys.exit(main())"]
WINDOWS = ["recurrence", "windows", "--recurrence", "DTSTART:20260105T060000Z\\nRRULE:FREQ=DAILY",
           "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-03T00:00:00Z"]
LOST = ("missed-checks: error: output: cannot write standard output: {} (the command's work is done: only its "
        "output is lost)")


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def shell(redirect: str, *argv: str, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``missed-checks ARGV`` run by ``sh`` with ``redirect`` (``>&-``: standard output closed)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("AWS_", "MISSED_CHECKS_"))}
    return subprocess.run(["sh", "-c", f'exec "$@" {redirect}', "sh", *CLI, *argv], input=stdin,
                          capture_output=True, text=True, timeout=timeout, check=False, env=env)


# -- one table ------------------------------------------------------------------------------------
def test_one_exit_code_table_in_the_main_help_and_in_operations_md() -> None:
    assert [code for code, _ in EXIT_CODES] == [0, 1, 2, 3, 130]
    help_text = build_parser().format_help()
    assert "exit codes (every command, local ones included):" in help_text
    for code, meaning in EXIT_CODES:
        assert re.search(rf"^  {code}\s+{re.escape(meaning[:40])}", help_text, re.MULTILINE), (code, help_text)
    doc = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    assert "\nExit codes:" not in doc  # the paragraph that listed three of them is the table now
    rows = dict(re.findall(r"^\| `(\d+)` \| ([^|]+) \|", doc, re.MULTILINE))
    assert [int(code) for code in rows] == [code for code, _ in EXIT_CODES], rows
    for code, meaning in EXIT_CODES:  # the same words, the help's first clause at least
        assert " ".join(rows[str(code)].split()).startswith(meaning.split(":")[0].split(" (")[0]), (code, rows)


# -- standard output closed -----------------------------------------------------------------------
@pytest.mark.stack  # starts processes
def test_help_on_a_closed_standard_output_is_one_line_and_exit_3() -> None:
    for argv in (["--help"], ["checklist", "put", "--help"], ["--version"]):
        done = shell(">&-", *argv)
        assert done.returncode == 3, (argv, done.stderr)
        assert one_line(done.stderr) == LOST.format("it is closed")


@pytest.mark.stack  # starts processes
def test_an_error_with_standard_output_closed_keeps_its_own_code_and_line() -> None:
    done = shell(">&-", "checklist", "list", "--endpoint", "http://127.0.0.1:9")
    assert done.returncode == 2
    assert one_line(done.stderr).startswith("missed-checks: error: region: no AWS region")


@pytest.mark.stack  # starts processes
def test_the_work_done_with_standard_output_closed_or_full_exits_3() -> None:
    closed = shell(">&-", *WINDOWS)
    assert closed.returncode == 3 and one_line(closed.stderr) == LOST.format("it is closed")
    full = shell(">/dev/full", *WINDOWS, "--format", "json")
    assert full.returncode == 3 and one_line(full.stderr) == LOST.format("No space left on device")


@pytest.mark.stack  # starts processes
def test_standard_error_closed_too_leaves_the_exit_code_alone() -> None:
    done = shell(">&- 2>&-", *WINDOWS)
    assert done.returncode == 3 and done.stderr == ""
    refused = shell(">&- 2>&-", "recurrence", "windows", "--recurrence", "RRULE:FREQ=NEVER", "--from", "x", "--to", "y")
    assert refused.returncode == 2


def test_standard_output_full_in_process(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    full = open("/dev/full", "w")  # noqa: SIM115 (closed below: its close fails too, with what is left)
    monkeypatch.setattr(sys, "stdout", full)
    code = main([*WINDOWS, "--format", "csv"])
    with contextlib.suppress(OSError):
        full.close()
    assert code == 3
    assert one_line(capsys.readouterr().err) == LOST.format("No space left on device")


def test_standard_output_closed_in_process(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdout", None)  # what Python gives a process started with fd 1 closed
    assert main(WINDOWS) == 3
    assert one_line(capsys.readouterr().err) == LOST.format("it is closed")


def test_a_broken_pipe_is_output_lost_and_said_once(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    class Broken(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", Broken())
    assert main([*WINDOWS, "--format", "json"]) == 3
    assert one_line(capsys.readouterr().err) == LOST.format("Broken pipe")


def test_the_guard_keeps_the_first_failure_and_drops_the_rest() -> None:
    lost: list[str] = []
    with open("/dev/full", "w") as full:
        guard = GuardedOutput(full, "the file", on_lost=lambda: lost.append("dropped"))
        assert guard.write("x" * 10_000) == 10_000  # larger than the buffer: the write itself fails
        guard.write("more")
        guard.flush()
    assert guard.lost == "No space left on device" and lost == ["dropped"]
    assert str(guard.error()) == "cannot write the file: No space left on device"


# -- standard input closed ------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [["checklist", "delete", "forklift-daily"], ["calendar", "delete", "plant-shutdown"]])
def test_a_confirmation_without_standard_input_asks_for_yes(argv: list[str], monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", None)  # started with fd 0 closed
    code = main([*argv, "--table", "t", "--region", "eu-west-1"])
    assert code == 2
    assert one_line(capsys.readouterr().err).endswith("needs --yes")


@pytest.mark.stack  # starts processes
def test_reading_a_closed_standard_input_is_one_line() -> None:
    for argv in (["check", "import", "-", "--table", "t", "--region", "eu-west-1"],
                 ["equipment", "assign", "--checklist", "c", "--file", "-", "--table", "t", "--region", "eu-west-1"],
                 ["checklist", "put", "--file", "-", "--dry-run"]):
        done = shell("<&-", *argv)
        assert done.returncode == 2, (argv, done.stderr)
        assert one_line(done.stderr).endswith("standard input is closed: give a file, or pipe the text in")


# -- SIGTERM ---------------------------------------------------------------------------------------
@pytest.mark.stack  # starts a process
def test_sigterm_interrupts_a_command_like_ctrl_c() -> None:
    """A command waiting (here for its standard input) ends with 130 and one line, not killed."""
    process = subprocess.Popen([*CLI, "check", "import", "-", "--table", "t", "--region", "eu-west-1"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(2)  # started and reading
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    assert one_line(err) == "missed-checks: interrupted" and out == ""
