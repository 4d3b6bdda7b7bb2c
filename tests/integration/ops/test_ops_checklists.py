"""checklist / equipment / check commands and target resolution, against the local runtime."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from missed_checks_local.runtime import LocalRuntime
from missed_checks_ops.cli.main import build_parser
from tests.integration.ops.ops_support import BERLIN_WORKDAYS, START, Cli


def put_forklift(cli: Cli, checklist_id: str = "forklift-daily") -> dict:
    args = ["checklist", "put", checklist_id, "--name", "Forklift pre-use check", "--window", "PT8H",
            "--grace", "PT30M"]
    for line in BERLIN_WORKDAYS:
        args += ["--recurrence", line]
    return cli.ok(*args)


def test_put_validates_before_writing_and_shows_the_next_windows_and_schedule(runtime: LocalRuntime,
                                                                               cli: Cli, tmp_path) -> None:
    bad = cli("checklist", "put", "broken", "--recurrence", r"DTSTART:20260302T060000\nRRULE:FREQ=MINUTELY",
              "--timezone", "Europe/Berlin")
    assert bad.code == 2 and "recurrence" in bad.err and "MINUTELY" in bad.err
    assert cli("checklist", "show", "broken").code == 1

    dry = cli.ok("checklist", "put", "forklift-daily", "--dry-run", "--window", "PT8H", "--grace", "PT30M",
                 *sum((["--recurrence", line] for line in BERLIN_WORKDAYS), []))
    assert dry["action"].startswith("valid")
    assert cli("checklist", "show", "forklift-daily").code == 1  # the dry run wrote nothing

    created = put_forklift(cli)
    assert created["action"] == "created"
    # Monday 2 March 2026 06:00-14:00 Berlin (UTC+1), judged from 13:30Z; weekend skipped.
    first, second = created["next_windows"][:2]
    assert (first["start"], first["end"], first["evaluate_at"]) == (
        "2026-03-02T06:00:00+01:00", "2026-03-02T14:00:00+01:00", "2026-03-02T14:30:00+01:00")
    assert second["start"] == "2026-03-03T06:00:00+01:00"
    assert created["schedule"]["timezone"] == "Europe/Berlin"
    assert created["schedule"]["expression"].startswith("cron(")

    runtime.settle()  # the stream delivers the new checklist to schedule-sync
    shown = cli.ok("checklist", "show", "forklift-daily")
    assert shown["status"] == "ACTIVE" and shown["name"] == "Forklift pre-use check"
    assert shown["schedule"]["expression"] == created["schedule"]["expression"]
    assert shown["schedule"]["state"] == "ENABLED"

    edited = cli.ok("checklist", "put", "forklift-daily", "--window", "PT6H", "--grace", "PT30M",
                    *sum((["--recurrence", line] for line in BERLIN_WORKDAYS), []))
    assert edited["action"] == "updated"
    assert edited["next_windows"][0]["end"] == "2026-03-02T12:00:00+01:00"

    # A YAML (or JSON) file with several checklists.
    path = tmp_path / "checklists.yaml"
    path.write_text(
        "- id: forklift-daily\n"
        "  name: Forklift pre-use check\n"
        "  recurrence: |\n"
        "    DTSTART;TZID=Europe/Berlin:20260302T060000\n"
        "    RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR\n"
        "  window: PT8H\n"
        "  grace: PT30M\n"
        "- id: extinguisher-monthly\n"
        "  recurrence: [DTSTART;VALUE=DATE:20260406, RRULE:FREQ=MONTHLY;BYDAY=1MO]\n"
        "  timezone: Europe/Riga\n", encoding="utf-8")
    results = cli.ok("checklist", "put", "--file", str(path))
    assert [(r["checklist_id"], r["action"]) for r in results] == [
        ("forklift-daily", "updated"), ("extinguisher-monthly", "created")]
    # First Monday of April 2026 in Riga (summer time); a date-only routine has a one-day window.
    assert results[1]["next_windows"][0]["start"] == "2026-04-06T00:00:00+03:00"
    assert results[1]["next_windows"][0]["end"] == "2026-04-07T00:00:00+03:00"
    listed = cli.ok("checklist", "list")
    assert sorted(c["checklist_id"] for c in listed) == ["extinguisher-monthly", "forklift-daily"]

    bad = tmp_path / "bad.yaml"
    bad.write_text("id: x\nrecurrence: RRULE:FREQ=DAILY\ncolour: red\n", encoding="utf-8")
    result = cli("checklist", "put", "--file", str(bad))
    assert result.code == 2 and "colour" in result.err


def test_pause_resume_and_delete(runtime: LocalRuntime, cli: Cli) -> None:
    put_forklift(cli)
    runtime.settle()
    assert cli.ok("checklist", "pause", "forklift-daily")["status"] == "PAUSED"
    runtime.settle()
    assert cli.ok("checklist", "show", "forklift-daily")["schedule"]["state"] == "DISABLED"

    runtime.clock.advance(timedelta(days=3))
    resumed = cli.ok("checklist", "resume", "forklift-daily")
    assert resumed["status"] == "ACTIVE"
    assert resumed["watermark"] == "2026-03-04T09:00:00Z"  # the pause is never back-filled

    refused = cli("checklist", "delete", "forklift-daily")
    assert refused.code == 2 and "--yes" in refused.err
    assert cli.ok("checklist", "delete", "forklift-daily", "--yes")["deleted"] is True
    assert cli("checklist", "show", "forklift-daily").code == 1
    again = cli("checklist", "delete", "forklift-daily", "--yes")
    assert again.code == 1 and "does not exist" in again.err
    assert cli("checklist", "pause", "nope").code == 1


def test_equipment_assign_and_unassign_many_ids_and_from_a_file(runtime: LocalRuntime, cli: Cli,
                                                                 tmp_path) -> None:
    put_forklift(cli)
    fleet = tmp_path / "fleet.txt"
    # an id twice in one file is refused (#23 item 5: duplicate ids in one file), naming both lines
    fleet.write_text("# site A\n" + "".join(f"FL-{n:04d}\n" for n in range(150)) + "\nFL-0001\n", encoding="utf-8")
    repeated = cli("equipment", "assign", "--checklist", "forklift-daily", "--file", str(fleet))
    assert repeated.code == 2 and "line 153: 'FL-0001' repeats line 3" in repeated.err
    # an id both as an argument and in the file counts once
    fleet.write_text("# site A\n" + "".join(f"FL-{n:04d}\n" for n in range(150)) + "\n", encoding="utf-8")
    assigned = cli.ok("equipment", "assign", "--checklist", "forklift-daily", "TRUCK-1", "TRUCK-2", "FL-0001",
                      "--file", str(fleet))
    assert (assigned["requested"], assigned["changed"]) == (152, 152)
    assert assigned["at"] == "2026-03-01T09:00:00Z"
    listed = cli.ok("equipment", "list", "--checklist", "forklift-daily")
    assert len(listed) == 152 and all(row["unassigned_at"] is None for row in listed)

    unassigned = cli.ok("equipment", "unassign", "--checklist", "forklift-daily", "TRUCK-1", "NEVER-ASSIGNED",
                        "--at", "2026-03-05T00:00:00Z")
    assert (unassigned["changed"], unassigned["skipped"]) == (1, 1)
    rows = {row["equipment_id"]: row for row in cli.ok("equipment", "list", "--checklist", "forklift-daily")}
    assert rows["TRUCK-1"]["unassigned_at"] == "2026-03-05T00:00:00Z"

    assert cli("equipment", "assign", "--checklist", "forklift-daily", "bad id!").code == 2
    assert cli("equipment", "assign", "--checklist", "forklift-daily").code == 2
    missing = cli("equipment", "assign", "--checklist", "nope", "FL-1")  # a usage error: see the test below
    assert missing.code == 2 and "there is no checklist with id 'nope'" in missing.err


def test_assigning_equipment_already_assigned_says_so_and_that_nothing_changed(runtime: LocalRuntime,
                                                                               cli: Cli) -> None:
    put_forklift(cli)
    assert cli.ok("equipment", "assign", "--checklist", "forklift-daily", "FL-1")["changed"] == 1
    again = cli("equipment", "assign", "--checklist", "forklift-daily", "FL-1", "FL-2")
    assert again.code == 0, again.err
    assert again.out.strip() == ("1 equipment assigned to forklift-daily from 2026-03-01T09:00:00Z; 1 skipped "
                                 "(already assigned to forklift-daily: nothing changed, each keeps the assignment "
                                 "it had)")
    assert "not assigned" not in again.out
    gone = cli("equipment", "unassign", "--checklist", "forklift-daily", "FL-1", "NEVER-ASSIGNED")
    assert "1 skipped (not assigned, or already unassigned: nothing changed)" in gone.out


def test_a_typo_in_the_checklist_id_is_a_usage_error_said_before_any_write(runtime: LocalRuntime, cli: Cli) -> None:
    put_forklift(cli)
    cli.ok("equipment", "assign", "--checklist", "forklift-daily", "FL-1", "FL-2")
    for command in ("assign", "unassign"):  # a typo in --checklist: said as such, nothing written
        typo = cli("equipment", command, "--checklist", "forklift-dialy", "FL-3")
        assert (typo.code, typo.out) == (2, ""), typo.err
        assert typo.err == ("missed-checks: error: checklist: there is no checklist with id 'forklift-dialy': "
                            "check --checklist (missed-checks checklist list shows every checklist); nothing was "
                            "written\n")
    listed = cli.ok("equipment", "list", "--checklist", "forklift-daily")
    assert sorted(row["equipment_id"] for row in listed) == ["FL-1", "FL-2"]


def test_check_record_and_csv_import(runtime: LocalRuntime, cli: Cli, tmp_path) -> None:
    put_forklift(cli)
    table = runtime.stack.client("dynamodb")
    cli.ok("equipment", "assign", "--checklist", "forklift-daily", *(f"FL-{n:03d}" for n in range(100)),
           "FL-1", "FL-2", "FL-9", "--at", "2026-01-01T00:00:00Z")
    early = cli("check", "record", "--checklist", "forklift-daily", "--equipment", "FL-1",
                "--at", "2026-02-27T07:12:00+01:00", "--format", "json")
    recorded = json.loads(early.out)
    assert early.code == 0 and recorded["performed_at"] == "2026-02-27T06:12:00Z"
    # written, and said to count nowhere: the checklist was created on 1 March (#29)
    assert recorded["warnings"] == [
        "FL-1 at 2026-02-27T06:12:00Z: recorded, but it was performed before checklist 'forklift-daily' was "
        "created (2026-03-01T09:00:00Z), so no window of it judges this check and it counts in no report: "
        "is the date right?"]
    assert early.err == f"missed-checks: warning: {recorded['warnings'][0]}\n"
    now = cli.ok("check", "record", "--checklist", "forklift-daily", "--equipment", "FL-2")
    assert now["performed_at"] == "2026-03-01T09:00:00Z"
    # the same check recorded again by someone else: nothing rewritten, the first record is said
    runtime.advance_to(START + timedelta(minutes=3))
    again = cli("check", "record", "--checklist", "forklift-daily", "--equipment", "FL-1",
                "--at", "2026-02-27T07:12:00+01:00", "--by", "cli:someone-else")
    assert again.code == 0 and again.out.startswith(
        f"already recorded: FL-1 on forklift-daily at 2026-02-27T06:12:00Z, by {recorded['recorded_by']} at "
        f"{recorded['recorded_at']} (nothing changed)"), again.out
    replayed = cli.ok("check", "record", "--checklist", "forklift-daily", "--equipment", "FL-1",
                      "--at", "2026-02-27T06:12:00Z", "--by", "cli:someone-else")
    assert (replayed["already_recorded"], replayed["recorded_by"], replayed["recorded_at"]) == (
        True, recorded["recorded_by"], recorded["recorded_at"])
    assert now["already_recorded"] is False
    future = cli("check", "record", "--checklist", "forklift-daily", "--equipment", "FL-2",
                 "--at", "2026-03-02T09:00:00Z")
    assert future.code == 2 and "future" in future.err
    assert cli("check", "record", "--checklist", "nope", "--equipment", "FL-2").code == 1

    rows = ["checklist_id,equipment_id,performed_at"]
    base = datetime(2026, 2, 1, 6, tzinfo=UTC)
    for n in range(400):
        rows.append(f"forklift-daily,FL-{n % 100:03d},{(base + timedelta(minutes=n)).strftime('%Y-%m-%dT%H:%M:%SZ')}")
    rows.append(rows[1])  # a duplicate row is merged
    path = tmp_path / "checks.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    february = cli("check", "import", str(path), "--format", "json")
    imported = json.loads(february.out)
    assert (imported["rows"], imported["written"], imported["already_recorded"]) == (401, 400, 0)
    assert len(imported["warnings"]) == 400  # every one before the checklist existed, and one line says so
    assert february.err.count("\n") == 11 and "and 390 more checks that count in no report" in february.err

    from missed_checks.aws.table import ChecklistTable
    stored = ChecklistTable(runtime.stack.table_name, table).performed_checks_of_checklist(
        "forklift-daily", base, START)
    assert len(stored) == 400 + 1  # the import and the 27 February check
    rows.append("forklift-daily,FL-1,2026-03-01T08:00:00Z")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    again_file = cli("check", "import", str(path), "--by", "cli:someone-else")
    assert again_file.code == 0 and again_file.out.startswith(
        "imported 1 performed checks for 1 checklist(s) (400 recorded already, kept as they were; "
        "1 duplicate rows merged)"), again_file.out

    broken = tmp_path / "broken.csv"
    broken.write_text("checklist_id,equipment_id,performed_at\nforklift-daily,FL-9,2026-02-02T06:00:00Z\n"
                      "forklift-daily,FL-9,yesterday\n", encoding="utf-8")
    result = cli("check", "import", str(broken))
    assert result.code == 2 and "line 3" in result.err
    assert len(ChecklistTable(runtime.stack.table_name, table).performed_checks_of_checklist(
        "forklift-daily", base, START)) == 402  # nothing of the broken file was written
    # every row whose equipment is not assigned at performed_at (or whose checklist is unknown) is
    # named, and nothing of the file is written (#23 item 5)
    unassigned = tmp_path / "unassigned.csv"
    unassigned.write_text("checklist_id,equipment_id,performed_at\nforklift-daily,FL-9,2026-02-03T06:00:00Z\n"
                          "forklift-daily,FL-TYPO,2026-02-03T06:00:00Z\nforklift-daily,FL-9,2025-12-31T06:00:00Z\n"
                          "nope,FL-9,2026-02-03T06:00:00Z\n", encoding="utf-8")
    refused = cli("check", "import", str(unassigned))
    assert refused.code == 2 and "3 bad row(s)" in refused.err
    assert "line 3: equipment_id: equipment 'FL-TYPO' was never assigned" in refused.err
    assert "line 4: equipment_id: equipment 'FL-9' was not assigned at 2025-12-31T06:00:00Z" in refused.err
    assert "line 5: checklist_id: checklist 'nope' does not exist" in refused.err
    assert len(ChecklistTable(runtime.stack.table_name, table).performed_checks_of_checklist(
        "forklift-daily", datetime(2025, 1, 1, tzinfo=UTC), START)) == 402
    both = tmp_path / "both.csv"  # an unreadable row and a refused one: both named, nothing written
    both.write_text("checklist_id,equipment_id,performed_at\nforklift-daily,FL-9,2026-02-03T07:00:00\n"
                    "forklift-daily,FL-TYPO,2026-02-03T06:00:00Z\nforklift-daily,FL-9,2026-02-04T06:00:00Z\n",
                    encoding="utf-8")
    refused = cli("check", "import", str(both))
    assert refused.code == 2 and "2 bad row(s)" in refused.err
    assert refused.err.index("line 2: performed_at") < refused.err.index("line 3: equipment_id: equipment 'FL-TYPO'")
    assert len(ChecklistTable(runtime.stack.table_name, table).performed_checks_of_checklist(
        "forklift-daily", datetime(2025, 1, 1, tzinfo=UTC), START)) == 402
    typo = cli("check", "record", "--checklist", "forklift-daily", "--equipment", "FL-TYPO")
    assert typo.code == 2 and "equipment 'FL-TYPO' was never assigned to checklist 'forklift-daily'" in typo.err
    no_column = tmp_path / "nocol.csv"
    no_column.write_text("checklist,when\nforklift-daily,2026-02-02T06:00:00Z\n", encoding="utf-8")
    assert cli("check", "import", str(no_column)).code == 2


def test_a_missing_or_wrong_target_is_a_clear_error(runtime: LocalRuntime, cli: Cli, monkeypatch) -> None:
    monkeypatch.delenv("MISSED_CHECKS_STACK", raising=False)
    none = cli("checklist", "list", target=False)
    assert none.code == 2 and "--stack" in none.err
    wrong = cli("checklist", "list", "--stack", "no-such-stack", "--region", "us-east-1", target=False)
    assert wrong.code == 1 and "no-such-stack not found" in wrong.err
    explicit = cli("checklist", "list", "--table", runtime.stack.table_name, "--region", "us-east-1",
                   "--format", "json", target=False)
    assert explicit.code == 0 and explicit.json == []
    no_queue = cli("dlq", "list", "--table", runtime.stack.table_name, "--region", "us-east-1", target=False)
    assert no_queue.code == 2 and "--sync-dlq-url" in no_queue.err


Leaf = tuple[tuple[str, ...], argparse.ArgumentParser]


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[Leaf]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
    for action in subs:
        for name, child in action.choices.items():
            yield from _leaves(child, (*path, name))


OPS_COMMANDS = {("checklist",), ("equipment",), ("check",), ("report",), ("missed",), ("rerun",), ("dlq",)}


def test_every_ops_command_has_help_with_examples_target_options_and_formats() -> None:
    leaves = [(path, parser) for path, parser in _leaves(build_parser()) if path[:1] in {p[:1] for p in OPS_COMMANDS}]
    assert len(leaves) >= 17
    for path, parser in leaves:
        text = parser.format_help()
        assert "examples:" in text and "missed-checks " + " ".join(path) in text, path
        assert "--stack" in text and "--endpoint" in text, path
        # missed list/dismiss (in cli/report.py, reworked on another branch) still print with --json
        assert ("--format" in text and "--output" in text) or ("--json" in text and path[0] == "missed"), path
