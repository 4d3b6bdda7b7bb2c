"""The same commands against `missed-checks local serve`'s endpoint (a moto server in this process),
found through --endpoint alone, as an operator would use them."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from missed_checks_local.serve import LocalServer
from tests.integration.ops.ops_support import BERLIN_WORKDAYS, Cli

pytestmark = pytest.mark.stack  # serves the local stack on a port: not in the fast lane


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def server() -> Iterator[LocalServer]:
    from datetime import UTC, datetime

    server = LocalServer(port=free_port(), start=datetime(2026, 3, 1, 9, tzinfo=UTC), speed=1.0)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_commands_find_the_local_serve_stack_from_the_endpoint(server: LocalServer,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    cli = Cli(capsys)
    endpoint = ["--endpoint", server.endpoint]
    args = ["checklist", "put", "forklift-daily", "--window", "PT8H", "--grace", "PT30M", *endpoint, "--format", "json"]
    for line in BERLIN_WORKDAYS:
        args += ["--recurrence", line]
    put = cli(*args, target=False)
    assert put.code == 0, put.err
    assert cli("equipment", "assign", "--checklist", "forklift-daily", "E1", "E2", *endpoint,
               target=False).code == 0
    listed = cli("checklist", "list", *endpoint, "--format", "json", target=False)
    assert [c["checklist_id"] for c in listed.json] == ["forklift-daily"]
    report = cli("report", "--from", "2026-02-01", "--to", "2026-03-01", *endpoint, "--format", "json", target=False)
    assert report.code == 0 and report.json["rows"] == []
    empty = cli("dlq", "list", *endpoint, "--format", "json", target=False)
    assert empty.json == {"schedule-sync": [], "scheduler": [], "evaluation": [], "notification": [],  # +#18
                          "audit": [], "readiness": []}  # +#31, +#33
    wrong = cli("checklist", "list", "--endpoint", server.endpoint, "--stack", "other", target=False)
    assert wrong.code == 1 and "other not found" in wrong.err
