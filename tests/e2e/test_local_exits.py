"""Clean exits (issue 22): SIGINT or SIGTERM stops ``local serve`` and ``local run`` within
:data:`missed_checks_local.stopping.STOP_BOUND_S` (5 s, the product's promise: asserted, and the
measured figure printed), however busy, with the function workers gone, the temporary folders
removed and no traceback. Each process gets a temporary directory of its own (TMPDIR), so what it
leaves behind is found exactly: its ``lambda-logs-*`` folders, and workers whose working directory
(the unzipped package) is in it. Setting a busy stack up takes a minute; only the stop is timed."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from missed_checks_local.stopping import GRACEFUL_S, STOP_BOUND_S

BOUND_S = 240  # generous bounds on conditions (setting a busy stack up)


def _cli() -> list[str]:
    return [sys.executable, "-c", "import sys; from missed_checks_ops.cli.main import main; sys.exit(main())"]


def _environment(tmp: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
    return {**env, "TMPDIR": str(tmp), "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1"}


def workers_in(tmp: Path) -> list[int]:
    """Processes working in ``tmp`` (a function worker's cwd is its unzipped package)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if str((entry / "cwd").readlink()).startswith(str(tmp)):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def wait_until(condition: object, what: str) -> None:
    deadline = time.monotonic() + BOUND_S
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError(f"not within {BOUND_S} s: {what}")


def start(argv: list[str], tmp: Path) -> tuple[subprocess.Popen[str], list[str]]:
    process = subprocess.Popen([*_cli(), *argv], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env=_environment(tmp), stdin=subprocess.DEVNULL)
    output: list[str] = []

    def read() -> None:
        assert process.stdout is not None
        output.extend(process.stdout)

    threading.Thread(target=read, daemon=True).start()
    return process, output


def stopped(process: subprocess.Popen[str], number: int) -> float:
    """Send ``number`` and wait for the process to end: how long it took, at most STOP_BOUND_S."""
    started = time.monotonic()
    process.send_signal(number)
    try:
        process.wait(timeout=BOUND_S)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    elapsed = time.monotonic() - started
    print(f"stopped by {signal.Signals(number).name} in {elapsed:.2f} s")
    assert elapsed <= STOP_BOUND_S, f"stopped by {signal.Signals(number).name} in {elapsed:.2f} s"
    return elapsed


def assert_clean(tmp: Path, output: list[str]) -> None:
    time.sleep(0.5)  # the reader thread drains the pipe
    text = "".join(output)
    assert "Traceback" not in text and "Exception ignored" not in text, text
    assert not list(tmp.glob("lambda-logs-*")), list(tmp.iterdir())
    assert workers_in(tmp) == []


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_serve_stops_cleanly(tmp_path: Path, number: int) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    process, output = start(["local", "serve", "--port", str(port), "--speed", "600",
                             "--start", "2026-03-02T05:00:00Z", "--log-file", str(tmp_path / "serve.log")], tmp)
    try:
        wait_until(lambda: "Ctrl-C stops the server" in "".join(output), "the banner")
        put = subprocess.run([*_cli(), "checklist", "put", "daily", "--recurrence",
                              "DTSTART;TZID=UTC:20260302T060000", "--recurrence", "RRULE:FREQ=HOURLY",
                              "--window", "PT30M", "--endpoint", f"http://127.0.0.1:{port}"],
                             env=_environment(tmp_path), capture_output=True, text=True, timeout=BOUND_S, check=False)
        assert put.returncode == 0, put.stderr
        wait_until(lambda: workers_in(tmp), "a function worker")  # schedule-sync ran for the put
        assert list(tmp.glob("lambda-logs-*"))
        stopped(process, number)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0
    assert_clean(tmp, output)


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_run_stops_cleanly(tmp_path: Path, number: int) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    process, output = start(["local", "demo", "--format", "json", "--output", str(tmp_path / "run.json"),
                             "--log-file", str(tmp_path / "run.log")], tmp)
    try:
        wait_until(lambda: workers_in(tmp), "a function worker")
        stopped(process, number)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130
    assert "".join(output).strip().splitlines()[-1] == "missed-checks: interrupted"
    assert_clean(tmp, output)


# -- busy --------------------------------------------------------------------------------------------
FLEET = 6000
"""Equipment judged: two fanned-out tasks of about 20 s each here, and the window's alerts to 6,000
escalation addresses' worth of equipment, about 7 s of the notifier (the serve's own loop waits for
that invocation: the case that took 7.7 s, 25 s with 10,000 equipment, before a stop raised there)."""


def _cli_ok(env: dict[str, str], *argv: str) -> None:
    done = subprocess.run([*_cli(), *argv], env=env, capture_output=True, text=True, timeout=BOUND_S, check=False)
    assert done.returncode == 0, done.stderr


def _busy_fleet(tmp_path: Path, endpoint: str) -> None:
    """A daily checklist (06:00-12:00 UTC) whose missed checks alert and escalate, and FLEET
    equipment assigned to it from midnight, on a stack whose clock stands still at midnight."""
    env = _environment(tmp_path)
    _cli_ok(env, "checklist", "put", "fleet", "--recurrence", "DTSTART:20260302T060000Z", "--recurrence",
            "RRULE:FREQ=DAILY", "--window", "PT6H", "--notify-to", "crew@example.com", "--escalate-to",
            "lead@example.com", "--escalate-after", "1", "--endpoint", endpoint)
    fleet = tmp_path / "fleet.txt"
    fleet.write_text("".join(f"eq-{n:05d}\n" for n in range(FLEET)), encoding="utf-8")
    _cli_ok(env, "equipment", "assign", "--checklist", "fleet", "--file", str(fleet), "--at",
            "2026-03-02T00:00:00Z", "--endpoint", endpoint)


def running(tmp: Path, function: str) -> bool:
    """Whether a worker of ``function`` (logical id) has started in the process's TMPDIR."""
    return bool(list(tmp.glob(f"lambda-logs-*/{function}-*.log")))


@pytest.mark.parametrize(("number", "busy_with"), [(signal.SIGINT, "NotifyFunction"),
                                                   (signal.SIGTERM, "RecordMissedChecksFunction")],
                         ids=["SIGINT-while-alerting", "SIGTERM-while-judging"])
def test_a_busy_serve_stops_within_the_bound(tmp_path: Path, number: int, busy_with: str) -> None:
    """``local serve`` judging a fleet of FLEET equipment (the clock moved past the window's end by
    ``local advance``, so the judging starts when the test says, not when a clock gets there): the
    signal arrives while a fanned-out task judges its equipment, or while the notifier sends the
    judged window's alerts and escalations."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    endpoint = f"http://127.0.0.1:{port}"
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    process, output = start(["local", "serve", "--port", str(port), "--speed", "0", "--start",
                             "2026-03-02T00:00:00Z", "--log-file", str(tmp_path / "serve.log")], tmp)
    advance: subprocess.Popen[bytes] | None = None
    try:
        wait_until(lambda: "Ctrl-C stops the server" in "".join(output), "the banner")
        _busy_fleet(tmp_path, endpoint)
        advance = subprocess.Popen([*_cli(), "local", "advance", "--to", "2026-03-02T13:00:00Z", "--endpoint",
                                    endpoint], env=_environment(tmp_path), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        wait_until(lambda: running(tmp, busy_with), f"{busy_with} at work")
        time.sleep(0.5 if busy_with == "NotifyFunction" else 2)  # well inside it
        assert process.poll() is None and advance.poll() is None  # still busy
        stopped(process, number)
    finally:
        for child in (process, advance):
            if child is not None and child.poll() is None:
                child.kill()
    assert process.returncode == 0
    assert_clean(tmp, output)


def test_a_busy_run_stops_within_the_bound(tmp_path: Path) -> None:
    """``local run`` of a scenario judging FLEET equipment: SIGINT while a task judges them."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    scenario = {"name": "busy", "start": "2026-03-01T00:00:00Z", "end": "2026-03-04T00:00:00Z", "events": [
        {"at": "2026-03-01T09:00:00Z", "put_checklist": {
            "id": "fleet", "recurrence": "DTSTART:20260302T060000Z\nRRULE:FREQ=DAILY", "window": "PT6H"}},
        {"at": "2026-03-01T09:00:00Z", "assign": {"checklist": "fleet",
                                                  "equipment": [f"eq-{n:05d}" for n in range(FLEET)]}}]}
    path = tmp_path / "busy.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    process, output = start(["local", "run", str(path), "--format", "json", "--output", str(tmp_path / "run.json"),
                             "--log-file", str(tmp_path / "run.log")], tmp)
    try:
        wait_until(lambda: running(tmp, "RecordMissedChecksFunction"), "a task judging the fleet")
        time.sleep(2)
        stopped(process, signal.SIGINT)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130
    assert "".join(output).strip().splitlines()[-1] == "missed-checks: interrupted"
    assert_clean(tmp, output)


WEDGED = """
import subprocess, sys, time
from missed_checks_local.awslambda import workers
from missed_checks_local.stopping import stop_signals

worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
workers._running.add(worker)  # as a function worker is known
print(worker.pid, flush=True)
with stop_signals(owns_process=True, code=130, line="missed-checks: interrupted"):
    while True:  # a stop that never ends by itself (a teardown waiting on something that never comes)
        try:
            time.sleep(100)
        except KeyboardInterrupt:
            pass
"""


def test_a_stop_that_hangs_is_ended_by_the_watchdog_workers_killed(tmp_path: Path) -> None:
    process = subprocess.Popen([sys.executable, "-c", WEDGED], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=_environment(tmp_path))
    try:
        assert process.stdout is not None
        worker = int(process.stdout.readline())
        time.sleep(0.5)
        elapsed = stopped(process, signal.SIGINT)
        assert elapsed >= GRACEFUL_S - 0.1  # the orderly stop had its chance
        assert process.returncode == 130 and process.stderr is not None
        assert process.stderr.read().strip() == "missed-checks: interrupted"
        wait_until(lambda: not Path(f"/proc/{worker}").exists() or "zombie" in _state(worker), "the worker killed")
    finally:
        if process.poll() is None:
            process.kill()


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:")[1].split("\n")[0].lower()
    except (OSError, IndexError):
        return "zombie"
