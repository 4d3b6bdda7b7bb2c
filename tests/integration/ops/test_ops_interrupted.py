"""An interrupted bulk write says exactly what it wrote (issue 22): ``check import``, ``equipment assign
--file`` and ``checklist put --file``, stopped by Ctrl-C in the middle of a batch, exit 130 and name
the count (and ids) that the table holds, no more, no fewer. The Ctrl-C is sent to this process
from the write itself, after the Nth item reached the table, wherever the writer then is."""

from __future__ import annotations

import json
import os
import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import botocore.client
import pytest

from missed_checks.aws.table import ChecklistTable
from missed_checks_local.runtime import LocalRuntime
from tests.integration.ops.ops_support import BERLIN_WORKDAYS, Cli

MONDAY = datetime(2026, 3, 2, 7, 0, tzinfo=UTC)  # inside the first window (06:00-14:00 Berlin)
_CALL = botocore.client.BaseClient._make_api_call


@contextmanager
def ctrl_c_after(monkeypatch: pytest.MonkeyPatch, kind: str, count: int) -> Iterator[list[int]]:
    """Send SIGINT to this process once ``count`` items of type ``kind`` were written to the table
    (PutItem or BatchWriteItem, whoever writes them): it lands in the middle of the writer's batch."""
    written = [0]

    def call(client: Any, operation: str, params: dict[str, Any]) -> Any:
        result = _CALL(client, operation, params)
        if operation == "PutItem":
            items = [params.get("Item") or {}]
        elif operation == "BatchWriteItem":
            items = [request["PutRequest"]["Item"] for requests in params.get("RequestItems", {}).values()
                     for request in requests if "PutRequest" in request]
        else:
            return result
        before = written[0]
        written[0] += sum(1 for item in items if item.get("type", {}).get("S") == kind)
        if before < count <= written[0]:
            os.kill(os.getpid(), signal.SIGINT)
        return result

    monkeypatch.setattr(botocore.client.BaseClient, "_make_api_call", call)
    try:
        yield written
    finally:
        monkeypatch.setattr(botocore.client.BaseClient, "_make_api_call", _CALL)


def put_forklift(cli: Cli) -> None:
    assert cli("checklist", "put", "forklift-daily", "--window", "PT8H", "--grace", "PT30M",
               *sum((["--recurrence", line] for line in BERLIN_WORKDAYS), [])).code == 0


def said_count(err: str, noun: str) -> int:
    found = re.search(rf"^missed-checks: (?:wrote|stopped after) (\d+) of \d+ {noun}", err, re.MULTILINE)
    assert found, err
    return int(found.group(1))


def test_an_interrupted_check_import_says_exactly_how_many_the_table_holds(
        runtime: LocalRuntime, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    put_forklift(cli)
    fleet = [f"FL-{n:04d}" for n in range(1200)]
    (tmp_path / "fleet.txt").write_text("\n".join(fleet) + "\n", encoding="utf-8")
    assert cli("equipment", "assign", "--checklist", "forklift-daily", "--file", str(tmp_path / "fleet.txt"),
               "--at", "2026-03-01T00:00:00Z").code == 0
    runtime.advance_to(MONDAY + timedelta(minutes=5))
    rows = ["checklist_id,equipment_id,performed_at", *(f"forklift-daily,{e},2026-03-02T07:00:00Z" for e in fleet)]
    (tmp_path / "checks.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")

    with ctrl_c_after(monkeypatch, "performed_check", 600):  # in the middle of the second batch of 500
        result = cli("check", "import", str(tmp_path / "checks.csv"))
    assert result.code == 130, result.err
    assert result.err.strip().splitlines()[-1] == "missed-checks: interrupted"
    said = said_count(result.err, "performed checks")
    stored = ChecklistTable(runtime.stack.table_name).performed_checks_of_checklist(
        "forklift-daily", MONDAY - timedelta(days=1), MONDAY + timedelta(days=1))
    assert 600 <= len(stored) < 1200 and said == len(stored), result.err
    assert f"wrote {said} of 1200 performed checks: forklift-daily/FL-0000@" in result.err
    assert f"forklift-daily/FL-{said - 1:04d}@2026-03-02T07:00:00Z (" in result.err  # the last one written, named


def test_an_interrupted_equipment_assign_says_exactly_how_many_were_assigned(
        runtime: LocalRuntime, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    put_forklift(cli)
    (tmp_path / "fleet.txt").write_text("".join(f"FL-{n:04d}\n" for n in range(300)), encoding="utf-8")
    with ctrl_c_after(monkeypatch, "assignment", 60):  # inside the third batch of 25
        result = cli("equipment", "assign", "--checklist", "forklift-daily", "--file", str(tmp_path / "fleet.txt"))
    assert result.code == 130, result.err
    said = said_count(result.err, "equipment ids")
    assigned = ChecklistTable(runtime.stack.table_name).assignments("forklift-daily")
    assert 60 <= len(assigned) < 300 and said == len(assigned), result.err


def test_an_interrupted_checklist_put_file_says_exactly_which_were_written(
        runtime: LocalRuntime, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    specs = [{"id": f"site-{n:02d}", "recurrence": "\n".join(BERLIN_WORKDAYS), "window": "PT8H"} for n in range(40)]
    (tmp_path / "sites.json").write_text(json.dumps(specs), encoding="utf-8")
    with ctrl_c_after(monkeypatch, "checklist", 10):
        result = cli("checklist", "put", "--file", str(tmp_path / "sites.json"))
    assert result.code == 130, result.err
    said = said_count(result.err, "checklists")
    stored = sorted(c.checklist_id for c in ChecklistTable(runtime.stack.table_name).list_checklists())
    assert said == len(stored) >= 10 and stored == [f"site-{n:02d}" for n in range(said)], result.err
    assert f"not written: site-{said:02d} .. site-39" in result.err
