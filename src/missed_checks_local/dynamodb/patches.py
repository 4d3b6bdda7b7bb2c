"""The emulator's patches of moto's DynamoDB and DynamoDB Streams (the data plane under load).

Each patch names its upstream candidate. Checked against moto 5.2.1 (5g: 5.2.5). Nothing here runs
at import: :func:`missed_checks_local.patches.install_data_plane` installs them.
"""

from __future__ import annotations

import base64
import calendar
import contextvars
import functools
import json
import threading
from datetime import datetime
from typing import Any

__all__ = ["atomic_writes", "item_reads_as_json", "partition_queries", "reads_create_nothing", "stream_records_as_json"]

_WRITES = threading.RLock()


def atomic_writes() -> None:
    """Patch 1: ``DynamoDBBackend.put_item``/``update_item``/``delete_item``/``transact_write_items``
    under one lock. DynamoDB checks a write's condition and applies it atomically; moto does not, so
    two requests served at once could both pass a condition.

    Upstream candidate (moto, ``dynamodb/models``): a backend-level lock around conditional writes."""
    from moto.dynamodb.models import DynamoDBBackend  # deferred: moto is a dev dependency and slow to import

    def atomic(write: Any) -> Any:
        @functools.wraps(write)
        def locked(*args: Any, **kwargs: Any) -> Any:
            with _WRITES:
                return write(*args, **kwargs)
        return locked

    for name in ("put_item", "update_item", "delete_item", "transact_write_items"):
        setattr(DynamoDBBackend, name, atomic(getattr(DynamoDBBackend, name)))
    reads_create_nothing()


def reads_create_nothing() -> None:
    """Patch 1b: moto's ``Table.get_item`` reads ``self.items[hash_key][range_key]`` from a
    ``defaultdict``, so reading an item of a partition that holds none *creates* the partition's
    dict, outside patch 1's lock: a put of that partition's first item on another thread at the
    same moment can land in the dict the read then replaces, and the item is lost (a judged window
    written by 16 threads lost 3 of its 1,000 missed checks while a meter read each key first).
    Here a read of a partition that does not exist answers None and touches nothing.

    Upstream candidate (moto, ``dynamodb/models/table.py``): ``self.items.get(hash_key, {})``."""
    from moto.dynamodb.models.table import Table  # deferred: moto is a dev dependency and slow to import

    original = Table.get_item

    @functools.wraps(original)
    def get_item(self: Any, hash_key: Any, range_key: Any = None, projection_expression: Any = None) -> Any:
        if range_key and hash_key not in self.items:
            return None
        return original(self, hash_key, range_key, projection_expression)

    Table.get_item = get_item  # type: ignore[method-assign]  # moto's class, patched process-wide



_QUERIED_PARTITION: contextvars.ContextVar[Any] = contextvars.ContextVar("queried_partition", default=None)
_EVERY_ITEM_UNSORTED = object()


def partition_queries() -> None:
    """Patch 5b: ``Table.query`` on the table's own key (no index) reads only the queried partition.
    moto sorts *every* item of the table (``Table.all_items``) for each Query and then keeps the
    partition's: with 100,000 assignments and their checks each equipment batch's Query cost
    seconds. The partition's items come sorted by their range keys' values, each cast once (moto
    sorts them again: one pass on sorted input). A Query on an index reads every item of the table,
    as moto does, but unsorted (moto sorts the index's matches by their full key). With a range
    condition, only the items meeting it and their neighbours (5g, :func:`_the_range_and_its_neighbours`).
    Same items, same order.

    Upstream candidate (moto, ``dynamodb/models/table.py``): a speed fix, read the queried partition only."""
    from moto.dynamodb.models.table import Table  # deferred: moto is a dev dependency and slow to import

    query, all_items = Table.query, Table.all_items
    index_position = 6  # index_name, after hash_key and six more positional parameters (moto 5.2.1)

    @functools.wraps(query)
    def query_one_partition(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        index_name = kwargs.get("index_name", args[index_position] if len(args) > index_position else None)
        if hash_key is None and not index_name:
            return query(self, hash_key, *args, **kwargs)
        comparison = kwargs.get("range_comparison", args[0] if args else None)
        values = kwargs.get("range_objs", args[1] if len(args) > 1 else None)
        filtered = bool(set(kwargs) - _QUERY_KEYWORDS)  # the legacy KeyConditions' non-key filters
        token = _QUERIED_PARTITION.set(
            _EVERY_ITEM_UNSORTED if index_name else (hash_key, None if filtered else comparison, values)
        )
        try:
            return query(self, hash_key, *args, **kwargs)
        finally:
            _QUERIED_PARTITION.reset(token)

    @functools.wraps(all_items)
    def items_of_the_queried_partition(self: Any) -> Any:
        queried = _QUERIED_PARTITION.get()
        if queried is None:
            return all_items(self)
        if queried is _EVERY_ITEM_UNSORTED:
            if not self.range_key_attr:
                return list(self.items.values())
            return [item for partition in self.items.values() for item in partition.values()]
        hash_key, comparison, values = queried
        partition = self.items.get(hash_key)
        if partition is None:
            return []
        if not self.range_key_attr:
            return [partition]
        if comparison:
            return _the_range_and_its_neighbours(partition.values(), comparison, values)
        # In range-key order, each key cast once: moto's Table.query sorts the partition again by
        # range key (two casts per comparison), which on sorted input is one pass, not n log n.
        return sorted(partition.values(), key=lambda item: item.range_key.cast_value)

    Table.query = query_one_partition  # type: ignore[method-assign]
    Table.all_items = items_of_the_queried_partition  # type: ignore[method-assign]


_QUERY_KEYWORDS = frozenset({
    "range_comparison", "range_objs", "limit", "exclusive_start_key", "scan_index_forward",
    "projection_expressions", "index_name", "consistent_read", "filter_expression", "hash_key_conditions",
    "range_key_conditions",
})


def _the_range_and_its_neighbours(items: Any, comparison: str, values: Any) -> list[Any]:
    """The items whose range key meets the key condition, in range-key order, with the nearest
    item on either side of that run (patch 5g).

    moto's ``Table.query`` walks every candidate it is given, computing each one's ``size()``
    (for the 1 MB page limit) before it even tests the range condition, then deep-copies the
    matches: with a partition of 100,000 assignments and a batch's ``BETWEEN`` of 6,000, each
    Query sized 94,000 items it would never return. Items before the run cannot change its answer
    (nothing is kept yet, and no item reaches 1 MB); the first item after it is where moto stops
    a page that is full (``LastEvaluatedKey``), so it is kept, on both sides for a backward
    Query. The condition is moto's own comparison of the cast values."""
    from moto.dynamodb.comparisons import get_comparison_func  # deferred: moto is slow to import

    meets = get_comparison_func(comparison)
    bounds = [value.cast_value for value in values]
    run: list[tuple[Any, Any]] = []
    others: list[tuple[Any, Any]] = []
    for item in items:
        key = item.range_key.cast_value
        (run if meets(key, *bounds) else others).append((key, item))
    if not run:
        return []
    run.sort(key=lambda keyed: keyed[0])
    low, high = run[0][0], run[-1][0]
    before = max((keyed for keyed in others if keyed[0] < low), key=lambda keyed: keyed[0], default=None)
    after = min((keyed for keyed in others if keyed[0] > high), key=lambda keyed: keyed[0], default=None)
    return [item for _, item in ([before] if before else []) + run + ([after] if after else [])]



def stream_records_as_json() -> None:
    """Patch 5c: ``dynamodbstreams:GetRecords`` answers with ``json.dumps`` of moto's own records (as
    ``DynamoHandler`` answers ``dynamodb`` calls) instead of moto's model-driven serializer, about
    1.5 ms a record: the stream poller of ``local serve`` reading 10,000 records held the GIL for
    seconds. Same document (timestamps as epoch seconds).

    Upstream candidate (moto, ``dynamodbstreams/responses.py``): answer with ``json.dumps``."""
    from moto.dynamodbstreams.responses import DynamoDBStreamsHandler  # deferred: moto is slow to import

    original = DynamoDBStreamsHandler.get_records

    @functools.wraps(original)
    def get_records(self: Any) -> str:
        limit = self._get_param("Limit")
        result = self.backend.get_records(self._get_param("ShardIterator"), 1000 if limit is None else limit)
        return json.dumps(result, default=_json_value)

    DynamoDBStreamsHandler.get_records = get_records  # type: ignore[assignment]



_ITEM_READS = frozenset({"GetItem", "BatchGetItem", "Query", "Scan"})



def item_reads_as_json() -> None:
    """Patch 5d: the answers of ``GetItem``, ``BatchGetItem``, ``Query`` and ``Scan`` (items and keys
    only) are written with ``json.dumps``, not through moto's model-driven serializer, where the
    evaluation's Queries of thousands of items spent most of their server time. Same document.

    Upstream candidate (moto, ``dynamodb/responses.py``): serialize item reads with ``json.dumps``."""
    from moto.dynamodb.responses import DynamoResult  # deferred: moto is slow to import

    original = DynamoResult.execute_result

    @functools.wraps(original)
    def execute_result(self: Any, context: Any) -> Any:
        if context.operation_model.name not in _ITEM_READS or not isinstance(self.result, dict):
            return original(self, context)
        answer = {name: value for name, value in self.result.items() if value is not None}
        content_type = f"application/x-amz-json-{context.service_model.metadata.get('jsonVersion', '1.0')}"
        return 200, {"Content-Type": content_type}, json.dumps(answer, default=_json_value)

    DynamoResult.execute_result = execute_result  # type: ignore[method-assign]


def _json_value(value: Any) -> float | int | str:
    """What moto's serializer writes for the values of its stream records that JSON lacks: a
    naive UTC datetime (the records' stamps) as epoch seconds, milliseconds kept when there are
    any; bytes (binary attributes) in base64."""
    if isinstance(value, datetime):
        seconds = calendar.timegm(value.timetuple())
        return seconds + (value.microsecond // 1000) / 1000.0 if value.microsecond else seconds
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


_data_plane_installed = False

