"""Every command of the parser against a closed standard output, a closed standard input and a full
one (issue 22): the documented exit code (``missed_checks_ops.cli.streams.EXIT_CODES``) and at most
one line on stderr, never a traceback.

The commands are found by walking ``build_parser()`` as tests/unit/ops/test_cli_grammar.py does: the root,
every group and every command; a command the table below does not know fails the test. Each gets its
minimal valid arguments: the ones that need a stack run against one ``local serve`` (its clock
standing still on Monday 2 March 2026 until the setup moves it past the first window, so there are
missed checks to dismiss), every stream condition on its own checklists, equipment, calendar and
subscription (``{c}`` below), the three conditions side by side. ``local chaos`` takes its argument
error path (it plays a scenario twice under faults: a minute). Expected:

- standard output closed (``>&-``) or full (``/dev/full``): the command does its work, then exit 3 and
  ``missed-checks: error: output: cannot write standard output: <why> (...)``; a command refused
  before any work keeps its own code and line (2);
- standard input closed (``<&-``): a command that reads ``-`` exits 2, ``... standard input is closed
  ...``; every other one does its work as usual (0, nothing on stderr).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from missed_checks.defects.defect import defect_id_of
from missed_checks_ops.cli.common import subcommands
from missed_checks_ops.cli.main import build_parser
from missed_checks_ops.cli.streams import EXIT_BAD_INPUT, EXIT_OK, EXIT_OUTPUT_LOST

CLI = [sys.executable, "-c", "import sys; from missed_checks_ops.cli.main import main; sys.exit(main())"]
BOUND_S = 300
CONDITIONS = {"out": "standard output closed", "in": "standard input closed", "full": "standard output full"}
LOST = {"out": "it is closed", "full": "No space left on device"}
CLOSED_STDIN = "standard input is closed: give a file, or pipe the text in"
RULE = ["--recurrence", "DTSTART:20260302T060000Z\\nRRULE:FREQ=DAILY", "--window", "PT8H"]
TINY_SCENARIO = {"name": "tiny", "start": "2026-03-01T00:00:00Z", "end": "2026-03-03T00:00:00Z", "events": [
    {"at": "2026-03-01T09:00:00Z", "put_checklist": {"id": "c", "recurrence": "DTSTART:20260302T060000Z\n"
                                                     "RRULE:FREQ=DAILY", "window": "PT8H"}},
    {"at": "2026-03-01T09:00:00Z", "assign": {"checklist": "c", "equipment": ["e"]}}]}


@dataclass(frozen=True)
class Call:
    argv: tuple[str, ...]
    stdin: str | None = None
    """Text piped to the command (it reads ``-``); under a closed standard input it gets none."""
    refused: bool = False
    """An argument error on purpose: exit 2 whatever the streams (no work, nothing printed)."""


def every_path(parser: object = None, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    parser = parser or build_parser()
    yield path
    for name, child in subcommands(parser).items():  # type: ignore[arg-type]
        yield from every_path(child, (*path, name))


def calls(c: str, endpoint: str, tmp: Path) -> dict[tuple[str, ...], Call]:
    """The minimal valid arguments of every command, for stream condition ``c``, in the order they run."""
    at = ("--endpoint", endpoint)
    scenario = tmp / "tiny.json"
    yaml = f"- id: put-{c}\n  recurrence: |\n    DTSTART:20260302T060000Z\n    RRULE:FREQ=DAILY\n  window: PT8H\n"
    csv = f"checklist_id,equipment_id,performed_at\ndaily-{c},eq-{c}-3,2026-03-02T11:00:00Z\n"
    found = {
        (): Call(("--help",)),
        ("recurrence",): Call(("recurrence", "--help")),
        ("recurrence", "windows"): Call(("recurrence", "windows", *RULE[:2], "--from", "2026-03-02T00:00:00Z",
                                         "--to", "2026-03-05T00:00:00Z")),
        ("recurrence", "schedule"): Call(("recurrence", "schedule", *RULE[:2])),
        ("checklist",): Call(("checklist", "--help")),
        ("checklist", "put"): Call(("checklist", "put", "--file", "-", *at), stdin=yaml),
        ("checklist", "show"): Call(("checklist", "show", f"daily-{c}", *at)),
        ("checklist", "list"): Call(("checklist", "list", *at)),
        ("checklist", "pause"): Call(("checklist", "pause", f"daily-{c}", *at)),
        ("checklist", "resume"): Call(("checklist", "resume", f"daily-{c}", *at)),
        ("checklist", "delete"): Call(("checklist", "delete", f"gone-{c}", "--yes", *at)),
        ("equipment",): Call(("equipment", "--help")),
        ("equipment", "assign"): Call(("equipment", "assign", "--checklist", f"daily-{c}", "--file", "-",
                                       "--at", "2026-03-02T12:00:00Z", *at), stdin=f"eq-{c}-4\n"),
        ("equipment", "unassign"): Call(("equipment", "unassign", "--checklist", f"daily-{c}", f"eq-{c}-1", *at)),
        ("equipment", "list"): Call(("equipment", "list", "--checklist", f"daily-{c}", *at)),
        ("equipment", "out-of-service"): Call(("equipment", "out-of-service", f"eq-{c}-2", "--from",
                                               "2026-03-10T00:00:00Z", "--reason", "workshop", *at)),
        ("equipment", "out-of-service-cancel"): Call(("equipment", "out-of-service-cancel", f"eq-{c}-2", "--from",
                                                      "2026-03-10T00:00:00Z", *at)),
        ("equipment", "back-in-service"): Call(("equipment", "back-in-service", f"eq-{c}-3", *at)),
        ("equipment", "out-of-service-list"): Call(("equipment", "out-of-service-list", *at)),
        ("equipment", "readiness"): Call(("equipment", "readiness", f"eq-{c}-1", *at)),  # #33
        ("check",): Call(("check", "--help")),
        ("check", "record"): Call(("check", "record", "--checklist", f"daily-{c}", "--equipment", f"eq-{c}-2",
                                   "--at", "2026-03-02T10:00:00Z", *at)),
        ("check", "import"): Call(("check", "import", "-", *at), stdin=csv),
        ("defect",): Call(("defect", "--help")),  # defects (#33): each condition's own, opened by the setup
        ("defect", "list"): Call(("defect", "list", *at)),
        ("defect", "show"): Call(("defect", "show", defect_of(c), *at)),
        ("defect", "resolve"): Call(("defect", "resolve", defect_of(c), "--note", "brake line replaced", *at)),
        ("calendar",): Call(("calendar", "--help")),
        ("calendar", "put"): Call(("calendar", "put", f"cal-{c}", "--date", "2026-08-03", *at)),
        ("calendar", "show"): Call(("calendar", "show", f"cal-{c}", *at)),
        ("calendar", "list"): Call(("calendar", "list", *at)),
        ("calendar", "delete"): Call(("calendar", "delete", f"cal-{c}", "--yes", *at)),
        ("report",): Call(("report", "--from", "2026-03-02", "--to", "2026-03-03", "--checklist", f"daily-{c}", *at)),
        ("missed",): Call(("missed", "--help")),
        ("missed", "list"): Call(("missed", "list", "--checklist", f"daily-{c}", "--from", "2026-03-02", "--to",
                                  "2026-03-03", *at)),
        ("missed", "dismiss"): Call(("missed", "dismiss", "--checklist", f"daily-{c}", "--equipment", f"eq-{c}-1",
                                     "--window-start", "2026-03-02T06:00:00Z", "--reason", "r", "--by", "b", *at)),
        ("rerun",): Call(("rerun", "--checklist", f"daily-{c}", "--at", "2026-03-02T15:00:00Z", *at)),
        ("dlq",): Call(("dlq", "--help")),
        ("dlq", "list"): Call(("dlq", "list", *at)),
        ("dlq", "replay"): Call(("dlq", "replay", "--queue", "scheduler", *at)),
        ("notifications",): Call(("notifications", "--help")),
        ("notifications", "list"): Call(("notifications", "list", "--from", "2026-03-01", "--to", "2026-03-04", *at)),
        ("digest",): Call(("digest", "--help")),
        ("digest", "subscribe"): Call(("digest", "subscribe", f"sub-{c}", "--to", "fleet@example.com", "--period",
                                       "daily", "--time", "07:00", "--timezone", "UTC", *at)),
        ("digest", "list"): Call(("digest", "list", *at)),
        ("digest", "preview"): Call(("digest", "preview", f"sub-{c}", *at)),
        ("digest", "unsubscribe"): Call(("digest", "unsubscribe", f"sub-{c}", *at)),
        ("local",): Call(("local", "--help")),
        ("local", "demo"): Call(("local", "demo", "--show-scenario")),
        ("local", "advance"): Call(("local", "advance", "--by", "PT1M", *at)),
        ("local", "chaos"): Call(("local", "chaos", str(tmp / "no-such-scenario.json")), refused=True),
        ("local", "run"): Call(("local", "run", str(scenario), "--log-file", str(tmp / f"run-{c}.log"))),
        ("local", "token"): Call(("local", "token", "operator-north", *at)),
        ("local", "serve"): Call(("local", "serve", "--port", "0", "--speed", "0", "--log-file",
                                  str(tmp / f"serve-{c}.log"))),  # the port: chosen when it runs
    }
    return found


PRE_USE = ("- id: pre-{c}\n  recurrence: |\n    DTSTART:20260302T060000Z\n    RRULE:FREQ=DAILY\n  window: PT8H\n"
           "  items:\n    - {{id: brakes, label: Brakes work, kind: pass_fail, critical: true}}\n")
"""Each condition's pre-use checklist (#33): a check failing its brakes opens the defect ``defect_of(c)``."""
FAILED_AT = datetime(2026, 3, 3, tzinfo=UTC)
"""When the setup's clock stands, its checklists just put: their items are in force then (and not before)."""


def defect_of(c: str) -> str:
    """The defect condition ``c``'s failed check opened (a check's defect id is its key's hash)."""
    return defect_id_of(f"pre-{c}", f"eq-{c}-5", FAILED_AT)


def _environment(tmp: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("AWS_", "MISSED_CHECKS_STACK"))}
    return {**env, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1", "TMPDIR": str(tmp), "COLUMNS": "200"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run(c: str, call: Call, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``call`` with condition ``c``'s streams: ``sh`` closes a descriptor (``>&-``, ``<&-``) before it
    execs the command; /dev/full is opened here."""
    redirect = {"out": ">&-", "in": "<&-", "full": ""}[c]
    argv = ["sh", "-c", f'exec "$@" {redirect}', "sh", *CLI, *call.argv]
    if c == "full":
        with open("/dev/full", "w") as full:
            done = subprocess.run(argv, input=call.stdin or "", stdout=full, stderr=subprocess.PIPE, text=True,
                                  timeout=BOUND_S, check=False, env=env)
        return subprocess.CompletedProcess(argv, done.returncode, "", done.stderr)
    return subprocess.run(argv, input=None if c == "in" else (call.stdin or ""), capture_output=True, text=True,
                          timeout=BOUND_S, check=False, env=env)


def serve_with_stdin_closed(call: Call, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``local serve`` does not end by itself: with its standard input closed it serves (and says so on
    standard output) until SIGINT, then exits 0."""
    argv = [*CLI, *(a if a != "0" or i != 3 else str(_free_port()) for i, a in enumerate(call.argv))]
    process = subprocess.Popen(["sh", "-c", 'exec "$@" <&-', "sh", *argv], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env)
    assert process.stdout is not None
    try:
        for line in process.stdout:
            if "Ctrl-C stops the server" in line:
                break
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=BOUND_S)
    finally:
        if process.poll() is None:
            process.kill()
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


def expected(c: str, path: tuple[str, ...], call: Call) -> tuple[int, str]:
    """(exit code, the line on stderr: "" for none)."""
    if call.refused:
        return EXIT_BAD_INPUT, "missed-checks: error: "
    if c == "in":
        return (EXIT_BAD_INPUT, f"missed-checks: error: file: {CLOSED_STDIN}") if call.stdin is not None else (
            EXIT_OK, "")
    return EXIT_OUTPUT_LOST, (f"missed-checks: error: output: cannot write standard output: {LOST[c]} "
                              "(the command's work is done: only its output is lost)")


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One ``local serve`` (clock standing still), with each condition's checklists and equipment, and
    Monday 2 March's windows judged: eq-{c}-1..3 each missed one."""
    tmp = tmp_path_factory.mktemp("serve")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    env = _environment(tmp)
    out = tmp / "serve.out"
    with out.open("w") as sink:
        process = subprocess.Popen([*CLI, "local", "serve", "--port", str(port), "--speed", "0", "--start",
                                    "2026-03-01T12:00:00Z", "--log-file", str(tmp / "serve.log")],
                                   stdout=sink, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + BOUND_S
        while "Ctrl-C stops the server" not in out.read_text():
            assert process.poll() is None and time.monotonic() < deadline, out.read_text()
            time.sleep(0.2)
        for c in CONDITIONS:
            for argv in (["checklist", "put", f"daily-{c}", *RULE], ["checklist", "put", f"gone-{c}", *RULE],
                         ["equipment", "assign", "--checklist", f"daily-{c}", f"eq-{c}-1", f"eq-{c}-2", f"eq-{c}-3",
                          "--at", "2026-03-01T00:00:00Z"],
                         ["equipment", "out-of-service", f"eq-{c}-3", "--from", "2026-03-02T20:00:00Z", "--reason",
                          "flat tyre"]):
                done = subprocess.run([*CLI, *argv, "--endpoint", url], capture_output=True, text=True, env=env,
                                      timeout=BOUND_S, check=False)
                assert done.returncode == 0, (argv, done.stderr)
        done = subprocess.run([*CLI, "local", "advance", "--to", "2026-03-03T00:00:00Z", "--endpoint", url],
                              capture_output=True, text=True, env=env, timeout=BOUND_S, check=False)
        assert done.returncode == 0, done.stderr
        for c in CONDITIONS:  # a defect of each condition's own (#33)
            (tmp / f"pre-{c}.yaml").write_text(PRE_USE.format(c=c), encoding="utf-8")
            for argv in (["checklist", "put", "--file", str(tmp / f"pre-{c}.yaml")],
                         ["equipment", "assign", "--checklist", f"pre-{c}", f"eq-{c}-5", "--at",
                          "2026-03-02T00:00:00Z"],
                         ["check", "record", "--checklist", f"pre-{c}", "--equipment", f"eq-{c}-5", "--at",
                          FAILED_AT.isoformat(), "--answer", "brakes=fail"]):
                done = subprocess.run([*CLI, *argv, "--endpoint", url], capture_output=True, text=True, env=env,
                                      timeout=BOUND_S, check=False)
                assert done.returncode == 0, (argv, done.stderr)
        yield url
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()


def test_every_command_has_minimal_arguments_here(tmp_path: Path) -> None:
    assert set(every_path()) == set(calls("out", "http://127.0.0.1:9", tmp_path))


def test_every_command_against_closed_and_full_standard_streams(endpoint: str, tmp_path: Path) -> None:
    (tmp_path / "tiny.json").write_text(json.dumps(TINY_SCENARIO), encoding="utf-8")
    env = _environment(tmp_path)

    def condition(c: str) -> list[str]:
        problems = []
        for path, call in calls(c, endpoint, tmp_path).items():
            if path == ("local", "serve") and c == "in":
                done = serve_with_stdin_closed(call, env)
            else:
                done = run(c, call, env)
            code, line = expected(c, path, call)
            lines = done.stderr.strip().splitlines()
            said = lines[0] if lines else ""
            fine = (done.returncode == code and len(lines) <= 1 and "Traceback" not in done.stderr
                    and (said.startswith(line) if call.refused else said == line))
            if not fine:
                problems.append(f"{CONDITIONS[c]}: missed-checks {' '.join(call.argv)}: exit {done.returncode} "
                                f"(expected {code}), stderr {done.stderr.strip()[-600:]!r}")
        return problems

    with ThreadPoolExecutor(max_workers=len(CONDITIONS)) as pool:
        problems = [problem for found in pool.map(condition, CONDITIONS) for problem in found]
    assert problems == [], "\n".join(problems)
