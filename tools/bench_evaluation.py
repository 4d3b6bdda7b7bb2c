"""Benchmark: one evaluation of a large fleet on the embedded AWS (not a test).

Provisions template.yaml in moto, assigns N pieces of equipment to one checklist, records a
performed check for every other one, runs the real state machine for one window (or several)
and prints what matters for the 256 KiB payload and 25,000 history-event limits:

    .venv/bin/python tools/bench_evaluation.py --equipment 10000 --windows 1

Figures: wall time, history events, the largest state input/output, missed checks written, and
the write units of the hottest partition key in one second (DynamoDB takes at most 1,000 a second
on one partition), metered (``missed_checks_local.testing.metering.Meter``) by the simulated clock,
which stands still through the run: each phase's whole burst counts in one second, the most AWS
could be asked for however fast it wrote. moto is far slower than DynamoDB, so the wall time says
little about AWS; the event count, payload sizes and writes per key are what AWS would see too.
"""

from __future__ import annotations

import argparse
import json
import time
from datetime import UTC, datetime, timedelta

from missed_checks import clock
from missed_checks.aws.table import ChecklistTable
from missed_checks.checklists.saving import save_checklist
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks_local.awslambda.runtime import LambdaRuntime
from missed_checks_local.embedded import embedded_aws
from missed_checks_local.stack import EmbeddedStack
from missed_checks_local.testing.metering import Meter, PartitionSecond

RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY"
CREATED = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
FIRST_START = datetime(2026, 3, 2, 5, 0, tzinfo=UTC)


def history(sfn, execution_arn: str) -> list[dict]:
    events, token = [], None
    while True:
        page = sfn.get_execution_history(executionArn=execution_arn, maxResults=1000,
                                         **({"nextToken": token} if token else {}))
        events.extend(page["events"])
        token = page.get("nextToken")
        if not token:
            return events


def largest_payload(events: list[dict]) -> tuple[int, str]:
    largest, where = 0, ""
    for event in events:
        for key, details in event.items():
            if not key.endswith("EventDetails") or not isinstance(details, dict):
                continue
            for field in ("input", "output"):
                size = len(str(details.get(field) or "").encode())
                if size > largest:
                    largest, where = size, f"{event['type']} {details.get('name', '')}".strip()
    return largest, where


def hottest(found: PartitionSecond | None) -> str:
    """The hottest partition key's write units in its busiest second, and which key it was."""
    if found is None:
        return f"{0:>10,} writes/s"
    over = "  OVER DynamoDB's 1,000 a partition" if found.units > 1_000 else ""
    return f"{found.units:>10,} writes/s (limit 1,000) on {found.key} ({found.where}){over}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--equipment", type=int, default=10_000)
    parser.add_argument("--windows", type=int, default=1, help="daily windows judged in the one execution")
    args = parser.parse_args()

    with embedded_aws():
        stack = EmbeddedStack.provision()
        with LambdaRuntime(stack, keep_invocations=False) as runtime:
            stack.lambda_runtime = runtime
            instant = FIRST_START + timedelta(days=args.windows - 1, hours=9)
            clock.set_source(lambda: instant)
            table = ChecklistTable(stack.table_name)
            save_checklist(table, "bench", recurrence=RULE, window="PT8H", grace="PT30M", now=CREATED, by="bench")
            equipment = [f"eq-{n:06d}" for n in range(args.equipment)]
            simulated_second = instant.timestamp
            loaded = time.perf_counter()
            with Meter(clock=simulated_second) as assigning:
                table.assign_equipment("bench", equipment, at=CREATED, by="bench")
            checks = [PerformedCheck("bench", e, FIRST_START + timedelta(days=d, hours=1))
                      for d in range(args.windows) for e in equipment[::2]]
            with Meter(clock=simulated_second) as recording:
                table.record_performed_checks(checks, recorded_at=CREATED)
            loaded = time.perf_counter() - loaded

            sfn = stack.client("stepfunctions")
            started = time.perf_counter()
            with Meter(clock=simulated_second) as evaluating:
                execution_input = {"checklist_id": "bench", "instant": instant.strftime("%Y-%m-%dT%H:%M:%SZ")}
                arn = sfn.start_execution(stateMachineArn=stack.state_machine_arn, name="bench",
                                          input=json.dumps(execution_input))["executionArn"]
                while (described := sfn.describe_execution(executionArn=arn))["status"] == "RUNNING":
                    time.sleep(0.2)
            elapsed = time.perf_counter() - started
            events = history(sfn, arn)
            size, where = largest_payload(events)
            missed = len(table.missed_checks_of_checklist("bench", CREATED, instant))
            clock.set_source(None)

    print(f"equipment                 {args.equipment:>10,}")
    print(f"windows judged            {args.windows:>10,}")
    print(f"status                    {described['status']:>10}")
    print(f"load time (moto)          {loaded:>9.1f} s")
    print(f"evaluation time (moto)    {elapsed:>9.1f} s")
    print(f"history events            {len(events):>10,}   (limit 25,000)")
    print(f"largest state payload     {size:>10,} B (limit 262,144) at {where}")
    expected = args.windows * (args.equipment - len(equipment[::2]))
    print(f"missed checks written     {missed:>10,}   (expected {expected:,})")
    print("hottest partition key, simulated clock standing still (a phase's whole burst in one second):")
    print(f"  evaluation              {hottest(evaluating.hottest_partition())}")
    print(f"  recording checks        {hottest(recording.hottest_partition())}")
    print(f"  assigning equipment     {hottest(assigning.hottest_partition())}")


if __name__ == "__main__":
    from missed_checks_local.product.application import install

    install()  # as the local commands do: patch 5i, and the product registered with the emulator
    main()
