"""Every command the README, ``docs/*.md`` and the command line's ``--help`` examples print, run as
printed against ``missed-checks local serve``.

The commands are read from the fenced ``bash``/``sh`` blocks of the pages and from each command's
examples (``missed_checks_ops.cli.main.build_parser``): a line with its backslash continuations,
or a here-document through its terminator. They run with bash in a scratch directory whose
``.venv`` is this virtualenv, so ``source .venv/bin/activate`` works as the quick start prints it,
and each must exit 0; where an example says what it ``prints``, the output must be that. The
pages' commands run in order in one shell, README first, as a reader who followed the quick start
types them (``export`` and ``source`` hold for what follows); the ``--help`` examples in another,
with the keys the server prints; the one server answers both. Two things are rewritten, and only
these: the local endpoint ``http://127.0.0.1:5000`` becomes the test server's (on a free port),
and in the ``--help`` examples ``--stack NAME`` (a deployed stack) becomes ``--endpoint`` of it.

A command that cannot run here is in :data:`EXCLUDED`, with the reason; a new command that is
neither runnable nor listed there fails the test until someone classifies it, and an exclusion
that no longer matches anything fails too.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import boto3
import pytest

from missed_checks.aws.table.defects import defect_item
from missed_checks.aws.table.windows import missed_check_item
from missed_checks.defects.defect import Defect
from missed_checks.evaluation.missed_check import MissedCheck
from missed_checks.performed_checks.answers import FailedItem
from missed_checks_local.endpoint import LOCAL_PEOPLE_API_URL
from missed_checks_local.serve_process import serve_process
from missed_checks_ops.cli.common import subcommands
from missed_checks_ops.cli.main import build_parser
from missed_checks_ops.target import LOCAL_API_URL, LOCAL_ENDPOINT

# duration: the pages' commands and the --help examples took 48 s and 41 s in make unit (docs/measurements.md,
# 2026-11-25): the longest file, it goes to a worker first
pytestmark = [pytest.mark.e2e, pytest.mark.duration(25)]

ROOT = Path(__file__).resolve().parents[2]
PAGES = ("README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")))
SHELLS = frozenset({"bash", "sh", "shell", "console"})
VENV = Path(sys.prefix)

EXCLUDED: tuple[tuple[str, str], ...] = (
    (r"^make test\b", "runs every test, this one included (minutes): it is what CI runs"),
    (r"^make quick\b", "runs the fast lane: a test cannot run the suite it belongs to"),
    (r"^make demo\b", "sam build, then the five-week demo: tests/e2e/test_report_browser.py plays that demo"),
    (r"^make (build|check-layer)\b", "make test runs both (check-layer builds first) before pytest starts"),
    (r"^make clean\b", "would delete the virtualenv and the build this test runs from"),
    (r"^\.venv-sam/bin/sam (deploy|delete)\b", "needs an AWS account"),
    (r"^\.venv-sam/bin/sam local invoke\b", "needs the container engine that make invoke sets up: "
     "tests/sam_local/test_sam_local_invoke.py runs every sample through sam local invoke"),
    (r"^make invoke\b", "podman and the locally built Lambda image (minutes on first use): "
     "tests/sam_local/test_sam_local_invoke.py runs every sample through it"),
    (r"^\.venv/bin/python tools/sam_local/seed_samples\.py\b", "seeds a serve started with --host 0.0.0.0 "
     "for containers: the sam_local lane seeds its own stack with it"),
    (r"^\.venv/bin/python tools/sam_local/env_vars\.py --stack\b", "reads a deployed stack (needs an AWS account); "
     "tests/integration/test_sam_local_env_vars.py runs it against a local stack"),
    (r"^(aws |\w+=\$\(aws )", "the AWS CLI is not installed by the project's files (boto3 is)"),
    (r"^missed-checks local serve\b", "runs until Ctrl-C: the test starts it itself, on a free port"),
    (r"^missed-checks local demo(?!.*--show-scenario)", "plays the five-week demo (half a minute idle, "
     "minutes under load): tests/e2e/test_report_browser.py plays it, test_local_cli.py runs the command"),
    (r"^missed-checks local run\b", "plays the demo's timeline (as above); tests/e2e/test_local_cli.py runs "
     "`local run` on a small scenario"),
    (r"^make bench\b", "runs every benchmark at full size (many minutes on this machine); benchmarks print "
     "figures and are never tests"),
    (r"^\.venv/bin/python tools/bench_site\.py\b", "the site benchmark: it starts its own stack and loads "
     "a site into it (up to a 100,000 fleet: minutes); it prints figures and is never a test"),
    (r"^missed-checks local chaos\b", "plays the demo twice under faults (minutes): make chaos, "
     "tests/e2e/test_local_chaos.py"),
    (r"^\.venv-sam/bin/sam local start-api\b", "SAM's local gateway neither verifies SigV4 nor passes the caller: "
     "docs/http-api.md says why; tests/e2e/test_http_api.py runs the API through local serve"),
)

FILES = {
    "checklists.yaml": "- id: fire-monthly\n  recurrence: |\n    DTSTART:20260105T080000\n"
                       "    RRULE:FREQ=MONTHLY;BYDAY=1MO\n  timezone: Europe/Riga\n",
    "fleet.txt": "FL-003\nFL-004\n",
    "checks.csv": "checklist_id,equipment_id,performed_at\nforklift-daily,FL-002,2026-03-02T06:40:00Z\n",
    "forklift.ics": "DTSTART;TZID=Europe/Berlin:20260105T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR\n",
    "shutdown.yaml": "id: plant-shutdown\ndates: [2026-08-03, 2026-08-04, 2026-08-05, 2026-08-06]\n",
    "pre-use.yaml": "- id: forklift-pre-use\n  recurrence: |\n    DTSTART;TZID=Europe/Berlin:20260105T060000\n"
                    "    RRULE:FREQ=DAILY\n  window: PT8H\n  pre_use: true\n  items:\n"
                    "    - {id: brakes, label: Brakes work, kind: pass_fail, critical: true}\n"
                    "    - {id: tyre_pressure, label: Tyre pressure, kind: number, unit: bar, minimum: 6, "
                    "maximum: 8.5}\n"
                    "    - {id: fluid, label: Hydraulic fluid, kind: choice, choices: [dry, ok, leaking], "
                    "failing_choices: [leaking]}\n",
}
"""The files the ``--help`` examples name, as a user would have them (the pages write their own)."""


@dataclass(frozen=True)
class Command:
    where: str
    text: str
    prints: str = ""
    """What the documentation says it prints (JSON), when it says so."""
    shown: str = ""
    """The output a page shows for it: a ``text`` block right after its shell block (see
    :func:`matches_shown`)."""

    def excluded(self) -> str | None:
        return next((reason for pattern, reason in EXCLUDED if re.search(pattern, self.text)), None)


# -- reading the commands ---------------------------------------------------------------------------
def page_commands(page: str) -> list[Command]:
    """The commands of a page's shell blocks, in order; a ``text`` block that follows a shell block
    with nothing but blank lines between is the output of that block's last command."""
    lines = (ROOT / page).read_text().splitlines()
    commands: list[Command] = []
    fence: str | None = None
    block: list[tuple[int, str]] = []
    after_shell = False  # only blank lines since a shell block closed
    for number, line in enumerate(lines, 1):
        if fence is None and line.startswith("```"):
            fence = line[3:].strip()
            block = []
        elif fence is not None and line.startswith("```"):
            if fence in SHELLS:
                commands += [Command(f"{page}:{n}", text) for n, text in split_commands(block)]
                after_shell = True
                fence = None
                continue
            if fence == "text" and after_shell and commands:
                last = commands[-1]
                commands[-1] = Command(last.where, last.text, last.prints, "\n".join(text for _, text in block))
            fence = None
        elif fence is not None:
            block.append((number, line))
        if fence is None and line.strip() and not line.startswith("```"):
            after_shell = False
    return commands


def matches_shown(shown: str, out: str) -> bool:
    """Whether a command's standard output is what its page shows: the same words in the same
    order, wherever the lines break (a terminal's width rewraps a table's note), with ``...`` in
    the page standing for any text (a path, an id)."""
    pattern = ".*?".join(re.escape(" ".join(part.split())) for part in shown.split("..."))
    return re.fullmatch(pattern, " ".join(out.split()), re.DOTALL) is not None


def split_commands(block: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Commands of a shell block: a line and its continuations, or a here-document; no comments."""
    commands: list[tuple[int, str]] = []
    lines = iter(block)
    for number, line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        text = [line]
        while text[-1].endswith("\\"):
            text.append(next(lines)[1])
        if here := re.search(r"<<-?\s*'?(\w+)'?", text[-1]):
            for _, body in lines:
                text.append(body)
                if body.strip() == here.group(1):
                    break
        commands.append((number, "\n".join(text)))
    return commands


def help_commands() -> list[Command]:
    commands: list[Command] = []

    def walk(parser: object, prog: str) -> None:
        examples = getattr(parser, "examples", "")
        current: list[str] = []
        for line in examples.splitlines():
            stripped = line.strip()
            if current:
                current.append(stripped)
            elif re.match(r"(missed-checks|printf|aws) ", stripped):
                current = [stripped]
            elif stripped.startswith("prints ") and commands and commands[-1].where == prog:
                commands[-1] = Command(prog, commands[-1].text, stripped.removeprefix("prints "))
                continue
            elif commands and commands[-1].where == prog and commands[-1].prints and stripped.startswith('"'):
                commands[-1] = Command(prog, commands[-1].text, commands[-1].prints + " " + stripped)
                continue
            if current and not current[-1].endswith("\\"):
                commands.append(Command(prog, "\n".join(current)))
                current = []
        for name, child in subcommands(parser).items():
            walk(child, f"{prog} {name}")

    walk(build_parser(), "missed-checks")
    return commands


def aimed(command: Command, endpoint: str, *, help_example: bool, api: str | None = None,
          people_api: str | None = None) -> str:
    text = command.text.replace(LOCAL_ENDPOINT, endpoint)
    if api is not None:  # the HTTP API's default URL under local serve (docs/http-api.md)
        text = text.replace(LOCAL_API_URL, api)
    if people_api is not None:  # the people's API's (docs/people.md)
        text = text.replace(LOCAL_PEOPLE_API_URL, people_api)
    if help_example:
        text = re.sub(r"--stack \S+", f"--endpoint {endpoint}", text)
    return text


# -- running them -----------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


TERMINAL = {"COLUMNS": "160"}
"""The width the pages' outputs are shown at (a table wider than the terminal would wrap its cells)."""
LOCAL_KEYS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}


def clean_environment() -> dict[str, str]:
    """This process's environment without anything that points at AWS: the pages must say it."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("AWS_", "MISSED_CHECKS_STACK", "VIRTUAL_ENV")) and k != "PYTHONPATH"}


@dataclass
class Server:
    endpoint: str
    table: str
    api: str = ""
    """The stack's HTTP API (``local serve --api-port``)."""
    people_api: str = ""
    """The stack's people's API (``local serve --people-api-port``)."""

    def fresh_missed_check(self) -> None:
        """The missed check the ``missed dismiss`` example of ``--help`` dismisses (FL-001, the window
        of 2 March 2026, 06:00 Berlin): the help examples run on a stack on the wall clock, which
        judged no window of March, so it is written as the evaluation writes it, undismissed. (The
        pages judge their own: the README's walkthrough moves its stack's clock through that week.)"""
        start = datetime(2026, 3, 2, 5, tzinfo=UTC)
        window = SimpleNamespace(start=start, end=start + timedelta(hours=8),
                                 evaluate_at=start + timedelta(hours=8, minutes=30))
        item = missed_check_item(MissedCheck(checklist_id="forklift-daily", equipment_id="FL-001", window=window,
                                             judged_at=start + timedelta(hours=9), execution="documented-commands"))
        boto3.resource("dynamodb", endpoint_url=self.endpoint, **_keys()).Table(self.table).put_item(Item=item)


    def fresh_defect(self) -> None:
        """The open defect the ``defect show`` and ``defect resolve`` examples of ``--help`` name
        (D-3f9a2c1b7e4d5a60: FL-001's brakes failed at north on 2 March 2026), written as recording a
        check writes it (a check's defect id is its key's hash: the examples could not name one made now)."""
        found = datetime(2026, 3, 2, 5, 42, tzinfo=UTC)
        defect = Defect("D-3f9a2c1b7e4d5a60", "forklift-pre-use", "FL-001", "north",
                        (FailedItem("brakes", "Brakes work", True, "fail", "pass"),), "operator-north", found,
                        found + timedelta(seconds=3))
        boto3.resource("dynamodb", endpoint_url=self.endpoint, **_keys()).Table(self.table).put_item(
            Item=defect_item(defect))


def _keys() -> dict[str, str]:
    return {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}


def serve_options(page: str = "README.md") -> list[str]:
    """The options of the ``missed-checks local serve`` a page starts (the README's Operate section:
    its clock's start and speed, which the walkthrough's dates and outputs depend on)."""
    for command in page_commands(page):
        if command.text.startswith("missed-checks local serve"):
            return [word for word in shlex.split(command.text, comments=True)[3:]]
    raise AssertionError(f"{page} starts no local serve")


@contextmanager
def started_server(tmp_path_factory: pytest.TempPathFactory, options: list[str]) -> Iterator[Server]:
    """``missed-checks local serve`` in the background with ``options``, on free ports."""
    port, api_port, people_api_port = free_port(), free_port(), free_port()
    log = tmp_path_factory.mktemp("serve") / "serve.out"
    endpoint = f"http://127.0.0.1:{port}"
    with serve_process([str(VENV / "bin" / "missed-checks"), "local", "serve", *options, "--port", str(port),
                        "--api-port", str(api_port), "--people-api-port", str(people_api_port)], log, timeout_s=600,
                       env=clean_environment()):
        cloudformation = boto3.client("cloudformation", endpoint_url=endpoint, **_keys())
        outputs = cloudformation.describe_stacks(StackName="missed-checks-local")["Stacks"][0]["Outputs"]
        yield Server(endpoint, next(o["OutputValue"] for o in outputs if o["OutputKey"] == "TableName"),
                     f"http://127.0.0.1:{api_port}", f"http://127.0.0.1:{people_api_port}")


@pytest.fixture
def pages_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The stack the README's Operate section starts (its --start and --speed), as a reader does."""
    with started_server(tmp_path_factory, serve_options()) as server:
        yield server


@pytest.fixture
def help_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A stack on the wall clock, as the ``--help`` examples assume (they start none)."""
    with started_server(tmp_path_factory, []) as server:
        yield server


@dataclass
class Ran:
    command: Command
    code: int
    out: str
    err: str


def run_in_one_shell(commands: list[tuple[Command, str]], workdir: Path, env: dict[str, str]) -> list[Ran]:
    """Each command in turn in one bash (so `export` and `source` hold for what follows), its exit
    code, standard output and error kept apart."""
    workdir.mkdir(parents=True, exist_ok=True)
    results = workdir / ".results"
    results.mkdir(exist_ok=True)
    (workdir / ".venv").unlink(missing_ok=True)
    (workdir / ".venv").symlink_to(VENV)
    script = []
    for index, (_, text) in enumerate(commands):
        script.append(f"{{\n{text}\n}} >{results}/{index}.out 2>{results}/{index}.err </dev/null\n"
                      f"echo $? >{results}/{index}.rc")
    subprocess.run(["bash", "-c", "\n".join(script)], cwd=workdir, env=env, timeout=900, check=False)
    ran = []
    for index, (command, _) in enumerate(commands):
        rc = results / f"{index}.rc"
        ran.append(Ran(command, int(rc.read_text()) if rc.exists() else -1,
                       (results / f"{index}.out").read_text() if rc.exists() else "",
                       (results / f"{index}.err").read_text() if rc.exists() else "never ran"))
    return ran


def failures(ran: list[Ran]) -> list[str]:
    failed = []
    for result in ran:
        if result.code != 0:
            failed.append(f"{result.command.where}: exit {result.code}: {result.command.text}\n"
                          f"{result.out[-1500:]}\n{result.err[-1500:]}")
        elif result.command.prints and json.loads(result.command.prints) != json.loads(result.out):
            failed.append(f"{result.command.where}: prints {result.out!r}, its help says {result.command.prints}")
        elif result.command.shown and not matches_shown(result.command.shown, result.out):
            failed.append(f"{result.command.where}: {result.command.text}\nprints:\n{result.out}\n"
                          f"its page shows:\n{result.command.shown}")
    return failed


# -- the tests --------------------------------------------------------------------------------------
def test_every_command_is_runnable_or_excluded_with_a_reason() -> None:
    commands = [c for page in PAGES for c in page_commands(page)] + help_commands()
    assert len(commands) > 60, "the extraction found too few commands"
    for pattern, reason in EXCLUDED:
        assert any(re.search(pattern, c.text) for c in commands), f"stale exclusion {pattern!r} ({reason})"
    unknown = [c for c in commands if not c.excluded()
               and not re.match(r"^(missed-checks |source \.venv/bin/activate|export |printf |cat > |curl |\w+=\S+$"
                                r"|\w+=\$\(missed-checks )", c.text)]
    assert not unknown, "classify these (run them, or exclude them with a reason): " + str(unknown)


def test_the_pages_commands_run_as_printed_and_print_what_they_show(pages_server: Server, tmp_path: Path) -> None:
    """README first, then docs/ by name, in one shell, against the stack the README starts: each
    exits 0, and where a page shows a command's output, the command prints that."""
    commands = [(c, aimed(c, pages_server.endpoint, help_example=False, api=pages_server.api,
                          people_api=pages_server.people_api))
                for page in PAGES for c in page_commands(page) if not c.excluded()]
    ran = run_in_one_shell(commands, tmp_path, {**clean_environment(), **TERMINAL})
    assert not failures(ran), "\n\n".join(failures(ran))
    assert any("source .venv/bin/activate" in r.command.text for r in ran)  # the quick start's PATH
    compared = [r for r in ran if r.command.shown]
    assert len(compared) >= 8, "the pages show too few outputs to compare"
    print(f"{len(ran)} documented commands ran, {len(compared)} outputs compared with their pages")


def test_the_help_examples_run_as_printed(help_server: Server, tmp_path: Path) -> None:
    commands = [c for c in help_commands() if not c.excluded()]
    # deleting the checklist comes last, so the examples after it in --help find it
    commands.sort(key=lambda c: "checklist delete" in c.where)
    for name, content in FILES.items():
        (tmp_path / name).write_text(content)
    help_server.fresh_missed_check()
    help_server.fresh_defect()
    env = {**clean_environment(), **LOCAL_KEYS, **TERMINAL,
           "PATH": f"{VENV / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    ran = run_in_one_shell([(c, aimed(c, help_server.endpoint, help_example=True)) for c in commands], tmp_path,
                           env)
    assert not failures(ran), "\n\n".join(failures(ran))
    assert sum(1 for r in ran if r.command.prints) >= 1  # a documented output was compared
    print(f"{len(ran)} help examples ran")


def test_a_shown_output_must_be_printed_word_for_word_with_ellipses_for_any_text() -> None:
    shown = "recorded: FL-001 on forklift-daily at 2026-03-02T06:12:00Z\nLogs: ..."
    assert matches_shown(shown, "recorded: FL-001 on forklift-daily\n   at 2026-03-02T06:12:00Z\nLogs: /tmp/x.log\n")
    assert not matches_shown(shown, "recorded: FL-002 on forklift-daily at 2026-03-02T06:12:00Z\nLogs: /tmp/x.log")
    assert not matches_shown(shown, "warning: ...\nrecorded: FL-001 on forklift-daily at 2026-03-02T06:12:00Z\nLogs: x")
    assert not matches_shown("a b", "a b c")  # the whole output, not a part of it
    page = page_commands("README.md")
    assert any(c.shown.startswith("recorded: FL-001") and "check record" in c.text for c in page)
