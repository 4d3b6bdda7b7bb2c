"""A single-window rule whose one firing instant passed before schedule-sync got to it is still
judged (#30 item 2): Scheduler is sent at(<the sync + 1 minute>), never an at() in the past, and
that firing's evaluation judges the window (docs/operations.md, "A single-window rule whose
instant passed unjudged")."""

from __future__ import annotations

from missed_checks.aws.table import ChecklistTable
from missed_checks_local.runtime import LocalRuntime
from tests.integration.ops.ops_support import Cli, utc

ONCE = ["--recurrence", "DTSTART;TZID=Europe/Berlin:20260302T060000", "--recurrence", "RRULE:FREQ=DAILY;COUNT=1",
        "--window", "PT8H", "--grace", "PT30M"]
"""One window, Monday 06:00-14:00 Berlin (05:00-13:00 UTC), judged from 13:30 UTC."""


def test_a_window_that_closed_while_nothing_fired_is_judged_by_a_catch_up_firing(runtime: LocalRuntime,
                                                                                 cli: Cli) -> None:
    cli.ok("checklist", "put", "audit", *ONCE)
    cli.ok("equipment", "assign", "--checklist", "audit", "E1")
    runtime.settle()
    scheduler, group = runtime.stack.client("scheduler"), runtime.stack.schedule_group
    assert scheduler.get_schedule(Name="audit", GroupName=group)["ScheduleExpression"] == "at(2026-03-02T14:30:00)"
    scheduler.delete_schedule(Name="audit", GroupName=group)  # as if it never reached Scheduler
    runtime.scheduler.refresh()
    runtime.advance_to(utc("2026-03-02T16:00:00Z"))  # the window closed; nothing fired
    table = ChecklistTable(runtime.stack.table_name, runtime.stack.client("dynamodb"))
    assert table.missed_checks_of_checklist("audit", utc("2026-03-02T00:00:00Z"), utc("2026-03-03T00:00:00Z")) == []

    # schedule-sync runs now (here: someone is added to notify), after the window's instant.
    cli.ok("checklist", "put", "audit", *ONCE, "--notify-to", "crew@example.com")
    runtime.settle()
    catch_up = scheduler.get_schedule(Name="audit", GroupName=group)["ScheduleExpression"]
    assert catch_up in ("at(2026-03-02T17:01:00)", "at(2026-03-02T17:02:00)")  # 16:00 UTC + 1 min, Berlin's clock

    runtime.advance_to(utc("2026-03-02T16:05:00Z"))
    missed = table.missed_checks_of_checklist("audit", utc("2026-03-02T00:00:00Z"), utc("2026-03-03T00:00:00Z"))
    assert [item["equipment_id"] for item in missed] == ["E1"]
