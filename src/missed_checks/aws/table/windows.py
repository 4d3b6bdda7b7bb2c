"""Judged windows (each window's record and claim, and its fleet index entry) and missed checks."""

from __future__ import annotations

import heapq
import time
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from itertools import islice
from typing import Any, NamedTuple

from botocore.exceptions import ClientError

from missed_checks import identifiers
from missed_checks.aws.table import keys
from missed_checks.aws.table.base import (
    Conflict,
    NotFound,
    TableClient,
    condition_item,
    deserialize,
    error_code,
    serialize,
    stamp_update,
)
from missed_checks.checklists.checklist import JudgedBy
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.errors import InvalidInput
from missed_checks.evaluation.missed_check import MissedCheck
from missed_checks.evaluation.ports import ClaimHolder, JudgedWindow, WindowClaim
from missed_checks.reporting.report import Dismissal, MissedRecord
from missed_checks.timefmt import parse_instant, to_utc_iso

_MISSED_ATTRIBUTES = ("checklist_id", "equipment_id", "window_start", "window_end", "dismissal", "judged_at")
READ_THREADS = 16
"""Queries in flight when a read covers every write partition of a checklist's missed checks
(``keys.WRITE_PARTITIONS`` of them); the clients' connection pool allows 32."""
MISSED_KEYS_READ = 1_000
"""At most this many candidate keys, a range of one checklist's missed checks is read by key (BatchGetItem,
100 a request) instead of querying write partitions: a missed check exists only for a window whose
record was opened first and a piece of equipment assigned to the checklist (its assignment item is kept
for good), so the candidates are the window records in the range times the checklist's assignments."""


class WindowItems(TableClient):
    def open_window(self, checklist_id: str, window: OccurrenceWindow, judged_by: JudgedBy) -> None:
        """Start the window's judged-window record before any of its missed checks is written: the
        window, the rule it is judged by (the first one written stays) and its fleet index entry.
        Unconditional and idempotent; the record counts as judged once claimed (:meth:`claim_window`)."""
        fields = judged_window_fields(checklist_id, window, judged_by)
        rule = fields.pop("judged_by")
        names = {f"#f{i}": name for i, name in enumerate(fields)}
        values = {f":f{i}": value for i, value in enumerate(fields.values())}
        self._request(
            "update_item", Key=serialize(keys.judged_window_key(checklist_id, fields["window_start"])),
            UpdateExpression="SET " + ", ".join([*(f"#f{i} = :f{i}" for i in range(len(fields))),
                                                 "#rule = if_not_exists(#rule, :rule)"]),
            ExpressionAttributeNames={**names, "#rule": "judged_by"},
            ExpressionAttributeValues=serialize({**values, ":rule": rule}),
        )

    def claim_window(self, checklist_id: str, judged: JudgedWindow, execution: str) -> WindowClaim:
        """Record the judged window and claim it for ``execution``, in one conditional write that
        exactly one execution can win per (checklist, window): the first to judge the window. A
        retry or redrive of that execution (same execution id) wins again; any other execution
        loses and writes nothing (the winner's totals stay). Only the winner may announce the
        window, and only while ``announced`` is false, so the event goes out once."""
        fields = {
            "type": "judged_window",
            "checklist_id": checklist_id,
            **judged_window_totals(judged),
            "execution": execution,
        }
        names = {f"#f{i}": name for i, name in enumerate(fields)}
        values = {f":f{i}": value for i, value in enumerate(fields.values())}
        # A retry of the winner (a whole re-run of PlanEvaluation re-judges, writing nothing new)
        # keeps what its first attempt recorded.
        sets = [f"#f{i} = if_not_exists(#f{i}, :f{i})" if name == "newly_recorded" else f"#f{i} = :f{i}"
                for i, name in enumerate(fields)]
        try:
            response = self._request(
                "update_item", Key=serialize(keys.judged_window_key(checklist_id, to_utc_iso(judged.window.start))),
                UpdateExpression="SET " + ", ".join([*sets, "#announced = if_not_exists(#announced, :no)"]),
                ConditionExpression="attribute_not_exists(#execution) OR #execution = :execution",
                ExpressionAttributeNames={**names, "#announced": "announced", "#execution": "execution"},
                ExpressionAttributeValues=serialize({**values, ":no": False, ":execution": execution}),
                ReturnValues="ALL_NEW", ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise
            held = condition_item(error) or {}
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

    def claim_holder(self, checklist_id: str, window_start: datetime) -> ClaimHolder | None:
        """Who holds the claim of the window starting at ``window_start`` (:meth:`judged_window`)."""
        record = self.judged_window(checklist_id, window_start)
        return None if record is None else ClaimHolder(str(record["execution"]), bool(record.get("announced")))

    def judged_windows(self, checklist_id: str, start: datetime, end: datetime) -> list[dict[str, Any]]:
        """Judged-window records of the windows that started in ``[start, end)``, oldest first: one Query."""
        low, high = to_utc_iso(start), to_utc_iso(end)
        items = self._query_range(keys.checklist_pk(checklist_id), keys.judged_window_key(checklist_id, low)["sk"],
                                  keys.judged_window_key(checklist_id, high)["sk"])
        return [item for item in items if item["window_start"] < high and item.get("execution")]

    def judged_windows_of(self, checklist_id: str, start: datetime, end: datetime) -> list[OccurrenceWindow]:
        """:meth:`judged_windows`, as the windows the evaluation judged (the report's reader)."""
        return [judged_window_of(item) for item in self.judged_windows(checklist_id, start, end)]

    def mark_window_announced(self, checklist_id: str, window_start: str) -> None:
        self._request("update_item", Key=serialize(keys.judged_window_key(checklist_id, window_start)),
                      UpdateExpression="SET announced = :yes", ExpressionAttributeValues=serialize({":yes": True}))

    def checklists_judged(self, start: datetime, end: datetime) -> list[str]:
        """Every checklist, deleted ones included, with a window judged (or being judged) that started
        in ``[start, end)``: one ByPeriod Query per month, reading one index entry per window."""
        low, high = to_utc_iso(start), to_utc_iso(end)
        return sorted(set().union(*(self._judged_in(month, low, high) for month in _months(low[:7], high[:7]))))

    def _judged_in(self, month: str, low: str, high: str) -> set[str]:
        """The checklists with a window judged that started in ``month`` and in ``[low, high)``."""
        return {str(item["checklist_id"])
                for item in self._query_range(keys.fleet_windows_pk(month), low, high, keys.BY_PERIOD_INDEX,
                                              ("checklist_id", "window_start"))
                if item["window_start"] < high}

    def put_missed_check(self, check: MissedCheck) -> bool:
        """Conditional put: True when written now, False when it was already recorded (a re-run)."""
        return self._conditional("put_item", Item=serialize(missed_check_item(check)),
                                 ConditionExpression="attribute_not_exists(pk)")

    def missed_checks_of_checklist(self, checklist_id: str, start: datetime, end: datetime,
                                   attributes: Sequence[str] = ()) -> list[dict[str, Any]]:
        """Missed checks whose window started in ``[start, end)``, in key order (window start, equipment;
        only ``attributes`` when given, with those two): one Query per write partition of the checklist
        (``keys.WRITE_PARTITIONS``), :data:`READ_THREADS` in flight."""
        return self._missed_in(keys.missed_pks(checklist_id), to_utc_iso(start), to_utc_iso(end), attributes)

    def _missed_in(self, pks: Sequence[str], low: str, high: str,
                   attributes: Sequence[str] = ()) -> list[dict[str, Any]]:
        """The missed checks in these write partitions with a window start in ``[low, high)``, in key
        order: one Query each, :data:`READ_THREADS` in flight."""
        wanted = tuple(dict.fromkeys((*attributes, "window_start", "equipment_id"))) if attributes else ()
        items = self._query_partitions(pks, low, high, wanted, threads=READ_THREADS)
        return sorted((item for item in items if item["window_start"] < high),
                      key=lambda item: (str(item["window_start"]), str(item["equipment_id"])))

    def _assigned_equipment(self, checklist_id: str, at_most: int) -> list[str] | None:
        """The equipment ever assigned to the checklist (an assignment item stays when the equipment is
        unassigned), sorted: one Query projected to ``equipment_id``, never more than ``at_most + 1``
        items read. None when there are more than ``at_most``, or none (a checklist deleted before
        assignments were kept: its missed checks may be of any equipment)."""
        prefix = keys.assignment_prefix()
        found = list(islice(self._query_range(keys.checklist_pk(checklist_id), prefix, prefix + keys.HIGH,
                                              attributes=("equipment_id",)), at_most + 1))
        return sorted({str(item["equipment_id"]) for item in found}) if 0 < len(found) <= at_most else None

    def _missed_by_key(self, checklist_id: str, low: str, high: str,
                       equipment: Sequence[str]) -> list[dict[str, Any]] | None:
        """The checklist's missed checks with a window start in ``[low, high)``, in key order, read by key:
        the window records in the range (one Query, claimed or only opened) times ``equipment`` (every
        piece ever assigned to the checklist), BatchGetItem of those keys. None, so the caller queries
        the write partitions, when they are more than :data:`MISSED_KEYS_READ` or there is no window
        record in the range: the answer is then what the partitions hold, as before."""
        starts = sorted({str(item["window_start"]) for item in self._query_range(
            keys.checklist_pk(checklist_id), keys.judged_window_key(checklist_id, low)["sk"],
            keys.judged_window_key(checklist_id, high)["sk"], attributes=("window_start",))
            if low <= str(item["window_start"]) < high})
        if not starts or len(starts) * len(equipment) > MISSED_KEYS_READ:
            return None
        wanted = [keys.missed_key(checklist_id, start, equipment_id) for start in starts for equipment_id in equipment]
        return sorted(self.batch_get(wanted), key=lambda item: str(item["sk"]))

    def missed_records_of_checklist(self, checklist_id: str, start: datetime, end: datetime) -> list[MissedRecord]:
        """:meth:`missed_checks_of_checklist` as the report reads them (projected to what it needs), the
        same records in the same order: the equipment ever assigned (one Query of at most
        :data:`MISSED_KEYS_READ` items), then by key when the candidates are few (:meth:`_missed_by_key`:
        a Query and a BatchGetItem a 100 keys), else one Query per write partition of that equipment
        (:func:`missed_partitions`: at most ``keys.WRITE_PARTITIONS``, all of them for a checklist without
        assignment items or with more than :data:`MISSED_KEYS_READ`)."""
        low, high = to_utc_iso(start), to_utc_iso(end)
        equipment = self._assigned_equipment(checklist_id, MISSED_KEYS_READ)
        by_key = None if equipment is None else self._missed_by_key(checklist_id, low, high, equipment)
        return [missed_record_of(item) for item in (
            by_key if by_key is not None
            else self._missed_in(missed_partitions(checklist_id, equipment), low, high, _MISSED_ATTRIBUTES))]

    def missed_records_of_equipment(self, equipment_id: str, checklist_ids: Iterable[str], start: datetime,
                                    end: datetime) -> list[tuple[str, MissedRecord]]:
        """:meth:`missed_checks_of_equipment` as the report reads them: (checklist id, record)."""
        return [(str(item["checklist_id"]), missed_record_of(item))
                for item in self.missed_checks_of_equipment(equipment_id, checklist_ids, start, end)]

    def missed_records_of_windows(self, checklist_id: str, window_starts: Iterable[str],
                                  equipment_ids: Iterable[str]) -> list[MissedRecord]:
        """The missed checks of ``equipment_ids`` in these windows of one checklist (UTC ISO starts of
        judged windows): their keys read in BatchGetItem chunks of 100, whatever the fleet's size
        (the web app's Today page, #32)."""
        wanted = [keys.missed_key(checklist_id, start, equipment_id)
                  for start in window_starts for equipment_id in sorted(set(equipment_ids))]
        return [missed_record_of(item) for item in self.batch_get(wanted)] if wanted else []

    def missed_equipment_of_window(self, checklist_id: str, window_start: datetime) -> list[str]:
        """Equipment with a missed check for the window starting at ``window_start``: one Query per
        write partition (``keys.WRITE_PARTITIONS``), :data:`READ_THREADS` in flight."""
        prefix = f"{to_utc_iso(window_start)}#"
        items = self._query_partitions(keys.missed_pks(checklist_id), prefix, prefix + keys.HIGH,
                                       ("equipment_id",), threads=READ_THREADS)
        return sorted(item["equipment_id"] for item in items)

    def missed_checks_of_fleet(self, start: datetime, end: datetime,
                               attributes: Sequence[str] = ()) -> list[dict[str, Any]]:
        """Missed checks of every checklist, deleted ones included, whose window started in
        ``[start, end)``: the checklists judged then (:meth:`checklists_judged`), then one Query of
        each one's missed checks (only ``attributes`` when given)."""
        return [item for checklist_id in self.checklists_judged(start, end)
                for item in self.missed_checks_of_checklist(checklist_id, start, end, attributes)]

    def missed_checks_page(self, start: datetime, end: datetime, *, limit: int, checklist_id: str | None = None,
                           after: MissedPosition | None = None, deadline: float | None = None,
                           only: Collection[str] | None = None,
                           ) -> tuple[list[dict[str, Any]], MissedPosition | None]:
        """One page of :meth:`missed_checks_of_checklist` (``checklist_id`` given) or of
        :meth:`missed_checks_of_fleet`: at most ``limit`` missed checks whose window started in
        ``[start, end)``, after ``after``, and where the next page starts (None: nothing is left).

        The fleet is walked month by month (UTC), each month's judged checklists in order, each one's
        missed checks in key order (window start, equipment): a page reads one month's index entries,
        never the whole range's. Each checklist's missed checks are its write partitions merged
        (:meth:`_missed_range`), asking for one item more than the page still needs, so the last page
        says it is the last: only the partitions of the equipment ever assigned to it (one Query of its
        assignment items, at most ``keys.WRITE_PARTITIONS + 1`` read; :func:`missed_partitions`), every
        partition when it has more or none. Past ``deadline`` (:func:`time.monotonic`) the page ends
        early, shorter or empty, with where to go on. ``only``: the fleet's checklists among these alone
        (a caller's scope: the others' partitions are not read)."""
        low, high = to_utc_iso(start), to_utc_iso(end)
        items: list[dict[str, Any]] = []
        queried = False
        partitions: dict[str, list[str]] = {}  # a checklist's, read once a page
        for month, checklist, segment_low, segment_high, exclusive in self._missed_segments(
                low, high, checklist_id, after, only):
            if queried and deadline is not None and time.monotonic() > deadline:
                return items, MissedPosition(month, checklist, exclusive)
            queried = True
            if checklist not in partitions:
                partitions[checklist] = missed_partitions(
                    checklist, self._assigned_equipment(checklist, keys.WRITE_PARTITIONS))
            for item in self._missed_range(partitions[checklist], segment_low, segment_high,
                                           limit + 1 - len(items), exclusive):
                items.append(item)
                if len(items) > limit:
                    items.pop()  # the one more: a next page exists
                    return items, missed_position_of(items[-1], fleet=checklist_id is None)
        return items, None

    def _missed_segments(self, low: str, high: str, checklist_id: str | None, after: MissedPosition | None,
                         only: Collection[str] | None = None,
                         ) -> Iterator[tuple[str | None, str, str, str, str | None]]:
        """(month, checklist, low, high, exclusive start sort key) of each Query a page may make, from
        ``after`` on: one checklist's whole range, or each month's judged checklists in that month."""
        if checklist_id is not None:
            yield None, checklist_id, low, high, after.after if after else None
            return
        for month in _months(low[:7], high[:7]):
            if after is not None and month < str(after.month):
                continue
            month_low = max(low, f"{month}-01T00:00:00Z")
            month_high = min(high, f"{_month_after(month)}-01T00:00:00Z")
            for checklist in sorted(c for c in self._judged_in(month, low, high) if only is None or c in only):
                place = (month, checklist)
                if after is not None and place < (str(after.month), after.checklist_id):
                    continue
                resuming = after is not None and place == (after.month, after.checklist_id)
                yield month, checklist, month_low, month_high, after.after if after and resuming else None

    def _missed_range(self, pks: Sequence[str], low: str, high: str, wanted: int,
                      exclusive: str | None) -> Iterator[dict[str, Any]]:
        """At most ``wanted`` missed checks of one checklist with a window start in ``[low, high)``,
        after the sort key ``exclusive``, in key order: the write partitions ``pks`` of the checklist
        merged (:func:`missed_partitions`). One Query of each partition first (:data:`READ_THREADS` in
        flight), each for about twice its share of ``wanted``; a partition whose first page the merge
        used up and that has more is read on. Resuming after ``exclusive`` reads every partition from
        it (``BETWEEN``) and skips it: that key is in one partition at most."""
        share = min(wanted, 2 * -(-wanted // len(pks)) + 1)
        start = exclusive if exclusive is not None else low
        with ThreadPoolExecutor(max_workers=READ_THREADS) as pool:
            firsts = list(pool.map(lambda pk: self._missed_query(pk, start, high, share, None), pks))
        streams = [self._missed_stream(pk, start, high, wanted, first) for pk, first in zip(pks, firsts, strict=True)]
        for item in heapq.merge(*streams, key=lambda item: str(item["sk"])):
            if item["sk"] == exclusive or item["window_start"] >= high:
                continue
            yield item
            wanted -= 1
            if wanted <= 0:
                return

    def _missed_stream(self, pk: str, low: str, high: str, limit: int,
                       first: tuple[list[dict[str, Any]], Any]) -> Iterator[dict[str, Any]]:
        """One partition's missed checks from its first page on, read on (``limit`` a Query) when used up."""
        items, last = first
        while True:
            yield from items
            if not last:
                return
            items, last = self._missed_query(pk, low, high, limit, last)

    def _missed_query(self, pk: str, low: str, high: str, limit: int,
                      start_key: Any) -> tuple[list[dict[str, Any]], Any]:
        """One Query page of a missed-check partition: its items and its ``LastEvaluatedKey``."""
        response = self._request(
            "query", Limit=limit, KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
            ExpressionAttributeValues=serialize({":pk": pk, ":low": low, ":high": high}),
            **({"ExclusiveStartKey": start_key} if start_key else {}))
        return [deserialize(raw) for raw in response.get("Items", [])], response.get("LastEvaluatedKey")

    def missed_checks_of_equipment(self, equipment_id: str, checklist_ids: Iterable[str], start: datetime,
                                   end: datetime) -> list[dict[str, Any]]:
        """Missed checks of one piece of equipment on the given checklists whose window started in
        ``[start, end)``: each checklist's judged windows (one Query), then the missed-check keys of
        those windows for this equipment (BatchGetItem), so the cost follows the number of windows,
        never the size of the fleet."""
        wanted: list[dict[str, str]] = []
        for checklist_id in sorted(set(checklist_ids)):
            wanted.extend(keys.missed_key(checklist_id, str(window["window_start"]), equipment_id)
                          for window in self.judged_windows(checklist_id, start, end))
        return sorted(self.batch_get(wanted), key=lambda item: (item["window_start"], item["checklist_id"]))

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
        clauses, stamped = stamp_update(by)  # the audit trail: who dismissed it, when it was written
        try:
            response = self._request(
                "update_item", Key=serialize(key), UpdateExpression=f"SET dismissal = :d, {clauses}",
                ConditionExpression="attribute_exists(pk) AND attribute_not_exists(dismissal)",
                ExpressionAttributeValues=serialize({":d": dismissal, **stamped}), ReturnValues="ALL_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                old = condition_item(error)
                if old is None:
                    raise NotFound(
                        f"no missed check for {equipment_id} on checklist {checklist_id} in the window "
                        f"starting {to_utc_iso(window_start)}") from error
                previous = old.get("dismissal", {})
                raise Conflict(f"already dismissed by {previous.get('by')} at {previous.get('at')}: "
                               f"{previous.get('reason')}") from error
            raise
        return deserialize(response["Attributes"])


def missed_partitions(checklist_id: str, equipment: Sequence[str] | None) -> list[str]:
    """The write partitions that can hold the checklist's missed checks, in key order: those of
    ``equipment``, every piece ever assigned to it (a missed check is written only for assigned
    equipment, in :func:`keys.write_partition` of its id), so at most one per piece; every partition
    (``keys.WRITE_PARTITIONS``) when that is not known (None)."""
    if equipment is None:
        return keys.missed_pks(checklist_id)
    partitions = sorted({keys.write_partition(equipment_id) for equipment_id in equipment})
    return [keys.missed_pk(checklist_id, partition) for partition in partitions]


def _months(first: str, last: str) -> Iterator[str]:
    year, month = int(first[:4]), int(first[5:7])
    while f"{year:04d}-{month:02d}" <= last:
        yield f"{year:04d}-{month:02d}"
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)


def _month_after(month: str) -> str:
    year, number = int(month[:4]), int(month[5:7])
    return f"{year + 1:04d}-01" if number == 12 else f"{year:04d}-{number + 1:02d}"


class MissedPosition(NamedTuple):
    """Where a page of missed checks ended (:meth:`WindowItems.missed_checks_page`): the month (UTC,
    ``YYYY-MM``; None for one checklist's list), the checklist, and the sort key of the last missed
    check read there (None: that checklist's month is still to be read from its start)."""

    month: str | None
    checklist_id: str
    after: str | None


def missed_position_of(item: Mapping[str, Any], *, fleet: bool) -> MissedPosition:
    """The position just after ``item``, a missed check read by a page."""
    return MissedPosition(str(item["window_start"])[:7] if fleet else None, str(item["checklist_id"]),
                          str(item["sk"]))


def missed_position(state: object, start: datetime, end: datetime, checklist_id: str | None,
                    field: str = "cursor") -> MissedPosition:
    """A position a client handed back (in a cursor) as one of the query ``[start, end)`` over
    ``checklist_id`` (None: the fleet) may hold; refused naming ``field`` otherwise, nothing read."""
    low, high = to_utc_iso(start), to_utc_iso(end)
    refuse = InvalidInput(field, "is not a position of this list: pass next_cursor exactly as the previous page "
                                 "answered it, with the same from, to and checklist_id")
    if not isinstance(state, Mapping) or set(state) != set(MissedPosition._fields):
        raise refuse
    month, checklist, after = (state[name] for name in MissedPosition._fields)
    if not isinstance(checklist, str) or identifiers.KINDS["checklist id"].pattern.fullmatch(checklist) is None:
        raise refuse
    if checklist_id is not None and (month is not None or checklist != checklist_id):
        raise refuse
    if checklist_id is None and not (isinstance(month, str) and month in set(_months(low[:7], high[:7]))):
        raise refuse
    if after is not None:
        instant, _, equipment = after.partition("#") if isinstance(after, str) else ("", "", "")
        if not (low <= instant < high) or identifiers.KINDS["equipment id"].pattern.fullmatch(equipment) is None \
                or (month is not None and instant[:7] != month):
            raise refuse
    return MissedPosition(month, checklist, after)


# -- the items ----------------------------------------------------------------------------------------
def missed_check_item(check: MissedCheck) -> dict[str, Any]:
    """The durable record: keyed by (checklist, window start, equipment), so writing it is idempotent.

    It stays under 1 KB (one write unit) and lands in no index: the rule it was judged by is kept
    once per window, on the judged-window record (:func:`judged_window_fields`), which the
    evaluation writes before any of the window's missed checks."""
    window = check.window
    start = to_utc_iso(window.start)
    return {
        **keys.missed_key(check.checklist_id, start, check.equipment_id),
        "type": "missed_check",
        "checklist_id": check.checklist_id,
        "equipment_id": check.equipment_id,
        "window_start": start,
        "window_end": to_utc_iso(window.end),
        "evaluate_at": to_utc_iso(window.evaluate_at),
        "window_local_start": window.start.isoformat(),
        "judged_at": to_utc_iso(check.judged_at),
        "execution": check.execution,
    }


def judged_window_fields(checklist_id: str, window: OccurrenceWindow, judged_by: JudgedBy) -> dict[str, Any]:
    """What the judged-window record holds from the moment its window is first judged: the window,
    the rule it is judged by (kept as first written: later edits never rewrite it), and its entry
    in the fleet's ByPeriod index (one per window, so the fleet report finds every checklist,
    deleted ones included, without an index entry per missed check)."""
    start = to_utc_iso(window.start)
    return {
        "type": "judged_window",
        "checklist_id": checklist_id,
        "window_start": start,
        "window_end": to_utc_iso(window.end),
        "evaluate_at": to_utc_iso(window.evaluate_at),
        "window_local_start": window.start.isoformat(),
        "judged_by": judged_by_map(judged_by),
        "gsi2pk": keys.fleet_windows_pk(start[:7]),
        "gsi2sk": keys.fleet_windows_sk(start, checklist_id),
    }


def judged_by_map(judged_by: JudgedBy) -> dict[str, Any]:
    """The record's ``judged_by`` map: the rule fields and ``closed_on`` (calendar id: revision) that
    have a value."""
    fields = {"recurrence": judged_by.recurrence, "timezone": judged_by.timezone, "window": judged_by.window,
              "grace": judged_by.grace, "closed_on": None if judged_by.closed_on is None else dict(judged_by.closed_on),
              "items_revision": judged_by.items_revision}  # what a check found (#33): the items' revision
    return {name: value for name, value in fields.items() if value}


def judged_window_totals(judged: JudgedWindow) -> dict[str, Any]:
    """What claiming a window writes on its judged-window record: the window, its totals and when
    they were added up (:class:`~missed_checks.evaluation.ports.JudgedWindow`)."""
    window = judged.window
    return {
        "window_start": to_utc_iso(window.start),
        "window_end": to_utc_iso(window.end),
        "evaluate_at": to_utc_iso(window.evaluate_at),
        "equipment_counted": judged.equipment_counted,
        "performed": judged.performed,
        "missed": judged.missed,
        "newly_recorded": judged.newly_recorded,
        "excused": judged.excused,
        "judged_at": to_utc_iso(judged.judged_at),
    }


def judged_window_of(item: Mapping[str, Any]) -> OccurrenceWindow:
    """The window of a judged-window record, as the evaluation judged it."""
    return OccurrenceWindow(parse_instant(item["window_start"], "window_start"),
                            parse_instant(item["window_end"], "window_end"),
                            parse_instant(item["evaluate_at"], "evaluate_at"))


def missed_record_of(item: Mapping[str, Any]) -> MissedRecord:
    """What the report needs of a missed-check item (its dismissal, when it has a readable one)."""
    window_end, judged_at, dismissal = item.get("window_end"), item.get("judged_at"), item.get("dismissal")
    return MissedRecord(str(item["equipment_id"]), str(item["window_start"]), bool(dismissal),
                        window_end=None if window_end is None else str(window_end),
                        dismissal=Dismissal(str(dismissal.get("reason") or ""), str(dismissal.get("by") or ""),
                                            str(dismissal.get("at") or "")) if isinstance(dismissal, Mapping) else None,
                        judged_at=None if judged_at is None else str(judged_at))
