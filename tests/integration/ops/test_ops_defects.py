"""``check record --answer``, ``defect list|show|resolve`` and ``equipment readiness`` (#33) against the
local runtime: a bad answer refused naming the item (exit 2, nothing written), a failed critical
item said in words with the defect it opened, the equipment not cleared to operate until the defect
is resolved with a note; a second resolve refused (exit 1); a site's announced readiness listed."""

from __future__ import annotations

from pathlib import Path

from missed_checks.aws.table import ManagementTable
from missed_checks.equipment.registering import register_equipment
from missed_checks.permissions.caller import Caller
from missed_checks.sites.saving import create_site
from missed_checks_local.runtime import LocalRuntime
from tests.integration.ops.ops_support import START, Cli, utc

CHECKLIST = """- id: forklift-pre-use
  recurrence: |
    DTSTART;TZID=Europe/Berlin:20260302T060000
    RRULE:FREQ=DAILY
  window: PT8H
  items:
    - {id: brakes, label: Brakes work, kind: pass_fail, critical: true}
    - {id: tyres, label: Tyre pressure, kind: number, unit: bar, minimum: 6, maximum: 8.5}
"""


def setup(runtime: LocalRuntime, cli: Cli, tmp_path: Path) -> None:
    table = ManagementTable(runtime.stack.table_name, runtime.stack.client("dynamodb"))
    operator = Caller.operator("cli:test")
    create_site(table, operator, "north", name="North", timezone="Europe/Berlin", now=START)
    register_equipment(table, operator, "FL-1", name="Forklift 1", kind="forklift", site_id="north", now=START)
    spec = tmp_path / "pre-use.yaml"
    spec.write_text(CHECKLIST, encoding="utf-8")
    cli.ok("checklist", "put", "--file", str(spec), "--site", "north")
    cli.ok("equipment", "assign", "--checklist", "forklift-pre-use", "FL-1")
    runtime.settle()
    runtime.advance_to(utc("2026-03-02T06:00:00Z"))


def test_a_failed_critical_item_opens_a_defect_until_a_note_resolves_it(runtime: LocalRuntime, cli: Cli,
                                                                        tmp_path: Path) -> None:
    setup(runtime, cli, tmp_path)
    record = ["check", "record", "--checklist", "forklift-pre-use", "--equipment", "FL-1",
              "--at", "2026-03-02T05:42:00Z"]
    shown = cli("checklist", "show", "forklift-pre-use").out
    assert "brakes: Brakes work (critical): pass or fail" in shown, shown
    assert "tyres: Tyre pressure: a number, passing between 6 and 8.5 bar" in shown

    for answers, field in ((["--answer", "brakes=ok", "--answer", "tyres=7"], "answers.brakes"),
                           (["--answer", "tyres=7"], "answers.brakes"),  # a required item left out
                           (["--answer", "brakes"], "answer"),
                           (["--answer", "brakes=pass", "--answer", "brakes=fail", "--answer", "tyres=7"], "answer")):
        refused = cli(*record, *answers)
        assert refused.code == 2 and refused.err.startswith(f"missed-checks: error: {field}: "), (answers, refused.err)
    assert "Brakes work" in cli(*record, "--answer", "brakes=ok", "--answer", "tyres=7").err
    assert cli.ok("defect", "list") == []  # nothing written

    said = cli(*record, "--answer", "brakes=fail", "--answer", "tyres=9")
    assert said.code == 0, said.err
    assert "failed: Brakes work (critical): fail, expected pass; Tyre pressure: 9, expected between 6 and 8.5 bar" \
        in said.out, said.out
    assert "FL-1 is NOT cleared to operate: defect D-" in said.out
    (defect,) = cli.ok("defect", "list", "--status", "open")
    assert (defect["equipment_id"], defect["site_id"], [f["item_id"] for f in defect["failed_items"]]) == (
        "FL-1", "north", ["brakes"])
    again = cli.ok(*record, "--answer", "brakes=fail", "--answer", "tyres=9")  # a retry: the same defect, once
    assert (again["already_recorded"], again["defects_opened"]) == (True, [defect["defect_id"]])
    assert cli.ok("defect", "list", "--site", "north", "--equipment", "FL-1") == [defect]
    assert cli.ok("defect", "list", "--status", "resolved") == []
    assert cli("defect", "list", "--status", "closed").err.startswith("missed-checks: error: status: ")

    readiness = cli.ok("equipment", "readiness", "FL-1")
    assert (readiness["state"], readiness["open_defects"]) == ("not_cleared", [defect["defect_id"]])
    assert "FL-1: NOT cleared to operate since" in cli("equipment", "readiness", "FL-1").out
    assert cli("equipment", "readiness").err.startswith("missed-checks: error: equipment: give one piece")

    text = cli("defect", "show", defect["defect_id"]).out
    assert f"defect {defect['defect_id']}: open" in text and "failed:       Brakes work (critical): fail" in text
    assert cli("defect", "resolve", defect["defect_id"], "--note", " ").err.startswith("missed-checks: error: note: ")
    resolved = cli.ok("defect", "resolve", defect["defect_id"], "--note", "brake line replaced")
    assert (resolved["status"], resolved["resolution"], resolved["resolved_by"].startswith("cli:")) == (
        "resolved", "brake line replaced", True)
    twice = cli("defect", "resolve", defect["defect_id"], "--note", "again")
    assert twice.code == 1 and "was resolved already" in twice.err, twice.err
    assert cli.ok("equipment", "readiness", "FL-1")["state"] == "cleared"
    assert "resolved:" in cli("defect", "show", defect["defect_id"]).out
    assert cli("defect", "show", "D-0000000000000000").code == 1


def test_a_sites_readiness_is_what_was_last_announced(runtime: LocalRuntime, cli: Cli, tmp_path: Path) -> None:
    setup(runtime, cli, tmp_path)
    cli.ok("check", "record", "--checklist", "forklift-pre-use", "--equipment", "FL-1", "--at",
           "2026-03-02T05:42:00Z", "--answer", "brakes=fail", "--answer", "tyres=7")
    runtime.settle()  # the readiness function reads the stream and announces the change
    listed = cli.ok("equipment", "readiness", "--site", "north")
    assert [(r["equipment_id"], r["state"]) for r in listed] == [("FL-1", "not_cleared")], listed
    assert cli("equipment", "readiness", "--site", "west").code == 1  # no such site
