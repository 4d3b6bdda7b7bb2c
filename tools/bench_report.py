"""Benchmark of the fleet report (not a test): a year of daily checks for 10,000 equipment.

Provisions template.yaml into an in-process moto (the local stack), loads one daily checklist
(06:00-14:00 Europe/Berlin, 30 min grace) with N equipment and D days of performed checks,
missed checks (items built by the product's own item builders) and judged-window records (as
CloseWindow writes them), then times
``missed_checks.reporting.fleet_report.build_report`` reading it back through the DynamoDB API. Prints the
time, the DynamoDB requests (counted with a botocore event hook), items and bytes read, and
checks the totals against the generator's own tally.

moto cannot hold this volume as it is: every Query sorts *every item of the table* and deep-copies
each page, so one page of a 3.65-million-item table takes seconds, and loading through
BatchWriteItem costs ~0.3 ms an item. So by default the bench (1) writes the items straight into
moto's table storage (``--via-api`` uses BatchWriteItem instead), and (2) serves main-table
Queries from each partition's sort keys with a bisect, keeping moto's own 1 MB page limit, item
sizes, projection and LastEvaluatedKey (``--plain-moto`` turns this off). Requests and items read
are what DynamoDB would serve; the time is dominated by the client (botocore parsing, the report).

    .venv/bin/python tools/bench_report.py                      # 10,000 equipment x 365 days
    .venv/bin/python tools/bench_report.py --equipment 500 --days 60 --via-api --plain-moto
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from bisect import bisect_left, bisect_right
from collections import Counter
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

from missed_checks import clock
from missed_checks.aws.table import ChecklistTable, keys, serialize
from missed_checks.aws.table.windows import judged_window_fields, missed_check_item
from missed_checks.checklists.saving import save_checklist
from missed_checks.evaluation.missed_check import MissedCheck
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks.reporting.fleet_report import build_report
from missed_checks.timefmt import to_utc_iso
from missed_checks_local.embedded import embedded_aws
from missed_checks_local.stack import EmbeddedStack

CHECKLIST = "bench-daily"
RECURRENCE = "DTSTART;TZID=Europe/Berlin:20250101T060000\nRRULE:FREQ=DAILY"
FIRST_DAY = datetime(2025, 1, 1, tzinfo=UTC)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--equipment", type=int, default=10_000)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--via-api", action="store_true", help="load with BatchWriteItem (slow at full size)")
    parser.add_argument("--plain-moto", action="store_true", help="moto's own Query (impractical at full size)")
    args = parser.parse_args(argv)

    with embedded_aws():
        stack = EmbeddedStack.provision()
        dynamodb = stack.client("dynamodb")
        table = ChecklistTable(stack.table_name, dynamodb)
        end = FIRST_DAY + timedelta(days=args.days)
        now = end + timedelta(days=1)
        clock.set_source(lambda: now)
        try:
            started = time.perf_counter()
            truth, items = load(table, stack, args, end)
            load_s = time.perf_counter() - started
            print(f"loaded {items:,} items ({args.equipment:,} equipment x {args.days} days) in {load_s:.1f} s"
                  f" ({'BatchWriteItem' if args.via_api else 'straight into moto storage'})")

            calls: Counter[str] = Counter()
            received = Counter()

            def count(model: Any, **_: Any) -> None:
                calls[model.name] += 1

            def size(parsed: Any, model: Any, **_: Any) -> None:
                received["items"] += len(parsed.get("Items") or [])

            dynamodb.meta.events.register("before-call.dynamodb.*", count)
            dynamodb.meta.events.register("after-call.dynamodb.Query", size)
            if not args.plain_moto:
                dynamodb.meta.events.register("before-call.dynamodb.Query", in_process_query(stack))
            with fast_queries(enabled=not args.plain_moto):
                started = time.perf_counter()
                report = build_report(table, FIRST_DAY, end, now=now)
                report_s = time.perf_counter() - started
        finally:
            clock.set_source(None)

    fleet = report.total
    print(f"report: {report_s:.2f} s for {len(report.rows):,} rows; DynamoDB requests: "
          + ", ".join(f"{n:,} {op}" for op, n in sorted(calls.items()))
          + f" ({sum(calls.values()):,} in all, {received['items']:,} items returned)")
    print(f"fleet total: expected {fleet.expected:,}, on time {fleet.on_time:,}, late {fleet.late:,}, "
          f"missed {fleet.missed:,}, dismissed {fleet.dismissed:,}, compliance {fleet.compliance:.2f}%")
    got = {k: getattr(fleet, k) for k in truth}
    if got != dict(truth):
        print(f"MISMATCH with the generator's tally: {dict(truth)}", file=sys.stderr)
        return 1
    print("totals match the generator's own tally")
    return 0


def load(table: ChecklistTable, stack: EmbeddedStack, args: argparse.Namespace,
         end: datetime) -> tuple[Counter[str], int]:
    created = FIRST_DAY - timedelta(days=1)
    checklist = save_checklist(table, CHECKLIST, recurrence=RECURRENCE, window="PT8H", grace="PT30M", now=created,
                               by="bench")
    windows = checklist.parsed().windows(FIRST_DAY, end)
    table.advance_watermark(CHECKLIST, windows[-1].end)
    equipment = [f"FL-{n:05d}" for n in range(args.equipment)]
    table.assign_equipment(CHECKLIST, equipment, created, by="bench")
    rng = random.Random(args.seed)
    truth: Counter[str] = Counter()
    judged_by = checklist.judged_by()
    batch: list[dict[str, Any]] = []
    put = _api_writer(table) if args.via_api else _storage_writer(stack)
    count = 0
    for window in windows:
        judged = Counter[str]()
        length = (window.end - window.start).total_seconds()
        for equipment_id in equipment:
            roll = rng.random()
            if roll < 0.85:
                at = window.start + timedelta(seconds=rng.uniform(0, length - 1))
                truth["on_time"] += 1
                judged["performed"] += 1
            elif roll < 0.90:
                at = window.end + timedelta(seconds=rng.uniform(0, 1799))
                truth["late"] += 1
                judged["performed"] += 1
            else:
                item = missed_check_item(MissedCheck(checklist_id=CHECKLIST, equipment_id=equipment_id, window=window,
                                                     judged_at=window.evaluate_at, execution="bench"))
                if roll > 0.99:
                    item["dismissal"] = {"reason": "bench", "by": "bench", "at": "2026-01-01T00:00:00Z"}
                    truth["dismissed"] += 1
                else:
                    truth["missed"] += 1
                batch.append(item)
                judged["missed"] += 1
                continue
            batch.append(table.performed_check_item(PerformedCheck(CHECKLIST, equipment_id, at), at))
            if len(batch) >= 10_000:
                count += put(batch)
                batch = []
        # The evaluation's record of the judged window (as CloseWindow writes it): the report takes
        # its past windows from these.
        batch.append(judged_window_item(window, len(equipment), judged, judged_by))
    count += put(batch)
    truth["expected"] = truth["on_time"] + truth["late"] + truth["missed"] + truth["dismissed"]
    return truth, count


def judged_window_item(window: Any, counted: int, judged: Counter[str], judged_by: dict[str, Any]) -> dict[str, Any]:
    start = to_utc_iso(window.start)
    return {**keys.judged_window_key(CHECKLIST, start), **judged_window_fields(CHECKLIST, window, judged_by),
            "equipment_counted": counted, "performed": judged["performed"],
            "missed": judged["missed"], "newly_recorded": judged["missed"], "execution": "bench",
            "judged_at": to_utc_iso(window.evaluate_at), "announced": True}


def _api_writer(table: ChecklistTable) -> Any:
    def put(items: list[dict[str, Any]]) -> int:
        table.batch_write([{"PutRequest": {"Item": serialize(item)}} for item in items])
        return len(items)

    return put


def _storage_writer(stack: EmbeddedStack) -> Any:
    """Put items into moto's table storage as its PutItem would (an Item under its keys), without
    the request/response round trip and PutItem's validation (~0.45 ms an item)."""
    from moto.dynamodb.models import dynamodb_backends
    from moto.dynamodb.models.dynamo_type import DynamoType, Item

    moto_table = dynamodb_backends[stack.account_id][stack.region].get_table(stack.table_name)

    def put(items: list[dict[str, Any]]) -> int:
        for item in items:
            attrs = serialize(item)
            hash_key, range_key = DynamoType(attrs["pk"]), DynamoType(attrs["sk"])
            moto_table.items[hash_key][range_key] = Item(hash_key, range_key, attrs)
        return len(items)

    return put


def in_process_query(stack: EmbeddedStack) -> Any:
    """A botocore hook answering Query from moto's backend in this process, parsed the way moto's
    own handler parses it, skipping moto's HTTP response serializer (about 0.7 ms an item)."""
    from botocore.awsrequest import AWSResponse
    from moto.dynamodb.models import dynamodb_backends
    from moto.dynamodb.parsing.key_condition_expression import parse_expression
    from moto.dynamodb.responses import ProjectionExpressionParser

    backend = dynamodb_backends[stack.account_id][stack.region]

    def handler(params: Any, model: Any, **_: Any) -> Any:
        body = params["body"] if isinstance(params.get("body"), dict) else None
        if body is None:
            import json

            body = json.loads(params["body"])
        if body.get("FilterExpression") or body.get("Limit") or body.get("ScanIndexForward") is False:
            return None  # not the shape served here: moto handles it
        names = body.get("ExpressionAttributeNames", {})
        table = backend.get_table(body["TableName"])
        hash_conditions, range_conditions, _ = parse_expression(
            key_condition_expression=body["KeyConditionExpression"], expression_attribute_names=names,
            expression_attribute_values=body.get("ExpressionAttributeValues", {}),
            schema=backend.get_schema(table_name=table.name, index_name=body.get("IndexName")))
        projection = ProjectionExpressionParser(body.get("ProjectionExpression"), names).parse()
        from moto.dynamodb.models.dynamo_type import DynamoType

        comparison, values = (range_conditions[-1][1], range_conditions[-1][2]) if range_conditions else (None, [])
        items, scanned, last = table.query(
            DynamoType(hash_conditions[0][1]), comparison, [DynamoType(v) for v in values], None,
            body.get("ExclusiveStartKey"), True, projection, body.get("IndexName"))
        parsed: dict[str, Any] = {
            "Items": [item.to_json()["Attributes"] for item in items],
            "Count": len(items), "ScannedCount": scanned,
            "ResponseMetadata": {"HTTPStatusCode": 200, "HTTPHeaders": {}, "RetryAttempts": 0},
        }
        if last:
            parsed["LastEvaluatedKey"] = {k: v.to_json() if hasattr(v, "to_json") else v for k, v in last.items()}
        return AWSResponse(params.get("url", ""), 200, {}, None), parsed

    return handler


def _key_attributes(table: Any, index_name: str | None) -> tuple[str, str]:
    if index_name is None:
        return table.hash_key_attr, table.range_key_attr
    schema = table.get_index(index_name).schema
    return (next(k["AttributeName"] for k in schema if k["KeyType"] == "HASH"),
            next(k["AttributeName"] for k in schema if k["KeyType"] == "RANGE"))


def _sorted_partitions(table: Any, index_name: str | None) -> dict[str, tuple[list[str], list[Any]]]:
    """partition key -> (sorted sort keys, items in that order), for the table or one of its indexes."""
    hash_attr, range_attr = _key_attributes(table, index_name)
    grouped: dict[str, list[tuple[str, Any]]] = {}
    for items in table.items.values():
        for item in items.values():
            hash_key, range_key = item.attrs.get(hash_attr), item.attrs.get(range_attr)
            if hash_key is not None and range_key is not None:
                grouped.setdefault(hash_key.value, []).append((range_key.value, item))
    built = {}
    for key, pairs in grouped.items():
        pairs.sort(key=lambda pair: pair[0])
        built[key] = ([p[0] for p in pairs], [p[1] for p in pairs])
    return built


@contextmanager
def fast_queries(enabled: bool = True) -> Any:
    """Serve simple Queries (equality on the partition key, optionally BETWEEN / begins_with on the
    sort key, no filter, forward), on the table or an index, from each partition's sorted sort keys;
    anything else goes to moto. The data is loaded before the report runs, so the sorted partitions
    are built once (and rebuilt should the table's item count change)."""
    from moto.dynamodb.models.table import RESULT_SIZE_LIMIT, Table

    original = Table.query
    partitions: dict[tuple[int, str | None], tuple[int, dict[str, tuple[list[str], list[Any]]]]] = {}

    def partition(table: Any, index_name: str | None, hash_value: str) -> tuple[list[str], list[Any]]:
        size = sum(len(items) for items in table.items.values())
        cached = partitions.get((id(table), index_name))
        if cached is None or cached[0] != size:
            cached = (size, _sorted_partitions(table, index_name))
            partitions[(id(table), index_name)] = cached
        return cached[1].get(hash_value, ([], []))

    def query(self: Any, hash_key: Any, range_comparison: Any, range_objs: Any, limit: Any,
              exclusive_start_key: Any, scan_index_forward: bool, projection_expressions: Any,
              index_name: Any = None, consistent_read: bool = False, filter_expression: Any = None,
              **kwargs: Any) -> Any:
        extra = {k: v for k, v in kwargs.items() if k not in ("hash_key_conditions", "range_key_conditions")}
        no_filter = filter_expression is None or type(filter_expression).__name__ == "OpDefault"
        simple = (no_filter and scan_index_forward and not limit and not extra
                  and range_comparison in (None, "BETWEEN", "BEGINS_WITH") and hash_key is not None
                  and hash_key.type == "S")
        if not simple:
            return original(self, hash_key, range_comparison, range_objs, limit, exclusive_start_key,
                            scan_index_forward, projection_expressions, index_name, consistent_read,
                            filter_expression, **kwargs)
        keys, items = partition(self, index_name, hash_key.value)
        low, high = 0, len(keys)
        if range_comparison == "BETWEEN":
            low, high = bisect_left(keys, range_objs[0].value), bisect_right(keys, range_objs[1].value)
        elif range_comparison == "BEGINS_WITH":
            prefix = range_objs[0].value
            low, high = bisect_left(keys, prefix), bisect_left(keys, prefix + "\U0010ffff")
        if exclusive_start_key:  # our keys are unique per partition, in the table and in both indexes
            range_attr = _key_attributes(self, index_name)[1]
            low = max(low, bisect_right(keys, exclusive_start_key[range_attr]["S"]))
        results, size, last = [], 0, None
        for position in range(low, high):
            item = items[position]
            item_size = item.size()
            if size + item_size > RESULT_SIZE_LIMIT:
                last = self._get_last_evaluated_key(results[-1], index_name)
                break
            results.append(item)
            size += item_size
        scanned = len(results)
        if projection_expressions:
            results = [item.project(projection_expressions) for item in results]
        return results, scanned, last

    if enabled:
        Table.query = query
    try:
        yield
    finally:
        Table.query = original


if __name__ == "__main__":
    from missed_checks_local.product.application import install

    install()  # as the local commands do: patch 5i, and the product registered with the emulator
    sys.exit(main())
