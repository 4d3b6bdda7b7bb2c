"""The single DynamoDB table: every read is a Query or GetItem, every idempotent write conditional.

Shared by the Lambda handlers, the command line and the local runtime, so all of them write the
same items (see README "Data model").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from missed_checks import keys
from missed_checks.aws.clients import client
from missed_checks.checklist import Checklist, Status, validate_checklist_id
from missed_checks.equipment import SHARD_COUNT, Assignment, shard_of, validate_equipment_id
from missed_checks.errors import InvalidInput, MissedChecksError, TransientError
from missed_checks.missed_check import Window, judged_window_fields
from missed_checks.performed_check import PerformedCheck
from missed_checks.timefmt import parse_instant, to_utc_iso

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()

THROTTLING_CODES = {
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "InternalServerError",
    "ServiceUnavailable",
}


@dataclass(frozen=True)
class WindowClaim:
    """What claiming a judged window (:meth:`ChecklistTable.claim_window`) found."""

    won: bool
    """The execution holds the claim: it judged the window first, is a retry or redrive of the one
    that did, or was handed the claim (a dead-letter replay)."""
    announced: bool
    """The window's event has gone out already."""
    holder: str
    """The execution holding the claim."""

    @property
    def must_announce(self) -> bool:
        """Publish the window's event now: this execution holds the claim and nobody announced it yet."""
        return self.won and not self.announced


class NotFound(MissedChecksError):
    """The item the caller named does not exist."""


class Conflict(MissedChecksError):
    """The item changed or is in a state that forbids the change (e.g. dismissed twice)."""


def serialize(item: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _serializer.serialize(v) for k, v in item.items() if v is not None}


def deserialize(item: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _deserializer.deserialize(v) for k, v in item.items()}


def error_code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


def raise_transient(error: ClientError) -> None:
    """Re-raise throttling that outlived botocore's retries as TransientError (Step Functions retries it)."""
    if error_code(error) in THROTTLING_CODES:
        raise TransientError(f"DynamoDB: {error}") from error


class ChecklistTable:
    """Typed access to the table. ``table_name`` comes from the stack (TABLE_NAME on the functions)."""

    def __init__(self, table_name: str, dynamodb: Any | None = None) -> None:
        self.name = table_name
        self._client = dynamodb

    @property
    def client(self) -> Any:
        return self._client or client("dynamodb")

    # -- low level -----------------------------------------------------------------------
    def _get(self, key: Mapping[str, str], consistent: bool = True) -> dict[str, Any] | None:
        try:
            response = self.client.get_item(TableName=self.name, Key=serialize(key), ConsistentRead=consistent)
        except ClientError as error:
            raise_transient(error)
            raise
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

    def _query_prefix(self, pk: str, prefix: str) -> Iterator[dict[str, Any]]:
        return self.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues=serialize({":pk": pk, ":prefix": prefix}),
        )

    def batch_write(self, requests: Sequence[dict[str, Any]], progress: Callable[[int], None] | None = None) -> None:
        """BatchWriteItem in chunks of 25, retrying UnprocessedItems with backoff until none remain;
        ``progress(n)`` after each chunk is written."""
        for offset in range(0, len(requests), 25):
            chunk = list(requests[offset : offset + 25])
            self._batch("batch_write_item", "UnprocessedItems", {self.name: chunk})
            if progress is not None:
                progress(len(chunk))

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

    def _conditional(self, operation: str, **request: Any) -> bool:
        """Run a conditional write; False when its condition failed, read as "already done" (or "changed
        meanwhile"), never as an error."""
        try:
            getattr(self.client, operation)(TableName=self.name, **request)
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                return False
            raise_transient(error)
            raise
        return True

    def _move_forward(self, checklist_id: str, attribute: str, to: datetime) -> bool:
        """Set an instant attribute of the checklist to ``to`` only if that moves it forward."""
        return self._conditional(
            "update_item", Key=serialize(keys.checklist_key(checklist_id)),
            UpdateExpression=f"SET {attribute} = :to",
            ConditionExpression=f"attribute_exists(pk) AND (attribute_not_exists({attribute}) OR {attribute} < :to)",
            ExpressionAttributeValues=serialize({":to": to_utc_iso(to)}),
        )

    # -- checklists ------------------------------------------------------------------------
    def get_checklist_item(self, checklist_id: str) -> dict[str, Any] | None:
        return self._get(keys.checklist_key(checklist_id))

    def get_checklist(self, checklist_id: str) -> Checklist | None:
        """The checklist with its evaluated-until watermark (an item of its own): one Query."""
        items = {item["sk"]: item for item in self.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)", ConsistentRead=True,
            ExpressionAttributeValues=serialize({":pk": keys.checklist_pk(checklist_id),
                                                 ":prefix": keys.CHECKLIST_SK}))}
        item = items.get(keys.CHECKLIST_SK)
        if item is None:
            return None
        return Checklist.from_item(_with_watermark(item, items.get(keys.WATERMARK_SK, {}).get("evaluated_until")))

    def list_checklists(self) -> list[Checklist]:
        # No sort-key condition: DynamoDB rejects an empty string as a key value ("" .. HIGH).
        items = list(self.query(keys.BY_PERIOD_INDEX, KeyConditionExpression="gsi2pk = :pk",
                                ExpressionAttributeValues=serialize({":pk": keys.CHECKLISTS_INDEX_PK})))
        watermarks = {item["pk"]: item.get("evaluated_until") for item in
                      self.batch_get([{"pk": item["pk"], "sk": keys.WATERMARK_SK} for item in items])}
        return [Checklist.from_item(_with_watermark(item, watermarks.get(item["pk"]))) for item in items]

    def put_checklist(
        self,
        checklist_id: str,
        *,
        recurrence: str,
        now: datetime,
        name: str = "",
        timezone: str | None = None,
        window: str | None = None,
        grace: str | None = None,
        validate: bool = True,
    ) -> Checklist:
        """Create a checklist or edit an existing one.

        A new checklist takes effect now; an edit that changes the rule (recurrence, time zone,
        window or grace) takes effect now (``effective_from``), so the new rule never judges
        windows that closed before it existed. ``validate=False`` writes the rule unchecked, as a
        hand edit in the console would (schedule-sync then reports it).
        """
        validate_checklist_id(checklist_id)
        current = self.get_checklist(checklist_id)
        base = current or Checklist(checklist_id=checklist_id, recurrence=recurrence, created_at=now,
                                    effective_from=now)
        updated = base.with_changes(
            recurrence=recurrence, name=name or base.name, timezone=timezone or None, window=window or None,
            grace=grace or None, updated_at=now, revision=base.revision + 1,
        )
        if validate:
            updated.parsed()
        if current is None:
            self._create_checklist(updated)
            return updated
        if updated.rule() != current.rule():
            updated = updated.with_changes(effective_from=now)
        self._update_checklist(updated, current.revision)
        return updated

    def _create_checklist(self, checklist: Checklist) -> None:
        try:
            self.client.put_item(TableName=self.name, Item=serialize(checklist.to_item()),
                                 ConditionExpression="attribute_not_exists(pk)")
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                raise Conflict(f"checklist {checklist.checklist_id} was created meanwhile; try again") from error
            raise_transient(error)
            raise

    def _update_checklist(self, checklist: Checklist, expected_revision: int) -> None:
        """Write only the fields a user owns, conditional on the revision read. The evaluation's
        ``evaluated_until`` and schedule-sync's notes are never written back from a stale read."""
        item = checklist.to_item()
        owned = ("name", "recurrence", "timezone", "window", "grace", "status", "updated_at", "effective_from",
                 "revision")
        sets = [f"#{n} = :{n}" for n in owned if n in item]
        removes = [f"#{n}" for n in owned if n not in item]
        values = {f":{n}": item[n] for n in owned if n in item}
        values[":expected"] = expected_revision
        expression = "SET " + ", ".join(sets) + (" REMOVE " + ", ".join(removes) if removes else "")
        try:
            self.client.update_item(
                TableName=self.name, Key=serialize(keys.checklist_key(checklist.checklist_id)),
                UpdateExpression=expression,
                ConditionExpression="attribute_exists(pk) AND #revision = :expected",
                ExpressionAttributeNames={f"#{n}": n for n in owned},
                ExpressionAttributeValues=serialize(values),
            )
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                raise Conflict(f"checklist {checklist.checklist_id} changed while being written; try again") from error
            raise_transient(error)
            raise

    def _require(self, checklist_id: str) -> Checklist:
        checklist = self.get_checklist(checklist_id)
        if checklist is None:
            raise NotFound(f"checklist {checklist_id!r} does not exist")
        return checklist

    def pause_checklist(self, checklist_id: str, now: datetime) -> Checklist:
        current = self._require(checklist_id)
        if current.status is Status.PAUSED:
            return current
        updated = current.with_changes(status=Status.PAUSED, updated_at=now, revision=current.revision + 1)
        self._update_checklist(updated, current.revision)
        return updated

    def resume_checklist(self, checklist_id: str, now: datetime) -> Checklist:
        """Resume; the rule takes effect again now, so the pause is never back-filled."""
        current = self._require(checklist_id)
        if current.status is Status.ACTIVE:
            return current
        updated = current.with_changes(status=Status.ACTIVE, updated_at=now, effective_from=now,
                                       revision=current.revision + 1)
        self._update_checklist(updated, current.revision)
        return updated

    def move_effective_from(self, checklist_id: str, to: datetime) -> bool:
        """Safety net for rule changes written around this adapter (a hand edit in the console):
        move ``effective_from`` forward to ``to``; never back."""
        return self._move_forward(checklist_id, "effective_from", to)

    def delete_checklist(self, checklist_id: str) -> bool:
        """Delete the checklist and its assignments. Performed and missed checks stay: history is kept."""
        assignments = [item for item in self._query_prefix(keys.checklist_pk(checklist_id), keys.assignment_prefix())]
        self.batch_write([{"DeleteRequest": {"Key": serialize({"pk": a["pk"], "sk": a["sk"]})}} for a in assignments])
        self.batch_write([{"DeleteRequest": {"Key": serialize(keys.watermark_key(checklist_id))}}])
        try:
            response = self.client.delete_item(
                TableName=self.name, Key=serialize(keys.checklist_key(checklist_id)), ReturnValues="ALL_OLD")
        except ClientError as error:
            raise_transient(error)
            raise
        return bool(response.get("Attributes"))

    def record_schedule_sync(self, checklist_id: str, revision: int, *, schedule: Mapping[str, Any] | None,
                             error: Mapping[str, Any] | None) -> bool:
        """Note on the checklist what schedule-sync did (or why it could not). Does not touch the rule
        fields, so the stream record this write causes is recognised as a no-op. Returns False when
        the checklist changed or vanished meanwhile (its own stream record will be synced)."""
        sets, removes, values = [], [], {":rev": revision}
        for name, value in (("schedule", schedule), ("sync_error", error)):
            if value is None:
                removes.append(name)
            else:
                sets.append(f"{name} = :{name}")
                values[f":{name}"] = dict(value)
        expression = ("SET " + ", ".join(sets) if sets else "") + (" REMOVE " + ", ".join(removes) if removes else "")
        return self._conditional(
            "update_item", Key=serialize(keys.checklist_key(checklist_id)), UpdateExpression=expression.strip(),
            ConditionExpression="attribute_exists(pk) AND revision = :rev", ExpressionAttributeValues=serialize(values),
        )

    def advance_watermark(self, checklist_id: str, to: datetime) -> bool:
        """Move the checklist's ``evaluated_until`` watermark forward to ``to``; never backwards. False
        when it already was there (a retry or a re-run). It is an item of its own
        (:func:`keys.watermark_key`), so this write does not wake schedule-sync."""
        return self._conditional(
            "update_item", Key=serialize(keys.watermark_key(checklist_id)),
            UpdateExpression="SET evaluated_until = :to, checklist_id = :checklist, #type = :type",
            ConditionExpression="attribute_not_exists(evaluated_until) OR evaluated_until < :to",
            ExpressionAttributeNames={"#type": "type"},
            ExpressionAttributeValues=serialize({":to": to_utc_iso(to), ":checklist": checklist_id,
                                                 ":type": "watermark"}),
        )

    # -- equipment assignments -------------------------------------------------------------------
    def assign_equipment(self, checklist_id: str, equipment_ids: Iterable[str], at: datetime,
                         progress: Callable[[int], None] | None = None) -> int:
        """Attach equipment from ``at`` on; returns how many were not attached before.

        Equipment already attached keeps its original ``assigned_at`` (assigning a fleet file twice
        changes nothing); equipment unassigned earlier starts a new period and keeps the old one.
        The checklist's assignments are read once, so give the whole fleet in one call (in chunks,
        each call would read every assignment again); ``progress(n)`` counts ids as they are done,
        new ones in sorted order first.
        """
        self._require(checklist_id)
        ids = sorted({validate_equipment_id(e) for e in equipment_ids})
        # Raw items: one damaged assignment must not stop the rest of the fleet from being assigned.
        existing = {item["equipment_id"]: item for item in
                    self._query_prefix(keys.checklist_pk(checklist_id), keys.assignment_prefix())}
        puts = []
        for equipment_id in (e for e in ids if e not in existing):
            shard = shard_of(equipment_id)
            item = {
                **keys.assignment_key(checklist_id, shard, equipment_id),
                "type": "assignment",
                "gsi1pk": keys.equipment_pk(equipment_id),
                "gsi1sk": f"ASSIGNMENT#{checklist_id}",
                "checklist_id": checklist_id,
                "equipment_id": equipment_id,
                "shard": shard,
                "assigned_at": to_utc_iso(at),
            }
            puts.append({"PutRequest": {"Item": serialize(item)}})
        self.batch_write(puts, progress)
        reassigned = 0
        for equipment_id in (e for e in ids if e in existing and existing[e].get("unassigned_at")):
            previous = existing[equipment_id]
            period = {"assigned_at": previous.get("assigned_at"), "unassigned_at": previous["unassigned_at"]}
            reassigned += self._conditional(  # False: re-assigned concurrently
                "update_item",
                Key=serialize(keys.assignment_key(checklist_id, shard_of(equipment_id), equipment_id)),
                UpdateExpression="SET assigned_at = :at, earlier_periods = "
                                 "list_append(if_not_exists(earlier_periods, :none), :period) REMOVE unassigned_at",
                ConditionExpression="unassigned_at = :unassigned",
                ExpressionAttributeValues=serialize({":at": to_utc_iso(at), ":none": [], ":period": [period],
                                                     ":unassigned": period["unassigned_at"]}),
            )
        if progress is not None:
            progress(len(ids) - len(puts))  # already attached (or re-attached just now)
        return len(puts) + reassigned

    def unassign_equipment(self, checklist_id: str, equipment_ids: Iterable[str], at: datetime) -> int:
        """Detach equipment from ``at`` on; the assignment item stays, so past windows keep counting it."""
        count = 0
        for equipment_id in sorted({validate_equipment_id(e) for e in equipment_ids}):
            key = keys.assignment_key(checklist_id, shard_of(equipment_id), equipment_id)
            count += self._conditional(  # False: not assigned, or already unassigned
                "update_item", Key=serialize(key), UpdateExpression="SET unassigned_at = :at",
                ConditionExpression="attribute_exists(pk) AND attribute_not_exists(unassigned_at)",
                ExpressionAttributeValues=serialize({":at": to_utc_iso(at)}),
            )
        return count

    def count_assignments(self, checklist_id: str) -> int:
        """How many pieces of equipment were ever assigned to the checklist (Select COUNT)."""
        pages = self._pages(Select="COUNT", KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
                            ExpressionAttributeValues=serialize({":pk": keys.checklist_pk(checklist_id),
                                                                 ":prefix": keys.assignment_prefix()}))
        return sum(int(page.get("Count", 0)) for page in pages)

    def assignments(self, checklist_id: str, shard: int | None = None) -> list[Assignment]:
        items = self._query_prefix(keys.checklist_pk(checklist_id), keys.assignment_prefix(shard))
        return [_assignment(checklist_id, item) for item in items]

    # -- performed checks -------------------------------------------------------------------------
    @staticmethod
    def performed_check_item(check: PerformedCheck, recorded_at: datetime) -> dict[str, Any]:
        validate_checklist_id(check.checklist_id, "checklist")
        validate_equipment_id(check.equipment_id)
        at = to_utc_iso(check.performed_at)
        return {
            **keys.performed_key(check.checklist_id, shard_of(check.equipment_id), check.equipment_id, at),
            "type": "performed_check",
            "gsi1pk": keys.equipment_pk(check.equipment_id),
            "gsi1sk": f"{at}#PERFORMED#{check.checklist_id}",
            "checklist_id": check.checklist_id,
            "equipment_id": check.equipment_id,
            "performed_at": at,
            "recorded_at": to_utc_iso(recorded_at),
        }

    def record_performed_check(self, check: PerformedCheck, recorded_at: datetime) -> None:
        """Record a performed check; recording the same (checklist, equipment, instant) twice keeps one."""
        self.record_performed_checks([check], recorded_at)

    def record_performed_checks(self, checks: Iterable[PerformedCheck], recorded_at: datetime) -> int:
        items = {}
        for check in checks:
            item = self.performed_check_item(check, recorded_at)
            items[(item["pk"], item["sk"])] = item  # BatchWriteItem rejects duplicate keys in one call
        self.batch_write([{"PutRequest": {"Item": serialize(item)}} for item in items.values()])
        return len(items)

    def performed_checks(self, checklist_id: str, shard: int, start: datetime, end: datetime) -> list[PerformedCheck]:
        """Performed checks of one shard with ``start <= performed_at < end``: one Query."""
        items = self._query_range(keys.performed_pk(checklist_id, shard), to_utc_iso(start), to_utc_iso(end))
        checks = []
        for item in items:
            performed_at = parse_instant(item["performed_at"], "performed_at")
            if performed_at < end:
                checks.append(PerformedCheck(checklist_id, item["equipment_id"], performed_at))
        return checks

    def performed_check_keys(self, checklist_id: str, shard: int, low: str, high: str) -> list[tuple[str, str]]:
        """(equipment id, performed_at) of one shard's performed checks with ``low <= performed_at <= high``
        (UTC ISO strings), read from the sort key alone: one Query projected to ``sk``."""
        items = self._query_range(keys.performed_pk(checklist_id, shard), low, high, attributes=("sk",))
        # sk = "<performed_at>#<equipment>"; performed_at is always 20 characters.
        return [(item["sk"][21:], item["sk"][:20]) for item in items]

    def performed_checks_of_equipment(self, equipment_id: str, low: str, until: str) -> list[tuple[str, str]]:
        """(checklist id, performed_at) of the equipment's performed checks, on every checklist, performed
        between ``low`` and ``until`` included (UTC ISO strings): one ByEquipment Query."""
        items = self._query_range(keys.equipment_pk(equipment_id), low, until + keys.HIGH, keys.BY_EQUIPMENT_INDEX)
        return [(str(item.get("checklist_id")), str(item["performed_at"]))
                for item in items if item.get("type") == "performed_check"]

    def performed_checks_of_checklist(self, checklist_id: str, start: datetime, end: datetime) -> list[PerformedCheck]:
        checks: list[PerformedCheck] = []
        for shard in range(SHARD_COUNT):
            checks.extend(self.performed_checks(checklist_id, shard, start, end))
        return sorted(checks, key=lambda c: (c.performed_at, c.equipment_id))

    # -- missed checks ----------------------------------------------------------------------------
    def put_missed_check(self, item: Mapping[str, Any]) -> bool:
        """Conditional put: True when written now, False when it was already recorded (a re-run)."""
        return self._conditional("put_item", Item=serialize(item), ConditionExpression="attribute_not_exists(pk)")

    def missed_checks_of_checklist(self, checklist_id: str, start: datetime, end: datetime,
                                   attributes: Sequence[str] = ()) -> list[dict[str, Any]]:
        """Missed checks whose window started in ``[start, end)`` (only ``attributes`` when given)."""
        items = self._query_range(keys.missed_pk(checklist_id), to_utc_iso(start), to_utc_iso(end),
                                  attributes=attributes)
        return [item for item in items if item["window_start"] < to_utc_iso(end)]

    def missed_equipment_of_window(self, checklist_id: str, window_start: datetime) -> list[str]:
        """Equipment with a missed check for the window starting at ``window_start``: one Query."""
        items = self._query_prefix(keys.missed_pk(checklist_id), f"{to_utc_iso(window_start)}#")
        return sorted(item["equipment_id"] for item in items)

    def open_window(self, checklist_id: str, window: Window, judged_by: Mapping[str, Any]) -> None:
        """Start the window's judged-window record before any of its missed checks is written: the
        window, the rule it is judged by (the first one written stays) and its fleet index entry.
        Unconditional and idempotent; the record counts as judged once claimed (:meth:`claim_window`)."""
        fields = judged_window_fields(checklist_id, window, judged_by)
        rule = fields.pop("judged_by")
        names = {f"#f{i}": name for i, name in enumerate(fields)}
        values = {f":f{i}": value for i, value in enumerate(fields.values())}
        try:
            self.client.update_item(
                TableName=self.name, Key=serialize(keys.judged_window_key(checklist_id, fields["window_start"])),
                UpdateExpression="SET " + ", ".join([*(f"#f{i} = :f{i}" for i in range(len(fields))),
                                                     "#rule = if_not_exists(#rule, :rule)"]),
                ExpressionAttributeNames={**names, "#rule": "judged_by"},
                ExpressionAttributeValues=serialize({**values, ":rule": rule}),
            )
        except ClientError as error:
            raise_transient(error)
            raise

    def claim_window(self, checklist_id: str, summary: Mapping[str, Any], execution: str) -> WindowClaim:
        """Record the judged window and claim it for ``execution``, in one conditional write that
        exactly one execution can win per (checklist, window): the first to judge the window. A
        retry or redrive of that execution (same execution id) wins again; any other execution
        loses and writes nothing (the winner's totals stay). Only the winner may announce the
        window, and only while ``announced`` is false, so the event goes out once."""
        fields = {
            "type": "judged_window",
            "checklist_id": checklist_id,
            **summary,
            "execution": execution,
        }
        names = {f"#f{i}": name for i, name in enumerate(fields)}
        values = {f":f{i}": value for i, value in enumerate(fields.values())}
        # A retry of the winner (a whole re-run of PlanEvaluation re-judges, writing nothing new)
        # keeps what its first attempt recorded.
        sets = [f"#f{i} = if_not_exists(#f{i}, :f{i})" if name == "newly_recorded" else f"#f{i} = :f{i}"
                for i, name in enumerate(fields)]
        try:
            response = self.client.update_item(
                TableName=self.name, Key=serialize(keys.judged_window_key(checklist_id, str(summary["window_start"]))),
                UpdateExpression="SET " + ", ".join([*sets, "#announced = if_not_exists(#announced, :no)"]),
                ConditionExpression="attribute_not_exists(#execution) OR #execution = :execution",
                ExpressionAttributeNames={**names, "#announced": "announced", "#execution": "execution"},
                ExpressionAttributeValues=serialize({**values, ":no": False, ":execution": execution}),
                ReturnValues="ALL_NEW", ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise_transient(error)
                raise
            held = deserialize(error.response.get("Item") or {})
            return WindowClaim(won=False, announced=bool(held.get("announced")), holder=str(held.get("execution")))
        item = deserialize(response.get("Attributes") or {})
        return WindowClaim(won=True, announced=bool(item.get("announced")), holder=execution)

    def hand_over_window_claim(self, checklist_id: str, window_start: datetime, from_execution: str,
                               to_execution: str) -> bool:
        """Give the claim on a window that ``from_execution`` judged but never announced (it failed
        for good: its window is in the evaluation dead-letter queue) to ``to_execution`` (the
        execution replaying it), which then announces the window when it judges it. False when
        ``from_execution`` does not hold the claim or the window was announced."""
        return self._conditional(
            "update_item", Key=serialize(keys.judged_window_key(checklist_id, to_utc_iso(window_start))),
            UpdateExpression="SET #execution = :to, handed_over_from = :from",
            ConditionExpression="#execution = :from AND announced = :no",
            ExpressionAttributeNames={"#execution": "execution"},
            ExpressionAttributeValues=serialize({":to": to_execution, ":from": from_execution, ":no": False}),
        )

    def judged_window(self, checklist_id: str, window_start: datetime) -> dict[str, Any] | None:
        """The record an evaluation wrote for the window starting at ``window_start``, if it was judged
        (claimed: a record only opened by an execution that failed before closing it does not count)."""
        item = self._get(keys.judged_window_key(checklist_id, to_utc_iso(window_start)))
        return item if item and item.get("execution") else None

    def judged_windows(self, checklist_id: str, start: datetime, end: datetime) -> list[dict[str, Any]]:
        """Judged-window records of the windows that started in ``[start, end)``, oldest first: one Query."""
        low, high = to_utc_iso(start), to_utc_iso(end)
        items = self._query_range(keys.checklist_pk(checklist_id), keys.judged_window_key(checklist_id, low)["sk"],
                                  keys.judged_window_key(checklist_id, high)["sk"])
        return [item for item in items if item["window_start"] < high and item.get("execution")]

    def mark_window_announced(self, checklist_id: str, window_start: str) -> None:
        try:
            self.client.update_item(
                TableName=self.name, Key=serialize(keys.judged_window_key(checklist_id, window_start)),
                UpdateExpression="SET announced = :yes", ExpressionAttributeValues=serialize({":yes": True}),
            )
        except ClientError as error:
            raise_transient(error)
            raise

    def checklists_judged(self, start: datetime, end: datetime) -> list[str]:
        """Every checklist, deleted ones included, with a window judged (or being judged) that started
        in ``[start, end)``: one ByPeriod Query per month, reading one index entry per window."""
        low, high = to_utc_iso(start), to_utc_iso(end)
        found: set[str] = set()
        for month in _months(low[:7], high[:7]):
            for item in self._query_range(keys.fleet_windows_pk(month), low, high, keys.BY_PERIOD_INDEX,
                                          ("checklist_id", "window_start")):
                if item["window_start"] < high:
                    found.add(str(item["checklist_id"]))
        return sorted(found)

    def missed_checks_of_fleet(self, start: datetime, end: datetime,
                               attributes: Sequence[str] = ()) -> list[dict[str, Any]]:
        """Missed checks of every checklist, deleted ones included, whose window started in
        ``[start, end)``: the checklists judged then (:meth:`checklists_judged`), then one Query of
        each one's missed checks (only ``attributes`` when given)."""
        return [item for checklist_id in self.checklists_judged(start, end)
                for item in self.missed_checks_of_checklist(checklist_id, start, end, attributes)]

    def missed_checks_of_equipment(self, equipment_id: str, checklist_ids: Iterable[str], start: datetime,
                                   end: datetime) -> list[dict[str, Any]]:
        """Missed checks of one piece of equipment on the given checklists whose window started in
        ``[start, end)``: each checklist's judged windows (one Query), then the missed-check keys of
        those windows for this equipment (BatchGetItem), so the cost follows the number of windows,
        never the size of the fleet."""
        wanted = []
        for checklist_id in sorted(set(checklist_ids)):
            wanted.extend(keys.missed_key(checklist_id, str(window["window_start"]), equipment_id)
                          for window in self.judged_windows(checklist_id, start, end))
        return sorted(self.batch_get(wanted), key=lambda item: (item["window_start"], item["checklist_id"]))

    def batch_get(self, item_keys: Sequence[Mapping[str, str]]) -> list[dict[str, Any]]:
        """BatchGetItem in chunks of 100 (eventually consistent), retrying UnprocessedKeys with backoff."""
        found: list[dict[str, Any]] = []
        for offset in range(0, len(item_keys), 100):
            found += self._batch("batch_get_item", "UnprocessedKeys",
                                 {self.name: {"Keys": [serialize(k) for k in item_keys[offset : offset + 100]]}})
        return found

    def checks_of_equipment(self, equipment_id: str, start: datetime, end: datetime) -> list[dict[str, Any]]:
        """Performed and missed checks of one piece of equipment in ``[start, end)``, oldest first, on
        the checklists it is assigned to (performed checks: one ByEquipment Query; missed checks:
        :meth:`missed_checks_of_equipment`)."""
        low, high = to_utc_iso(start), to_utc_iso(end)
        performed = [item for item in self._query_range(keys.equipment_pk(equipment_id), low, high,
                                                        keys.BY_EQUIPMENT_INDEX)
                     if item.get("type") == "performed_check" and item["gsi1sk"][:20] < high]
        checklists = {a.checklist_id for a in self.assignments_of_equipment(equipment_id)}
        missed = self.missed_checks_of_equipment(equipment_id, checklists, start, end)
        return sorted([*performed, *missed],
                      key=lambda item: str(item.get("performed_at") or item.get("window_start")))

    def assignments_of_equipment(self, equipment_id: str) -> list[Assignment]:
        """The equipment's assignments to every (existing) checklist: one ByEquipment Query."""
        items = self.query(
            keys.BY_EQUIPMENT_INDEX,
            KeyConditionExpression="gsi1pk = :pk AND begins_with(gsi1sk, :prefix)",
            ExpressionAttributeValues=serialize({":pk": keys.equipment_pk(equipment_id), ":prefix": "ASSIGNMENT#"}),
        )
        return [_assignment(str(item["checklist_id"]), item) for item in items]

    def dismiss_missed_check(self, checklist_id: str, window_start: datetime, equipment_id: str, *,
                             reason: str, by: str, at: datetime) -> dict[str, Any]:
        """Mark a missed check dismissed (it is never deleted). Dismissing twice, or a record that
        does not exist, is an error."""
        if not reason.strip():
            raise InvalidInput("reason", "a dismissal needs a reason")
        if not by.strip():
            raise InvalidInput("by", "a dismissal needs the name of who dismissed it")
        key = keys.missed_key(checklist_id, to_utc_iso(window_start), equipment_id)
        dismissal = {"reason": reason.strip(), "by": by.strip(), "at": to_utc_iso(at)}
        try:
            response = self.client.update_item(
                TableName=self.name, Key=serialize(key), UpdateExpression="SET dismissal = :d",
                ConditionExpression="attribute_exists(pk) AND attribute_not_exists(dismissal)",
                ExpressionAttributeValues=serialize({":d": dismissal}), ReturnValues="ALL_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                old = error.response.get("Item")
                if not old:
                    raise NotFound(
                        f"no missed check for {equipment_id} on checklist {checklist_id} in the window "
                        f"starting {to_utc_iso(window_start)}") from error
                previous = deserialize(old).get("dismissal", {})
                raise Conflict(f"already dismissed by {previous.get('by')} at {previous.get('at')}: "
                               f"{previous.get('reason')}") from error
            raise_transient(error)
            raise
        return deserialize(response["Attributes"])

    def adopt_checklist(self, checklist_id: str) -> bool:
        """Give a checklist written around this adapter (an item put by hand) the ``revision`` a new
        one has (0), so that schedule-sync's notes and later edits, all conditional on the revision,
        apply to it. False when it has one already (or is gone)."""
        return self._conditional(
            "update_item", Key=serialize(keys.checklist_key(checklist_id)), UpdateExpression="SET revision = :zero",
            ConditionExpression="attribute_exists(pk) AND attribute_not_exists(revision)",
            ExpressionAttributeValues=serialize({":zero": 0}),
        )


def _with_watermark(item: Mapping[str, Any], watermark: object) -> dict[str, Any]:
    """The checklist item with the evaluated-until watermark from its own item, when that is later
    (an older deployment kept it on the checklist item itself)."""
    if isinstance(watermark, str) and str(item.get("evaluated_until") or "") < watermark:
        return {**item, "evaluated_until": watermark}
    return dict(item)


def _assignment(checklist_id: str, item: Mapping[str, Any]) -> Assignment:
    return Assignment(
        checklist_id=checklist_id,
        equipment_id=str(item["equipment_id"]),
        assigned_at=parse_instant(item["assigned_at"], "assigned_at"),
        unassigned_at=parse_instant(item["unassigned_at"], "unassigned_at") if item.get("unassigned_at") else None,
        earlier_periods=tuple(
            (parse_instant(p["assigned_at"], "assigned_at"), parse_instant(p["unassigned_at"], "unassigned_at"))
            for p in item.get("earlier_periods") or ()
        ),
    )


def _months(first: str, last: str) -> Iterator[str]:
    year, month = int(first[:4]), int(first[5:7])
    while f"{year:04d}-{month:02d}" <= last:
        yield f"{year:04d}-{month:02d}"
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
