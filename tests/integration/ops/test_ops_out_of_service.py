"""``equipment out-of-service``, ``back-in-service`` and ``out-of-service-list`` against the local
runtime (issue #23 item 1): refusals name the field and write nothing; the evaluation writes no
missed check for the windows a period overlaps, and counts them as excused."""

from __future__ import annotations

from missed_checks.aws.table import ChecklistTable
from missed_checks_local.runtime import LocalRuntime
from tests.integration.ops.ops_support import BERLIN_WORKDAYS, Cli, utc

MONTH = ["--from", "2026-03-01", "--to", "2026-04-01"]


def setup(cli: Cli) -> None:
    args = ["checklist", "put", "forklift-daily", "--window", "PT8H", "--grace", "PT30M"]
    for line in BERLIN_WORKDAYS:
        args += ["--recurrence", line]
    cli.ok(*args)
    cli.ok("equipment", "assign", "--checklist", "forklift-daily", "FL-001", "FL-002")


def periods(cli: Cli, *args: str) -> list[dict]:
    listed: list[dict] = cli.ok("equipment", "out-of-service-list", *args)
    return listed


def test_refusals_name_the_field_and_write_nothing(runtime: LocalRuntime, cli: Cli) -> None:
    setup(cli)
    week = ["--from", "2026-03-03T06:00:00+01:00", "--to", "2026-03-05T06:00:00+01:00"]
    for argv, field in (
        (["FL-001", "--from", "2026-03-05T06:00:00+01:00", "--to", "2026-03-03T06:00:00+01:00", "--reason", "x"], "to"),
        (["FL-001", "--from", "2026-03-05T06:00:00+01:00", "--to", "2026-03-05T05:00:00Z", "--reason", "x"], "to"),
        (["FL-001", *week, "--reason", " "], "reason"),
        (["bad id", *week, "--reason", "x"], "equipment"),
        (["FL-999", *week, "--reason", "x"], "equipment"),  # never assigned: a typo
        (["FL-001", "--from", "2026-03-03T06:00:00", "--reason", "x"], "from"),  # no offset
        (["FL-001", *week, "--reason", "x", "--colour", "red"], "colour"),  # unknown option
    ):
        refused = cli("equipment", "out-of-service", *argv)
        assert refused.code == 2 and refused.err.startswith(f"missed-checks: error: {field}: "), (argv, refused.err)
    assert periods(cli) == []

    recorded = cli.ok("equipment", "out-of-service", "FL-001", *week, "--reason", "gearbox", "--by", "j.doe")
    assert (recorded["action"], recorded["from"], recorded["to"], recorded["recorded_by"]) == (
        "recorded", "2026-03-03T05:00:00Z", "2026-03-05T05:00:00Z", "j.doe")
    runtime.advance_to(utc("2026-03-01T10:00:00Z"))
    again = cli.ok("equipment", "out-of-service", "FL-001", *week, "--reason", "gearbox", "--by", "someone-else")
    # the same period posted again keeps who recorded it first, and when, and says so
    assert (again["action"], again["recorded_by"], again["recorded_at"]) == (
        "unchanged", "j.doe", recorded["recorded_at"])
    said = cli("equipment", "out-of-service", "FL-001", *week, "--reason", "gearbox", "--by", "someone-else")
    assert f"(recorded already by j.doe at {recorded['recorded_at']}: unchanged)" in said.out
    overlapping = cli("equipment", "out-of-service", "FL-001", "--from", "2026-03-04T00:00:00Z", "--reason", "other")
    assert overlapping.code == 2
    assert "from: FL-001 is already out of service from 2026-03-03T05:00:00Z" in overlapping.err
    assert [(p["equipment_id"], p["reason"]) for p in periods(cli)] == [("FL-001", "gearbox")]


def test_the_evaluation_excuses_exactly_the_overlapping_windows(runtime: LocalRuntime, cli: Cli) -> None:
    setup(cli)
    runtime.settle()
    # Tuesday 3 and Wednesday 4 March (06:00-14:00 Berlin) overlap; Monday's window ends as it starts.
    cli.ok("equipment", "out-of-service", "FL-001", "--from", "2026-03-02T14:00:00+01:00",
           "--to", "2026-03-04T06:00:01+01:00", "--reason", "gearbox")
    runtime.advance_to(utc("2026-03-06T18:00:00Z"))
    missed = cli.ok("missed", "list", "--checklist", "forklift-daily", *MONTH)
    by_day = sorted((m["window_start"][:10], m["equipment_id"]) for m in missed)
    assert by_day == [("2026-03-02", "FL-001"), ("2026-03-02", "FL-002"), ("2026-03-03", "FL-002"),
                      ("2026-03-04", "FL-002"), ("2026-03-05", "FL-001"), ("2026-03-05", "FL-002"),
                      ("2026-03-06", "FL-001"), ("2026-03-06", "FL-002")]
    table = ChecklistTable(runtime.stack.table_name)
    windows = table.judged_windows("forklift-daily", utc("2026-03-01T00:00:00Z"), utc("2026-03-07T00:00:00Z"))
    assert [(w["window_start"][:10], w["missed"], w["excused"]) for w in windows] == [
        ("2026-03-02", 2, 0), ("2026-03-03", 1, 1), ("2026-03-04", 1, 1), ("2026-03-05", 2, 0), ("2026-03-06", 2, 0)]


def test_back_in_service_ends_the_period_from_now_on_never_in_the_past(runtime: LocalRuntime, cli: Cli) -> None:
    setup(cli)
    cli.ok("equipment", "out-of-service", "FL-002", "--reason", "waiting for parts", "--by", "j.doe")  # from now
    runtime.advance_to(utc("2026-03-04T09:00:00Z"))
    past = cli("equipment", "back-in-service", "FL-002", "--at", "2026-03-03T09:00:00Z")
    assert past.code == 2 and past.err.startswith("missed-checks: error: at: 2026-03-03T09:00:00Z is before now")
    ended = cli.ok("equipment", "back-in-service", "FL-002", "--by", "a.smith")
    assert (ended["from"], ended["to"], ended["planned_to"], ended["ended_by"]) == (
        "2026-03-01T09:00:00Z", "2026-03-04T09:00:00Z", None, "a.smith")
    twice = cli("equipment", "back-in-service", "FL-002")
    assert twice.code == 1 and "FL-002 is not out of service at 2026-03-04T09:00:00Z" in twice.err
    table = cli("equipment", "out-of-service-list", "--equipment", "FL-002", "--from", "2026-03-01",
                "--to", "2026-03-08", "--tz", "Europe/Berlin")
    assert table.code == 0 and "a.smith at 2026-03-04T09:00:00Z" in table.out
    csv = cli("equipment", "out-of-service-list", "--format", "csv")
    assert csv.out.splitlines()[0] == "equipment_id,from,to,reason,recorded_by,recorded_at,ended"
    assert periods(cli, "--from", "2026-03-05", "--to", "2026-03-06") == []
    order = cli("equipment", "out-of-service-list", "--from", "2026-03-06", "--to", "2026-03-05")
    assert order.code == 2 and order.err.startswith("missed-checks: error: to: ")


def test_a_planned_period_can_be_cancelled_a_started_one_cannot(runtime: LocalRuntime, cli: Cli) -> None:
    setup(cli)
    planned = ["FL-001", "--from", "2026-03-10T06:00:00+01:00"]
    cli.ok("equipment", "out-of-service", *planned, "--reason", "annual service")
    cli.ok("equipment", "out-of-service", "FL-002", "--from", "2026-03-01T10:00:00Z", "--reason", "flat tyre")
    cancelled = cli.ok("equipment", "out-of-service-cancel", *planned)
    assert (cancelled["action"], cancelled["from"], cancelled["reason"]) == (
        "cancelled", "2026-03-10T05:00:00Z", "annual service")
    assert cli("equipment", "out-of-service-cancel", *planned).code == 1  # gone
    runtime.advance_to(utc("2026-03-01T10:00:00Z"))
    started = cli("equipment", "out-of-service-cancel", "FL-002", "--from", "2026-03-01T10:00:00Z")
    assert started.code == 2 and started.err.startswith("missed-checks: error: from: the period of FL-002")
    assert [p["equipment_id"] for p in periods(cli)] == ["FL-002"]
