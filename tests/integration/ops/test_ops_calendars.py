"""The ``calendar`` commands, ``checklist put --closed-on`` and the refusals of #23 item 5 this branch
owns (an unassignment before the assignment began; duplicate ids in one file), against the local
runtime: each refusal exits 2 naming the field, and writes nothing."""

from __future__ import annotations

from missed_checks_local.runtime import LocalRuntime
from tests.integration.ops.ops_support import BERLIN_WORKDAYS, Cli

RULE = sum((["--recurrence", line] for line in BERLIN_WORKDAYS), [])


def test_calendar_commands_and_a_checklist_closed_on_them(runtime: LocalRuntime, cli: Cli, tmp_path) -> None:
    put = cli.ok("calendar", "put", "site-holidays", "--date", "2026-03-04,2026-03-03", "--date", "2026-03-03",
                 "--description", "site", "--by", "j.doe")
    assert (put["dates"], put["revision"], put["used_by"]) == (["2026-03-03", "2026-03-04"], 1, [])
    assert (put["updated_by"], put["updated_at"]) == ("j.doe", "2026-03-01T09:00:00Z")
    bad = cli("calendar", "put", "site-holidays", "--date", "2026-03-03", "--date", "2026-02-30")
    assert bad.code == 2 and "date[1]" in bad.err and "not a calendar date" in bad.err

    unknown = cli("checklist", "put", "forklift", "--window", "PT8H", *RULE, "--closed-on", "site-holidays",
                  "--closed-on", "nope")
    assert unknown.code == 2 and "closed_on[1]: no calendar 'nope'" in unknown.err
    assert cli("checklist", "show", "forklift").code == 1  # nothing written

    created = cli.ok("checklist", "put", "forklift", "--window", "PT8H", *RULE, "--closed-on", "site-holidays")
    # Monday 2 March, then Thursday 5 March: Tuesday and Wednesday are closed
    assert [w["start"][:10] for w in created["next_windows"][:2]] == ["2026-03-02", "2026-03-05"]
    assert created["schedule"]["exact"] is False
    runtime.settle()
    shown = cli.ok("checklist", "show", "forklift")
    assert shown["closed_on"] == ["site-holidays"]
    assert [w["start"][:10] for w in shown["next_windows"][:2]] == ["2026-03-02", "2026-03-05"]
    assert "closed_on:" in cli("checklist", "show", "forklift").out

    assert cli.ok("calendar", "show", "site-holidays")["used_by"] == ["forklift"]
    listed = cli.ok("calendar", "list")
    assert [(c["id"], c["used_by"]) for c in listed] == [("site-holidays", ["forklift"])]
    assert "site-holidays" in cli("calendar", "list", "--format", "csv").out

    refused = cli("calendar", "delete", "site-holidays", "--yes")
    assert refused.code == 1 and "referenced by checklist(s) forklift" in refused.err
    path = tmp_path / "holidays.yaml"
    path.write_text("id: site-holidays\ndates: [2026-03-04]\n")  # YAML reads an unquoted date as a date
    edited = cli.ok("calendar", "put", "--file", str(path))
    assert (edited["dates"], edited["revision"], edited["description"]) == (["2026-03-04"], 2, "site")
    first = cli.ok("calendar", "show", "site-holidays", "--revision", "1")
    assert (first["dates"], first["updated_by"]) == (["2026-03-03", "2026-03-04"], "j.doe")
    assert edited["updated_by"].startswith("cli:")  # without --by: the login name
    runtime.settle()
    again = cli.ok("checklist", "show", "forklift")
    assert [w["start"][:10] for w in again["next_windows"][:2]] == ["2026-03-02", "2026-03-03"]

    cli.ok("checklist", "put", "forklift", "--window", "PT8H", *RULE)  # a put without --closed-on drops it
    assert cli.ok("calendar", "delete", "site-holidays", "--yes") == {"calendar_id": "site-holidays", "deleted": True}
    assert cli("calendar", "show", "site-holidays").code == 1


def test_duplicate_ids_in_one_file_are_refused_naming_both_entries(runtime: LocalRuntime, cli: Cli,
                                                                   tmp_path) -> None:
    rule = "\n".join(f"    - '{line}'" for line in BERLIN_WORKDAYS)
    entries = "".join(f"- id: {name}\n  recurrence:\n{rule}\n" for name in ("a", "b", "c", "a"))
    path = tmp_path / "checklists.yaml"
    path.write_text(entries)
    refused = cli("checklist", "put", "--file", str(path))
    assert refused.code == 2 and "entries[3].id: 'a' repeats entries[0]" in refused.err
    assert cli.ok("checklist", "list") == []

    calendars = tmp_path / "calendars.json"
    calendars.write_text('[{"id": "x", "dates": []}, {"id": "x", "dates": ["2026-04-03"]}]')
    refused = cli("calendar", "put", "--file", str(calendars))
    assert refused.code == 2 and "entries[1].id: 'x' repeats entries[0]" in refused.err
    assert cli.ok("calendar", "list") == []


def test_equipment_refusals_write_nothing(runtime: LocalRuntime, cli: Cli, tmp_path) -> None:
    cli.ok("checklist", "put", "forklift", "--window", "PT8H", *RULE)
    fleet = tmp_path / "fleet.txt"
    fleet.write_text("FL-1\nFL-2\nFL-3\nFL-2\n")
    refused = cli("equipment", "assign", "--checklist", "forklift", "--file", str(fleet))
    assert refused.code == 2 and "line 4: 'FL-2' repeats line 2" in refused.err
    assert cli.ok("equipment", "list", "--checklist", "forklift") == []

    cli.ok("equipment", "assign", "--checklist", "forklift", "FL-1", "--at", "2026-03-01T08:00:00Z")
    cli.ok("equipment", "assign", "--checklist", "forklift", "FL-2", "--at", "2026-03-03T08:00:00Z")
    refused = cli("equipment", "unassign", "--checklist", "forklift", "FL-1", "FL-2", "--at", "2026-03-02T08:00:00Z")
    assert refused.code == 2
    assert ("at: 2026-03-02T08:00:00Z is before FL-2's assignment to forklift began (2026-03-03T08:00:00Z)"
            in refused.err)
    listed = cli.ok("equipment", "list", "--checklist", "forklift")
    assert [a["unassigned_at"] for a in listed] == [None, None]
