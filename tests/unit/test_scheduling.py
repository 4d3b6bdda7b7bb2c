"""The order in which whole test files go to pytest-xdist's workers (``tests/conftest.py``'s
``schedule``) is read from the files themselves (their tests, markers and fixtures): every collected
file is scheduled exactly once wherever it lives, the long ones first, and files that share a played
session scenario go to one worker together."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.conftest import LONG_FILE, estimated_seconds, schedule

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Item:
    """What ``schedule`` reads of a collected test: its node id, path, markers and fixtures."""

    nodeid: str
    markers: dict[str, Any] = field(default_factory=dict)
    fixturenames: tuple[str, ...] = ()
    session_fixtures: tuple[str, ...] = ()

    @property
    def path(self) -> Path:
        return ROOT / self.nodeid.split("::", 1)[0]

    def get_closest_marker(self, name: str) -> Any:
        return self.markers.get(name)

    @property
    def _fixtureinfo(self) -> SimpleNamespace:
        definition = SimpleNamespace(scope="session", baseid="tests/e2e")
        return SimpleNamespace(name2fixturedefs={name: [definition] for name in self.session_fixtures})


def test_a_duration_marker_gives_each_test_its_seconds() -> None:
    assert estimated_seconds(Item("tests/e2e/test_x.py::test_a", {"duration": pytest.mark.duration(25).mark})) == 25.0
    assert estimated_seconds(Item("tests/unit/test_x.py::test_a",
                                  {"duration": pytest.mark.duration(seconds=1.5).mark})) == 1.5


@pytest.mark.parametrize("marker", [pytest.mark.duration("long"), pytest.mark.duration(0), pytest.mark.duration(True),
                                    pytest.mark.duration(), pytest.mark.duration(5, 6), pytest.mark.duration(7200)],
                         ids=["text", "zero", "boolean", "nothing", "two numbers", "two hours"])
def test_a_duration_that_is_not_a_number_of_seconds_is_refused_naming_the_file(marker: Any) -> None:
    with pytest.raises(pytest.UsageError, match=r"^tests/e2e/test_x\.py: duration takes one number of seconds"):
        estimated_seconds(Item("tests/e2e/test_x.py::test_a", {"duration": marker.mark}))


def test_without_a_duration_a_test_is_estimated_by_what_it_is() -> None:
    stack = {"stack": pytest.mark.stack.mark}
    assert estimated_seconds(Item("tests/e2e/test_x.py::test_a", stack)) > estimated_seconds(
        Item("tests/integration/test_x.py::test_a", stack, fixturenames=("local_stack",)))
    own = {**stack, "own_stack": pytest.mark.own_stack.mark}
    assert estimated_seconds(Item("tests/integration/test_x.py::test_a", own, fixturenames=("local_stack",))) > \
        estimated_seconds(Item("tests/integration/test_x.py::test_a", stack, fixturenames=("local_stack",)))
    assert estimated_seconds(Item("tests/unit/test_x.py::test_a", stack, fixturenames=("embedded",))) == \
        estimated_seconds(Item("tests/unit/test_x.py::test_a", stack, fixturenames=("shared_stack",)))
    assert estimated_seconds(Item("tests/unit/test_x.py::test_a")) < estimated_seconds(
        Item("tests/unit/test_x.py::test_a", {"slow": pytest.mark.slow.mark}))


def test_files_sharing_a_session_fixture_are_one_scope_and_the_long_scopes_come_first() -> None:
    long = {"duration": pytest.mark.duration(LONG_FILE).mark}
    items = [
        Item("tests/unit/test_short.py::test_a"),
        Item("tests/e2e/test_reads_the_scenario.py::test_a", session_fixtures=("real_misses",)),
        Item("tests/e2e/moved/test_also_reads_it.py::test_b", session_fixtures=("real_misses",)),
        Item("tests/anywhere/test_renamed_long.py::test_a", long),
        Item("tests/anywhere/test_renamed_long.py::test_b", long),
        Item("tests/e2e/test_longest.py::test_a", {"duration": pytest.mark.duration(3 * LONG_FILE).mark}),
    ]
    plan = schedule(items)  # type: ignore[arg-type]
    assert [scope.files for scope in plan] == [
        ("tests/e2e/test_longest.py",),
        ("tests/anywhere/test_renamed_long.py",),
        ("tests/e2e/moved/test_also_reads_it.py", "tests/e2e/test_reads_the_scenario.py"),
        ("tests/unit/test_short.py",),
    ]
    assert [scope.long for scope in plan] == [True, True, False, False]


@pytest.mark.slow
def test_every_collected_file_is_scheduled_once_and_the_collection_starts_with_the_long_ones() -> None:
    """The whole suite collected (nothing runs) with the schedule printed: moving or renaming a file
    can never leave it out, since the schedule is made of what was collected."""
    environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly",
                          "-p", "no:cacheprovider", "--show-schedule", "tests"],
                         cwd=ROOT, capture_output=True, text=True, env=environment, timeout=600, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    lines = run.stdout.splitlines()
    nodeids = [line for line in lines if "::" in line and not line.startswith("schedule ")]
    collected = list(dict.fromkeys(nodeid.split("::", 1)[0] for nodeid in nodeids))
    plan = [line.split(" ", 4) for line in lines if line.startswith("schedule ")]
    scopes = [(kind, float(seconds.removesuffix("s")), files.split(" + ")) for _, _, kind, seconds, files in plan]
    scheduled = [file for _, _, files in scopes for file in files]

    assert len(collected) > 100
    assert sorted(scheduled) == sorted(collected), set(scheduled) ^ set(collected)
    kinds = [kind for kind, _, _ in scopes]
    assert kinds == sorted(kinds), "the long scopes come first"
    for kind in ("long", "rest"):
        totals = [seconds for k, seconds, _ in scopes if k == kind]
        assert totals == sorted(totals, reverse=True), f"{kind}: longest first"
    first = [file for kind, _, files in scopes if kind == "long" for file in files]
    assert first, "no file is long: the estimates or LONG_FILE changed"
    assert collected[:len(first)] == first, "the collection hands the long files out first, in the schedule's order"
    together = next(files for _, _, files in scopes if "tests/e2e/test_real_misses.py" in files)
    assert "tests/e2e/test_report_browser.py" in together, "both read the played real_misses scenario"


@pytest.mark.slow
def test_under_dist_loadfile_files_sharing_a_session_fixture_run_in_one_worker(tmp_path: Path) -> None:
    """The groups reach pytest-xdist's controller (the workers hand them over in a file): two files
    that use one session fixture of their ``conftest.py`` run on one worker, a third file beside them
    may run on the other."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "conftest.py").write_text("import pytest\n\n@pytest.fixture(scope='session')\n"
                                       "def played():\n    return 'once'\n", encoding="utf-8")
    for name in ("test_reads_a", "test_reads_b"):
        (suite / f"{name}.py").write_text("def test_one(played):\n    assert played == 'once'\n\n"
                                          "def test_two(played):\n    assert played == 'once'\n", encoding="utf-8")
    for name in ("test_other_c", "test_other_d"):
        (suite / f"{name}.py").write_text("def test_one():\n    pass\n\ndef test_two():\n    pass\n", encoding="utf-8")
    environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.conftest", "-n", "2", "--dist", "loadfile",
                          "-v", "-p", "no:randomly", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(suite)],
                         cwd=ROOT, capture_output=True, text=True, env=environment, timeout=600, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    workers: dict[str, set[str]] = {}
    for line in run.stdout.splitlines():
        if line.startswith("[gw") and "PASSED" in line:
            worker, file = line.split("]", 1)[0].lstrip("["), line.split("::", 1)[0].rsplit("/", 1)[-1]
            workers.setdefault(file, set()).add(worker)
    assert len(workers) == 4, run.stdout[-3000:]
    assert len(workers["test_reads_a.py"] | workers["test_reads_b.py"]) == 1, workers
