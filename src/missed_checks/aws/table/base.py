"""The table's low-level access, shared by every item kind: (de)serialising, Query pages, batches
with backoff, and conditional writes read as "already done" rather than as errors.

**The last guard** (:func:`guard_keys`): every item put and every key updated has keys made only of
what an id, a name or an instant can hold (:mod:`missed_checks.identifiers`), so nothing reaches the
table that a later step (a schedule, a Query, a command's argument) cannot address, whichever use
case wrote it.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from missed_checks import clock, identifiers
from missed_checks.aws.clients import ServiceAdapter
from missed_checks.aws.table import keys
from missed_checks.errors import Conflict, InvalidInput, NotFound, TransientError, shorten
from missed_checks.timefmt import to_utc_iso_micro

__all__ = ["Conflict", "NotFound"]  # the domain's (missed_checks.errors), raised here too

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()

THROTTLING_CODES = {
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "InternalServerError",
    "ServiceUnavailable",
}


def serialize(item: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _serializer.serialize(v) for k, v in item.items() if v is not None}



def deserialize(item: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _deserializer.deserialize(v) for k, v in item.items()}



STAMP_ATTRIBUTES = ("changed_by", "changed_at", "change_id", "deleting")
"""What every write of an item a person manages carries for the audit trail (docs/audit.md): who
(``changed_by``, the caller's principal), when (``changed_at``, UTC ISO with microseconds), which
write (``change_id``, new on every write: two writes in one instant, by one person, under a clock
that stands still, are still told apart), and ``deleting`` on the update that stamps an item just
before it is deleted. No domain object holds them."""


def stamp(by: str) -> dict[str, str]:
    """The audit stamp of a write made now by ``by`` (InvalidInput ``by`` when it names nobody)."""
    if not isinstance(by, str) or not by.strip():
        raise InvalidInput("by", "a change needs the name of who makes it")
    return {"changed_by": by.strip(), "changed_at": to_utc_iso_micro(clock.now()), "change_id": uuid.uuid4().hex}


def stamp_update(by: str, deleting: bool = False) -> tuple[str, dict[str, Any]]:
    """The ``SET`` clauses (without ``SET``) and values of :func:`stamp` in an UpdateItem;
    ``deleting``: the stamp written just before a delete."""
    values: dict[str, Any] = {f":{name}": value for name, value in stamp(by).items()}
    clauses = [f"{name} = :{name}" for name in STAMP_ATTRIBUTES[:3]]
    if deleting:
        clauses.append("deleting = :deleting")
        values[":deleting"] = True
    return ", ".join(clauses), values


def condition_item(error: ClientError) -> dict[str, Any] | None:
    """The item a failed condition returned (``ReturnValuesOnConditionCheckFailure=ALL_OLD``),
    deserialized; None when there was none. botocore-stubs' error response type does not list it."""
    item: Mapping[str, Any] | None = cast("dict[str, Any]", error.response).get("Item")
    return deserialize(item) if item else None


KEY_ATTRIBUTES = ("pk", "sk", "gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk")
_KEY_SEGMENT = re.compile(r"[A-Za-z0-9._:/@+-]*")
"""Between the ``#`` of a key: the union of every id's alphabet and an instant's (``2026-03-02T05:00:00Z``)."""
_CLIENT_REQUEST = "REQUEST"
"""The partition of a client's idempotency key: ``REQUEST#<caller>#<key>`` (the caller is who API
Gateway authorized: an ARN, or a JWT's ``issuer#subject``, not an id of ours)."""


def guard_keys(item: Mapping[str, Any]) -> None:
    """Refuse (InvalidInput, nothing written) an item or key whose key attributes hold anything an id,
    a name or an instant cannot (a newline, a space, a character outside the alphabets); ``item``
    serialized (``{"S": ...}``) or not."""
    for name in KEY_ATTRIBUTES:
        value = item.get(name)
        text = value.get("S") if isinstance(value, Mapping) else value
        if not isinstance(text, str):
            continue
        segments = text.split("#")
        if segments[0] == _CLIENT_REQUEST and len(segments) >= 3:
            identifiers.KINDS["idempotency key"].validate(segments[-1], "Idempotency-Key")
            caller = "#".join(segments[1:-1])
            if not caller or not caller.isprintable():
                raise InvalidInput("caller", f"{shorten(caller)} cannot be part of a key: nothing was written")
            continue
        for segment in segments:
            if _KEY_SEGMENT.fullmatch(segment) is None:
                raise InvalidInput("id", f"{shorten(segment)} (in the key {shorten(text)}) is no id, name or instant "
                                         "this table can address: nothing was written")


def _guard_write(operation: str, request: Mapping[str, Any]) -> None:
    if operation == "put_item":
        guard_keys(request.get("Item") or {})
    elif operation == "update_item":
        guard_keys(request.get("Key") or {})


def guard_action(action: Mapping[str, Any]) -> None:
    """One action of a TransactWriteItems or BatchWriteItem request (a delete is never refused: what
    was written before this guard can still be removed)."""
    for kind, body in action.items():
        if kind in ("Put", "PutRequest"):
            guard_keys(body.get("Item") or {})
        elif kind == "Update":
            guard_keys(body.get("Key") or {})


def error_code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))



def raise_transient(error: ClientError) -> None:
    """Re-raise throttling that outlived botocore's retries as TransientError (Step Functions retries it)."""
    if error_code(error) in THROTTLING_CODES:
        raise TransientError(f"DynamoDB: {error}") from error



class TableClient(ServiceAdapter):
    """One table's client and the requests every item kind makes. ``table_name`` comes from the
    stack (TABLE_NAME on the functions)."""

    service_name = "dynamodb"

    def __init__(self, table_name: str, dynamodb: Any | None = None) -> None:
        super().__init__(dynamodb)
        self.name = table_name

    def _request(self, operation: str, **request: Any) -> dict[str, Any]:
        """One request to this table; throttling that outlived botocore's retries as TransientError.
        A put or an update whose keys no later step could address is refused first (:func:`guard_keys`)."""
        _guard_write(operation, request)
        try:
            response: dict[str, Any] = getattr(self.client, operation)(TableName=self.name, **request)
        except ClientError as error:
            raise_transient(error)
            raise
        return response

    def _put_new(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """Write ``item`` only if no item has its key (a conditional put): None when written now;
        else the item already there, as the failed condition returned it or read back (None from
        both only if it vanished in between: :class:`TransientError`, try again)."""
        try:
            self._request("put_item", Item=serialize(item), ConditionExpression="attribute_not_exists(pk)",
                          ReturnValuesOnConditionCheckFailure="ALL_OLD")
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise
            earlier = condition_item(error) or self._get({"pk": item["pk"], "sk": item["sk"]})
            if earlier is None:
                raise TransientError(f"item {item['pk']} / {item['sk']} vanished after its conditional put failed") \
                    from error
            return earlier
        return None

    def _get(self, key: Mapping[str, str], consistent: bool = True) -> dict[str, Any] | None:
        response = self._request("get_item", Key=serialize(key), ConsistentRead=consistent)
        item = response.get("Item")
        return deserialize(item) if item else None

    def query(self, index: str | None = None, **kwargs: Any) -> Iterator[dict[str, Any]]:
        """Every item of a Query, following LastEvaluatedKey."""
        for page in self._pages(index, **kwargs):
            for item in page.get("Items", []):
                yield deserialize(item)

    def _pages(self, index: str | None = None, **kwargs: Any) -> Iterator[dict[str, Any]]:
        """Every page of a Query (botocore's paginator: it follows LastEvaluatedKey)."""
        request: dict[str, Any] = {"TableName": self.name, **kwargs}
        if index:
            request["IndexName"] = index
        pages = self.client.get_paginator("query").paginate(**request).__iter__()
        while True:
            try:
                yield next(pages)
            except StopIteration:
                return
            except ClientError as error:
                raise_transient(error)
                raise

    def _query_range(self, pk: str, low: str, high: str, index: str | None = None,
                     attributes: Sequence[str] = ()) -> Iterator[dict[str, Any]]:
        """Items of one partition with a sort key in ``[low, high]``; only ``attributes`` when given."""
        pk_name, sk_name = ("pk", "sk") if index is None else (
            ("gsi1pk", "gsi1sk") if index == keys.BY_EQUIPMENT_INDEX else ("gsi2pk", "gsi2sk"))
        names = {"#pk": pk_name, "#sk": sk_name, **{f"#a{n}": name for n, name in enumerate(attributes)}}
        projection = {"ProjectionExpression": ", ".join(f"#a{n}" for n in range(len(attributes)))} if attributes else {}
        return self.query(
            index,
            KeyConditionExpression="#pk = :pk AND #sk BETWEEN :low AND :high",
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=serialize({":pk": pk, ":low": low, ":high": high}),
            **projection,
        )

    def _query_partitions(self, pks: Sequence[str], low: str, high: str, attributes: Sequence[str] = (),
                          threads: int = 1) -> list[dict[str, Any]]:
        """:meth:`_query_range` of each partition key in ``pks`` (a write-partitioned item kind, keys.py's
        ``WRITE_PARTITIONS``), ``threads`` Queries in flight, every item in the order of ``pks``."""
        def read(pk: str) -> list[dict[str, Any]]:
            return list(self._query_range(pk, low, high, attributes=attributes))
        if threads <= 1:
            return [item for pk in pks for item in read(pk)]
        with ThreadPoolExecutor(max_workers=threads) as pool:
            return [item for items in pool.map(read, pks) for item in items]

    def _query_prefix(self, pk: str, prefix: str) -> Iterator[dict[str, Any]]:
        return self.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues=serialize({":pk": pk, ":prefix": prefix}),
        )

    def batch_write(self, requests: Sequence[dict[str, Any]], progress: Callable[[int], None] | None = None) -> None:
        """BatchWriteItem in chunks of 25, retrying UnprocessedItems with backoff until none remain;
        ``progress(n)`` after each chunk is written."""
        for request in requests:
            guard_action(request)
        for offset in range(0, len(requests), 25):
            chunk = list(requests[offset : offset + 25])
            self._batch("batch_write_item", "UnprocessedItems", {self.name: chunk})
            if progress is not None:
                progress(len(chunk))

    def batch_get(self, item_keys: Sequence[Mapping[str, str]], consistent: bool = False) -> list[dict[str, Any]]:
        """BatchGetItem in chunks of 100 (eventually consistent unless ``consistent``), retrying
        UnprocessedKeys with backoff."""
        found: list[dict[str, Any]] = []
        for offset in range(0, len(item_keys), 100):
            found += self._batch("batch_get_item", "UnprocessedKeys",
                                 {self.name: {"Keys": [serialize(k) for k in item_keys[offset : offset + 100]],
                                              "ConsistentRead": consistent}})
        return found

    def _batch(self, operation: str, unprocessed: str, pending: Any) -> list[dict[str, Any]]:
        """One BatchWriteItem or BatchGetItem request, repeated with backoff for what DynamoDB left
        ``unprocessed`` until nothing is; the items read (BatchGetItem)."""
        found: list[dict[str, Any]] = []
        delay = 0.05
        for _attempt in range(12):
            try:
                response = getattr(self.client, operation)(RequestItems=pending)
            except ClientError as error:
                raise_transient(error)
                raise
            found.extend(deserialize(item) for item in response.get("Responses", {}).get(self.name, []))
            pending = response.get(unprocessed) or {}
            if not pending:
                return found
            time.sleep(delay)
            delay = min(delay * 2, 2.0)
        raise TransientError(f"DynamoDB left requests unprocessed ({unprocessed}) after retries")

    def _stamp_deletion(self, key: Mapping[str, str], by: str, ConditionExpression: str = "attribute_exists(pk)",  # noqa: N803
                        **request: Any) -> bool:
        """Stamp the item at ``key`` as being deleted by ``by`` (an update with ``deleting=true``,
        conditional on ``condition``; ``ExpressionAttributeValues`` not serialized), so the stream's
        removal names who deleted it; the delete follows. False when the condition failed."""
        clauses, values = stamp_update(by, deleting=True)
        extra = request.pop("ExpressionAttributeValues", {})
        return self._conditional("update_item", Key=serialize(key), UpdateExpression=f"SET {clauses}",
                                 ConditionExpression=ConditionExpression,
                                 ExpressionAttributeValues=serialize({**values, **extra}), **request)

    def _conditional(self, operation: str, **request: Any) -> bool:
        """Run a conditional write; False when its condition failed, read as "already done" (or "changed
        meanwhile"), never as an error."""
        try:
            self._request(operation, **request)
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                return False
            raise
        return True
