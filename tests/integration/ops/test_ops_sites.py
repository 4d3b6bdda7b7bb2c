"""The checklist commands at a site (#31), against the local runtime: ``checklist put --site`` makes a
checklist of that site (its time zone the site's when the rule names none; a site that does not exist
refused naming --site, nothing written); the operator's commands reach every site's checklists."""

from __future__ import annotations

from missed_checks.aws.table import ManagementTable
from missed_checks.permissions.caller import Caller
from missed_checks.sites.saving import create_site
from missed_checks_local.runtime import LocalRuntime
from tests.integration.ops.ops_support import START, Cli


def test_put_at_a_site_takes_its_zone_and_refuses_a_missing_site(runtime: LocalRuntime, cli: Cli) -> None:
    table = ManagementTable(runtime.stack.table_name, runtime.stack.client("dynamodb"))
    create_site(table, Caller.operator("cli:test"), "north", name="North", timezone="Europe/Berlin", now=START)
    rule = ["--recurrence", "DTSTART:20260302T060000", "--recurrence", "RRULE:FREQ=DAILY", "--window", "PT8H"]

    missing = cli("checklist", "put", "yard", "--site", "west", *rule)
    assert missing.code == 2 and "site_id" in missing.err and "west" in missing.err
    assert cli("checklist", "show", "yard").code == 1  # nothing written

    created = cli.ok("checklist", "put", "yard", "--site", "north", *rule)
    assert created["action"] == "created"
    assert created["next_windows"][0]["start"].endswith("+01:00")  # 06:00 in Berlin, the site's zone
    shown = cli.ok("checklist", "show", "yard")
    assert (shown["site_id"], shown["timezone"]) == ("north", "Europe/Berlin")
    assert [c["checklist_id"] for c in cli.ok("checklist", "list")] == ["yard"]
