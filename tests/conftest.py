"""Shared fixtures: what ``sam build`` produced, deployed into an in-process moto.

``local_stack`` is the built template deployed with the SAM transform and moto's CloudFormation
(tables, queues, schedule group, roles, functions, the state machine), each function answering
in its own Python 3.13 worker with its role's credentials (IAM enforced), so a started execution
runs the real, built functions. ``local_runtime`` adds the simulated clock, the stream poller and
the simulated EventBridge Scheduler. ``make test`` builds the artifacts first.

**Lanes.** Every test that provisions a stack, runs the Lambda emulator, starts processes or needs
``make build``'s artifacts is marked ``stack`` at collection (:func:`pytest_collection_modifyitems`:
by the fixtures it uses and by its directory, ``tests/e2e`` and ``tests/packaging``), so
``pytest -m "not stack"`` (``make quick``) is the fast lane for domain and handler work.

**One stack per session.** Provisioning the template takes seconds, so ``local_stack``,
``local_runtime`` and the ops tests' ``runtime`` share one provisioned stack and its warm Lambda
workers (:class:`SharedStack`), emptied before each test: every item of the table gone, the
stream trimmed, queues purged, schedules and executions deleted, rules and queues a test added
removed, the Lambda runtime's invocations, denials and faults reset, a fresh simulated clock,
scheduler and stream pollers. A test keeps a stack of its own when it changes template
parameters (``@pytest.mark.stack_parameters``), asks for ``@pytest.mark.own_stack`` (it breaks
or patches the stack for good), or uses ``embedded`` (an empty moto): the shared stack is torn
down before it and provisioned again by the next test that needs it. Collection runs the tests
that share it first within each directory, so that happens about once per directory.

**Scheduling.** ``make unit`` hands whole files to its pytest-xdist workers (``--dist loadfile``).
:func:`schedule` orders them from what the files themselves say (each test's ``duration`` marker,
else an estimate by its markers and fixtures, :data:`ESTIMATES`): the long files first, longest
first, so none starts late and runs alone at the end; files that share a session fixture of a
``conftest.py`` go to one worker together. ``pytest --collect-only -q --show-schedule`` prints it.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import settings

from missed_checks_local import collect_less
from missed_checks_local.product import application

# Importing the emulator patches nothing: the tests install its patches and register the product, as its
# entry points do. Patch 5i first, before the imports below import moto (one botocore data loader).
application.install()

from missed_checks_local.awslambda.runtime import LambdaRuntime  # noqa: E402
from missed_checks_local.clock import SimulatedClock  # noqa: E402
from missed_checks_local.embedded import embedded_aws  # noqa: E402
from missed_checks_local.iam.patches import managed_policies_parsed_once  # noqa: E402
from missed_checks_local.runtime import LocalRuntime  # noqa: E402
from missed_checks_local.stack import EmbeddedStack  # noqa: E402

TESTS = Path(__file__).resolve().parent

collect_less()  # the emulator's garbage-collector thresholds in every test process (missed_checks_local.GC_THRESHOLDS)

STACK_FIXTURES = frozenset({"embedded", "local_stack", "local_runtime", "runtime", "shared_stack"})
"""Fixtures that provision a stack or run the emulator: a test using one is marked ``stack``."""
SHARED_FIXTURES = frozenset({"local_stack", "local_runtime", "runtime", "shared_stack"})
"""Fixtures served by the session's shared stack (unless the test needs its own)."""
STACK_DIRECTORIES = frozenset({"e2e", "packaging"})
"""Directories whose every test runs processes or needs ``make build`` (marked ``stack``)."""


# -- lanes ------------------------------------------------------------------------------------
def uses_shared_stack(item: pytest.Item) -> bool:
    """Whether ``item`` runs on the session's shared stack (else, when it needs one, its own)."""
    names = set(getattr(item, "fixturenames", ()))
    if not names & SHARED_FIXTURES or "embedded" in names:
        return False
    return item.get_closest_marker("stack_parameters") is None and item.get_closest_marker("own_stack") is None


# -- hypothesis profiles ------------------------------------------------------------------------
# Chosen with ``--hypothesis-profile`` (hypothesis' pytest plugin); ``ci`` when none is given (loaded
# in pytest_configure, not at import: test modules import this file again as ``tests.conftest``). The
# property tests set only what is theirs (health checks), never how many examples to run.
settings.register_profile("ci", max_examples=200, deadline=None, print_blob=True)
"""What ``make test`` runs: 200 examples per property test, a failure printed with its blob."""
settings.register_profile("quick", settings.get_profile("ci"), max_examples=20)
"""``make quick``: a tenth of ``ci``'s examples."""
settings.register_profile("dev", settings.get_profile("ci"), max_examples=5000)
"""A longer hunt for bad input: ``pytest --hypothesis-profile dev tests/unit/test_bad_input_properties.py``."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--show-schedule", action="store_true",
                     help="print, after collection, the order in which whole files go to pytest-xdist's "
                          "workers (--dist loadfile): each file or group of files, its estimated seconds")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("hypothesis_profile", None) is None:
        settings.load_profile("ci")
    config.addinivalue_line(
        "markers", "duration(seconds): about how long each test it marks takes in make unit (a module's "
        "pytestmark: each of its tests); long files go to the workers first (tests/conftest.py)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the ``stack`` tests, then order the (by pytest-randomly shuffled) items by the files' own
    schedule (:func:`schedule`): the long files first, longest first, each whole; then the other
    directories, heaviest first, and within each the tests on the shared stack first (in their order),
    then the rest (in theirs), so the shared stack is provisioned about once per directory, not once
    per switch. The sort is stable: the order within each group is still pytest-randomly's,
    reproducible from its seed."""
    for item in items:
        if _top_directory(item) in STACK_DIRECTORIES or set(getattr(item, "fixturenames", ())) & STACK_FIXTURES:
            item.add_marker(pytest.mark.stack)
    plan = schedule(items)
    config.stash[SCHEDULE] = plan
    scope_of = {file: scope for scope in plan for file in scope.files}
    rank = {scope.files[0]: index for index, scope in enumerate(plan) if scope.long}
    directory_weight: dict[Path, float] = {}
    for scope in plan:
        for file, seconds in zip(scope.files, scope.seconds, strict=True):
            directory = Path(file).parent
            directory_weight[directory] = directory_weight.get(directory, 0.0) + seconds
    order = {directory: index for index, directory in enumerate(dict.fromkeys(_directory(i) for i in items))}

    def key(item: pytest.Item) -> tuple[int, float, int, bool]:
        file = _file(item)
        scope = scope_of[file]
        if scope.long:  # whole, its files in the scope's order
            return rank[scope.files[0]], 0.0, scope.files.index(file), False
        return len(rank), -directory_weight[Path(file).parent], order[_directory(item)], not uses_shared_stack(item)

    items.sort(key=key)
    _hand_scopes_to_the_controller(config, plan)


def _directory(item: pytest.Item) -> Path:
    return Path(str(item.path)).parent


def _file(item: pytest.Item) -> str:
    """The item's file as pytest-xdist names its ``--dist loadfile`` scope (the node id before ``::``)."""
    return item.nodeid.split("::", 1)[0]


# -- which files go to the workers first ------------------------------------------------------
LONG_FILE = 30.0
"""Seconds from which a file (or a group of files, below) is long: the long ones go to the
pytest-xdist workers before everything else, longest first, so that none of them starts late and
runs alone at the end (on two cores the suite's tail was one of them, for up to a minute)."""

ESTIMATES = (
    ("sam_local", 15.0),
    ("e2e directory", 5.0),
    ("own stack", 3.0),
    ("stack", 1.0),
    ("slow", 2.0),
    ("any other", 0.05),
)
"""Seconds a test is taken to last when it does not say (``duration``), by what it is, the first
that applies: a ``sam_local`` test (a container per invoke), a test of ``tests/e2e`` (processes and
played scenarios), a test that provisions a stack of its own (``own_stack``, ``stack_parameters``),
another ``stack`` test (the shared stack, an empty moto, a worker process), a ``slow``
domain test, anything else. Rough on purpose: they only decide which files start first."""


def estimated_seconds(item: pytest.Item) -> float:
    """How long ``item`` is taken to last: its ``duration`` marker's seconds, else :data:`ESTIMATES`."""
    marker = item.get_closest_marker("duration")
    if marker is not None:
        seconds = marker.args[0] if len(marker.args) == 1 and not marker.kwargs else marker.kwargs.get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0 < seconds < 3600:
            raise pytest.UsageError(
                f"{_file(item)}: duration takes one number of seconds, above 0 and below 3600 "
                f"(pytest.mark.duration(25)), got {marker.args or ''}{marker.kwargs or ''}")
        return float(seconds)
    names = set(getattr(item, "fixturenames", ()))
    kind = ("sam_local" if item.get_closest_marker("sam_local") is not None
            else "e2e directory" if _top_directory(item) == "e2e"
            else "own stack" if names & SHARED_FIXTURES and not uses_shared_stack(item)
            else "stack" if item.get_closest_marker("stack") is not None
            else "slow" if item.get_closest_marker("slow") is not None
            else "any other")
    return dict(ESTIMATES)[kind]


@dataclass(frozen=True)
class Scope:
    """What one pytest-xdist worker gets at once: a file, or files that share a session fixture."""

    files: tuple[str, ...]
    seconds: tuple[float, ...]
    """Each file's estimated seconds (its tests' :func:`estimated_seconds` summed)."""

    @property
    def total(self) -> float:
        return sum(self.seconds)

    @property
    def long(self) -> bool:
        return self.total >= LONG_FILE


SCHEDULE = pytest.StashKey[list[Scope]]()


def schedule(items: list[pytest.Item]) -> list[Scope]:
    """Every collected file, once, in the order its tests go to the workers: the long scopes
    (:data:`LONG_FILE`) first, longest first, then the others, longest first. Read from the files
    themselves (their tests, markers and fixtures), so a file that moves or is renamed keeps its
    place. Files whose tests use one session-scoped fixture of a ``conftest.py`` (``tests/e2e``'s
    played ``real_misses`` scenario) form one scope: one worker plays the scenario once for all."""
    seconds: dict[str, float] = {}
    parent: dict[str, str] = {}

    def root(file: str) -> str:
        while parent[file] != file:
            file = parent[file]
        return file

    shared: dict[tuple[str, str], str] = {}
    for item in items:
        file = _file(item)
        seconds[file] = seconds.get(file, 0.0) + estimated_seconds(item)
        parent.setdefault(file, file)
        for fixture in _session_fixtures(item):
            other = shared.setdefault(fixture, file)
            parent[root(file)] = root(other)
    groups: dict[str, list[str]] = {}
    for file in seconds:
        groups.setdefault(root(file), []).append(file)
    scopes = [Scope(tuple(sorted(files)), tuple(seconds[f] for f in sorted(files))) for files in groups.values()]
    return sorted(scopes, key=lambda scope: (not scope.long, -scope.total, scope.files))


def _session_fixtures(item: pytest.Item) -> Iterator[tuple[str, str]]:
    """The session-scoped fixtures of a ``conftest.py`` that ``item`` uses (not pytest's or a plugin's)."""
    info = getattr(item, "_fixtureinfo", None)
    for name, definitions in (info.name2fixturedefs.items() if info is not None else ()):
        definition = definitions[-1]
        if definition.scope == "session" and definition.baseid:
            yield definition.baseid, name


def pytest_collection_finish(session: pytest.Session) -> None:
    if not session.config.getoption("show_schedule", False):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    for index, scope in enumerate(session.config.stash.get(SCHEDULE, [])):
        kind = "long" if scope.long else "rest"
        reporter.write_line(f"schedule {index + 1} {kind} {scope.total:.2f}s {' + '.join(scope.files)}")


# -- handing the scopes to pytest-xdist ---------------------------------------------------------
# The controller (which hands out the files) collects nothing: each worker collects, and the
# controller gets only their node ids, in the workers' (identical) order. The order carries the
# longest-first schedule; the groups of files go through a file the workers write.
_SCOPES_KEY = "missed_checks_scopes"


def _scopes_file(config: pytest.Config) -> Path:
    """The controller's file for the workers' groups (made once per run)."""
    path = config.stash.get(_SCOPES_FILE, None)
    if path is None:
        path = Path(tempfile.mkdtemp(prefix="missed-checks-xdist-")) / "scopes.json"
        config.stash[_SCOPES_FILE] = path
    return path


_SCOPES_FILE = pytest.StashKey[Path]()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist's controller, a worker starting: tell it where to write its groups of files."""
    if node.config.getoption("dist", None) == "loadfile":
        node.workerinput[_SCOPES_KEY] = str(_scopes_file(node.config))


def _hand_scopes_to_the_controller(config: pytest.Config, plan: list[Scope]) -> None:
    """A worker: write ``{file: its scope's first file}`` for the files that go together (every
    worker writes the same; each replaces the file whole)."""
    path = getattr(config, "workerinput", {}).get(_SCOPES_KEY)
    if path is None:
        return
    together = {file: scope.files[0] for scope in plan if len(scope.files) > 1 for file in scope.files}
    written = Path(f"{path}.{config.workerinput['workerid']}")
    written.write_text(json.dumps(together), encoding="utf-8")
    written.replace(path)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile``, whole files to a worker, with two changes: files of one :class:`Scope`
    go to one worker together, and the files are handed out in the collection's order (the
    :func:`schedule`'s) instead of xdist's reordering by their number of tests
    (``--loadscope-reorder``, its default: the files of many short tests went first and the
    longest file, three tests, started after two minutes and ended the run alone)."""
    if config.getoption("dist", None) != "loadfile":
        return None
    config.option.loadscopereorder = False
    from xdist.scheduler import LoadFileScheduling

    scopes_file = _scopes_file(config)

    class FilesTogether(LoadFileScheduling):
        together: dict[str, str] = {}

        def schedule(self) -> None:
            if self.collection is None and scopes_file.exists():  # every worker has collected
                self.together = json.loads(scopes_file.read_text(encoding="utf-8"))
            super().schedule()

        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return self.together.get(scope, scope)

    return FilesTogether(config, log)


def _top_directory(item: pytest.Item) -> str:
    """The directory under ``tests/`` that holds ``item`` (``e2e``, ``unit``...), or ``""``."""
    path = Path(str(item.path)).resolve()
    return path.relative_to(TESTS).parts[0] if path.is_relative_to(TESTS) else ""


_WORKERS_SHARED: list[tuple[int, int]] = []
"""(provisioned, served) of each pytest-xdist worker's shared stack, reported when it finishes."""


def pytest_sessionfinish(session: pytest.Session) -> None:
    SHARED.close()
    scopes = session.config.stash.get(_SCOPES_FILE, None)
    if scopes is not None:  # the controller's handover file (above)
        shutil.rmtree(scopes.parent, ignore_errors=True)
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # a pytest-xdist worker: its figures go to the controller
        workeroutput["shared_stack"] = [SHARED.provisioned, SHARED.served]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist's controller: a worker finished (its shared stack's figures come with it)."""
    provisioned, served = getattr(node, "workeroutput", {}).get("shared_stack", (0, 0))
    _WORKERS_SHARED.append((provisioned, served))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    seed = config.getoption("randomly_seed", None)
    if seed is not None and config.getoption("randomly_reorganize", False):
        terminalreporter.write_line(f"test order: pytest-randomly, repeat it with -p randomly --randomly-seed={seed}")
    counts = _WORKERS_SHARED or [(SHARED.provisioned, SHARED.served)]
    provisioned, served = sum(c[0] for c in counts), sum(c[1] for c in counts)
    if provisioned:
        where = f" in {len(_WORKERS_SHARED)} worker processes" if _WORKERS_SHARED else ""
        terminalreporter.write_line(
            f"shared stack: provisioned {provisioned} time(s){where}, emptied for each of {served} tests"
        )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before a ``stack`` test's fixtures (module-scoped ones included): moto's managed policies
    parsed once (``iam.patches.managed_policies_parsed_once``, also for tests that start moto without
    provisioning a stack); the shared stack torn down when this test does not run on it (it gets an empty
    moto, or provisions its own, which must not land in the shared one)."""
    if item.get_closest_marker("stack") is None:
        return
    managed_policies_parsed_once()
    if not uses_shared_stack(item):
        SHARED.close()


# -- the shared stack ---------------------------------------------------------------------------
class _SharedLambdaRuntime(LambdaRuntime):
    """The shared stack's Lambda runtime: a test's ``LocalRuntime`` uses it (its workers stay
    warm) but neither it nor a test can uninstall it; :meth:`shutdown` does, at the end."""

    def __exit__(self, *exc: object) -> None:
        pass

    def uninstall(self) -> None:
        pass

    def shutdown(self) -> None:
        LambdaRuntime.uninstall(self)


class SharedStack:
    """The built template provisioned once in an embedded AWS, emptied for each test."""

    def __init__(self) -> None:
        self._exit: ExitStack | None = None
        self.stack: EmbeddedStack | None = None
        self.lambda_runtime: _SharedLambdaRuntime | None = None
        self._rules: set[tuple[str, str]] = set()
        self._queues: set[str] = set()
        self._groups: set[str] = set()
        self.provisioned = 0
        """How many times this session provisioned it (printed at the end of the run)."""
        self.served = 0
        """How many tests got it emptied (printed at the end of the run)."""

    # -- lifecycle ---------------------------------------------------------------------------
    def open(self) -> EmbeddedStack:
        if self.stack is not None:
            return self.stack
        managed_policies_parsed_once()
        exit_stack = ExitStack()
        try:
            exit_stack.enter_context(embedded_aws())
            stack = EmbeddedStack.provision()
            runtime = _SharedLambdaRuntime(stack)
            runtime.install()
            exit_stack.callback(runtime.shutdown)
        except BaseException:
            exit_stack.close()
            raise
        self._exit, self.stack, self.lambda_runtime = exit_stack, stack, runtime
        self._rules = set(self._all_rules())
        self._queues = set(stack.client("sqs").list_queues().get("QueueUrls", []))
        self._groups = {g["Name"] for g in stack.client("scheduler").list_schedule_groups()["ScheduleGroups"]}
        self.provisioned += 1
        return stack

    def close(self) -> None:
        if self._exit is not None:
            exit_stack, self._exit, self.stack, self.lambda_runtime = self._exit, None, None, None
            exit_stack.close()

    # -- a clean slate for each test ---------------------------------------------------------------
    def fresh(self) -> EmbeddedStack:
        """The shared stack, as just provisioned: no data, no executions, nothing a test added."""
        stack = self.open()
        assert self.lambda_runtime is not None
        self.served += 1
        self._finish_executions(stack)
        self._empty_tables(stack)
        self._empty_scheduler(stack)
        self._empty_queues(stack)
        self._empty_outbox(stack)
        self._remove_rules(stack)
        runtime = self.lambda_runtime
        runtime.invocations.clear()
        runtime.denied.clear()
        runtime.faults = None
        runtime.on_invocation = None
        runtime.keep_invocations = True
        stack.lambda_runtime = runtime
        from missed_checks import clock as product_clock

        product_clock.set_source(None)
        return stack

    def _finish_executions(self, stack: EmbeddedStack) -> None:
        """Let a previous test's executions end (stopped after 30 s), then forget every one."""
        from moto.stepfunctions.responses import get_backend  # the parser's, as state machines execute

        backend = get_backend(stack.account_id, stack.region)
        sfn = stack.client("stepfunctions")
        deadline = time.monotonic() + 30
        for machine in backend.state_machines:
            for execution in list(machine.executions):
                while sfn.describe_execution(executionArn=execution.execution_arn)["status"] == "RUNNING":
                    if time.monotonic() > deadline:
                        sfn.stop_execution(executionArn=execution.execution_arn)
                        break
                    time.sleep(0.05)
            machine.executions.clear()

    @staticmethod
    def _empty_tables(stack: EmbeddedStack) -> None:
        """Every item gone, without stream records of the deletions; the stream trimmed (its
        sequence numbers go on), so a new poller reading from TRIM_HORIZON sees only new writes."""
        from moto.dynamodb.models import dynamodb_backends

        backend = dynamodb_backends[stack.account_id][stack.region]
        for name in stack.table_names.values():
            table = backend.get_table(name)
            table.items.clear()
            shard = table.stream_shard
            if shard is not None:
                shard.starting_sequence_number += len(shard.items)
                shard.items = []

    @staticmethod
    def _empty_outbox(stack: EmbeddedStack) -> None:
        """The e-mails SES kept (a notification's record went with the table; an e-mail left behind
        would be joined to the same deterministic id again by the next test's capture)."""
        from moto.ses.models import ses_backends

        ses_backends[stack.account_id][stack.region].sent_messages.clear()

    def _empty_scheduler(self, stack: EmbeddedStack) -> None:
        scheduler = stack.client("scheduler")
        for group in [g["Name"] for g in scheduler.list_schedule_groups()["ScheduleGroups"]]:
            if group not in self._groups:
                scheduler.delete_schedule_group(Name=group)  # with its schedules
                continue
            for page in scheduler.get_paginator("list_schedules").paginate(GroupName=group):
                for schedule in page["Schedules"]:
                    scheduler.delete_schedule(Name=schedule["Name"], GroupName=group)

    def _empty_queues(self, stack: EmbeddedStack) -> None:
        """The stack's queues emptied (as PurgeQueue, which AWS and moto allow once a minute),
        the queues a test created deleted."""
        from moto.sqs.models import sqs_backends

        backend = sqs_backends[stack.account_id][stack.region]
        sqs = stack.client("sqs")
        for url in sqs.list_queues().get("QueueUrls", []):
            if url in self._queues:
                queue = backend.get_queue(url.rsplit("/", 1)[-1])
                queue._messages = []
                queue._pending_messages = set()
            else:
                sqs.delete_queue(QueueUrl=url)

    def _all_rules(self) -> Iterator[tuple[str, str]]:
        assert self.stack is not None
        events = self.stack.client("events")
        for bus in events.list_event_buses()["EventBuses"]:
            for rule in events.list_rules(EventBusName=bus["Name"])["Rules"]:
                yield bus["Name"], rule["Name"]

    def _remove_rules(self, stack: EmbeddedStack) -> None:
        events = stack.client("events")
        for bus, rule in set(self._all_rules()) - self._rules:
            targets = events.list_targets_by_rule(Rule=rule, EventBusName=bus)["Targets"]
            if targets:
                events.remove_targets(Rule=rule, EventBusName=bus, Ids=[t["Id"] for t in targets])
            events.delete_rule(Name=rule, EventBusName=bus)

    # -- the local runtime on it ------------------------------------------------------------------
    @contextmanager
    def local_runtime(self, start: datetime) -> Iterator[LocalRuntime]:
        """A fresh ``LocalRuntime`` (clock at ``start``, its own scheduler and stream pollers) on
        the emptied shared stack, with the shared, warm Lambda runtime."""
        stack = self.fresh()
        shared = self.lambda_runtime
        import missed_checks_local.runtime as runtime_module

        with mock.patch.object(runtime_module, "LambdaRuntime", lambda *args, **kwargs: shared):
            runtime = LocalRuntime(stack, SimulatedClock(start))
        with runtime:
            yield runtime
        stack.lambda_runtime = shared


SHARED = SharedStack()


# -- fixtures -----------------------------------------------------------------------------------
@pytest.fixture
def embedded() -> Iterator[None]:
    """An empty in-process AWS (moto, state machines executing) with fake credentials."""
    SHARED.close()
    with embedded_aws():
        yield


@pytest.fixture
def shared_stack() -> SharedStack:
    """The session's shared stack (see the module's docstring); ``.fresh()`` empties it."""
    return SHARED


@pytest.fixture
def local_stack(request: pytest.FixtureRequest) -> Iterator[EmbeddedStack]:
    """The built template deployed in moto, its functions answering in their workers.

    ``local_stack.lambda_runtime.invocations`` lists every function call with its event,
    result or error and captured logs. ``@pytest.mark.stack_parameters(EquipmentPerTask="20")``
    overrides template parameters (``FAN_OUT`` makes even a small fleet fan out); such a test, or
    one marked ``own_stack``, gets a stack of its own, any other the session's shared one, emptied.
    """
    if uses_shared_stack(request.node):
        yield SHARED.fresh()
        return
    request.getfixturevalue("embedded")
    marker = request.node.get_closest_marker("stack_parameters")
    stack = EmbeddedStack.provision(parameters=marker.kwargs if marker else None)
    with LambdaRuntime(stack) as runtime:
        stack.lambda_runtime = runtime
        yield stack


FAN_OUT = {"EquipmentPerTask": "20"}
"""Stack parameters that make the test fleets (hundreds of pieces) fan out, one task per batch of
about 20, instead of being judged whole by PlanEvaluation."""

LOCAL_START = datetime(2026, 3, 2, tzinfo=UTC)
"""Where ``local_runtime``'s simulated clock starts (a Monday)."""


@pytest.fixture
def local_runtime(request: pytest.FixtureRequest) -> Iterator[LocalRuntime]:
    """``local_stack`` plus the simulated clock (at ``LOCAL_START``), stream delivery and scheduler.

    Write through the adapters, then ``local_runtime.settle()`` (stream to schedule-sync,
    schedules refreshed) and ``local_runtime.advance_to(instant)`` (fires what is due, waits
    for the executions). ``local_runtime.clock`` is also what ``missed_checks.clock.now()`` returns.
    """
    if uses_shared_stack(request.node):
        with SHARED.local_runtime(LOCAL_START) as runtime:
            yield runtime
        return
    local_stack: EmbeddedStack = request.getfixturevalue("local_stack")
    local_stack.lambda_runtime.uninstall()
    with LocalRuntime(local_stack, SimulatedClock(LOCAL_START)) as runtime:
        yield runtime
