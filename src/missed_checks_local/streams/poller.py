"""DynamoDB Streams to Lambda, as an event source mapping delivers them.

:class:`StreamPoller` reads the table's stream through moto's ``dynamodbstreams`` API and calls
the mapped function (through :class:`~missed_checks_local.awslambda.runtime.LambdaRuntime`) with
Lambda's event shape. It honours the mapping from the template:

* ``FilterCriteria``: records matching no pattern are dropped before batching
  (:mod:`missed_checks_local.streams.filters`);
* ``BatchSize``: at most that many records per invocation, in stream order;
* ``FunctionResponseTypes: [ReportBatchItemFailures]``: a ``batchItemFailures`` answer makes the
  mapping retry from the lowest failed sequence number (records before it are done); an
  unknown or empty ``itemIdentifier`` fails the whole batch, as in Lambda;
* a raised exception retries the whole batch, split in halves first when
  ``BisectBatchOnFunctionError`` is set;
* ``MaximumRetryAttempts``: after that many retries the failing records are skipped and one
  record in Lambda's ``OnFailure`` shape (``requestContext``, ``responseContext``,
  ``DDBStreamBatchInfo``...) goes to ``DestinationConfig.OnFailure`` (an SQS queue).

Differences from AWS it smooths over: moto emits a MODIFY for a put that changes nothing
(DynamoDB emits no record), so MODIFY records whose new and old images are equal are dropped;
moto's UpdateItem (or a transaction's Update) of an item that does not exist yet first puts the bare
key, emitting an INSERT whose new image is only the key, then the INSERT of the item (DynamoDB emits
the second only), so such a bare-key INSERT followed by an INSERT of the same key is dropped (a
consumer reading it as an item, the audit function, would fail on it and send it to its DLQ);
moto stamps records with the wall clock, so ``ApproximateCreationDateTime`` is taken from the
simulated clock when the record is read. Not emulated: ``MaximumRecordAgeInSeconds`` (records
are delivered as soon as the runtime drains the stream), batching windows, parallelization.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from botocore.config import Config

from missed_checks_local.awslambda.runtime import Invocation, LambdaRuntime
from missed_checks_local.stack import EmbeddedStack, StreamMappingSpec, local_session
from missed_checks_local.streams.filters import matches_any

__all__ = ["StreamBlocked", "StreamPoller", "StreamStats"]

# MaximumRetryAttempts -1 means "until the record expires" (a day) in AWS; locally that would
# spin forever, so a mapping without a bound stops with StreamBlocked after this many retries.
UNBOUNDED_RETRY_CAP = 1000
_PAGE = 1000
# Shards are listed again every this many polls (moto keeps one shard per table for good).
_REDISCOVER_EVERY = 100


class StreamBlocked(RuntimeError):
    """A batch keeps failing under a mapping with unbounded retries: the shard is stuck."""


@dataclass
class StreamStats:
    read: int = 0
    """Records read from the stream."""
    unchanged_dropped: int = 0
    """moto's MODIFY records for puts that changed nothing (DynamoDB writes none)."""
    bare_keys_dropped: int = 0
    """moto's INSERT records of the bare key an UpdateItem of a new item writes first (DynamoDB writes none)."""
    filtered_out: int = 0
    delivered: int = 0
    """Records handed to the function (counting each retry)."""
    invocations: int = 0
    failed_invocations: int = 0
    sent_to_on_failure: int = 0
    """Records given up on (listed in OnFailure messages)."""
    on_failure_messages: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Shard:
    shard_id: str
    iterator: str | None


class StreamPoller:
    """Delivers one mapping's stream records to its function; call :meth:`drain` to catch up."""

    def __init__(
        self,
        stack: EmbeddedStack,
        runtime: LambdaRuntime,
        mapping: StreamMappingSpec,
        now: Callable[[], datetime],
    ) -> None:
        self.stack = stack
        self.runtime = runtime
        self.mapping = mapping
        self.function = stack.functions[mapping.function]
        self.now = now
        self.stats = StreamStats()
        # Lambda's poller reads the stream and sends to the on-failure destination with the
        # function's execution role: IAM decides, as on AWS.
        credentials = runtime.roles.client_kwargs(self.function.role_arn, f"{self.function.name}-poller")
        session = local_session(stack.region, **credentials)
        config = Config(account_id_endpoint_mode="disabled")
        self._streams = session.client("dynamodbstreams", endpoint_url=stack.endpoint_url, config=config)
        self._sqs = session.client("sqs", endpoint_url=stack.endpoint_url, config=config)
        self.faults: Any = None
        """A :class:`~missed_checks_local.product.faults.FaultInjector` (records delivered again)."""
        self._shards: dict[str, _Shard] = {}
        self._pending: list[tuple[str, dict[str, Any]]] = []
        self._polls = 0
        self._records_seen: int | None = None

    # -- reading ---------------------------------------------------------------------------
    def poll(self) -> int:
        """Read every new record of every shard; returns how many are waiting for delivery."""
        written = _stream_length(self.stack, self.mapping.stream_arn)
        if self._shards and not self._pending and written is not None and written == self._records_seen:
            return 0  # nothing written since the last read: no GetRecords round trip
        self._records_seen = written
        self._polls += 1
        if not self._shards or self._polls % _REDISCOVER_EVERY == 0:
            self._discover()
        for state in self._shards.values():
            while state.iterator:
                page = self._streams.get_records(ShardIterator=state.iterator, Limit=_PAGE)
                state.iterator = page.get("NextShardIterator")
                for record in page["Records"]:
                    self.stats.read += 1
                    self._accept(state.shard_id, record)
                if len(page["Records"]) < _PAGE:
                    break
        return len(self._pending)

    def _discover(self) -> None:
        description = self._streams.describe_stream(StreamArn=self.mapping.stream_arn)["StreamDescription"]
        for shard in description["Shards"]:
            shard_id = shard["ShardId"]
            if shard_id not in self._shards:
                iterator_type = "LATEST" if self.mapping.starting_position == "LATEST" else "TRIM_HORIZON"
                iterator = self._streams.get_shard_iterator(
                    StreamArn=self.mapping.stream_arn, ShardId=shard_id, ShardIteratorType=iterator_type
                )["ShardIterator"]
                self._shards[shard_id] = _Shard(shard_id, iterator)

    def _accept(self, shard_id: str, record: dict[str, Any]) -> None:
        data = record["dynamodb"]
        if record["eventName"] == "MODIFY" and data.get("NewImage") == data.get("OldImage"):
            self.stats.unchanged_dropped += 1
            return
        if record["eventName"] == "INSERT":
            self._drop_bare_key_insert(shard_id, data.get("Keys"))
        event = self._lambda_record(record)
        if not matches_any(self.mapping.filter_patterns, event):
            self.stats.filtered_out += 1
            return
        self._pending.append((shard_id, event))

    def _drop_bare_key_insert(self, shard_id: str, item_keys: Any) -> None:
        """An INSERT of ``item_keys`` arrived: moto's bare-key INSERT of the same key just before it
        (its UpdateItem creating the item) is dropped if it is still waiting (a filter may have
        dropped it already)."""
        if not self._pending:
            return
        last_shard, last = self._pending[-1]
        data = last["dynamodb"]
        if (last_shard == shard_id and last["eventName"] == "INSERT" and data.get("Keys") == item_keys
                and data.get("NewImage") == item_keys):
            self._pending.pop()
            self.stats.bare_keys_dropped += 1

    def _lambda_record(self, record: dict[str, Any]) -> dict[str, Any]:
        data = record["dynamodb"]
        dynamodb: dict[str, Any] = {"ApproximateCreationDateTime": int(self.now().timestamp())}
        for key in ("Keys", "NewImage", "OldImage", "SequenceNumber", "SizeBytes", "StreamViewType"):
            if key in data:
                dynamodb[key] = data[key]
        return {
            "eventID": record.get("eventID") or uuid.uuid4().hex,
            "eventName": record["eventName"],
            "eventVersion": "1.1",
            "eventSource": "aws:dynamodb",
            "awsRegion": self.stack.region,
            "dynamodb": dynamodb,
            "eventSourceARN": self.mapping.stream_arn,
        }

    # -- delivering ------------------------------------------------------------------------
    def drain(self) -> StreamStats:
        """Read the stream and deliver until nothing is waiting (new records included)."""
        while self.poll():
            shard_id = self._pending[0][0]
            batch: list[dict[str, Any]] = []
            while self._pending and len(batch) < self.mapping.batch_size and self._pending[0][0] == shard_id:
                batch.append(self._pending.pop(0)[1])
            self._process(shard_id, batch, retries=0)
        return self.stats

    def _process(self, shard_id: str, batch: list[dict[str, Any]], retries: int) -> None:
        cap = self.mapping.maximum_retry_attempts
        while batch:
            invocation = self._invoke(batch)
            failed_from = self._failed_from(batch, invocation)
            if failed_from is None:
                self._delivered_again(shard_id, batch)
                return
            self.stats.failed_invocations += 1
            if cap >= 0 and retries >= cap:
                self._on_failure(shard_id, batch[failed_from:], invocation, retries + 1)
                return
            if cap < 0 and retries >= UNBOUNDED_RETRY_CAP:
                raise StreamBlocked(
                    f"{self.mapping.logical_id}: a batch failed {retries + 1} times and the mapping "
                    "retries forever (MaximumRetryAttempts -1): the shard is blocked"
                )
            retries += 1
            if invocation.error is not None and self.mapping.bisect_on_error and len(batch) > 1:
                half = len(batch) // 2
                self._process(shard_id, batch[:half], retries)
                self._process(shard_id, batch[half:], retries)
                return
            batch = batch[failed_from:]

    def _delivered_again(self, shard_id: str, batch: list[dict[str, Any]]) -> None:
        """Injected at-least-once delivery: the batch once more, or its records again inside the
        next batches (see :mod:`missed_checks_local.product.faults`)."""
        if self.faults is None:
            return
        if self.faults.strike("stream_duplicate"):
            self._process(shard_id, list(batch), retries=0)
        if self.faults.strike("stream_redeliver"):
            self._pending[0:0] = [(shard_id, record) for record in batch]

    def _invoke(self, batch: list[dict[str, Any]]) -> Invocation:
        self.stats.invocations += 1
        self.stats.delivered += len(batch)
        return self.runtime.invoke(self.function.logical_id, {"Records": batch})

    def _failed_from(self, batch: list[dict[str, Any]], invocation: Invocation) -> int | None:
        """Index of the first record to retry, or None when the batch succeeded."""
        if invocation.error is not None:
            return 0
        if not self.mapping.report_batch_item_failures or not isinstance(invocation.result, dict):
            return None
        failures = invocation.result.get("batchItemFailures") or []
        if not failures:
            return None
        sequence_numbers = [record["dynamodb"]["SequenceNumber"] for record in batch]
        indexes = []
        for failure in failures:
            identifier = failure.get("itemIdentifier") if isinstance(failure, dict) else None
            if not identifier or identifier not in sequence_numbers:
                return 0  # Lambda treats an invalid identifier as a failure of the whole batch
            indexes.append(sequence_numbers.index(identifier))
        return min(indexes)

    def _on_failure(
        self, shard_id: str, records: list[dict[str, Any]], invocation: Invocation, invoke_count: int
    ) -> None:
        self.stats.sent_to_on_failure += len(records)
        if not self.mapping.on_failure_arn:
            return  # no destination: the records are simply skipped, as in AWS
        response_context: dict[str, Any] = {"statusCode": 200, "executedVersion": "$LATEST"}
        if invocation.error is not None:
            response_context["functionError"] = "Unhandled"
        first, last = records[0]["dynamodb"], records[-1]["dynamodb"]
        message = {
            "requestContext": {
                "requestId": invocation.request_id,
                "functionArn": self.function.arn,
                "condition": "RetryAttemptsExhausted",
                "approximateInvokeCount": invoke_count,
            },
            "responseContext": response_context,
            "version": "1.0",
            "timestamp": _iso_millis(self.now()),
            "DDBStreamBatchInfo": {
                "shardId": shard_id,
                "startSequenceNumber": first["SequenceNumber"],
                "endSequenceNumber": last["SequenceNumber"],
                "approximateArrivalOfFirstRecord": _iso_seconds(first["ApproximateCreationDateTime"]),
                "approximateArrivalOfLastRecord": _iso_seconds(last["ApproximateCreationDateTime"]),
                "batchSize": len(records),
                "streamArn": self.mapping.stream_arn,
            },
        }
        self.stats.on_failure_messages.append(message)
        self._sqs.send_message(
            QueueUrl=self.stack.queue_url_for_arn(self.mapping.on_failure_arn),
            MessageBody=json.dumps(message),
        )


def _stream_length(stack: EmbeddedStack, stream_arn: str) -> int | None:
    """How many records the table's stream holds, read from moto's backend in this process (the
    emulator runs moto in-process, also behind ``local serve``); None when it cannot tell. A poll
    that finds the count unchanged skips its GetRecords round trips: an idle ``local serve`` used
    to spend most of a core re-reading empty streams over HTTP."""
    from moto.dynamodb.models import dynamodb_backends  # deferred: moto is a dev dependency and slow to import

    table_name = stream_arn.split(":table/", 1)[-1].split("/stream/", 1)[0]
    try:
        table = dynamodb_backends[stack.account_id][stack.region].tables[table_name]
        shard = table.stream_shard
        return None if shard is None else len(shard.items)
    except (KeyError, AttributeError):
        return None


def _iso_millis(instant: datetime) -> str:
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{instant.microsecond // 1000:03d}Z"


def _iso_seconds(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
