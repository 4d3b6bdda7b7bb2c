"""Fixtures shared by the end-to-end modules: the bundled ``real-misses`` scenario (#23's must-show
run), played once per session on its own embedded stack, for its outcomes (test_real_misses.py) and
its HTML report in Chromium (test_report_browser.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from importlib import resources
from typing import Any

import pytest

from missed_checks.aws.table import ChecklistTable
from missed_checks_local.product.scenario import Scenario, run_scenario

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
