"""Readiness (#33, docs/readiness.md): one state item per piece of equipment,
``READINESS#<equipment>`` / ``READINESS``, listed per site through ByPeriod
``SITE#<site>#READINESS`` (sort key: the equipment id). Written only by the readiness function,
conditionally on its ``sequence`` (one writer wins each change); not a managed item (no audit stamp:
the change is the event, and the audit function's filter never passes it). Also the reads readiness
is computed from that no other item kind answers: the equipment's checks with their findings.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from missed_checks.aws.table import keys
from missed_checks.aws.table.assignments import AssignmentItems
from missed_checks.aws.table.base import deserialize, serialize
from missed_checks.aws.table.defects import DefectItems
from missed_checks.aws.table.notifications import NotificationItems
from missed_checks.aws.table.out_of_service import OutOfServiceItems
from missed_checks.aws.table.registry import RegistryItems
from missed_checks.aws.table.revised import RevisedItems
from missed_checks.equipment.assignments import validate_equipment_id
from missed_checks.errors import InvalidInput, describe
from missed_checks.paging import Page
from missed_checks.readiness.readiness import CheckSeen, Readiness, ReadinessRecord, State
from missed_checks.readiness.watching import TableChange
from missed_checks.sites.site import validate_site_id
from missed_checks.timefmt import parse_instant, to_utc_iso

ITEM_TYPE = "readiness"
PRE_USE_FIELDS = ("pre_use", "recurrence", "timezone", "window", "status", "closed_on")
"""What of a checklist decides its current window and whether it asks for a pre-use check."""


class ReadinessItems(RevisedItems):
    """The state items, and the equipment's checks as readiness reads them."""

    def readiness_record(self, equipment_id: str) -> ReadinessRecord | None:
        item = self._get(keys.readiness_key(validate_equipment_id(equipment_id, "equipment_id")))
        return None if item is None else readiness_record_of(item)

    def write_readiness(self, record: ReadinessRecord, *, expected_sequence: int | None) -> bool:
        if expected_sequence is None:
            return self._conditional("put_item", Item=serialize(readiness_item(record)),
                                     ConditionExpression="attribute_not_exists(pk)")
        return self._conditional("put_item", Item=serialize(readiness_item(record)),
                                 ConditionExpression="#sequence = :expected",
                                 ExpressionAttributeNames={"#sequence": "sequence"},
                                 ExpressionAttributeValues=serialize({":expected": expected_sequence}))

    def mark_announced(self, equipment_id: str, sequence: int) -> bool:
        return self._conditional("update_item", Key=serialize(keys.readiness_key(equipment_id)),
                                 UpdateExpression="SET announced = :yes", ConditionExpression="#sequence = :sequence",
                                 ExpressionAttributeNames={"#sequence": "sequence"},
                                 ExpressionAttributeValues=serialize({":yes": True, ":sequence": sequence}))

    def note_recheck(self, equipment_id: str, at: datetime | None) -> None:
        key = serialize(keys.readiness_key(equipment_id))
        if at is None:
            self._conditional("update_item", Key=key, UpdateExpression="REMOVE recheck_at",
                              ConditionExpression="attribute_exists(pk)")
        else:
            self._conditional("update_item", Key=key, UpdateExpression="SET recheck_at = :at",
                              ConditionExpression="attribute_exists(pk)",
                              ExpressionAttributeValues=serialize({":at": to_utc_iso(at)}))

    def readiness_of_site(self, site_id: str, position: str | None, limit: int) -> Page[ReadinessRecord]:
        return self._index_page(keys.site_readiness_pk(validate_site_id(site_id)), position, limit,
                                readiness_record_of)

    def checks_seen(self, equipment_id: str, low: datetime, until: datetime) -> list[CheckSeen]:
        """One ByEquipment Query of the equipment's performed checks in ``[low, until]``; a check passes
        unless one of its ``failed_items`` is critical (a check recorded before items: passing)."""
        items = self._query_range(keys.equipment_pk(equipment_id), to_utc_iso(low), to_utc_iso(until) + keys.HIGH,
                                  keys.BY_EQUIPMENT_INDEX)
        return [CheckSeen(str(item["checklist_id"]), parse_instant(str(item["performed_at"]), "performed_at"),
                          passed=not any(isinstance(failed, Mapping) and failed.get("critical")
                                         for failed in item.get("failed_items") or ()))
                for item in items if item.get("type") == "performed_check"]


class ReadinessTable(ReadinessItems, AssignmentItems, OutOfServiceItems, DefectItems, RegistryItems):
    """Readiness's :class:`missed_checks.readiness.ports.ReadinessStore`: the state items and what
    readiness is computed from."""


class WatchTable(ReadinessTable, NotificationItems):
    """The readiness function's: :class:`missed_checks.readiness.ports.WatchStore`, and the defect
    alerts' once-only records (:class:`missed_checks.evaluation.ports.NotificationRecords`)."""


def readiness_item(record: ReadinessRecord) -> dict[str, Any]:
    r = record.readiness
    return {**keys.readiness_key(r.equipment_id), "type": ITEM_TYPE,
            "gsi2pk": keys.site_readiness_pk(r.site_id), "gsi2sk": r.equipment_id,
            **{name: value for name, value in r.to_dict().items() if value is not None},
            "sequence": record.sequence, "previous": None if record.previous is None else record.previous.value,
            "changed_at": to_utc_iso(record.changed_at), "announced": record.announced,
            "recheck_at": to_utc_iso(record.recheck_at) if record.recheck_at else None}


def readiness_record_of(item: Mapping[str, Any]) -> ReadinessRecord:
    """Read a state item; a hand-edited one fails with InvalidInput naming the attribute."""
    def instant(name: str) -> datetime | None:
        value = item.get(name)
        return None if value is None else parse_instant(str(value), name)

    def state(name: str) -> State:
        try:
            return State(str(item.get(name)))
        except ValueError:
            raise InvalidInput(name, f"is {describe(item.get(name))}, not one of "
                                     f"{', '.join(s.value for s in State)}") from None

    sequence = item.get("sequence")
    changed_at = instant("changed_at")
    if changed_at is None:
        raise InvalidInput("changed_at", "is missing from the readiness item")
    readiness = Readiness(
        equipment_id=str(item["equipment_id"]), site_id=None if item.get("site_id") is None else str(item["site_id"]),
        state=state("state"), since=instant("since"), reason=str(item.get("reason") or ""),
        open_defects=tuple(str(d) for d in item.get("open_defects") or ()),
        unchecked_checklists=tuple(str(c) for c in item.get("unchecked_checklists") or ()),
        out_of_service_until=instant("out_of_service_until"), next_change_at=instant("next_change_at"))
    return ReadinessRecord(readiness, sequence=int(sequence) if sequence is not None else 0,
                           previous=state("previous") if item.get("previous") is not None else None,
                           changed_at=changed_at, announced=bool(item.get("announced")),
                           recheck_at=instant("recheck_at"))


def table_change_of_record(record: Mapping[str, Any]) -> TableChange:
    """What a stream record (as Lambda hands it, images in DynamoDB JSON) means for readiness: the
    equipment of a performed check, a defect, an out-of-service period, an assignment or a registry
    record; a pre-use checklist whose rule or flags changed (its fleet is rechecked); a defect just
    opened. A record of any other item: nothing (the mapping's filter passes none)."""
    stream = record.get("dynamodb")
    if not isinstance(stream, Mapping):
        raise InvalidInput("dynamodb", f"stream record {record.get('eventID')} has no dynamodb section")
    item_keys = deserialize(stream.get("Keys") or {})
    old, new = (deserialize(stream[name]) if stream.get(name) else {} for name in ("OldImage", "NewImage"))
    pk, sk = str(item_keys.get("pk", "")), str(item_keys.get("sk", ""))
    if sk == keys.CHECKLIST_SK:
        relevant = (old.get("pre_use") or new.get("pre_use")) and any(
            old.get(name) != new.get(name) for name in PRE_USE_FIELDS)
        return TableChange(checklist_id=keys.checklist_id_of(pk)) if relevant else TableChange()
    equipment: tuple[str, ...] = ()
    assignment = keys.checklist_id_of(pk) is not None and sk.startswith(keys.assignment_prefix())
    if (pk.startswith("PERFORMED#") or pk == keys.OUT_OF_SERVICE_PK or sk in (keys.DEFECT_SK, keys.REGISTERED_SK)
            or assignment):
        equipment = tuple(sorted({str(image["equipment_id"]) for image in (old, new) if image.get("equipment_id")}))
    through = None  # a check's or an assignment's checklist: only a pre-use one's change readiness
    if assignment:
        through = keys.checklist_id_of(pk)
    elif pk.startswith("PERFORMED#"):
        through = next((str(image["checklist_id"]) for image in (new, old) if image.get("checklist_id")), None)
    opened = None
    if sk == keys.DEFECT_SK and record.get("eventName") == "INSERT" and new.get("status") == "open":
        opened = str(new.get("defect_id") or pk.removeprefix("DEFECT#"))
    return TableChange(equipment_ids=equipment, opened_defect_id=opened, through_checklist=through)
