"""report, missed dismiss/list and rerun against the local runtime: the real state machine judges
the windows, the commands read what it wrote."""

from __future__ import annotations

import csv
import io
import re

import pytest

from missed_checks.aws.table import ChecklistTable, serialize
from missed_checks.aws.table.keys import assignment_prefix, checklist_pk, watermark_key
from missed_checks_local.runtime import LocalRuntime
from missed_checks_ops.target import StackTarget
from tests.integration.ops.ops_support import BERLIN_WORKDAYS, Cli, utc

MONDAY = "2026-03-02T05:00:00Z"  # 06:00 Berlin; window until 13:00Z, judged from 13:30Z
TUESDAY = "2026-03-03T05:00:00Z"
EQUIPMENT = ["E1", "E2", "E3", "E4", "E5", "E6"]


@pytest.fixture
def dynamodb_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every DynamoDB operation the commands make."""
    calls: list[str] = []
    original = StackTarget.client

    def counting(self: StackTarget, service: str):
        client = original(self, service)
        if service == "dynamodb" and not getattr(client, "_ops_counted", False):
            client.meta.events.register("before-call.dynamodb.*", lambda model, **_: calls.append(model.name))
            client._ops_counted = True
        return client

    monkeypatch.setattr(StackTarget, "client", counting)
    return calls


def setup_checklist(cli: Cli, runtime: LocalRuntime, equipment: list[str]) -> None:
    args = ["checklist", "put", "forklift-daily", "--window", "PT8H", "--grace", "PT30M"]
    for line in BERLIN_WORKDAYS:
        args += ["--recurrence", line]
    cli.ok(*args)
    cli.ok("equipment", "assign", "--checklist", "forklift-daily", *equipment)
    runtime.settle()


def record(cli: Cli, equipment: str, at: str) -> None:
    cli.ok("check", "record", "--checklist", "forklift-daily", "--equipment", equipment, "--at", at)


def play_two_days(cli: Cli, runtime: LocalRuntime) -> None:
    """Monday: E1 on time, E2 late, E3 nothing (a check done in the window is imported the next day:
    recorded late, attached to the missed record), E4 on time, E5 after the grace period, E6 nothing
    (dismissed later). Tuesday: all on time but E3, and the Tuesday firing fails, so Tuesday is not
    judged yet."""
    setup_checklist(cli, runtime, EQUIPMENT)
    runtime.advance_to(utc("2026-03-02T13:20:00Z"))
    record(cli, "E1", "2026-03-02T06:00:00Z")
    record(cli, "E2", "2026-03-02T13:10:00Z")
    record(cli, "E4", "2026-03-02T12:59:59Z")
    runtime.advance_to(utc("2026-03-02T15:00:00Z"))  # the 13:30Z firing judges Monday
    record(cli, "E5", "2026-03-02T14:00:00Z")
    runtime.scheduler.inject_failure("forklift-daily")  # the Tuesday firing never starts
    runtime.advance_to(utc("2026-03-03T13:20:00Z"))
    record(cli, "E3", "2026-03-02T07:00:00Z")
    for equipment in ("E1", "E2", "E4", "E5", "E6"):
        record(cli, equipment, "2026-03-03T08:00:00Z")
    runtime.advance_to(utc("2026-03-04T12:00:00Z"))


def rows_of(document: dict) -> dict[str, dict]:
    return {row["equipment_id"]: row for row in document["rows"]}


def counts(row: dict) -> tuple[int, ...]:
    return tuple(row[k] for k in ("expected", "on_time", "late", "missed", "recorded_late", "dismissed", "excused",
                                  "pending"))


def test_report_counts_what_the_state_machine_judged(runtime: LocalRuntime, cli: Cli, tmp_path,
                                                      dynamodb_calls: list[str]) -> None:
    play_two_days(cli, runtime)
    listed = cli.ok("missed", "list", "--checklist", "forklift-daily", "--from", "2026-03-02", "--to", "2026-03-05")
    assert sorted((m["equipment_id"], m["window_start"]) for m in listed) == [
        ("E3", MONDAY), ("E5", MONDAY), ("E6", MONDAY)]
    check_formats(cli, tmp_path)  # before the dismissal: E6's Monday is still missed

    dismiss = ["missed", "dismiss", "--checklist", "forklift-daily", "--equipment", "E6", "--window-start", MONDAY,
               "--reason", "in the workshop", "--by", "j.doe"]
    dismissed = cli.ok(*dismiss)
    assert dismissed["dismissal"]["by"] == "j.doe" and dismissed["window_start"] == MONDAY  # kept, marked
    twice = cli(*dismiss)
    assert twice.code == 1 and "already dismissed by j.doe" in twice.err
    missing = cli(*dismiss[:5], "E1", *dismiss[6:])
    assert missing.code == 1 and "no missed check" in missing.err
    assert cli(*dismiss[:-4], "--reason", " ", "--by", "ops").code == 2

    dynamodb_calls.clear()
    report = cli.ok("report", "--from", "2026-03-02", "--to", "2026-03-05")
    # Keyed reads only, never a Scan (BatchGetItem: each listed checklist's watermark item).
    assert set(dynamodb_calls) <= {"Query", "GetItem", "BatchGetItem"} and "Query" in dynamodb_calls
    rows = rows_of(report)
    # expected, on time, late, missed, recorded late, dismissed, excused, pending. Wednesday's window has not closed.
    assert {e: counts(r) for e, r in rows.items()} == {
        "E1": (2, 2, 0, 0, 0, 0, 0, 0),
        "E2": (2, 1, 1, 0, 0, 0, 0, 0),
        "E3": (1, 0, 0, 0, 1, 0, 0, 1),  # Monday: the check imported later attaches to the record; Tuesday pending
        "E4": (2, 2, 0, 0, 0, 0, 0, 0),
        "E5": (2, 1, 0, 1, 0, 0, 0, 0),
        "E6": (2, 1, 0, 0, 0, 1, 0, 0),
    }
    assert rows["E5"]["compliance_pct"] == 50.0 and rows["E6"]["compliance_pct"] == 100.0
    assert counts(report["total"]) == (11, 7, 1, 1, 1, 1, 0, 1)
    [late_record] = [w for w in report["windows"] if w["outcome"] == "recorded_late"]
    assert late_record == {  # the facts behind it: done per the device, judged missed, recorded the next day
        "checklist_id": "forklift-daily", "equipment_id": "E3", "window_start": MONDAY,
        "window_end": "2026-03-02T13:00:00Z", "outcome": "recorded_late", "performed_at": "2026-03-02T07:00:00Z",
        "judged_at": late_record["judged_at"], "recorded_at": "2026-03-03T13:20:00Z",
        "recorded_after_close_s": (23 * 60 + 50) * 60}
    assert "2026-03-02T13:30:00Z" <= late_record["judged_at"] < "2026-03-02T15:00:00Z"
    assert report["total"]["compliance_pct"] == 80.0
    check_html(cli, tmp_path)

    # The ByEquipment path gives the same row; --checklist the same rows.
    by_equipment = cli.ok("report", "--from", "2026-03-02", "--to", "2026-03-05", "--equipment", "E3")
    assert by_equipment["rows"] == [rows["E3"]]
    assert cli.ok("report", "--from", "2026-03-02", "--to", "2026-03-05",
                  "--checklist", "forklift-daily")["rows"] == report["rows"]

    # Re-running catches Tuesday up: E3's Tuesday becomes missed, nothing is pending.
    rerun = cli.ok("rerun", "--checklist", "forklift-daily", "--at", "now", "--wait")
    assert rerun["status"] == "SUCCEEDED"
    after = cli.ok("report", "--from", "2026-03-02", "--to", "2026-03-05")
    assert counts(rows_of(after)["E3"]) == (2, 0, 0, 1, 1, 0, 0, 0)
    assert counts(after["total"]) == (12, 7, 1, 2, 1, 1, 0, 0)


def check_formats(cli: Cli, tmp_path) -> None:
    text = cli("report", "--from", "2026-03-02", "--to", "2026-03-05", "--format", "csv")
    assert text.code == 0
    table = list(csv.DictReader(io.StringIO(text.out)))
    assert [row["equipment_id"] for row in table] == [*EQUIPMENT, "*"]
    # 8 done of 11 judged (E3's Monday recorded late: not done in compliance, not a plain miss).
    assert table[-1]["expected"] == "11" and table[-1]["missed"] == "2" and table[-1]["recorded_late"] == "1"
    assert table[-1]["compliance_pct"] == "72.73"
    human = cli("report", "--from", "2026-03-02", "--to", "2026-03-05")
    assert human.code == 0 and "fleet total" in human.out and "\x1b[" not in human.out  # no colour off a TTY
    out = tmp_path / "report.json"
    assert cli("report", "--from", "2026-03-02", "--to", "2026-03-05", "--format", "json",
               "--output", str(out)).code == 0
    assert '"total"' in out.read_text(encoding="utf-8")
    backwards = cli("report", "--from", "2026-03-05", "--to", "2026-03-02")
    assert backwards.code == 2 and "after" in backwards.err
    assert cli("report", "--from", "2026-03-02", "--to", "2026-03-05", "--checklist", "nope").code == 1
    assert cli("report", "--from", "March", "--to", "2026-03-05").code == 2


def check_html(cli: Cli, tmp_path) -> None:
    """The same figures as one page: the late check, the dismissal, the misses, in Berlin time."""
    page = tmp_path / "report.html"
    written = cli("report", "--from", "2026-03-02", "--to", "2026-03-05", "--tz", "Europe/Berlin", "--format", "html",
                  "--output", str(page))
    assert written.code == 0 and written.out == ""
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "<script" not in html
    assert "80.0 %" in html  # the fleet's compliance, as in JSON
    assert "Mon 2026-03-02 06:00 – 14:00 CET" in html and "14:10 CET" in html and "10 min" in html  # E2, late
    assert "in the workshop" in html and "j.doe" in html  # E6's dismissal
    assert 'data-equipment="E5"' in html and 'data-equipment="E3"' not in html  # the heatmap's rows: plain misses
    recorded = html[html.index('<section id="recorded-late">'):html.index('<section id="excused-checks">')]
    assert "E3" in recorded and "Tue 2026-03-03 14:20 CET" in recorded  # E3's Monday, recorded the next day
    assert 'data-chart="weekly-forklift-daily"' in html
    to_stdout = cli("report", "--from", "2026-03-02", "--to", "2026-03-05", "--tz", "Europe/Berlin", "--format", "html")
    assert to_stdout.code == 0 and to_stdout.out.startswith("<!DOCTYPE html>") and "80.0 %" in to_stdout.out


EXECUTION_NAME = re.compile(r"^[A-Za-z0-9._-]{1,80}$")


def test_rerun_starts_the_state_machine_and_records_nothing_twice(runtime: LocalRuntime, cli: Cli) -> None:
    equipment = [f"FL-{n:03d}" for n in range(40)]
    setup_checklist(cli, runtime, equipment)
    runtime.clock.advance_to(utc("2026-03-03T15:00:00Z"))  # time passes, no schedule fires
    table = ChecklistTable(runtime.stack.table_name, runtime.stack.client("dynamodb"))

    first = cli.ok("rerun", "--checklist", "forklift-daily", "--at", "2026-03-02T14:00:00Z", "--wait")
    assert first["status"] == "SUCCEEDED" and first["output"]["outcome"] == "EVALUATE"
    assert EXECUTION_NAME.match(first["name"])
    assert first["console_url"] == (
        "https://us-east-1.console.aws.amazon.com/states/home?region=us-east-1#/v2/executions/details/"
        + first["execution_arn"])
    assert first["input"] == {"checklist_id": "forklift-daily", "instant": "2026-03-02T14:00:00Z"}
    records = table.missed_checks_of_checklist("forklift-daily", utc(MONDAY), utc("2026-03-04T00:00:00Z"))
    assert len(records) == 40

    second = cli.ok("rerun", "--checklist", "forklift-daily", "--at", "2026-03-02T14:00:00Z", "--wait")
    assert second["status"] == "SUCCEEDED" and second["name"] != first["name"]
    assert second["output"]["outcome"] == "NOTHING_DUE"

    # As if the watermark had not moved (a redrive after a failure): judged again, written once.
    table.client.update_item(TableName=table.name, Key=serialize(watermark_key("forklift-daily")),
                             UpdateExpression="SET evaluated_until = :w",
                             ExpressionAttributeValues=serialize({":w": "2026-03-01T09:00:00Z"}))
    third = cli.ok("rerun", "--checklist", "forklift-daily", "--at", "2026-03-02T14:00:00Z", "--wait")
    assert third["output"]["outcome"] == "EVALUATE"
    again = table.missed_checks_of_checklist("forklift-daily", utc(MONDAY), utc("2026-03-04T00:00:00Z"))
    assert len(again) == 40
    assert {r["execution"] for r in again} == {r["execution"] for r in records}  # nothing rewritten

    future = cli("rerun", "--checklist", "forklift-daily", "--at", "2026-03-09T00:00:00Z")
    assert future.code == 2 and "future" in future.err
    assert cli("rerun", "--checklist", "nope", "--at", "2026-03-02T14:00:00Z").code == 1
    people = cli("rerun", "--checklist", "forklift-daily", "--at", "2026-03-03T14:00:00Z")
    assert people.code == 0 and "console.aws.amazon.com" in people.out and "executions/details" in people.out


def test_a_rule_edit_mid_range_counts_each_window_by_the_rule_that_judged_it(runtime: LocalRuntime,
                                                                             cli: Cli) -> None:
    """The reviewer's case: daily 06:00 for 8 h (Berlin); a check at 14:30 Berlin on Monday, after the
    window (missed); the rule is edited on Tuesday to 07:00; Tuesday missed. Monday under today's
    rule would run 07:00-15:00 and make the check on time: that window never existed."""
    def rule(hour: int) -> list[str]:
        return ["checklist", "put", "daily-edit", "--window", "PT8H",
                "--recurrence", f"DTSTART;TZID=Europe/Berlin:20260302T{hour:02d}0000",
                "--recurrence", "RRULE:FREQ=DAILY"]

    cli.ok(*rule(6))
    cli.ok("equipment", "assign", "--checklist", "daily-edit", "E1")
    runtime.settle()
    runtime.advance_to(utc("2026-03-02T13:40:00Z"))  # Monday judged at 13:00Z: missed
    cli.ok("check", "record", "--checklist", "daily-edit", "--equipment", "E1", "--at", "2026-03-02T14:30:00+01:00")
    runtime.advance_to(utc("2026-03-03T03:00:00Z"))
    cli.ok(*rule(7))
    runtime.settle()
    runtime.advance_to(utc("2026-03-03T15:00:00Z"))  # Tuesday 06:00Z-14:00Z judged under the new rule: missed

    report = cli.ok("report", "--from", "2026-03-02", "--to", "2026-03-04", "--tz", "Europe/Berlin")
    assert counts(report["total"]) == (2, 0, 0, 2, 0, 0, 0, 0)
    assert report["total"]["compliance_pct"] == 0.0

    # Deleting the checklist keeps its missed checks, and the fleet report keeps counting them.
    assert cli("checklist", "delete", "daily-edit", "--yes").code == 0
    runtime.settle()
    after = cli("report", "--from", "2026-03-02", "--to", "2026-03-04", "--tz", "Europe/Berlin", "--format", "json")
    assert after.code == 0 and "daily-edit no longer exists" in after.err
    assert counts(after.json["total"]) == (2, 0, 0, 2, 0, 0, 0, 0)


def test_deleting_or_breaking_a_checklist_never_changes_a_past_figure(runtime: LocalRuntime, cli: Cli) -> None:
    """#23: a daily checklist with on-time, late and missed windows (and one check recorded after its
    window was judged); the report before and after deleting it is the same for every judged
    window, in the rows and in the windows' outcomes. Breaking its rule (an unreadable recurrence
    written around the command line) changes nothing either. Re-created with the same id, it
    starts with no equipment."""
    setup_checklist(cli, runtime, ["E1", "E2"])
    days = ["2026-03-02", "2026-03-03", "2026-03-04", "2026-03-05", "2026-03-06", "2026-03-09"]
    for n, day in enumerate(days):  # E1 on time every day; E2: on time, late, missed, in turn
        runtime.advance_to(utc(f"{day}T13:20:00Z"))
        record(cli, "E1", f"{day}T06:00:00Z")
        if n % 3 == 0:
            record(cli, "E2", f"{day}T07:00:00Z")
        elif n % 3 == 1:
            record(cli, "E2", f"{day}T13:10:00Z")
        runtime.advance_to(utc(f"{day}T15:00:00Z"))
    record(cli, "E2", "2026-03-04T08:00:00Z")  # Wednesday's check, synced after Wednesday was judged
    period = ["report", "--from", "2026-03-02", "--to", "2026-03-10", "--tz", "Europe/Berlin"]
    before = cli.ok(*period)
    assert counts(rows_of(before)["E1"]) == (6, 6, 0, 0, 0, 0, 0, 0)
    assert counts(rows_of(before)["E2"]) == (6, 2, 2, 1, 1, 0, 0, 0)  # Wednesday recorded late, the 9th missed

    table = ChecklistTable(runtime.stack.table_name, runtime.stack.client("dynamodb"))
    item = table.get_checklist_item("forklift-daily")
    assert item is not None
    table.client.put_item(TableName=table.name, Item=serialize({**item, "recurrence": "RRULE:FREQ=SOMETIMES"}))
    broken = cli(*period, "--format", "json")
    assert broken.code == 0 and "cannot be read" in broken.err
    assert broken.json["rows"] == before["rows"] and broken.json["windows"] == before["windows"]

    assert cli("checklist", "delete", "forklift-daily", "--yes").code == 0
    runtime.settle()
    after = cli(*period, "--format", "json")
    assert after.code == 0 and "forklift-daily no longer exists" in after.err
    assert after.json["rows"] == before["rows"] and after.json["windows"] == before["windows"]
    assert after.json["total"] == before["total"]
    named = cli(*period, "--checklist", "forklift-daily", "--format", "json")  # asked for by name: the same
    assert named.code == 0 and named.json["rows"] == before["rows"]
    by_equipment = cli(*period, "--equipment", "E2", "--format", "json")
    assert by_equipment.code == 0 and by_equipment.json["rows"] == [rows_of(before)["E2"]]
    # Deleted by an older version, which removed the assignment items: whoever left a record or a check
    # in its judged windows is counted, so this checklist's figures are still the same.
    kept = list(table.query(KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
                            ExpressionAttributeValues=serialize({":pk": checklist_pk("forklift-daily"),
                                                                 ":prefix": assignment_prefix()})))
    assert len(kept) == 2
    for item in kept:
        table.client.delete_item(TableName=table.name, Key=serialize({"pk": item["pk"], "sk": item["sk"]}))
    legacy = cli(*period, "--format", "json")
    assert legacy.code == 0 and legacy.json["rows"] == before["rows"] and legacy.json["windows"] == before["windows"]
    for item in kept:
        table.client.put_item(TableName=table.name, Item=serialize(item))

    # The same id again: a new checklist, no equipment carried over; the old windows still count.
    cli.ok("checklist", "put", "forklift-daily", "--window", "PT8H", "--grace", "PT30M",
           *(arg for line in BERLIN_WORKDAYS for arg in ("--recurrence", line)))
    runtime.settle()
    listed = cli.ok("equipment", "list", "--checklist", "forklift-daily")
    assert {e["equipment_id"] for e in listed} == {"E1", "E2"}  # history: both assignments, ended at the deletion
    assert all(e["unassigned_at"] for e in listed)
    runtime.advance_to(utc("2026-03-10T15:00:00Z"))
    again = cli.ok("report", "--from", "2026-03-02", "--to", "2026-03-11", "--tz", "Europe/Berlin")
    assert again["rows"] == before["rows"]  # Tuesday the 10th: nobody assigned, nothing expected
