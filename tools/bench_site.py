"""Benchmark: the sizes a site brings on day one, on the embedded AWS (not a test: it prints figures).

Targets (issue #22), on a 2-core machine:

* ``checklists``: N checklists (1,000) from one ``checklist put --file`` against ``local serve``,
  each with its schedule (schedule-sync ran for every one): at most 60 s;
* ``equipment``: N pieces of equipment (10,000) assigned with ``equipment assign --file`` against
  ``local serve``: at most 30 s;
* ``read``: a CLI read (``checklist list``) answered within 2 s while ``local serve`` runs an
  evaluation of that equipment;
* ``fleet``: one window of N equipment (100,000) judged locally, fanned out by the real state
  machine, fired by the simulated Scheduler: at most 300 s;
* ``backlog``: a 50-window backlog of N equipment (5,000) caught up by one execution, without a
  stuck-execution error.

Every target runs alone (``--only``) and at a smaller size (``--checklists``, ``--equipment``,
``--fleet``, ``--backlog-equipment``, ``--backlog-windows``)::

    .venv/bin/python tools/bench_site.py                          # every target, full size
    .venv/bin/python tools/bench_site.py --only checklists --checklists 100

The ``local serve`` targets (checklists, equipment, read) run the real commands as processes;
fleet and backlog run the stack in this process on a simulated clock (as ``local run`` does).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from missed_checks.checklists.saving import save_checklist
from missed_checks_local.serve_process import ServeDidNotStart, serve_process

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "missed_checks_ops.cli.main"]
LOCAL_ENV = {"AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1",
             "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY"
TARGETS = ("checklists", "equipment", "read", "fleet", "backlog")


@dataclass
class Figure:
    target: str
    what: str
    seconds: float | None
    limit_s: float | None
    detail: str = ""
    cpu_s: float | None = None
    """CPU seconds the work took in every process involved (this one, local serve and its workers,
    the commands): on a machine shared with other work, the figure that does not grow with the load."""

    def line(self) -> str:
        took = "failed" if self.seconds is None else f"{self.seconds:8.1f} s"
        limit = f"(target <= {self.limit_s:g} s{', met' if self.met else ', NOT met'})" if self.limit_s else ""
        cpu = f"cpu {self.cpu_s:.1f} s " if self.cpu_s is not None else ""
        return f"{self.target:<11} {self.what:<48} {took:>10}  {limit} {cpu}{self.detail}".rstrip()

    @property
    def met(self) -> bool:
        return self.seconds is not None and (self.limit_s is None or self.seconds <= self.limit_s)


# -- local serve, driven from outside -------------------------------------------------------------
_SERVE_PID: list[int] = []
LOG_FILE: list[Path] = []
"""``--log-file``: where the in-process runs (fleet, backlog) write handler and moto logs."""


def _process_cpu(pid: int) -> float:
    """utime + stime of ``pid`` and its living children (local serve's Lambda workers), in seconds."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry.name) == pid or int(fields[1]) == pid:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def cpu_now() -> float:
    """CPU seconds used so far by this process, its finished children (the commands) and local serve."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    serve = _process_cpu(_SERVE_PID[-1]) if _SERVE_PID else 0.0
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime + serve


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serving(workdir: Path, start: datetime) -> Iterator[str]:
    """``missed-checks local serve`` as a process; yields its endpoint once the stack is up."""
    port = _free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = [*CLI, "local", "serve", "--port", str(port), "--speed", "1",
               "--start", start.strftime("%Y-%m-%dT%H:%M:%SZ"), "--log-file", str(workdir / "serve.log")]
    try:
        with serve_process(command, workdir / "serve.out", timeout_s=300, env=env, cwd=ROOT) as process:
            _SERVE_PID.append(process.pid)
            try:
                yield f"http://127.0.0.1:{port}"
            finally:
                _SERVE_PID.remove(process.pid)
    except ServeDidNotStart as error:
        raise SystemExit(str(error)) from error


def cli(endpoint: str, *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run([*CLI, *args, "--endpoint", endpoint], capture_output=True, text=True, cwd=ROOT,
                          check=False, env={**os.environ, **LOCAL_ENV})
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        print(f"  {' '.join(args[:2])} exited {done.returncode}: {done.stderr.strip()[-800:]}", file=sys.stderr)
    return elapsed, done


def _session(endpoint: str):
    import boto3

    return boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing",
                                 region_name="us-east-1"), endpoint


def _schedules(endpoint: str) -> int:
    session, url = _session(endpoint)
    scheduler = session.client("scheduler", endpoint_url=url)
    count, token = 0, None
    while True:
        page = scheduler.list_schedules(**({"NextToken": token} if token else {}))
        count += len(page["Schedules"])
        token = page.get("NextToken")
        if not token:
            return count


def bench_checklists(endpoint: str, workdir: Path, count: int) -> Figure:
    spec = [{"id": f"site-{n:05d}", "name": f"Site check {n}", "recurrence": RULE, "window": "PT8H",
             "grace": "PT30M"} for n in range(count)]
    path = workdir / "checklists.json"
    path.write_text(json.dumps(spec))
    started = time.perf_counter()
    put_s, done = cli(endpoint, "checklist", "put", "--file", str(path), "--format", "json")
    deadline = time.monotonic() + 600
    while (scheduled := _schedules(endpoint)) < count and time.monotonic() < deadline and done.returncode == 0:
        time.sleep(0.2)
    total = time.perf_counter() - started
    ok = done.returncode == 0 and scheduled >= count
    return Figure("checklists", f"{count:,} checklists put, each with its schedule", total if ok else None, 60,
                  f"[put command {put_s:.1f} s; schedules {scheduled:,}]")


def bench_equipment(endpoint: str, workdir: Path, count: int) -> Figure:
    path = workdir / "fleet.txt"
    path.write_text("".join(f"eq-{n:06d}\n" for n in range(count)))
    cli(endpoint, "checklist", "put", "bench-fleet", "--recurrence", RULE, "--window", "PT8H", "--grace", "PT30M")
    took, done = cli(endpoint, "equipment", "assign", "--checklist", "bench-fleet", "--file", str(path))
    return Figure("equipment", f"{count:,} equipment assigned", took if done.returncode == 0 else None, 30)


def bench_read(endpoint: str, start: datetime) -> list[Figure]:
    """Start an evaluation of bench-fleet (its equipment assigned by the equipment target), then time a
    CLI read against the endpoint while it runs."""
    idle, done = cli(endpoint, "checklist", "list", "--format", "json")
    if done.returncode != 0:
        raise SystemExit("checklist list failed on an idle stack")
    session, url = _session(endpoint)
    sfn = session.client("stepfunctions", endpoint_url=url)
    arn = sfn.list_state_machines()["stateMachines"][0]["stateMachineArn"]
    instant = (start + timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    execution = sfn.start_execution(stateMachineArn=arn, name="bench-read",
                                    input=json.dumps({"checklist_id": "bench-fleet", "instant": instant}))
    reads: list[float] = []
    # Reads started while the execution runs (each one counts, even if the execution ends meanwhile).
    while (status := sfn.describe_execution(executionArn=execution["executionArn"])["status"]) == "RUNNING" \
            and len(reads) < 5:
        took, done = cli(endpoint, "checklist", "list", "--format", "json")
        reads.append(took if done.returncode == 0 else float("inf"))
    while status == "RUNNING":
        time.sleep(0.5)
        status = sfn.describe_execution(executionArn=execution["executionArn"])["status"]
    worst = max(reads) if reads and max(reads) != float("inf") else None
    return [
        Figure("read", "checklist list, idle stack (process start included)", idle, None),
        Figure("read", f"checklist list during an evaluation (worst of {len(reads)})", worst, 2,
               f"[evaluation {status}]"),
    ]


# -- in process, on a simulated clock ------------------------------------------------------------
def _judge(equipment: int, windows: int, label: str, limit: float | None,
           how: Callable[[object, object, datetime], None], parameters: dict[str, str] | None = None) -> Figure:
    from missed_checks.aws.table import ChecklistTable
    from missed_checks.performed_checks.performed_check import PerformedCheck
    from missed_checks_local.clock import SimulatedClock
    from missed_checks_local.embedded import embedded_aws
    from missed_checks_local.runtime import LocalRuntime, RuntimeStuck
    from missed_checks_local.stack import EmbeddedStack

    created = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    first_start = datetime(2026, 3, 2, 5, 0, tzinfo=UTC)
    clock = SimulatedClock(created)
    with embedded_aws():
        stack = EmbeddedStack.provision(parameters=parameters)
        with LocalRuntime(stack, clock, log_path=LOG_FILE[0] if LOG_FILE else None) as runtime:
            table = ChecklistTable(stack.table_name)
            save_checklist(table, "bench", recurrence=RULE, window="PT8H", grace="PT30M", now=created, by="bench")
            ids = [f"eq-{n:06d}" for n in range(equipment)]
            table.assign_equipment("bench", ids, at=created, by="bench")
            table.record_performed_checks(
                [PerformedCheck("bench", e, first_start + timedelta(days=d, hours=1))
                 for d in range(windows) for e in ids[::2]], recorded_at=created)
            runtime.settle()
            instant = first_start + timedelta(days=windows - 1, hours=9)
            started = time.perf_counter()
            error = ""
            try:
                how(runtime, clock, instant)
            except RuntimeStuck as stuck:
                error = f"RuntimeStuck: {stuck}"
            elapsed = time.perf_counter() - started
            missed = len(table.missed_checks_of_checklist("bench", created, instant))
    expected = windows * (equipment - len(ids[::2]))
    statuses = runtime.execution_counts()["by_status"]
    ok = not error and missed == expected
    return Figure(label.split()[0], label.split(" ", 1)[1], elapsed if ok else None, limit,
                  f"[missed {missed:,} of {expected:,} expected; executions {statuses}] {error}".rstrip())


def bench_fleet(equipment: int) -> Figure:
    def fired_by_the_scheduler(runtime, clock, instant) -> None:
        runtime.advance_to(instant)

    return _judge(equipment, 1, f"fleet one window of {equipment:,} equipment judged (fired, fanned out)", 300,
                  fired_by_the_scheduler)


def bench_backlog(equipment: int, windows: int) -> Figure:
    def caught_up_by_one_execution(runtime, clock, instant) -> None:
        # The scheduler was off (no firing in between): one execution at the end catches up.
        clock.advance_to(instant)
        runtime.start_execution({"checklist_id": "bench", "instant": instant.strftime("%Y-%m-%dT%H:%M:%SZ")})
        runtime.settle()

    # One execution judges at most MaxWindowsPerRun windows (default 20; the following firings
    # catch up the rest): the template's largest value, 50, makes it the whole backlog at once.
    return _judge(equipment, windows, f"backlog {windows} windows x {equipment:,} equipment caught up", None,
                  caught_up_by_one_execution, parameters={"MaxWindowsPerRun": str(max(windows, 1))})


def show(figures: list[Figure], measure: Callable[[], Figure]) -> None:
    before = cpu_now()
    figure = measure()
    figure.cpu_s = cpu_now() - before
    figures.append(figure)
    print(figure.line(), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", action="append", choices=TARGETS, help="run only this target (repeatable)")
    parser.add_argument("--checklists", type=int, default=1_000)
    parser.add_argument("--equipment", type=int, default=10_000)
    parser.add_argument("--fleet", type=int, default=100_000)
    parser.add_argument("--backlog-equipment", type=int, default=5_000)
    parser.add_argument("--backlog-windows", type=int, default=50)
    parser.add_argument("--log-file", type=Path, help="handler and moto logs of the fleet and backlog runs")
    args = parser.parse_args()
    if args.log_file:
        LOG_FILE.append(args.log_file)
    chosen = args.only or list(TARGETS)
    if "read" in chosen and "equipment" not in chosen:
        chosen.append("equipment")  # the read happens during the evaluation of that equipment

    print(f"bench_site {datetime.now(UTC):%Y-%m-%d %H:%M}Z, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    figures: list[Figure] = []
    if {"checklists", "equipment", "read"} & set(chosen):
        start = datetime.now(UTC).replace(microsecond=0)
        with tempfile.TemporaryDirectory(prefix="bench-site-") as tmp, serving(Path(tmp), start) as endpoint:
            if "checklists" in chosen:
                show(figures, lambda: bench_checklists(endpoint, Path(tmp), args.checklists))
            if "equipment" in chosen:
                show(figures, lambda: bench_equipment(endpoint, Path(tmp), args.equipment))
            if "read" in chosen:
                for figure in bench_read(endpoint, start):
                    figures.append(figure)
                    print(figure.line(), flush=True)
    if "fleet" in chosen:
        show(figures, lambda: bench_fleet(args.fleet))
    if "backlog" in chosen:
        show(figures, lambda: bench_backlog(args.backlog_equipment, args.backlog_windows))
    print(f"load at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    from missed_checks_local.product.application import install

    install()  # as the local commands do: patch 5i, and the product registered with the emulator
    main()
