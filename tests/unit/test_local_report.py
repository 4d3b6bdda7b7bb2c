"""The local run's report: summary rows, CSV and the table for people."""

from __future__ import annotations

import csv
import io

from rich.console import Console

from missed_checks_local.report import render_csv, render_table, summarize

MISSED = [
    {"checklist": "fl", "equipment": "a", "window_start": "2026-03-04T05:00:00Z", "window_end": "2026-03-04T13:00:00Z"},
    {"checklist": "fl", "equipment": "b", "window_start": "2026-03-02T05:00:00Z", "window_end": "2026-03-02T13:00:00Z"},
    # a check recorded after the miss was written does not turn the miss into a success
    {"checklist": "fl", "equipment": "b", "window_start": "2026-03-03T05:00:00Z", "window_end": "2026-03-03T13:00:00Z"},
]


def performed(equipment: str, at: str, window_start: str | None, timeliness: str, **extra) -> dict:
    return {
        "checklist": "fl",
        "equipment": equipment,
        "performed_at": at,
        "window_start": window_start,
        "timeliness": timeliness,
        **extra,
    }


PERFORMED = [
    performed("a", "2026-03-02T06:00:00Z", "2026-03-02T05:00:00Z", "on_time"),
    performed("a", "2026-03-02T07:00:00Z", "2026-03-02T05:00:00Z", "on_time"),  # twice: one window
    performed("a", "2026-03-03T13:10:00Z", "2026-03-03T05:00:00Z", "late"),
    performed("b", "2026-03-03T09:00:00Z", "2026-03-03T05:00:00Z", "on_time"),
    performed("b", "2026-03-05T14:00:00Z", None, "no_window"),
    performed(
        "c",
        "2026-03-02T13:10:00Z",
        "2026-03-02T13:00:00Z",
        "on_time",
        also_counts_for=[{"window_start": "2026-03-02T05:00:00Z", "timeliness": "late"}],
    ),
]


def rows() -> dict[tuple[str, str], dict]:
    return {(row["checklist"], row["equipment"]): row for row in summarize(MISSED, PERFORMED)}


def test_summary_counts_each_window_once_and_missed_records_win() -> None:
    by_key = rows()
    assert by_key[("fl", "a")] == {
        "checklist": "fl",
        "equipment": "a",
        "on_time": 1,
        "late": 1,
        "missed": 1,
        "compliance_pct": 66.7,
    }
    assert by_key[("fl", "b")] == {
        "checklist": "fl",
        "equipment": "b",
        "on_time": 0,
        "late": 0,
        "missed": 2,
        "compliance_pct": 0.0,
    }
    assert by_key[("fl", "c")]["on_time"] == 1 and by_key[("fl", "c")]["late"] == 1
    assert by_key[("fl", "*")] == {
        "checklist": "fl",
        "equipment": "*",
        "on_time": 2,
        "late": 2,
        "missed": 3,
        "compliance_pct": 57.1,
    }
    assert by_key[("*", "*")]["missed"] == 3


def test_no_judged_windows_means_no_compliance() -> None:
    (fleet,) = summarize([], [])
    assert fleet == {"checklist": "*", "equipment": "*", "on_time": 0, "late": 0, "missed": 0, "compliance_pct": None}


def report() -> dict:
    return {
        "scenario": "unit",
        "start": "2026-03-02T00:00:00Z",
        "end": "2026-03-09T00:00:00Z",
        "summary": summarize(MISSED, PERFORMED),
        "missed": MISSED,
        "performed": PERFORMED,
        "executions": {"started": 3, "by_status": {"SUCCEEDED": 2, "FAILED": 1}, "by_outcome": {"EVALUATE": 2}},
        "firings": {"fired": 4, "started_execution": 3, "failed_to_start": 1, "dead_lettered": 1},
        "dead_letters": {
            "ScheduleSyncDeadLetterQueue": [
                {
                    "body": {
                        "source": "schedule-sync",
                        "checklist_id": "bad",
                        "error": {"field": "recurrence", "message": "no"},
                    }
                }
            ],
            "SchedulerDeadLetterQueue": [
                {"body": {"checklist_id": "fl"}, "attributes": {"ERROR_CODE": "AccessDeniedException"}}
            ],
            "EvaluationDeadLetterQueue": [],
        },
        "schedule_problems": {},
    }


def test_csv_has_one_line_per_row_with_blank_compliance_when_undefined() -> None:
    lines = list(csv.DictReader(io.StringIO(render_csv(report()))))
    assert [(line["checklist"], line["equipment"]) for line in lines] == [
        ("fl", "a"),
        ("fl", "b"),
        ("fl", "c"),
        ("fl", "*"),
        ("*", "*"),
    ]
    assert lines[0] == {
        "checklist": "fl",
        "equipment": "a",
        "on_time": "1",
        "late": "1",
        "missed": "1",
        "compliance_pct": "66.7",
    }


def test_table_shows_rows_totals_dead_letters_and_where_to_look() -> None:
    console = Console(file=io.StringIO(), width=160, color_system=None)
    render_table(report(), console, where_next=["see the log file"])
    text = console.file.getvalue()
    assert "66.7 %" in text and "57.1 %" in text
    assert "fleet" in text
    assert "ScheduleSyncDeadLetterQueue: 1 message(s)" in text
    assert "schedule-sync refused bad: recurrence: no" in text
    assert "firing not started (AccessDeniedException)" in text
    assert "Schedules fired 4 times (1 failed to start)" in text
    assert "see the log file" in text
