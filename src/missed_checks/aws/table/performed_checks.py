"""Performed checks: one item per (checklist, equipment, instant), partitioned by checklist and shard."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from missed_checks import keys
from missed_checks.aws.table.base import TableClient, serialize
from missed_checks.checklist import validate_checklist_id
from missed_checks.equipment import SHARD_COUNT, shard_of, validate_equipment_id
from missed_checks.performed_check import PerformedCheck
from missed_checks.timefmt import parse_instant, to_utc_iso


class PerformedCheckItems(TableClient):
    @staticmethod
    def performed_check_item(check: PerformedCheck, recorded_at: datetime,
                             recorded_by: str | None = None) -> dict[str, Any]:
        validate_checklist_id(check.checklist_id, "checklist")
        validate_equipment_id(check.equipment_id)
        at = to_utc_iso(check.performed_at)
        return {
            **keys.performed_key(check.checklist_id, shard_of(check.equipment_id), check.equipment_id, at),
            "type": "performed_check",
            "gsi1pk": keys.equipment_pk(check.equipment_id),
            "gsi1sk": keys.performed_index_sk(at, check.checklist_id),
            "checklist_id": check.checklist_id,
            "equipment_id": check.equipment_id,
            "performed_at": at,
            "recorded_at": to_utc_iso(recorded_at),
            "recorded_by": recorded_by,  # who recorded it (the API caller's identity; None: not kept)
        }

    def record_performed_check(self, check: PerformedCheck, recorded_at: datetime) -> None:
        """Record a performed check; recording the same (checklist, equipment, instant) twice keeps one."""
        self.record_performed_checks([check], recorded_at)

    def record_performed_checks(self, checks: Iterable[PerformedCheck], recorded_at: datetime,
                                recorded_by: str | None = None) -> int:
        items = {}
        for check in checks:
            item = self.performed_check_item(check, recorded_at, recorded_by)
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
