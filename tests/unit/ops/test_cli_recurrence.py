"""`missed-checks recurrence ...` in-process through the console script's main()."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from missed_checks_ops.cli.main import main

WEEKDAYS = r"DTSTART;TZID=Europe/Berlin:20260105T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"
RANGE = ["--from", "2026-03-27T00:00:00Z", "--to", "2026-04-01T00:00:00Z"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(["recurrence", *argv])
    except SystemExit as exit_:  # argparse usage errors
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_windows_prints_json_with_offsets_across_dst(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, "windows", "--recurrence", WEEKDAYS, "--window", "PT8H", "--grace", "PT30M",
        "--from", "2026-03-27T00:00:00Z", "--to", "2026-03-31T00:00:00+02:00", "--format", "json",
    )  # fmt: skip
    assert (code, err) == (0, "")
    assert json.loads(out) == [
        {"start": "2026-03-27T06:00:00+01:00", "end": "2026-03-27T14:00:00+01:00",
         "evaluate_at": "2026-03-27T14:30:00+01:00"},
        {"start": "2026-03-30T06:00:00+02:00", "end": "2026-03-30T14:00:00+02:00",
         "evaluate_at": "2026-03-30T14:30:00+02:00"},
    ]  # fmt: skip


def test_schedule_prints_expression(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, "schedule", "--recurrence", "DTSTART:20260105T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=3",
        "--timezone", "Europe/Berlin", "--window", "PT8H", "--format", "json",
    )  # fmt: skip
    assert (code, err) == (0, "")
    assert json.loads(out) == {
        "expression": "cron(0 14 ? * MON *)",
        "timezone": "Europe/Berlin",
        "start_date": "2026-01-05T13:00:00Z",
        "end_date": "2026-01-19T13:02:00Z",
        "exact": True,
    }


def test_recurrence_from_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rule = tmp_path / "rule.ics"
    rule.write_text("DTSTART;TZID=America/New_York:20260105T060000\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,FR\n")
    code, out, _ = run(capsys, "schedule", "--recurrence", f"@{rule}", "--window", "PT8H", "--format", "json")
    assert code == 0
    assert json.loads(out)["exact"] is False
    assert json.loads(out)["expression"] == "cron(0 14 ? * MON,FRI *)"


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["schedule", "--recurrence", "garbage"], "recurrence: cannot read line"),
        (["schedule", "--recurrence", r"DTSTART:20260105T060000\nRRULE:FREQ=MINUTELY", "--timezone", "UTC"],
         "sub-hourly"),
        (["schedule", "--recurrence", WEEKDAYS, "--window", "P1M"], "window:"),
        (["schedule", "--recurrence", WEEKDAYS, "--timezone", "Nowhere/City"], "timezone:"),
        (["schedule", "--recurrence", "@/does/not/exist.ics"], "cannot read"),
        (["windows", "--recurrence", WEEKDAYS, "--from", "2026-03-27", "--to", "2026-03-28T00:00:00Z"],
         "from: "),
        (["windows", "--recurrence", WEEKDAYS, "--from", "2026-03-28T00:00:00Z", "--to", "2026-03-27T00:00:00Z"],
         "to: "),
        (["windows", "--recurrence", WEEKDAYS, "--window", "PT1H", "--limit", "3",
          "--from", "2026-01-01T00:00:00Z", "--to", "2027-01-01T00:00:00Z"], "more than 3 windows"),
        (["windows", "--recurrence", WEEKDAYS], "missed-checks: error: from: missing: give --from ISO, --to ISO"),
        (["schedule"], "missed-checks: error: recurrence: missing: give --recurrence TEXT"),
        (["schedule", "--recurrence", WEEKDAYS, "--format", "yaml"],
         "missed-checks: error: format: 'yaml' is not one of table, json, csv: choose one"),
        # extremes that ended in a traceback
        (["windows", "--recurrence", WEEKDAYS, "--from", "0001-01-01T00:00:00Z", "--to", "2026-03-28T00:00:00Z"],
         "missed-checks: error: from: '0001-01-01T00:00:00Z' is outside the years 1970 to 2299"),
        (["windows", "--recurrence", WEEKDAYS, "--from", "2026-03-27T00:00:00Z", "--to", "9999-12-31T23:59:59-05:00"],
         "missed-checks: error: to: "),
        (["windows", "--recurrence", WEEKDAYS, "--window", "PT99999999999999999999H", *RANGE],
         "missed-checks: error: window: 'PT99999999999999999999H' is longer than 366 days"),
        (["schedule", "--recurrence", WEEKDAYS, "--grace", "P99999999999999999999W"],
         "missed-checks: error: grace: "),
        (["schedule", "--recurrence", r"DTSTART:00010101T000000Z\nRRULE:FREQ=DAILY"],
         "missed-checks: error: recurrence: DTSTART '00010101T000000Z' is outside the years 1970 to 2199"),
        (["windows", "--recurrence", r"DTSTART:99991231T230000Z\nRRULE:FREQ=DAILY", *RANGE],
         "missed-checks: error: recurrence: DTSTART '99991231T230000Z' is outside"),
        (["schedule", "--recurrence", WEEKDAYS + ";BYHOUR=" + ",".join(["6"] * 50_000)],
         "missed-checks: error: recurrence: is 100"),
        # minor: a cap that would not cap, an empty window that became P1D
        (["windows", "--recurrence", WEEKDAYS, "--limit", "-1", *RANGE], "missed-checks: error: limit: '-1' is not"),
        (["windows", "--recurrence", WEEKDAYS, "--limit", "0", *RANGE], "limit: '0' is not a positive whole number"),
        (["windows", "--recurrence", WEEKDAYS, "--limit", "ten", *RANGE], "limit: 'ten' is not"),
        (["windows", "--recurrence", WEEKDAYS, "--window", "", *RANGE], "missed-checks: error: window: is empty"),
        (["schedule", "--recurrence", WEEKDAYS, "--grace", ""], "missed-checks: error: grace: is empty"),
    ],
)
def test_bad_input_exits_2_with_one_line_and_no_stdout(
    capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n")
    assert fragment in err


def test_help_has_examples(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "windows", "--help")
    assert code == 0
    assert "examples:" in out and "--from 2026-03-27T00:00:00Z" in out and "PT8H" in out


def test_a_recurrence_file_that_is_not_text_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    binary = tmp_path / "rule.ics"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    code, out, err = run(capsys, "schedule", "--recurrence", f"@{binary}")
    assert (code, out) == (2, "")
    assert err.startswith("missed-checks: error: recurrence: cannot read") and err.count("\n") == 1


def test_a_limit_of_one_still_lists_one_window(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "windows", "--recurrence", WEEKDAYS, "--limit", "1", "--format", "json",
                       "--from", "2026-03-27T00:00:00Z", "--to", "2026-03-28T00:00:00Z")
    assert code == 0 and len(json.loads(out)) == 1


def test_windows_as_a_table_for_people_and_csv_for_tools(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    week = [*RANGE[:2], "--to", "2026-03-31T00:00:00+02:00"]
    code, out, _ = run(capsys, "windows", "--recurrence", WEEKDAYS, "--window", "PT8H", *week)
    assert code == 0
    assert "judged after (end + grace)" in out and "2026-03-30T06:00:00+02:00" in out  # the default: a table
    written = tmp_path / "windows.csv"
    code, out, _ = run(capsys, "windows", "--recurrence", WEEKDAYS, "--window", "PT8H", *week,
                       "--format", "csv", "--output", str(written))
    assert (code, out) == (0, "")
    assert written.read_text().splitlines() == [
        "start,end,evaluate_at",
        "2026-03-27T06:00:00+01:00,2026-03-27T14:00:00+01:00,2026-03-27T14:00:00+01:00",
        "2026-03-30T06:00:00+02:00,2026-03-30T14:00:00+02:00,2026-03-30T14:00:00+02:00",
    ]
