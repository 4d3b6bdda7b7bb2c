"""The audit trail's items (#31, docs/audit.md): reading a stream record of a managed item into an
:class:`~missed_checks.audit_trails.auditing.ObjectChange`, and the entries themselves.

Each side of a record is read by its kind's own reader (the one the product reads the item with) and
shown as the API shows the object (``to_dict()``), without table keys or the audit stamps. An image
no reader can read raises (InvalidInput naming the attribute): the audit function reports that
record as failed, so it is retried and then lands in the audit dead-letter queue, never dropped.

An entry is written once (``attribute_not_exists(pk)``: a replayed record finds it and writes
nothing) and never updated or deleted. Reads: one object's entries (``AUDIT#<kind>#<id>``) and every
entry of a site (ByPeriod ``AUDIT#SITE#<site>``), oldest first, in pages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from missed_checks.audit_trails.audit_entry import AuditEntry, ChangeAction, validate_kind
from missed_checks.audit_trails.auditing import ObjectChange, Stamp
from missed_checks.aws.table import keys
from missed_checks.aws.table.assignments import assignment_of
from missed_checks.aws.table.base import TableClient, deserialize, serialize
from missed_checks.aws.table.calendars import calendar_of
from missed_checks.aws.table.checklists import checklist_of
from missed_checks.aws.table.defects import defect_of
from missed_checks.aws.table.grants import grant_of
from missed_checks.aws.table.out_of_service import period_of
from missed_checks.aws.table.registry import registered_of
from missed_checks.aws.table.sites import site_of
from missed_checks.aws.table.subscriptions import subscription_of
from missed_checks.aws.table.windows import missed_record_of
from missed_checks.errors import InvalidInput, describe
from missed_checks.paging import Page
from missed_checks.timefmt import parse_instant, to_utc_iso_micro

ITEM_TYPE = "audit_entry"
_SEQUENCE_DIGITS = 40  # a DynamoDB stream sequence number has at most 40 digits


def kind_of(item_keys: Mapping[str, Any]) -> str | None:
    """Which managed object a table key holds (None: an item nobody manages, not audited)."""
    pk, sk = str(item_keys.get("pk") or ""), str(item_keys.get("sk") or "")
    if pk.startswith(keys.AUDIT_PREFIX):
        return None
    by_sk = {keys.CHECKLIST_SK: "checklist", keys.CALENDAR_SK: "calendar", keys.SUBSCRIPTION_SK: "subscription",
             keys.SITE_SK: "site", keys.REGISTERED_SK: "equipment", keys.GRANT_SK: "grant",
             keys.DEFECT_SK: "defect"}  # defects (#33)
    if sk in by_sk:
        return by_sk[sk]
    if keys.checklist_id_of(pk) is not None and sk.startswith(keys.assignment_prefix()):
        return "assignment"
    if pk == keys.OUT_OF_SERVICE_PK:
        return "out_of_service"
    if pk.startswith("MISSED#"):
        return "dismissal"
    return None


_READERS: dict[str, tuple[Callable[[Mapping[str, Any]], Any], str, str | None]] = {
    "checklist": (checklist_of, "checklist_id", "site_id"),
    "calendar": (calendar_of, "calendar_id", "site_id"),
    "subscription": (subscription_of, "subscription_id", "site_id"),
    "site": (site_of, "site_id", "site_id"),
    "equipment": (registered_of, "equipment_id", "site_id"),
    "grant": (grant_of, "principal", None),
    "defect": (defect_of, "defect_id", "site_id"),  # #33: opened, resolved
}
"""Kinds whose object names its own id and site: its reader, and the attributes holding them."""


def _shown(kind: str, image: Mapping[str, Any] | None) -> tuple[str, dict[str, Any], str | None] | None:
    """One side of a record as (object id, the object as the API shows it, its own site when it names
    one); None when that side is absent (or, for a missed check, holds no dismissal)."""
    if image is None:
        return None
    if kind in _READERS:
        reader, id_attribute, site_attribute = _READERS[kind]
        found = reader(image)
        site = getattr(found, site_attribute, None) if site_attribute else None
        return str(getattr(found, id_attribute)), found.to_dict(), site if isinstance(site, str) else None
    if kind == "assignment":
        checklist_id = keys.checklist_id_of(str(image.get("pk") or "")) or str(image.get("checklist_id"))
        assignment = assignment_of(checklist_id, image)
        return f"{checklist_id}/{assignment.equipment_id}", assignment.to_dict(), None
    if kind == "out_of_service":
        period = period_of(image)
        document = period.to_dict()
        return f"{period.equipment_id}/{document['from']}", document, None
    if kind == "dismissal":
        record = missed_record_of(image)
        checklist_id = str(image.get("checklist_id"))
        if record.dismissal is None:
            return None
        return f"{checklist_id}/{record.window_start}/{record.equipment_id}", {
            "checklist_id": checklist_id, "equipment_id": record.equipment_id, "window_start": record.window_start,
            "window_end": record.window_end, **record.dismissal.to_dict()}, None
    raise InvalidInput("kind", f"{describe(kind)} is no kind the audit trail reads")


def _stamp_of(image: Mapping[str, Any] | None) -> Stamp | None:
    """The audit stamp an image carries (None: none, or one a hand edit made unreadable)."""
    if image is None:
        return None
    by, at = image.get("changed_by"), image.get("changed_at")
    if not isinstance(by, str) or not by or not isinstance(at, str):
        return None
    try:
        when = parse_instant(at, "changed_at")
    except InvalidInput:
        return None
    change_id = image.get("change_id")
    return Stamp(by=by, at=when, deleting=image.get("deleting") is True,
                 change_id=change_id if isinstance(change_id, str) else "")


class AuditItems(TableClient):
    """The audit function's reads and writes, and the trail's reads
    (:class:`missed_checks.audit_trails.ports.AuditWriter` and ``AuditReader``)."""

    # -- from the stream ------------------------------------------------------------------------
    def change_of_record(self, record: Mapping[str, Any], now: datetime) -> ObjectChange | None:
        """:meth:`object_change` of one stream record as Lambda hands it to the audit function or
        GetRecords answers it (images in DynamoDB JSON; its creation time epoch seconds or a datetime;
        ``now`` when it has none)."""
        stream = record.get("dynamodb")
        if not isinstance(stream, Mapping):
            raise InvalidInput("dynamodb", f"stream record {record.get('eventID')} has no dynamodb section")
        created = stream.get("ApproximateCreationDateTime")
        observed = (created if isinstance(created, datetime) else
                    datetime.fromtimestamp(float(created), UTC) if isinstance(created, int | float | Decimal) else now)
        images = [deserialize(stream[name]) if stream.get(name) else None for name in ("OldImage", "NewImage")]
        return self.object_change(deserialize(stream.get("Keys") or {}), images[0], images[1],
                                  event_id=str(record.get("eventID")), sequence=str(stream.get("SequenceNumber") or 0),
                                  observed_at=observed.astimezone(UTC))

    def object_change(self, item_keys: Mapping[str, Any], old_image: Mapping[str, Any] | None,
                      new_image: Mapping[str, Any] | None, *, event_id: str, sequence: str,
                      observed_at: datetime) -> ObjectChange | None:
        """The change one stream record reports (images deserialized), None when its item is none a
        person manages. Raises InvalidInput when a side cannot be read (a hand edit gone wrong)."""
        kind = kind_of(item_keys)
        if kind is None:
            return None
        before = _shown(kind, old_image)
        after = _shown(kind, new_image)
        shown = after or before
        if shown is None:  # a missed check written or removed without a dismissal: nothing managed
            return None
        object_id, _, own_site = shown
        site_id = own_site if kind in _READERS else self._site_of(kind, after or before, new_image or old_image or {})
        return ObjectChange(kind=kind, object_id=object_id, site_id=site_id,
                            before=before[1] if before else None, after=after[1] if after else None,
                            stamp_before=_stamp_of(old_image), stamp_after=_stamp_of(new_image),
                            event_id=event_id, sequence=f"{int(sequence):0{_SEQUENCE_DIGITS}d}",
                            observed_at=observed_at)

    def _site_of(self, kind: str, shown: tuple[str, dict[str, Any], str | None] | None,
                 image: Mapping[str, Any]) -> str | None:
        """The site of an assignment or a dismissal (its checklist's) or of an out-of-service period
        (its equipment's, as registered): one GetItem; a checklist deleted meanwhile is at the site its
        own last audit entry names. None when it has none."""
        if kind == "out_of_service":
            registered = self._get(keys.registered_key(str(image.get("equipment_id"))), consistent=False)
            site = (registered or {}).get("site_id")
            return site if isinstance(site, str) else None
        checklist_id = str(image.get("checklist_id") or "")
        if not checklist_id and shown is not None:
            checklist_id = shown[0].split("/", 1)[0]
        checklist = self._get(keys.checklist_key(checklist_id), consistent=False)
        if checklist is not None:
            site = checklist.get("site_id")
            return site if isinstance(site, str) else None
        latest = self.latest_audit_entry("checklist", checklist_id)
        return latest.site_id if latest else None

    # -- the entries ----------------------------------------------------------------------------
    def put_audit_entry(self, entry: AuditEntry) -> bool:
        """Write the entry once; False when its stream record's entry is there already (a replay)."""
        return self._put_new(audit_entry_item(entry)) is None

    def object_trail(self, kind: str, object_id: str, after: str | None, limit: int) -> Page[AuditEntry]:
        condition = "pk = :pk" + (" AND sk > :after" if after else "")
        values = {":pk": keys.audit_pk(validate_kind(kind), object_id), **({":after": after} if after else {})}
        return self._page(None, "sk", condition, values, limit)

    def latest_audit_entry(self, kind: str, object_id: str) -> AuditEntry | None:
        for item in self.query(KeyConditionExpression="pk = :pk", ScanIndexForward=False, Limit=1,
                               ExpressionAttributeValues=serialize({":pk": keys.audit_pk(kind, object_id)})):
            return audit_entry_of(item)
        return None

    def site_trail(self, site_id: str | None, after: str | None, limit: int) -> Page[AuditEntry]:
        condition = "gsi2pk = :pk" + (" AND gsi2sk > :after" if after else "")
        values = {":pk": keys.audit_site_pk(site_id), **({":after": after} if after else {})}
        return self._page(keys.BY_PERIOD_INDEX, "gsi2sk", condition, values, limit)

    def _page(self, index: str | None, sort_key: str, condition: str, values: Mapping[str, Any],
              limit: int) -> Page[AuditEntry]:
        """``limit`` entries, oldest first, and the position of the last when more follow."""
        found: list[AuditEntry] = []
        last: str | None = None
        for item in self.query(index, KeyConditionExpression=condition, ExpressionAttributeValues=serialize(values),
                               Limit=limit + 1):
            if len(found) == limit:
                return Page(found, last)
            found.append(audit_entry_of(item))
            last = str(item[sort_key])
        return Page(found, None)


def batch_records(streams: Any, batch: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The records of a stream batch Lambda gave up on (its OnFailure record's ``DDBStreamBatchInfo``),
    read from the stream again with ``streams`` (a DynamoDB Streams client), first to last. Raises
    ClientError when the stream no longer holds them (it keeps records 24 hours)."""
    last = int(batch["endSequenceNumber"])
    iterator = streams.get_shard_iterator(
        StreamArn=batch["streamArn"], ShardId=batch["shardId"], ShardIteratorType="AT_SEQUENCE_NUMBER",
        SequenceNumber=batch["startSequenceNumber"])["ShardIterator"]
    while iterator:
        page = streams.get_records(ShardIterator=iterator, Limit=1000)
        records = page.get("Records", [])
        for record in records:
            number = int(record["dynamodb"]["SequenceNumber"])
            if number > last:
                return
            yield record
            if number == last:  # the batch's last record: no page after it is asked for
                return
        if not records:
            return
        iterator = page.get("NextShardIterator")


def audit_entry_item(entry: AuditEntry) -> dict[str, Any]:
    """The entry's item: its object's trail, and its site's (ByPeriod)."""
    changed_at = to_utc_iso_micro(entry.changed_at)
    return {**keys.audit_key(entry.kind, entry.object_id, entry.sequence, entry.event_id),
            "type": ITEM_TYPE, "gsi2pk": keys.audit_site_pk(entry.site_id),
            "gsi2sk": keys.audit_site_sk(entry.kind, entry.object_id, entry.sequence, entry.event_id),
            "kind": entry.kind, "object_id": entry.object_id, "site_id": entry.site_id, "changed_at": changed_at,
            "changed_by": entry.changed_by, "action": entry.action.value,
            "before": _storable(entry.before), "after": _storable(entry.after),
            "event_id": entry.event_id, "sequence": entry.sequence}


def audit_entry_of(item: Mapping[str, Any]) -> AuditEntry:
    """An entry read back (numbers in ``before``/``after`` as DynamoDB returns them: whole ones as int)."""
    return AuditEntry(kind=str(item["kind"]), object_id=str(item["object_id"]),
                      site_id=str(item["site_id"]) if item.get("site_id") else None,
                      changed_at=parse_instant(item["changed_at"], "changed_at"),
                      changed_by=str(item["changed_by"]), action=ChangeAction(item["action"]),
                      before=_plain(item.get("before")), after=_plain(item.get("after")),
                      event_id=str(item["event_id"]), sequence=str(item.get("sequence") or ""))


def _storable(value: Any) -> Any:
    """A shown object as DynamoDB stores it (a float as a Decimal: the serializer takes no float)."""
    if isinstance(value, Mapping):
        return {str(k): _storable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_storable(v) for v in value]
    if isinstance(value, float):
        return Decimal(str(value))
    return value


def _plain(value: Any) -> Any:
    """A map read back with DynamoDB's Decimals as int (or float) again, as the object showed them."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(_plain(v) for v in value)
    if isinstance(value, Decimal):
        return int(value) if value == int(value) else float(value)
    return value
