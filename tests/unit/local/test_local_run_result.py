"""A local run's output: the product's fleet report (its table, CSV, JSON) and the run's diagnostics."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime

from rich.console import Console

from missed_checks.reporting.fleet_report import ChecklistInfo, Report
from missed_checks.reporting.report import Dismissal, ReportRow, WindowOutcome
from missed_checks_local.product.run_result import to_json
from missed_checks_ops.cli.local import print_run
from missed_checks_ops.report_output import write_report

ROWS = [ReportRow("fl", "a", expected=4, on_time=2, late=1, missed=1),
        ReportRow("fl", "b", expected=3, on_time=0, late=0, missed=1, dismissed=2)]
OUTCOMES = [
    WindowOutcome("fl", "a", "2026-03-02T05:00:00Z", "2026-03-02T13:00:00Z", "late", "2026-03-02T13:10:00Z"),
    WindowOutcome("fl", "b", "2026-03-02T05:00:00Z", "2026-03-02T13:00:00Z", "dismissed",
                  dismissal=Dismissal("in the workshop", "j.doe", "2026-03-03T08:00:00Z")),
]


def result() -> dict:
    report = Report(datetime(2026, 3, 2, tzinfo=UTC), datetime(2026, 3, 9, tzinfo=UTC),
                    datetime(2026, 3, 9, tzinfo=UTC), ROWS, ["checklist x: its rule cannot be read"],
                    {"fl": ChecklistInfo("Forklift", "Europe/Berlin")}, OUTCOMES)
    return {
        "scenario": "unit",
        "report": report,
        "missed": [{"checklist": "fl", "equipment": "b", "window_start": "2026-03-02T05:00:00Z",
                    "window_end": "2026-03-02T13:00:00Z", "dismissal": {"by": "j.doe"}}],
        "performed": [],
        "executions": {"started": 3, "by_status": {"SUCCEEDED": 2, "FAILED": 1}, "by_outcome": {"EVALUATE": 2}},
        "firings": {"fired": 4, "started_execution": 3, "failed_to_start": 1, "dead_lettered": 1},
        "dead_letters": {
            "ScheduleSyncDeadLetterQueue": [{"body": {"kind": "schedule-sync", "source": "schedule-sync",
                                                      "checklist_id": "bad", "revision": 1,
                                                      "error": {"field": "recurrence", "message": "no"}}}],
            "SchedulerDeadLetterQueue": [{"body": {"kind": "scheduler", "checklist_id": "fl",
                                                   "instant": "2026-03-02T05:00:00Z"},
                                          "attributes": {"ERROR_CODE": "AccessDeniedException"}}],
            "EvaluationDeadLetterQueue": [],
        },
        "schedule_problems": {},
    }


def test_the_table_is_the_report_commands_then_what_the_run_did() -> None:
    console = Console(file=io.StringIO(), width=200, color_system=None)
    print_run(result(), console, where_next=["see the log file"])
    text = console.file.getvalue()
    mine = io.StringIO()
    write_report(result()["report"], "table", mine)
    assert text.startswith(mine.getvalue())  # the product's table, line for line
    assert "fleet total" in text and "75.0%" in text and "0.0%" in text  # b: 0 of 1 (2 dismissed)
    assert "warning: checklist x: its rule cannot be read" in text
    assert "ScheduleSyncDeadLetterQueue: 1 message(s)" in text
    assert "schedule-sync refused bad: recurrence: no" in text
    assert "firing not started (AccessDeniedException)" in text
    assert "Schedules fired 4 times (1 failed to start)" in text
    assert "Missed checks recorded: 1 (1 dismissed)" in text
    assert "see the log file" in text


def test_json_holds_the_report_with_its_windows_and_csv_is_the_report_commands() -> None:
    document = json.loads(to_json(result()))
    report = document["report"]
    assert [row["compliance_pct"] for row in report["rows"]] == [75.0, 0.0]
    assert report["total"]["expected"] == 7 and report["total"]["compliance_pct"] == 60.0  # 3 done of 7 - 2 dismissed
    assert report["checklists"] == {"fl": {"name": "Forklift", "timezone": "Europe/Berlin", "deleted": False}}
    assert report["windows"][0]["late_by_s"] == 600
    assert report["windows"][1]["dismissal"]["reason"] == "in the workshop"
    out = io.StringIO()
    write_report(result()["report"], "csv", out)
    lines = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [(line["equipment_id"], line["compliance_pct"]) for line in lines] == [("a", "75.0"), ("b", "0.0"),
                                                                                  ("*", "60.0")]
