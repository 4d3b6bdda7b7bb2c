"""The ``missed-checks local`` commands, through the real console entry point."""

from __future__ import annotations

import csv
import io
import json
import socket
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from missed_checks_ops.cli.main import main

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.filterwarnings("ignore:No application metrics to publish:UserWarning"),
]

WEEK = {
    "name": "one week",
    "start": "2026-03-01T00:00:00Z",
    "end": "2026-03-07T00:00:00Z",
    "events": [
        {
            "at": "2026-03-01T12:00:00Z",
            "put_checklist": {
                "id": "daily",
                "recurrence": "DTSTART;TZID=UTC:20260302T080000\nRRULE:FREQ=DAILY;COUNT=3",
                "window": "PT2H",
            },
        },
        {"at": "2026-03-01T12:00:00Z", "assign": {"checklist": "daily", "equipment": ["a", "b"]}},
        {"at": "2026-03-02T09:00:00Z", "performed": {"checklist": "daily", "equipment": "a"}},
        {"at": "2026-03-03T09:00:00Z", "performed": {"checklist": "daily", "equipment": "a"}},
    ],
}


def write(tmp_path: Path, data: dict) -> str:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_run_prints_csv_and_json_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = write(tmp_path, WEEK)
    log = tmp_path / "run.log"
    assert main(["local", "run", scenario, "--format", "csv", "--log-file", str(log)]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {(r["equipment"], r["on_time"], r["missed"], r["compliance_pct"]) for r in rows} == {
        ("a", "2", "1", "66.7"),
        ("b", "0", "3", "0.0"),
        ("*", "2", "4", "33.3"),
    }
    assert "RequestId" in log.read_text()  # handler logs went to the file, not the terminal
    written = tmp_path / "report.json"
    assert main(["local", "run", scenario, "--report", "json", "--output", str(written)]) == 0  # its first spelling
    assert capsys.readouterr().out == ""
    report = json.loads(written.read_text())
    assert len(report["missed"]) == 4 and len(report["performed"]) == 2
    assert report["executions"]["by_status"] == {"SUCCEEDED": report["executions"]["started"]}


def test_invalid_scenario_exits_2_naming_event_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = json.loads(json.dumps(WEEK))
    broken["events"][1]["assign"]["equipment"] = ["a", "no spaces allowed"]
    assert main(["local", "run", write(tmp_path, broken)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "events[1].assign.equipment[1]" in captured.err


def test_demo_scenario_can_be_shown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["local", "demo", "--show-scenario"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "demo"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_serve_runs_the_stack_behind_an_endpoint(tmp_path: Path) -> None:
    import boto3

    from missed_checks.aws.table import ChecklistTable
    from missed_checks_local.serve import LocalServer

    # An hour of simulated time per real second, from 05:30: the checklist is written well before its
    # 08:00-09:00 window starts (even on a busy machine), and the window closes after about 3.5 s.
    server = LocalServer(
        port=_free_port(), speed=3600, start=datetime(2026, 3, 2, 5, 30, tzinfo=UTC), log_path=tmp_path / "serve.log"
    )
    try:
        stack = server.start()
        endpoint = boto3.session.Session(
            aws_access_key_id="testing", aws_secret_access_key="testing", region_name=stack.region
        )
        tables = endpoint.client("dynamodb", endpoint_url=server.endpoint).list_tables()["TableNames"]
        assert tables == [stack.outputs["TableName"]]
        table = ChecklistTable(stack.table_name)  # its clients reach the server through AWS_ENDPOINT_URL
        now = server.clock.now()
        table.put_checklist(
            "serve-daily", recurrence="DTSTART;TZID=UTC:20260302T080000\nRRULE:FREQ=DAILY", window="PT1H", now=now
        )
        table.assign_equipment("serve-daily", ["s-1"], now)
        deadline = time.monotonic() + 30
        fired = []
        while time.monotonic() < deadline and not any(f.execution_arn for f in fired):
            fired += server.tick()
            time.sleep(0.2)
        assert [f.scheduled_time.hour for f in fired if f.execution_arn] == [9]  # window ends 09:00 (PT1H)
        server.tick()
        (execution,) = server.runtime.executions
        assert execution.status == "SUCCEEDED" and execution.outcome == "EVALUATE"
        missed = table.missed_checks_of_checklist(
            "serve-daily", datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 3, 3, tzinfo=UTC)
        )
        details = (now, execution.output, table.assignments("serve-daily"))
        assert [(m["equipment_id"], m["window_start"]) for m in missed] == [("s-1", "2026-03-02T08:00:00Z")], details
    finally:
        server.stop()
