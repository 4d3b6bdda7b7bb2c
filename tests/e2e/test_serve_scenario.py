"""``local serve --scenario`` (#32): a scenario played into the served stack, its checklists at site
north and the equipment it assigns registered there, so that the people ``local serve`` creates
see it in the web app; the clock then stands at the scenario's end."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from missed_checks.aws.table import ManagementTable
from missed_checks_local.clock import SimulatedClock
from missed_checks_local.product.exploring import load_scenario
from missed_checks_local.product.scenario import Scenario
from missed_checks_local.serve import LocalServer
from tests.e2e.test_local_clock import _free_port

SCENARIO = Scenario.from_dict({
    "name": "small", "start": "2026-03-01T00:00:00Z", "end": "2026-03-03T00:00:00Z",
    "events": [
        {"at": "2026-03-01T09:00:00Z", "put_checklist": {
            "id": "fl-daily", "name": "Forklift check", "window": "PT8H",
            "recurrence": "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY"}},
        {"at": "2026-03-01T09:00:00Z", "assign": {"checklist": "fl-daily", "equipment": ["fl-01", "fl-02"]}},
        {"at": "2026-03-02T07:00:00Z", "performed": {"checklist": "fl-daily", "equipment": "fl-01"}},
    ]}, name="small")


@pytest.fixture
def server(tmp_path: Any) -> Iterator[LocalServer]:
    served = LocalServer(port=_free_port(), api_port=0, people_api_port=0, web_port=0,
                         clock=SimulatedClock(SCENARIO.start), log_path=tmp_path / "serve.log")
    try:
        served.start()
        yield served
    finally:
        served.stop()


def test_the_scenario_is_played_at_north_and_the_clock_stands_at_its_end(server: LocalServer) -> None:
    assert server.web_url is not None and server.web_url.endswith("/")
    assert load_scenario(server, SCENARIO) == 3
    assert server.clock.now() == SCENARIO.end
    assert server.stack is not None
    table = ManagementTable(server.stack.table_name, server.stack.client("dynamodb"))
    checklist = table.get_checklist("fl-daily")
    assert checklist is not None and checklist.site_id == "north"
    registered = table.registered_equipment(["fl-01", "fl-02"])
    assert {e: (r.site_id, r.kind) for e, r in registered.items()} == {"fl-01": ("north", "fl"),
                                                                       "fl-02": ("north", "fl")}
    missed = table.missed_checks_of_equipment("fl-02", ["fl-daily"], SCENARIO.start, SCENARIO.end)
    assert [m["window_start"] for m in missed] == ["2026-03-02T05:00:00Z"]  # judged on the way, as local run does
    assert table.missed_checks_of_equipment("fl-01", ["fl-daily"], SCENARIO.start, SCENARIO.end) == []
