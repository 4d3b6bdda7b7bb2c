"""Performed checks: one item per (checklist, equipment, instant), partitioned by checklist and write
partition (``keys.write_partition``, eight per shard); written once (a conditional put), so who
recorded one and when is never rewritten, nor what it answered and found (#33: ``answers``,
``items_revision``, ``result`` and ``failed_items`` with their labels as that revision had them)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

from missed_checks.aws.table import keys
from missed_checks.aws.table.base import TableClient
from missed_checks.checklists.checklist import validate_checklist_id
from missed_checks.equipment.assignments import SHARD_COUNT, validate_equipment_id
from missed_checks.errors import InvalidInput
from missed_checks.evaluation.ports import CheckKey, CheckRecord, ChecksWritten, check_key
from missed_checks.performed_checks.answers import Findings, Result, failed_item_of
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks.reporting.findings import CheckResult
from missed_checks.timefmt import parse_instant, to_utc_iso

WRITE_THREADS = 16
"""Conditional puts in flight (as the evaluation writes missed checks: the clients' pool allows 32)."""


class PerformedCheckItems(TableClient):
    @staticmethod
    def performed_check_item(check: PerformedCheck, recorded_at: datetime, recorded_by: str | None = None,
                             findings: Findings | None = None) -> dict[str, Any]:
        validate_checklist_id(check.checklist_id, "checklist")
        validate_equipment_id(check.equipment_id)
        at = to_utc_iso(check.performed_at)
        return {**findings_fields(check, findings),
            **keys.performed_key(check.checklist_id, check.equipment_id, at),
            "type": "performed_check",
            "gsi1pk": keys.equipment_pk(check.equipment_id),
            "gsi1sk": keys.performed_index_sk(at, check.checklist_id),
            "checklist_id": check.checklist_id,
            "equipment_id": check.equipment_id,
            "performed_at": at,
            "recorded_at": to_utc_iso(recorded_at),
            "recorded_by": recorded_by,  # who recorded it (the API caller's identity; None: not kept)
        }

    def record_performed_check(self, check: PerformedCheck, recorded_at: datetime,
                               recorded_by: str | None = None) -> ChecksWritten:
        """Record a performed check unless it is on record already (:meth:`record_performed_checks`)."""
        return self.record_performed_checks([check], recorded_at, recorded_by)

    def record_performed_checks(self, checks: Iterable[PerformedCheck], recorded_at: datetime,
                                recorded_by: str | None = None,
                                findings: Mapping[CheckKey, Findings] | None = None) -> ChecksWritten:
        """Write each check with a conditional put (``attribute_not_exists``), :data:`WRITE_THREADS`
        in flight: a check on record already (the same checklist, equipment and instant) is left as
        it is, its ``recorded_by`` and ``recorded_at`` never rewritten, and answered in ``kept``
        with that record (read from the failed condition, no second request)."""
        items: dict[CheckKey, dict[str, Any]] = {}
        for check in checks:
            key = check_key(check)
            if key not in items:
                items[key] = self.performed_check_item(check, recorded_at, recorded_by, (findings or {}).get(key))
        if len(items) == 1:
            found = [self._put_new(next(iter(items.values())))]
        else:
            with ThreadPoolExecutor(max_workers=WRITE_THREADS) as pool:
                found = list(pool.map(self._put_new, items.values()))
        earlier = {key: item for key, item in zip(items, found, strict=True) if item is not None}
        return ChecksWritten(len(items) - len(earlier), {key: _record(item) for key, item in earlier.items()},
                             {key: findings_in(item) for key, item in earlier.items()})

    def performed_check_records(self, checks: Iterable[PerformedCheck]) -> dict[CheckKey, CheckRecord]:
        """Who recorded each of these checks and when, for those on record: strongly consistent
        BatchGetItem (100 keys a request)."""
        wanted = {check_key(c): c for c in checks}
        item_keys = [keys.performed_key(c.checklist_id, c.equipment_id, at)
                     for (_, _, at), c in wanted.items()]
        found = {}
        for item in self.batch_get(item_keys, consistent=True):
            found[(str(item["checklist_id"]), str(item["equipment_id"]), str(item["performed_at"]))] = _record(item)
        return found

    def recorded_at_of(self, checks: Sequence[CheckKey]) -> dict[CheckKey, str]:
        """When each of these checks (checklist, equipment, performed_at) was recorded, for those on
        record with a ``recorded_at``: one BatchGetItem (100 keys a request)."""
        wanted = [keys.performed_key(checklist_id, equipment_id, performed_at)
                  for checklist_id, equipment_id, performed_at in dict.fromkeys(checks)]
        found = {}
        for item in self.batch_get(wanted) if wanted else ():
            if item.get("recorded_at"):
                key = (str(item["checklist_id"]), str(item["equipment_id"]), str(item["performed_at"]))
                found[key] = str(item["recorded_at"])
        return found

    def performed_checks(self, checklist_id: str, shard: int, start: datetime, end: datetime) -> list[PerformedCheck]:
        """Performed checks of one shard with ``start <= performed_at < end``: one Query per write
        partition of the shard (``keys.PARTITIONS_PER_SHARD``)."""
        items = self._query_partitions(keys.performed_pks(checklist_id, shard), to_utc_iso(start), to_utc_iso(end))
        checks = []
        for item in items:
            performed_at = parse_instant(item["performed_at"], "performed_at")
            if performed_at < end:
                checks.append(PerformedCheck(checklist_id, item["equipment_id"], performed_at))
        return checks

    def performed_check_results(self, checklist_id: str, shard: int, low: str, high: str,
                                equipment_ids: Collection[str] | None = None) -> list[CheckResult]:
        """One shard's performed checks with ``low <= performed_at <= high`` (UTC ISO strings) and what
        each found (#33: its ``result`` and ``failed_items`` as recorded): one Query per write partition
        of the shard, projected to those and the sort key (which carries the instant and the equipment).
        With ``equipment_ids`` (of this shard), the checks of those alone: one Query per write partition
        they are in (``keys.write_partition``), at most one each (#32: the report)."""
        pks = keys.performed_pks(checklist_id, shard)
        if equipment_ids is not None:
            wanted = {keys.performed_pk(checklist_id, keys.write_partition(e)) for e in equipment_ids}
            pks = [pk for pk in pks if pk in wanted]
        items = self._query_partitions(pks, low, high, attributes=("sk", "result", "failed_items"))
        # sk = "<performed_at>#<equipment>"; performed_at is always 20 characters.
        found = [_found(checklist_id, item["sk"][21:], item["sk"][:20], item) for item in items]
        return found if equipment_ids is None else [c for c in found if c.equipment_id in equipment_ids]

    def performed_checks_of_equipment(self, equipment_id: str, low: str, until: str) -> list[tuple[str, str]]:
        """(checklist id, performed_at) of the equipment's performed checks, on every checklist, performed
        between ``low`` and ``until`` included (UTC ISO strings): one ByEquipment Query."""
        return [(check.checklist_id, check.performed_at)
                for check in self.performed_check_results_of_equipment(equipment_id, low, until)]

    def performed_check_results_of_equipment(self, equipment_id: str, low: str, until: str) -> list[CheckResult]:
        """The equipment's performed checks, on every checklist, performed between ``low`` and ``until``
        included (UTC ISO strings), with what each found (#33): one ByEquipment Query."""
        items = self._query_range(keys.equipment_pk(equipment_id), low, until + keys.HIGH, keys.BY_EQUIPMENT_INDEX)
        return [_found(str(item.get("checklist_id")), equipment_id, str(item["performed_at"]), item)
                for item in items if item.get("type") == "performed_check"]

    def performed_checks_of_checklist(self, checklist_id: str, start: datetime, end: datetime) -> list[PerformedCheck]:
        checks: list[PerformedCheck] = []
        for shard in range(SHARD_COUNT):
            checks.extend(self.performed_checks(checklist_id, shard, start, end))
        return sorted(checks, key=lambda c: (c.performed_at, c.equipment_id))


def _found(checklist_id: str, equipment_id: str, performed_at: str, item: dict[str, Any]) -> CheckResult:
    """A performed check as the report reads what it found (one recorded before #33: no items)."""
    return CheckResult(checklist_id, equipment_id, performed_at, str(item.get("result") or Result.NO_ITEMS),
                      tuple(failed_item_of(document) for document in item.get("failed_items") or ()))


def findings_fields(check: PerformedCheck, findings: Findings | None) -> dict[str, Any]:
    """What a performed check item holds of its answers and findings (#33; none for a check recorded
    without findings): numbers as Decimal, as the answers were kept."""
    fields: dict[str, Any] = {}
    if check.answers is not None:
        fields["answers"] = dict(check.answers)
    if findings is not None:
        fields.update({"items_revision": findings.items_revision, "result": findings.result,
                       "failed_items": [{**item.to_dict(), "answer": item.answer} for item in findings.failed]})
    return fields


def findings_in(item: Mapping[str, Any]) -> Findings:
    """What a performed check item found (a check recorded before items, or without findings: no
    items); InvalidInput naming the attribute a hand edit broke."""
    revision = item.get("items_revision")
    failed = item.get("failed_items") or []
    if not isinstance(failed, list) or not all(isinstance(each, Mapping) for each in failed):
        raise InvalidInput("failed_items", "is not a list of failed items")
    return Findings(None if revision is None else int(revision), tuple(failed_item_of(each) for each in failed))


def _record(item: dict[str, Any]) -> CheckRecord:
    by = item.get("recorded_by")
    return CheckRecord(str(item.get("recorded_at") or ""), None if by is None else str(by))
