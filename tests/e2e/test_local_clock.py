"""One clock: ``missed-checks local serve --start ... --speed ...`` and the ``missed-checks`` commands
run against it agree on "now" (the serve publishes its simulated clock on the stack; the
commands read it), so a checklist put, a check recorded "now" and the window judged from it all
live in the simulated world, not on the wall clock."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from missed_checks_ops.target import stack_clock

START = datetime(2026, 3, 2, 5, 10, tzinfo=UTC)
SPEED = 600  # ten simulated minutes per real second
BOUND_S = 240  # generous bounds on conditions, never a verdict on speed


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _environment() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
    return {**env, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1"}


def _cli() -> list[str]:
    return [sys.executable, "-c", "import sys; from missed_checks_ops.cli.main import main; sys.exit(main())"]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[dict[str, Any]]:
    with served(tmp_path, SPEED) as server:
        yield server


@pytest.fixture
def stopped_serve(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A serve whose clock stands still (``--speed 0``) until ``local advance`` moves it."""
    with served(tmp_path, 0) as server:
        yield server


@contextmanager
def served(tmp_path: Path, speed: float) -> Iterator[dict[str, Any]]:
    """``missed-checks local serve`` in a process of its own, its banner read until it is up."""
    port = _free_port()
    process = subprocess.Popen(
        [*_cli(), "local", "serve", "--port", str(port), "--start", START.isoformat(), "--speed", f"{speed:g}",
         "--log-file", str(tmp_path / "serve.log")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=_environment())
    banner: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            banner.append(line)
            if "Ctrl-C stops the server" in line:
                ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert ready.wait(BOUND_S), "".join(banner)
        yield {"endpoint": f"http://127.0.0.1:{port}", "banner": "".join(banner)}
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
        reader.join(timeout=10)


def run(serve: dict[str, Any], *argv: str) -> Any:
    done = subprocess.run([*_cli(), *argv, "--endpoint", serve["endpoint"], "--format", "json"],
                          capture_output=True, text=True, env=_environment(), timeout=BOUND_S, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def stack_now(serve: dict[str, Any]) -> datetime:
    anchor = stack_clock(None, "us-east-1", serve["endpoint"])
    assert anchor is not None, "local serve publishes no clock"
    return anchor.now()


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def wait_until(condition: Any, what: str) -> Any:
    deadline = time.monotonic() + BOUND_S
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"not within {BOUND_S} s: {what}")


def test_serve_and_the_commands_agree_on_time(serve: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in _environment().items():
        if name.startswith("AWS_"):
            monkeypatch.setenv(name, value)  # this process reads the stack's clock too
    assert "Clock: simulated, now 2026-03-02T" in serve["banner"]
    # Windows tile the hour (50 minutes on time, 10 of grace): whenever a check is recorded, it
    # counts for the window of its hour, on time or late, so no verdict depends on the machine.
    put = run(serve, "checklist", "put", "hourly", "--recurrence", "DTSTART;TZID=UTC:20260302T000000",
              "--recurrence", "RRULE:FREQ=HOURLY", "--window", "PT50M", "--grace", "PT10M")
    assert put["action"] == "created"
    run(serve, "equipment", "assign", "--checklist", "hourly", "done-1", "missed-1")
    shown = run(serve, "checklist", "show", "hourly")
    assert shown["now"]["clock"] == "simulated"
    effective_from = utc(shown["effective_from"])
    assert START <= utc(shown["created_at"]) <= effective_from <= utc(shown["now"]["at"]) < START + timedelta(days=2)
    # the first window that starts after the checklist and its equipment are in place
    first_hour = (utc(shown["now"]["at"]) + timedelta(hours=1)).replace(minute=0, second=0, microsecond=0)
    wait_until(lambda: stack_now(serve) >= first_hour, f"the serve's clock reaches {first_hour}")

    before = stack_now(serve)
    recorded = run(serve, "check", "record", "--checklist", "hourly", "--equipment", "done-1")  # at "now"
    after = stack_now(serve)
    performed_at = utc(recorded["performed_at"])
    assert before - timedelta(seconds=1) <= performed_at <= after + timedelta(seconds=1)  # the serve's now

    window_start = performed_at.replace(minute=0, second=0, microsecond=0)
    span = ["--from", window_start.isoformat(), "--to", (window_start + timedelta(hours=1)).isoformat()]
    missed = wait_until(lambda: run(serve, "missed", "list", "--checklist", "hourly", *span),
                        f"the window {window_start} judged")
    assert [(record["equipment_id"], utc(record["window_start"])) for record in missed] == [("missed-1", window_start)]
    report = run(serve, "report", "--checklist", "hourly", *span)
    rows = {row["equipment_id"]: row for row in report["rows"]}
    on_time = performed_at < window_start + timedelta(minutes=50)
    assert (rows["done-1"]["on_time"], rows["done-1"]["late"]) == ((1, 0) if on_time else (0, 1))
    assert rows["missed-1"]["missed"] == 1
    assert utc(report["as_of"]) >= window_start + timedelta(hours=1)  # the report's now is the serve's too


def advance(endpoint: str, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*_cli(), "local", "advance", *argv, "--endpoint", endpoint], capture_output=True,
                          text=True, env=_environment(), timeout=BOUND_S, check=False)


def test_a_stopped_clock_moves_only_when_advanced_and_never_back(stopped_serve: dict[str, Any],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``--speed 0``: the walkthroughs' clock (README "Operate"). It stands still, ``local advance``
    moves it exactly where asked, firing what falls due on the way, and refuses to go back."""
    for name, value in _environment().items():
        if name.startswith("AWS_"):
            monkeypatch.setenv(name, value)  # this process reads the stack's clock too
    assert "standing still until `missed-checks local advance" in stopped_serve["banner"]
    endpoint = stopped_serve["endpoint"]
    time.sleep(1.5)
    assert stack_now(stopped_serve) == START
    run(stopped_serve, "checklist", "put", "hourly", "--recurrence", "DTSTART;TZID=UTC:20260302T060000",
        "--recurrence", "RRULE:FREQ=HOURLY", "--window", "PT50M", "--grace", "PT10M")
    run(stopped_serve, "equipment", "assign", "--checklist", "hourly", "missed-1")

    moved = advance(endpoint, "--by", "PT3H")
    assert moved.returncode == 0, moved.stderr
    assert moved.stdout.splitlines() == [
        "the stack's clock moved from 2026-03-02T05:10:00Z to 2026-03-02T08:10:00Z; 2 schedule firings:",
        "  2026-03-02T07:00:00Z  hourly: evaluation started",
        "  2026-03-02T08:00:00Z  hourly: evaluation started"]
    assert stack_now(stopped_serve) == START + timedelta(hours=3)
    missed = run(stopped_serve, "missed", "list", "--checklist", "hourly", "--from", "2026-03-02T06:00:00Z",
                 "--to", "2026-03-02T08:00:00Z")
    assert [(m["equipment_id"], m["window_start"]) for m in missed] == [
        ("missed-1", "2026-03-02T06:00:00Z"), ("missed-1", "2026-03-02T07:00:00Z")]  # both judged on the way

    back = advance(endpoint, "--to", "2026-03-02T06:00:00Z")
    assert back.returncode == 2 and back.stdout == ""
    assert back.stderr.startswith("missed-checks: error: to: 2026-03-02T06:00:00Z is before the stack's clock "
                                  "(2026-03-02T08:10:00Z): the clock only moves forward")
    assert stack_now(stopped_serve) == START + timedelta(hours=3)


def test_advance_without_a_local_serve_says_how_to_start_one() -> None:
    done = advance(f"http://127.0.0.1:{_free_port()}", "--by", "PT1H")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("missed-checks: no local serve answers at http://127.0.0.1:")
    assert "missed-checks local serve --speed 0" in done.stderr
