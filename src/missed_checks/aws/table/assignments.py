"""Equipment assignments: one item per (checklist, equipment), in the checklist's partition by shard."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from missed_checks.aws.table import keys
from missed_checks.aws.table.base import condition_item, error_code, serialize, stamp, stamp_update
from missed_checks.aws.table.checklists import ChecklistItems
from missed_checks.equipment.assignments import Assignment, shard_of, validate_equipment_id
from missed_checks.errors import InvalidInput
from missed_checks.timefmt import parse_instant, to_utc_iso


class AssignmentItems(ChecklistItems):
    """Assignments; assigning checks that the checklist exists."""

    def assign_equipment(self, checklist_id: str, equipment_ids: Iterable[str], at: datetime,
                         progress: Callable[[int], None] | None = None, *, by: str) -> int:
        """Attach equipment from ``at`` on; returns how many were not attached before.

        Equipment already attached keeps its original ``assigned_at`` (assigning a fleet file twice
        changes nothing); equipment unassigned earlier starts a new period and keeps the old one.
        The checklist's assignments are read once, so give the whole fleet in one call (in chunks,
        each call would read every assignment again); ``progress(n)`` counts ids as they are done,
        new ones in sorted order first. Every assignment written is stamped by ``by`` (the audit trail).
        """
        stamped = stamp(by)
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
                "gsi1sk": keys.assignment_index_sk(checklist_id),
                "checklist_id": checklist_id,
                "equipment_id": equipment_id,
                "shard": shard,
                "assigned_at": to_utc_iso(at),
                **stamped,
            }
            puts.append({"PutRequest": {"Item": serialize(item)}})
        self.batch_write(puts, progress)
        reassigned = 0
        for equipment_id in (e for e in ids if e in existing and existing[e].get("unassigned_at")):
            previous = existing[equipment_id]
            period = {"assigned_at": previous.get("assigned_at"), "unassigned_at": previous["unassigned_at"]}
            clauses, values = stamp_update(by)
            reassigned += self._conditional(  # False: re-assigned concurrently
                "update_item",
                Key=serialize(keys.assignment_key(checklist_id, shard_of(equipment_id), equipment_id)),
                UpdateExpression=f"SET assigned_at = :at, {clauses}, earlier_periods = "
                                 "list_append(if_not_exists(earlier_periods, :none), :period) REMOVE unassigned_at",
                ConditionExpression="unassigned_at = :unassigned",
                ExpressionAttributeValues=serialize({":at": to_utc_iso(at), ":none": [], ":period": [period],
                                                     ":unassigned": period["unassigned_at"], **values}),
            )
        if progress is not None:
            progress(len(ids) - len(puts))  # already attached (or re-attached just now)
        return len(puts) + reassigned

    def unassign_equipment(self, checklist_id: str, equipment_ids: Iterable[str], at: datetime, *, by: str) -> int:
        """Detach equipment from ``at`` on; the assignment item stays, so past windows keep counting it.

        An unassignment before the assignment began (an inverted period) is refused, InvalidInput
        naming ``at`` and nothing written: every id is checked first, and each write is conditional
        on ``assigned_at <= at`` as well, so the rule holds for every writer. Each write is stamped by ``by``."""
        ids = sorted({validate_equipment_id(e) for e in equipment_ids})
        when = to_utc_iso(at)
        clauses, values = stamp_update(by)
        item_keys = self.check_unassignment(checklist_id, ids, at)
        count = 0
        for key in item_keys:
            try:
                self._request(
                    "update_item", Key=serialize(key), UpdateExpression=f"SET unassigned_at = :at, {clauses}",
                    ConditionExpression="attribute_exists(pk) AND attribute_not_exists(unassigned_at) "
                                        "AND assigned_at <= :at",
                    ExpressionAttributeValues=serialize({":at": when, **values}),
                    ReturnValuesOnConditionCheckFailure="ALL_OLD",
                )
            except ClientError as error:
                if error_code(error) != "ConditionalCheckFailedException":
                    raise
                _refuse_before_assignment(checklist_id, condition_item(error) or {}, when)
                continue  # not assigned, or already unassigned
            count += 1
        return count

    def check_unassignment(self, checklist_id: str, equipment_ids: Iterable[str], at: datetime) -> list[dict[str, str]]:
        """Refuse (InvalidInput ``at``) unassigning any of ``equipment_ids`` at ``at``, before its
        assignment began; returns their assignment keys. A caller writing in chunks checks them all first."""
        item_keys = [keys.assignment_key(checklist_id, shard_of(e), e)
                     for e in sorted({validate_equipment_id(e) for e in equipment_ids})]
        for item in self.batch_get(item_keys):
            _refuse_before_assignment(checklist_id, item, to_utc_iso(at))
        return item_keys

    def count_assignments(self, checklist_id: str) -> int:
        """How many pieces of equipment were ever assigned to the checklist (Select COUNT)."""
        pages = self._pages(Select="COUNT", KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
                            ExpressionAttributeValues=serialize({":pk": keys.checklist_pk(checklist_id),
                                                                 ":prefix": keys.assignment_prefix()}))
        return sum(int(page.get("Count", 0)) for page in pages)

    def assignments(self, checklist_id: str, shard: int | None = None) -> list[Assignment]:
        items = self._query_prefix(keys.checklist_pk(checklist_id), keys.assignment_prefix(shard))
        return [assignment_of(checklist_id, item) for item in items]

    def assignments_of_equipment(self, equipment_id: str) -> list[Assignment]:
        """The equipment's assignments to every (existing) checklist: one ByEquipment Query."""
        items = self.query(
            keys.BY_EQUIPMENT_INDEX,
            KeyConditionExpression="gsi1pk = :pk AND begins_with(gsi1sk, :prefix)",
            ExpressionAttributeValues=serialize({":pk": keys.equipment_pk(equipment_id),
                                                 ":prefix": keys.ASSIGNMENT_INDEX_PREFIX}),
        )
        return [assignment_of(str(item["checklist_id"]), item) for item in items]

    # -- recording performed checks (issue #19): is the equipment assigned? ----------------------
    def assignments_of_pairs(self, pairs: Collection[tuple[str, str]]) -> dict[tuple[str, str], Assignment]:
        """The assignments of these (checklist, equipment) pairs that exist: BatchGetItem by key, strongly
        consistent (equipment assigned a moment ago counts)."""
        wanted = [keys.assignment_key(c, shard_of(e), e) for c, e in sorted(pairs)]
        return {(a.checklist_id, a.equipment_id): a
                for a in (assignment_of(str(item["checklist_id"]), item)
                          for item in self.batch_get(wanted, consistent=True))}


def assignment_of(checklist_id: str, item: Mapping[str, Any]) -> Assignment:
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



def _refuse_before_assignment(checklist_id: str, item: Mapping[str, Any], at: str) -> None:
    """InvalidInput (``at``) when unassigning the assignment ``item`` at ``at`` would end it before it began."""
    assigned_at = item.get("assigned_at")
    if item.get("unassigned_at") or not isinstance(assigned_at, str) or at >= assigned_at:
        return
    raise InvalidInput("at", f"{at} is before {item.get('equipment_id')}'s assignment to {checklist_id} began "
                             f"({assigned_at}): unassign it at or after that instant")
