"""What a run on the embedded AWS consumed, counted the way AWS bills it.

:class:`Meter` wraps moto's in-process backends while it is active, so it sees every call, whoever
makes it (the functions' workers through the loopback endpoint, the state machine's tasks, the
scheduler, the tools), and counts:

- DynamoDB **write request units** per operation and per table or index: ``ceil(size / 1 KB)`` of
  the larger of the item before and after the write (a conditional write that fails still pays
  for the item it would have written), plus the same again for every global secondary index the
  item is in before or after (projection ALL: the whole item is copied);
- DynamoDB **read request units**: per Query or GetItem call, ``ceil(bytes read / 4 KB)``, half
  for an eventually consistent read; per BatchGetItem item, the same for each item;
- EventBridge entries put, SQS messages sent, Scheduler API calls (by operation);
- DynamoDB **write units per partition key per second** (:attr:`Usage.partition_writes`), of the
  table and of each index (an index's partitions take at most 1,000 write units a second too): a
  partition takes at most 1,000 write units a second on AWS, so :meth:`Usage.hottest_partition`
  says whether a write burst would be throttled there. The second is the meter's ``clock``'s
  (:func:`time.time` unless given): with a simulated clock that stands still, a whole burst counts in
  one second, the most any partition could be asked for however fast AWS wrote it.

Item sizes follow DynamoDB's rules (attribute names plus values; numbers about one byte per two
digits; see :func:`item_size`). Lambda, Step Functions and Scheduler firings are counted by the
local runtime and the execution histories, not here.
"""

from __future__ import annotations

import math
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from moto.dynamodb.exceptions import ConditionalCheckFailed
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.responses import DynamoHandler
from moto.events.models import EventsBackend
from moto.scheduler.models import EventBridgeSchedulerBackend
from moto.sqs.models import SQSBackend

_request = threading.local()


@dataclass
class Usage:
    """What was consumed while a :class:`Meter` was active."""

    write_units: defaultdict[str, float] = field(default_factory=lambda: defaultdict(int))
    """``"<Operation> <table or index>"`` -> write request units."""
    read_units: defaultdict[str, float] = field(default_factory=lambda: defaultdict(int))
    """``"<Operation> <table or index>"`` -> read request units."""
    events_put: int = 0
    messages_sent: int = 0
    scheduler_calls: Counter[str] = field(default_factory=Counter)
    partition_writes: Counter[tuple[str, str, int]] = field(default_factory=Counter)
    """``(table or "<table>/index/<index>", partition key, second)`` -> write request units."""

    @property
    def total_write_units(self) -> float:
        return float(sum(self.write_units.values()))

    @property
    def total_read_units(self) -> float:
        return float(sum(self.read_units.values()))

    def hottest_partition(self) -> PartitionSecond | None:
        """The partition key (of the table or an index) that took the most write units in one second
        of the meter's clock, and how many; None when nothing was written."""
        if not self.partition_writes:
            return None
        (where, key, second), units = max(self.partition_writes.items(), key=lambda entry: (entry[1], entry[0]))
        return PartitionSecond(where, key, second, units)

    def partition_keys_written(self, where: str, prefix: str = "") -> Counter[str]:
        """Write units per partition key of ``where`` (a table, or ``<table>/index/<index>``) whose key
        starts with ``prefix``, over the whole run."""
        written: Counter[str] = Counter()
        for (place, key, _), units in self.partition_writes.items():
            if place == where and key.startswith(prefix):
                written[key] += units
        return written


@dataclass(frozen=True)
class PartitionSecond:
    """The write units one partition key took in one second (:meth:`Usage.hottest_partition`)."""

    where: str
    """The table, or ``<table>/index/<index>``."""
    key: str
    second: int
    units: int


def item_size(attributes: Mapping[str, Any]) -> int:
    """An item's size in bytes as DynamoDB counts it, from its DynamoDB JSON (``{"S": ...}``)."""
    return sum(len(name.encode()) + _value_size(value) for name, value in attributes.items())


def _value_size(value: Mapping[str, Any]) -> int:
    (kind, content), = value.items()
    if kind == "S":
        return len(str(content).encode())
    if kind == "N":
        digits = str(Decimal(str(content)).normalize()).lstrip("-").replace(".", "").lstrip("0") or "0"
        return math.ceil(len(digits) / 2) + 1
    if kind == "B":
        return len(content) if isinstance(content, bytes) else math.ceil(len(str(content)) * 3 / 4)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "M":
        return 3 + sum(len(k.encode()) + _value_size(v) + 1 for k, v in content.items())
    if kind == "L":
        return 3 + sum(_value_size(v) + 1 for v in content)
    if kind in ("SS", "NS", "BS"):
        return sum(_value_size({kind[0]: v}) for v in content)
    raise ValueError(f"unknown DynamoDB type {kind}")


def _size(item: Any) -> int:
    """Size of a moto Item (or None: 0)."""
    return item_size(item.to_json()["Attributes"]) if item is not None else 0


def _write_units(size: int) -> int:
    return max(1, math.ceil(size / 1024))


def _read_units(size: int, consistent: bool) -> float:
    units = max(1, math.ceil(size / 4096))
    return float(units) if consistent else units / 2


class Meter:
    """Counts what the embedded AWS is asked to do while active (``with Meter() as usage:``)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        """``clock``: the seconds (a POSIX timestamp) that :attr:`Usage.partition_writes` counts by."""
        self.usage = Usage()
        self._clock = clock
        self._lock = threading.Lock()
        self._saved: list[tuple[type, str, Any]] = []

    def __enter__(self) -> Usage:
        self._wrap(DynamoHandler, "call_action", self._remember_request)
        for name in ("put_item", "update_item", "delete_item"):
            self._wrap(DynamoDBBackend, name, self._metered_write(name))
        self._wrap(DynamoDBBackend, "query", self._metered_query)
        self._wrap(DynamoDBBackend, "get_item", self._metered_get)
        self._wrap(EventsBackend, "put_events", self._counted("events_put", lambda args: len(args[0])))
        self._wrap(SQSBackend, "send_message", self._counted("messages_sent", lambda args: 1))
        self._wrap(SQSBackend, "send_message_batch", self._counted("messages_sent", lambda args: len(args[1])))
        for name in ("create_schedule", "update_schedule", "delete_schedule", "get_schedule"):
            self._wrap(EventBridgeSchedulerBackend, name, self._scheduler_call(name))
        return self.usage

    def __exit__(self, *exc: object) -> None:
        for owner, name, original in reversed(self._saved):
            setattr(owner, name, original)
        self._saved.clear()

    # -- plumbing ---------------------------------------------------------------------------------
    def _wrap(self, owner: type, name: str, make: Any) -> None:
        original = getattr(owner, name)
        self._saved.append((owner, name, original))
        setattr(owner, name, make(original))

    @staticmethod
    def _remember_request(original: Any) -> Any:
        """The operation being served on this thread (GetItem, BatchGetItem, ...) and its parameters."""
        def call_action(handler: Any) -> Any:
            _request.operation = handler._get_action()  # moto's own name for the operation
            _request.body = getattr(handler, "params", None) or {}
            try:
                return original(handler)
            finally:
                _request.operation, _request.body = "", {}
        return call_action

    def _add(self, counter: defaultdict[str, float], key: str, units: float) -> None:
        with self._lock:
            counter[key] += units

    def _counted(self, attribute: str, how_many: Any) -> Any:
        def wrapper(original: Any) -> Any:
            def call(backend: Any, *args: Any, **kwargs: Any) -> Any:
                with self._lock:
                    setattr(self.usage, attribute, getattr(self.usage, attribute) + how_many(args))
                return original(backend, *args, **kwargs)
            return call
        return wrapper

    def _scheduler_call(self, name: str) -> Any:
        def wrapper(original: Any) -> Any:
            def call(backend: Any, *args: Any, **kwargs: Any) -> Any:
                with self._lock:
                    self.usage.scheduler_calls[name] += 1
                return original(backend, *args, **kwargs)
            return call
        return wrapper

    # -- DynamoDB ---------------------------------------------------------------------------------
    def _metered_write(self, name: str) -> Any:
        operation = {"put_item": "PutItem", "update_item": "UpdateItem", "delete_item": "DeleteItem"}[name]

        def wrapper(original: Any) -> Any:
            def write(backend: Any, table_name: str, *args: Any, **kwargs: Any) -> Any:
                table = backend.get_table(table_name)
                key_attrs = args[0] if args else kwargs.get("item_attrs") or kwargs.get("key")
                before = _existing(backend, table, key_attrs)
                label = getattr(_request, "operation", "") or operation
                if label not in ("BatchWriteItem", "TransactWriteItems"):
                    label = operation
                try:
                    result = original(backend, table_name, *args, **kwargs)
                except ConditionalCheckFailed:
                    attempted = item_size(args[0]) if operation == "PutItem" and args else _size(before)
                    self._add(self.usage.write_units, f"{label} {table_name}", _write_units(attempted))
                    self._partition_write(table_name, _hash_key(backend, table, key_attrs), int(self._clock()),
                                          _write_units(attempted))
                    raise
                after = None if operation == "DeleteItem" else _existing(backend, table, key_attrs)
                units = _write_units(max(_size(before), _size(after)))
                self._add(self.usage.write_units, f"{label} {table_name}", units)
                second = int(self._clock())
                written = after if after is not None else before
                if written is not None:
                    self._partition_write(table_name, _attribute(written, table.hash_key_attr), second, units)
                for index in table.global_indexes:
                    for version in {id(v): v for v in (before, after) if v is not None and _in(index, v)}.values():
                        units = _write_units(_size(version))
                        self._add(self.usage.write_units, f"{label} {table_name}/index/{index.name}", units)
                        self._partition_write(f"{table_name}/index/{index.name}",
                                              _attribute(version, index.schema[0]["AttributeName"]), second, units)
                return result
            return write
        return wrapper

    def _partition_write(self, where: str, key: str, second: int, units: int) -> None:
        with self._lock:
            self.usage.partition_writes[(where, key, second)] += units

    def _metered_query(self, original: Any) -> Any:
        def query(backend: Any, table_name: str, *args: Any, **kwargs: Any) -> Any:
            items, scanned, last = original(backend, table_name, *args, **kwargs)
            table = backend.get_table(table_name)
            index = kwargs.get("index_name")
            consistent = bool(kwargs.get("consistent_read"))
            size = sum(_size(table.get_item(item.hash_key, item.range_key)) for item in items)
            where = f"{table_name}/index/{index}" if index else table_name
            self._add(self.usage.read_units, f"Query {where}", _read_units(size, consistent))
            return items, scanned, last
        return query

    def _metered_get(self, original: Any) -> Any:
        def get(backend: Any, table_name: str, *args: Any, **kwargs: Any) -> Any:
            item = original(backend, table_name, *args, **kwargs)
            operation = getattr(_request, "operation", "") or "GetItem"
            body = getattr(_request, "body", {}) or {}
            if operation == "BatchGetItem":
                consistent = bool(body.get("RequestItems", {}).get(table_name, {}).get("ConsistentRead"))
                if item is not None:  # BatchGetItem pays per item found
                    self._add(self.usage.read_units, f"BatchGetItem {table_name}",
                              _read_units(_size(item), consistent))
            elif operation == "GetItem":
                self._add(self.usage.read_units, f"GetItem {table_name}",
                          _read_units(_size(item), bool(body.get("ConsistentRead"))))
            return item
        return get


def _existing(backend: Any, table: Any, attributes: Mapping[str, Any] | None) -> Any:
    if not attributes:
        return None
    try:
        hash_key, range_key = backend.get_keys_value(table, attributes)
        return table.get_item(hash_key, range_key)
    except Exception:  # a malformed key fails in the real call, which reports it
        return None


def _hash_key(backend: Any, table: Any, attributes: Mapping[str, Any] | None) -> str:
    """The partition key's value in a request's key or item (DynamoDB JSON), as text."""
    try:
        hash_key, _ = backend.get_keys_value(table, attributes or {})
        return str(hash_key.value)
    except Exception:  # a malformed key fails in the real call, which reports it
        return ""


def _attribute(item: Any, name: str) -> str:
    """An attribute of a moto Item as text (its partition key's value)."""
    value = item.attrs.get(name)
    return "" if value is None else str(value.value)


def _in(index: Any, item: Any) -> bool:
    return all(element["AttributeName"] in item.attrs for element in index.schema)

