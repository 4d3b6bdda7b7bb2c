"""Every operations command that prints records takes every format it offers, and --output writes
it to a file instead of standard output; commands that change something print their result as
--format json too."""

from __future__ import annotations

import argparse
import csv
import io
import json
from pathlib import Path

import pytest

from missed_checks_local.runtime import LocalRuntime
from missed_checks_ops.cli.common import subcommands
from missed_checks_ops.cli.main import build_parser
from tests.integration.ops.ops_support import BERLIN_WORKDAYS, Cli, utc

PERIOD = ["--from", "2026-03-02", "--to", "2026-03-03"]
# The arguments each records-printing command needs (the grammar test finds them in the parser).
RECORD_COMMANDS: dict[tuple[str, ...], list[str]] = {
    ("checklist", "list"): [],
    ("equipment", "list"): ["--checklist", "forklift-daily"],
    ("dlq", "list"): [],
    ("report",): PERIOD,
    ("missed", "list"): ["--checklist", "forklift-daily", *PERIOD],
    ("equipment", "out-of-service-list"): [],  # out of service (issue #23 item 1)
    ("calendar", "list"): [],  # closure calendars (#23 item 2)
    ("notifications", "list"): PERIOD,  # #18
    ("digest", "list"): [],  # digest subscriptions (#18)
    ("defect", "list"): [],  # defects (#33)
    ("equipment", "readiness"): ["FL-1"],  # readiness (#33)
}
HEADERS = {  # the CSV header (or its start) each command writes
    ("checklist", "list"): "checklist_id,name,status,recurrence",
    ("equipment", "list"): "equipment_id,assigned_at,unassigned_at",
    ("dlq", "list"): "queue,message_id,sent_at,kind,checklist_id,window_start",
    ("report",): "checklist_id,equipment_id",
    ("missed", "list"): "checklist_id,equipment_id,window_start,window_end,judged_at,dismissed",
    ("equipment", "out-of-service-list"): "equipment_id,from,to,reason,recorded_by,recorded_at,ended",
    ("calendar", "list"): "id,description,dates,first,last,revision,used_by",
    ("notifications", "list"): "claimed_at,kind,checklist_id,window_start,to,equipment,status,sent_at",
    ("digest", "list"): "subscription_id,address,when,checklists",  # digest subscriptions (#18)
    ("defect", "list"): "defect_id,equipment_id,checklist_id,status,found_at,found_by,failed,resolved",
    ("equipment", "readiness"): "equipment_id,state,since,reason",
}


def formats_of(path: tuple[str, ...]) -> tuple[str, ...]:
    parser: argparse.ArgumentParser = build_parser()
    for word in path:
        parser = subcommands(parser)[word]
    (action,) = [a for a in parser._actions if "--format" in a.option_strings]
    return tuple(action.choices)


def test_the_table_above_names_every_ops_command_that_prints_records() -> None:
    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
        children = subcommands(parser)
        if not children:
            yield path, parser
        for name, child in children.items():
            yield from walk(child, (*path, name))

    found = {path for path, parser in walk(build_parser()) if path[0] not in ("local", "recurrence")
             and any("--format" in a.option_strings and "csv" in a.choices for a in parser._actions)}
    assert found == set(RECORD_COMMANDS)


@pytest.fixture
def judged(runtime: LocalRuntime, cli: Cli) -> LocalRuntime:
    """A checklist with two pieces of equipment, its Monday judged: one check done, one missed."""
    args = ["checklist", "put", "forklift-daily", "--window", "PT8H", "--grace", "PT30M"]
    for line in BERLIN_WORKDAYS:
        args += ["--recurrence", line]
    cli.ok(*args)
    cli.ok("equipment", "assign", "--checklist", "forklift-daily", "FL-1", "FL-2")
    runtime.settle()
    runtime.advance_to(utc("2026-03-02T08:00:00Z"))
    cli.ok("check", "record", "--checklist", "forklift-daily", "--equipment", "FL-1")
    runtime.advance_to(utc("2026-03-02T14:00:00Z"))
    return runtime


def test_records_in_every_format_to_standard_output_or_a_file(judged: LocalRuntime, cli: Cli, tmp_path: Path) -> None:
    for path, needs in RECORD_COMMANDS.items():  # one deployed stack for all (each costs seconds)
        formats = formats_of(path)
        assert {"table", "json", "csv"} <= set(formats), path
        for fmt in formats:
            printed = cli(*path, *needs, "--format", fmt)
            assert printed.code == 0, printed.err
            written = tmp_path / f"{'-'.join(path)}.{fmt}"
            to_file = cli(*path, *needs, "--format", fmt, "--output", str(written))
            assert (to_file.code, to_file.out) == (0, ""), to_file.err
            text = written.read_text(encoding="utf-8")
            if fmt == "json":
                assert json.loads(text) == printed.json, path
            elif fmt == "csv":
                assert text.startswith(HEADERS[path]), path
                assert list(csv.reader(io.StringIO(text))) == list(csv.reader(io.StringIO(printed.out))), path
            elif fmt == "table":
                assert text.strip() and "\x1b[" not in text, path  # for people, without terminal colours
        assert cli(*path, *needs).out == cli(*path, *needs, "--format", "table").out, path  # the default

    rows = list(csv.DictReader(io.StringIO(cli("equipment", "list", "--checklist", "forklift-daily",
                                               "--format", "csv").out)))
    assert [(row["equipment_id"], row["unassigned_at"]) for row in rows] == [("FL-1", ""), ("FL-2", "")]
    (checklist,) = csv.DictReader(io.StringIO(cli("checklist", "list", "--format", "csv").out))
    assert checklist["checklist_id"] == "forklift-daily"
    assert checklist["watermark"] == "2026-03-02T13:00:00Z"  # Monday's window was judged
    assert checklist["recurrence"] == r"\n".join(BERLIN_WORKDAYS)  # one line, as --recurrence takes it
    table = cli("equipment", "list", "--checklist", "forklift-daily").out
    assert "assigned at" in table and "FL-2" in table


def test_results_print_as_json_to_a_file_and_a_bad_output_changes_nothing(
    judged: LocalRuntime, cli: Cli, tmp_path: Path
) -> None:
    written = tmp_path / "forklift.json"
    shown = cli("checklist", "show", "forklift-daily", "--format", "json", "--output", str(written))
    assert (shown.code, shown.out) == (0, "")
    assert json.loads(written.read_text())["checklist_id"] == "forklift-daily"
    refused = cli("checklist", "pause", "forklift-daily", "--format", "csv")
    assert refused.code == 2 and refused.err.startswith("missed-checks: error: format: 'csv' is not one of")
    unwritable = cli("checklist", "pause", "forklift-daily", "--output", "/nonexistent/dir/paused.txt")
    assert unwritable.code == 2 and unwritable.out == ""
    assert unwritable.err.startswith("missed-checks: error: output: cannot write /nonexistent/dir/paused.txt")
    assert cli.ok("checklist", "show", "forklift-daily")["status"] == "ACTIVE"  # nothing was paused
    # --json, the old spelling of --format json
    assert cli("checklist", "pause", "forklift-daily", "--json").json["status"] == "PAUSED"
