"""The ``missed-checks local`` commands, through the real console entry point."""

from __future__ import annotations

import csv
import io
import json
import socket
from datetime import UTC, datetime
from pathlib import Path

import pytest

from missed_checks.checklists.saving import save_checklist
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


def test_run_prints_the_fleet_report_as_csv_json_table_and_html(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    scenario = write(tmp_path, WEEK)
    log = tmp_path / "run.log"
    assert main(["local", "run", scenario, "--format", "csv", "--log-file", str(log)]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    # the report command's columns and figures
    assert [(r["equipment_id"], r["expected"], r["on_time"], r["missed"], r["compliance_pct"]) for r in rows] == [
        ("a", "3", "2", "1", "66.67"),
        ("b", "3", "0", "3", "0.0"),
        ("*", "6", "2", "4", "33.33"),
    ]
    assert "RequestId" in log.read_text()  # handler logs went to the file, not the terminal
    written = tmp_path / "run.json"
    assert main(["local", "run", scenario, "--report", "json", "--output", str(written)]) == 0  # its first spelling
    assert capsys.readouterr().out == ""
    run = json.loads(written.read_text())
    assert len(run["missed"]) == 4 and len(run["performed"]) == 2
    assert run["executions"]["by_status"] == {"SUCCEEDED": run["executions"]["started"]}
    report = run["report"]
    assert (report["from"], report["to"]) == ("2026-03-01T00:00:00Z", "2026-03-07T00:00:00Z")
    assert report["total"]["compliance_pct"] == 33.33
    assert sorted((w["equipment_id"], w["window_start"], w["outcome"]) for w in report["windows"]) == [
        ("a", "2026-03-02T08:00:00Z", "on_time"), ("a", "2026-03-03T08:00:00Z", "on_time"),
        ("a", "2026-03-04T08:00:00Z", "missed"),
        ("b", "2026-03-02T08:00:00Z", "missed"), ("b", "2026-03-03T08:00:00Z", "missed"),
        ("b", "2026-03-04T08:00:00Z", "missed")]

    assert main(["local", "run", scenario]) == 0
    table = capsys.readouterr().out
    assert "fleet total" in table and "33.3%" in table and "Schedules fired" in table

    page = tmp_path / "week.html"
    assert main(["local", "run", scenario, "--format", "html", "--output", str(page)]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and f"wrote the html report to {page}" in captured.err
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "33.3 %" in html and "one week" in html
    assert 'data-chart="weekly-daily"' in html and 'data-equipment="b"' in html


def test_run_and_demo_help_give_examples(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("run", "demo"):
        with pytest.raises(SystemExit) as exited:
            main(["local", command, "--help"])
        assert exited.value.code == 0
        text = capsys.readouterr().out
        assert "--format html --output" in text and "{table,json,csv,html}" in text


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
    from missed_checks_local.clock import SimulatedClock
    from missed_checks_local.serve import LocalServer

    # The test moves the simulated clock itself (05:30, then past the 08:00-09:00 window), so the
    # verdict never depends on how fast the machine writes the checklist.
    clock = SimulatedClock(datetime(2026, 3, 2, 5, 30, tzinfo=UTC))
    server = LocalServer(port=_free_port(), clock=clock, log_path=tmp_path / "serve.log")
    try:
        stack = server.start()
        endpoint = boto3.session.Session(
            aws_access_key_id="testing", aws_secret_access_key="testing", region_name=stack.region
        )
        tables = endpoint.client("dynamodb", endpoint_url=server.endpoint).list_tables()["TableNames"]
        assert tables == [stack.outputs["TableName"]]
        table = ChecklistTable(stack.table_name)  # its clients reach the server through AWS_ENDPOINT_URL
        now = server.clock.now()
        save_checklist(table,
            "serve-daily", recurrence="DTSTART;TZID=UTC:20260302T080000\nRRULE:FREQ=DAILY", window="PT1H", now=now,
            by="tests",
        )
        table.assign_equipment("serve-daily", ["s-1"], now, by="tests")
        fired = server.tick()  # the stream settles: schedule-sync has written the schedule
        assert fired == []
        # ... and the audit function has recorded both changes, by who made them (#31)
        assert [(e.action.value, e.changed_by) for e in table.object_trail("checklist", "serve-daily", None, 10).items
                ] == [("created", "tests")]
        assert [(e.action.value, e.changed_by)
                for e in table.object_trail("assignment", "serve-daily/s-1", None, 10).items] == [("created", "tests")]
        clock.advance_to(datetime(2026, 3, 2, 9, 0, tzinfo=UTC))  # the window closes: its schedule is due
        fired += server.tick()
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
