"""Benchmark: what one evaluation costs on AWS, counted from a real run on the embedded AWS (not a test).

For each fleet size it deploys the built stack, assigns the equipment to a daily checklist,
records a performed check for every other piece, lets the emulated Scheduler fire the schedule
schedule-sync made, and counts from what actually happened:

- state transitions (every state entered in the execution history, plus task retries);
- Lambda invocations and GB-seconds (configured memory x measured duration, and x 1 s);
- DynamoDB write and read request units per operation (``missed_checks_local.testing.metering``: item
  sizes and the indexes each item lands in);
- Scheduler invocations (firings), EventBridge events, SQS messages.

It prices them (``PRICES``: us-east-1, arm64, from AWS's pricing pages) and prints per size:
$ per window, $ per 100,000 equipment-checks, the floor (one write unit per missed check +
reading each performed check once, eventually consistent + one Scheduler invocation), the ratio
to the floor, and the per-equipment design (a model: see ``per_equipment_usd``).

Then the schedule and sync efficiency: firings per judged window over a year for the bundled
checklists and a corpus of common routines, Scheduler calls per effective checklist change and
per no-op stream record, and whether evaluation's own writes wake schedule-sync.

    .venv/bin/python tools/bench_cost.py                      # 10, 100, 1,000, 10,000
    .venv/bin/python tools/bench_cost.py --sizes 10,100000 --json cost.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from boto3.dynamodb.types import TypeSerializer

from missed_checks.aws.table import ChecklistTable
from missed_checks.checklists.recurrence import parse_recurrence
from missed_checks.checklists.saving import save_checklist
from missed_checks.checklists.schedule_expression import schedule_for
from missed_checks.errors import InvalidRecurrence
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks_local.clock import SimulatedClock
from missed_checks_local.embedded import embedded_aws
from missed_checks_local.runtime import LocalRuntime
from missed_checks_local.scheduler.simulated import next_fire_time
from missed_checks_local.stack import EmbeddedStack
from missed_checks_local.testing.metering import Meter, Usage, item_size

PRICES = {
    "state_transition": 0.025 / 1_000,
    "lambda_request": 0.20 / 1_000_000,
    "lambda_gb_second": 0.0000133334,  # arm64
    "write_unit": 0.625 / 1_000_000,
    "read_unit": 0.125 / 1_000_000,
    "scheduler_invocation": 1.00 / 1_000_000,
    # AWS pricing pages, us-east-1: EventBridge custom events, SQS requests.
    "event": 1.00 / 1_000_000,
    "sqs_message": 0.40 / 1_000_000,
}
RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY"
CREATED = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
WINDOW_START = datetime(2026, 3, 2, 5, 0, tzinfo=UTC)  # 06:00 Berlin
EVALUATE_AT = WINDOW_START + timedelta(hours=8, minutes=30)  # PT8H window, PT30M grace
SCHEDULE_WRITES = ("create_schedule", "update_schedule", "delete_schedule")
PER_EQUIPMENT_CALL_S = 0.1
"""Billed duration of one per-equipment Lambda call in the per-equipment model (a short call)."""

CORPUS = {
    "every day": "DTSTART;TZID=Europe/Berlin:20260105T060000\nRRULE:FREQ=DAILY",
    "working days": "DTSTART;TZID=Europe/Berlin:20260105T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
    "weekly on Monday": "DTSTART;TZID=America/New_York:20260105T080000\nRRULE:FREQ=WEEKLY;BYDAY=MO",
    "every other Monday and Friday":
        "DTSTART;TZID=Europe/Berlin:20260105T060000\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,FR",
    "monthly on the 1st": "DTSTART;TZID=Europe/London:20260101\nRRULE:FREQ=MONTHLY;BYMONTHDAY=1",
    "last Friday of the month": "DTSTART;TZID=Europe/Berlin:20260130T090000\nRRULE:FREQ=MONTHLY;BYDAY=-1FR",
    "first working day of the month":
        "DTSTART;TZID=Europe/Berlin:20260101T070000\nRRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=1",
    "quarterly": "DTSTART;TZID=Australia/Sydney:20260115T090000\nRRULE:FREQ=MONTHLY;INTERVAL=3;BYMONTHDAY=15",
    "yearly": "DTSTART;TZID=UTC:20260301\nRRULE:FREQ=YEARLY",
    "every 4 hours": "DTSTART;TZID=Asia/Tokyo:20260105T000000\nRRULE:FREQ=HOURLY;INTERVAL=4",
    "every other day": "DTSTART;TZID=Europe/Berlin:20260105T060000\nRRULE:FREQ=DAILY;INTERVAL=2",
}


@dataclass
class Run:
    equipment: int
    missed: int = 0
    state_transitions: int = 0
    lambda_invocations: Counter[str] = field(default_factory=Counter)
    lambda_gb_seconds: float = 0.0
    lambda_gb_seconds_1s: float = 0.0
    usage: Usage = field(default_factory=Usage)
    firings: int = 0
    performed_bytes: int = 0
    status: str = ""

    def usd(self, gb_seconds: float | None = None) -> float:
        return (self.state_transitions * PRICES["state_transition"]
                + sum(self.lambda_invocations.values()) * PRICES["lambda_request"]
                + (self.lambda_gb_seconds if gb_seconds is None else gb_seconds) * PRICES["lambda_gb_second"]
                + self.usage.total_write_units * PRICES["write_unit"]
                + self.usage.total_read_units * PRICES["read_unit"]
                + self.firings * PRICES["scheduler_invocation"]
                + self.usage.events_put * PRICES["event"]
                + self.usage.messages_sent * PRICES["sqs_message"])

    def floor_usd(self) -> float:
        performed_read = math.ceil(self.performed_bytes / 4096) / 2
        return (self.missed * PRICES["write_unit"] + performed_read * PRICES["read_unit"]
                + PRICES["scheduler_invocation"])

    def per_equipment_usd(self) -> float:
        """The per-equipment design, modelled from this run: one Map iteration (one state
        transition), one Lambda call (512 MB billed ``PER_EQUIPMENT_CALL_S``) and one read of its
        performed checks (half a unit) per piece of equipment, plus the same missed-check writes,
        Scheduler firing and planning/closing tasks (3 transitions, 2 calls) as this design."""
        n = self.equipment
        return ((3 + n) * PRICES["state_transition"] + (2 + n) * PRICES["lambda_request"]
                + n * 0.5 * PER_EQUIPMENT_CALL_S * PRICES["lambda_gb_second"]
                + (n * 0.5 + n * 0.5) * PRICES["read_unit"]  # its assignment and its performed checks
                + (self.missed + 3) * PRICES["write_unit"] + PRICES["scheduler_invocation"] + PRICES["event"])

    def figures(self) -> dict[str, Any]:
        checks = self.equipment
        per_100k = 100_000 / checks
        usd = self.usd()
        return {
            "equipment": self.equipment,
            "status": self.status,
            "missed_checks": self.missed,
            "state_transitions": self.state_transitions,
            "lambda_invocations": sum(self.lambda_invocations.values()),
            "lambda_invocations_by_function": dict(self.lambda_invocations),
            "lambda_gb_seconds": round(self.lambda_gb_seconds, 3),
            "lambda_gb_seconds_at_1s": round(self.lambda_gb_seconds_1s, 3),
            "write_units": self.usage.total_write_units,
            "write_units_by_operation": dict(self.usage.write_units),
            "read_units": self.usage.total_read_units,
            "read_units_by_operation": dict(self.usage.read_units),
            "scheduler_invocations": self.firings,
            "events": self.usage.events_put,
            "queue_messages": self.usage.messages_sent,
            "usd_per_window": usd,
            "usd_per_window_gb_s_at_1s": self.usd(self.lambda_gb_seconds_1s),
            "usd_per_100k": usd * per_100k,
            "floor_usd_per_100k": self.floor_usd() * per_100k,
            "ratio_to_floor": usd / self.floor_usd(),
            "per_equipment_usd_per_100k": self.per_equipment_usd() * per_100k,
            "cheaper_than_per_equipment": self.per_equipment_usd() / usd,
        }


def transitions(sfn: Any, execution_arn: str) -> int:
    """States entered plus task retries (each attempt after the first is a transition too)."""
    entered = retried = 0
    scheduled_per_state = 0
    for page in sfn.get_paginator("get_execution_history").paginate(executionArn=execution_arn):
        for event in page["events"]:
            kind = event["type"]
            if kind.endswith("StateEntered"):
                entered += 1
                scheduled_per_state = 0
            elif kind in ("LambdaFunctionScheduled", "TaskScheduled"):
                scheduled_per_state += 1
                retried += scheduled_per_state > 1
    return entered + retried


def measure(equipment: int, per_task: str | None = None) -> Run:
    run = Run(equipment=equipment)
    ids = [f"eq-{n:06d}" for n in range(equipment)]
    with embedded_aws():
        stack = EmbeddedStack.provision(parameters={"EquipmentPerTask": per_task} if per_task else None)
        with LocalRuntime(stack, SimulatedClock(CREATED)) as runtime:
            table = ChecklistTable(stack.table_name)
            save_checklist(table, "bench", recurrence=RULE, window="PT8H", grace="PT30M", now=CREATED, by="bench")
            table.assign_equipment("bench", ids, at=CREATED, by="bench")
            performed = [PerformedCheck("bench", e, WINDOW_START + timedelta(hours=1)) for e in ids[::2]]
            table.record_performed_checks(performed, recorded_at=CREATED)
            run.performed_bytes = sum(item_size({k: TypeSerializer().serialize(v) for k, v in
                                                 table.performed_check_item(c, CREATED).items()}) for c in performed)
            runtime.settle()  # schedule-sync made the schedule

            memory = {spec.logical_id: spec.memory_mb for spec in stack.functions.values()}
            observe = runtime.lambda_runtime.on_invocation

            def on_invocation(invocation: Any) -> None:
                run.lambda_invocations[invocation.function] += 1
                gb = memory[invocation.function] / 1024
                run.lambda_gb_seconds += gb * max(1.0, math.ceil(invocation.duration_ms)) / 1000
                run.lambda_gb_seconds_1s += gb
                if observe:
                    observe(invocation)

            runtime.lambda_runtime.on_invocation = on_invocation
            executions_before = len(runtime.executions)
            with Meter() as usage:
                firings = runtime.advance_to(EVALUATE_AT + timedelta(minutes=1))
            run.usage = usage
            run.firings = len(firings)
            sfn = stack.client("stepfunctions")
            new = runtime.executions[executions_before:]
            run.status = ",".join(sorted({e.status for e in new})) or "NO EXECUTION"
            run.state_transitions = sum(transitions(sfn, e.arn) for e in new)
            run.missed = len(table.missed_checks_of_checklist("bench", WINDOW_START, EVALUATE_AT))
    return run


def sync_efficiency() -> dict[str, Any]:
    """Scheduler calls per effective change and per no-op stream record; does evaluation wake
    schedule-sync?"""
    with embedded_aws():
        stack = EmbeddedStack.provision()
        with LocalRuntime(stack, SimulatedClock(CREATED)) as runtime:
            table = ChecklistTable(stack.table_name)
            calls: Counter[str] = Counter()
            previous = runtime.lambda_runtime.on_invocation

            def count(invocation: Any) -> None:
                calls[invocation.function] += 1
                if previous:
                    previous(invocation)

            runtime.lambda_runtime.on_invocation = count

            def scheduler_writes(action: Callable[[], Any]) -> tuple[int, int]:
                before = calls["ScheduleSyncFunction"]
                with Meter() as usage:
                    action()
                    runtime.settle()
                writes = sum(usage.scheduler_calls[n] for n in SCHEDULE_WRITES)
                return writes, calls["ScheduleSyncFunction"] - before

            create = scheduler_writes(lambda: save_checklist(table, "sync", recurrence=RULE, window="PT8H",
                                                                  grace="PT30M", now=CREATED, by="bench"))
            table.assign_equipment("sync", ["eq-1", "eq-2"], at=CREATED, by="bench")
            edit = scheduler_writes(lambda: save_checklist(table, "sync", recurrence=RULE, window="PT9H",
                                                                grace="PT30M", now=CREATED + timedelta(minutes=5),
                                                                by="bench"))
            no_op = scheduler_writes(lambda: save_checklist(table, "sync", recurrence=RULE, window="PT9H",
                                                                 grace="PT30M", now=CREATED + timedelta(minutes=9),
                                                                 by="bench"))
            evaluation = scheduler_writes(lambda: runtime.advance_to(EVALUATE_AT + timedelta(days=2, hours=1)))
            judged = len(table.judged_windows("sync", CREATED, EVALUATE_AT + timedelta(days=3)))
    return {
        "scheduler_calls_per_new_checklist": create[0],
        "scheduler_calls_per_effective_change": edit[0],
        "scheduler_calls_per_no_op_record": no_op[0],
        "schedule_sync_invocations_per_no_op_record": no_op[1],
        "windows_judged_by_evaluations": judged,
        "schedule_sync_invocations_woken_by_evaluations": evaluation[1],
    }


def firings_per_window(year: int = 2027) -> dict[str, Any]:
    """Per routine: Scheduler firings in ``year`` for the schedule schedule-sync would write, and
    windows judged (evaluate_at in that year)."""
    start, end = datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)
    rows = {}
    routines = {**bundled_checklists(), **{name: {"recurrence": text} for name, text in CORPUS.items()}}
    for name, rule in routines.items():
        try:
            recurrence = parse_recurrence(rule["recurrence"], window=rule.get("window"), grace=rule.get("grace"))
        except InvalidRecurrence:
            continue  # the demo's deliberately broken checklist: it never gets a schedule
        spec = schedule_for(recurrence)
        firings, at = 0, start
        while (at := next_fire_time(spec.expression, spec.timezone, at, start=spec.start_date,
                                    end=spec.end_date)) is not None and at < end:
            firings += 1
        windows = sum(1 for w in recurrence.windows(start - timedelta(days=400), end + timedelta(days=400))
                      if start <= w.evaluate_at < end)
        rows[name] = {"expression": spec.expression, "exact": spec.exact, "firings": firings,
                      "windows": windows, "firings_per_window": round(firings / windows, 3) if windows else None}
    total_firings = sum(r["firings"] for r in rows.values())
    total_windows = sum(r["windows"] for r in rows.values())
    return {"year": year, "routines": rows, "firings": total_firings, "windows": total_windows,
            "firings_per_window": round(total_firings / total_windows, 3)}


def bundled_checklists() -> dict[str, dict[str, str]]:
    """The demo scenario's checklists (the bundled ones): recurrence, window, grace."""
    scenario = Path(__file__).resolve().parents[1] / "src" / "missed_checks_local" / "scenarios" / "demo.json"
    return {f"demo: {put['id']}": {k: put[k] for k in ("recurrence", "window", "grace") if put.get(k)}
            for event in json.loads(scenario.read_text())["events"] if (put := event.get("put_checklist"))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10,100,1000,10000",
                        help="comma-separated fleet sizes (default 10,100,1000,10000; 100000 on request)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--sizes: whole numbers separated by commas, got {args.sizes!r}")
    if not sizes or min(sizes) < 1:
        parser.error("--sizes: at least one fleet size, each 1 or more")

    results = []
    print(f"{'equipment':>10} {'transitions':>11} {'lambda':>6} {'GB-s':>7} {'WRU':>8} {'RRU':>7} "
          f"{'$/window':>10} {'$/100k':>8} {'floor':>8} {'ratio':>6} {'per-eq':>8} {'cheaper':>8}")
    for size in sizes:
        figures = measure(size).figures()
        results.append(figures)
        print(f"{size:>10,} {figures['state_transitions']:>11} {figures['lambda_invocations']:>6} "
              f"{figures['lambda_gb_seconds']:>7.2f} {figures['write_units']:>8.0f} {figures['read_units']:>7.1f} "
              f"{figures['usd_per_window']:>10.6f} {figures['usd_per_100k']:>8.3f} "
              f"{figures['floor_usd_per_100k']:>8.3f} {figures['ratio_to_floor']:>6.2f} "
              f"{figures['per_equipment_usd_per_100k']:>8.2f} {figures['cheaper_than_per_equipment']:>7.0f}x"
              + ("" if figures["status"] == "SUCCEEDED" else f"  ({figures['status']})"), flush=True)
    for figures in results:
        print(f"\n{figures['equipment']:,} equipment: writes {figures['write_units_by_operation']}"
              f"\n  reads {figures['read_units_by_operation']}"
              f"\n  lambda {figures['lambda_invocations_by_function']}, GB-s at 1 s per call "
              f"{figures['lambda_gb_seconds_at_1s']} (${figures['usd_per_window_gb_s_at_1s']:.6f}/window), "
              f"events {figures['events']}, queue messages {figures['queue_messages']}")

    sync = sync_efficiency()
    print("\nschedule-sync:", ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in sync.items()))
    year = firings_per_window()
    print(f"\nfirings per judged window in {year['year']} ({year['firings']} firings, {year['windows']} windows): "
          f"{year['firings_per_window']}")
    for name, row in year["routines"].items():
        print(f"  {name:<36} {row['expression']:<40} exact={str(row['exact']):<5} "
              f"{row['firings']:>5} firings {row['windows']:>5} windows  {row['firings_per_window']}")
    if args.json:  # one object per size; the efficiency figures beside it
        path = Path(args.json)
        path.write_text(json.dumps(results, indent=2) + "\n")
        path.with_name(f"{path.stem}-efficiency.json").write_text(json.dumps({"sync": sync, "firings": year},
                                                                              indent=2) + "\n")
    return 0 if all(f["status"] == "SUCCEEDED" for f in results) else 1


if __name__ == "__main__":
    from missed_checks_local.product.application import install

    install()  # as the local commands do: patch 5i, and the product registered with the emulator
    sys.exit(main())
