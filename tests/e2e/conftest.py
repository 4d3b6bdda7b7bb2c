"""Fixtures shared by the end-to-end modules: the bundled ``real-misses`` scenario (#23's must-show
run), played once per session on its own embedded stack, for its outcomes (test_real_misses.py) and
its HTML report in Chromium (test_report_browser.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from importlib import resources
from typing import Any

import pytest

from missed_checks.aws.table import ChecklistTable
from missed_checks_local.clock import SimulatedClock
from missed_checks_local.product.scenario import Scenario, run_scenario
from missed_checks_local.serve import LocalServer

REAL_MISSES = "real-misses.json"
CHECKLISTS = ("berlin-daily", "berlin-workdays", "ny-daily")


@pytest.fixture(scope="session")
def real_misses() -> dict[str, Any]:
    """The run's result (``report`` built with its window outcomes), plus ``judged``: every judged-window
    record of its checklists as the table holds them at the end."""
    text = resources.files("missed_checks_local").joinpath("scenarios", REAL_MISSES).read_text("utf-8")
    judged: dict[str, list[dict[str, Any]]] = {}

    def observe(runtime: Any) -> None:
        table = ChecklistTable(runtime.stack.table_name)
        for checklist in CHECKLISTS:
            judged[checklist] = table.judged_windows(checklist, datetime(2026, 3, 1, tzinfo=UTC),
                                                     datetime(2026, 5, 1, tzinfo=UTC))

    result = run_scenario(Scenario.from_dict(json.loads(text), name="real-misses"), observe=observe)
    result["judged"] = judged
    return result


@pytest.fixture(scope="module")
def people_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """The server ``local serve`` runs, with its people's API (JWT, the local user pool's users), on a
    simulated clock standing at the e2e START, one per module."""
    from tests.e2e.test_local_clock import START, _free_port

    served = LocalServer(port=_free_port(), api_port=0, people_api_port=0, clock=SimulatedClock(START),
                         log_path=tmp_path_factory.mktemp("people") / "serve.log")
    try:
        served.start()
        yield served
    finally:
        served.stop()
