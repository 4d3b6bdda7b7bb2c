"""The one in-memory fake of the ports the domain writes through (no moto, no stack).

* :class:`InMemoryTable`: the evaluation's :class:`missed_checks.evaluation.ports.EvaluationStore`,
  saving's :class:`missed_checks.checklists.ports.ChecklistStore` and schedule-sync's ``Table``, with
  the conditional writes' semantics of :class:`missed_checks.aws.table.ChecklistTable` (a missed check
  written once, a performed check written once with its first recorded_by and recorded_at, one
  claimant per window, ``newly_recorded`` and ``announced`` kept by a retry of the claimant, the
  watermark only forward, a checklist written only at the revision read),
  each conditional write atomic as the table's are (concurrent writers: one wins), and a log of
  every write, in order, so tests can say what came last;
* :class:`InMemoryNotificationRecords`: the notifications' :class:`missed_checks.evaluation.ports.NotificationRecords`;
* :class:`RecordingAnnouncer`: the evaluation's :class:`missed_checks.evaluation.ports.Announcer`;
* :class:`InMemorySchedules`: schedule-sync's ``Schedules``.

``tests/contract/`` runs one suite of storage behaviours on these and on the DynamoDB adapter alike.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, Self, TypeVar

from missed_checks.audit_trails.audit_entry import AuditEntry
from missed_checks.aws.table.checklists import checklist_record, schedule_note_map, sync_error_map
from missed_checks.aws.table.windows import judged_by_map, judged_window_totals
from missed_checks.checklists.check_item import ItemList
from missed_checks.checklists.checklist import Checklist, ChecklistRecord, JudgedBy
from missed_checks.checklists.closure_calendar import ClosureCalendar
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.checklists.schedule import DesiredSchedule, Target
from missed_checks.checklists.schedule_sync import ScheduleNote, SyncError
from missed_checks.contracts import JudgedWindowDetail
from missed_checks.defects.defect import Defect, DefectStatus
from missed_checks.equipment.assignments import Assignment, shard_of
from missed_checks.equipment.out_of_service import OutOfServicePeriod, overlapping
from missed_checks.equipment.registration import RegisteredEquipment
from missed_checks.errors import Conflict, InvalidInput, NotFound, ScheduleRejected, TransientError
from missed_checks.evaluation.missed_check import MissedCheck
from missed_checks.evaluation.ports import (
    CheckKey,
    CheckRecord,
    ChecksWritten,
    ClaimHolder,
    ClientRequest,
    JudgedWindow,
    NotificationClaim,
    WindowClaim,
    check_key,
)
from missed_checks.notifications.notification import Notification
from missed_checks.paging import Page, page_after
from missed_checks.performed_checks.answers import Findings
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks.permissions.grant import Grant
from missed_checks.revisions import stale
from missed_checks.sites.site import Site
from missed_checks.timefmt import to_utc_iso

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


def _atomic(write: F) -> F:
    """A conditional write checks and writes in one step, as DynamoDB does: of concurrent writers
    (judging's threads, concurrent recordings) exactly one finds the item absent."""
    @functools.wraps(write)
    def locked(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            return write(self, *args, **kwargs)
    return locked  # type: ignore[return-value]


@dataclass
class InMemoryRegistry:
    """Sites, the equipment registry and grants (#31), written by revision as the table writes them
    (:mod:`missed_checks.aws.table.revised`): a new one only while its key is free (Conflict), an edit
    only over the revision it names (PreconditionFailed carrying the current ETag), NotFound when it
    vanished; every write's ``by`` kept in :attr:`stamped`, in order. Sites, equipment by site and
    grants are listed in key order, a page after a position."""

    sites: dict[str, Site] = field(default_factory=dict)
    registry: dict[str, RegisteredEquipment] = field(default_factory=dict)
    grants: dict[str, Grant] = field(default_factory=dict)
    stamped: list[tuple[str, str, str]] = field(default_factory=list)
    """(kind, id, by) of every write of a site, registered equipment or grant (a deletion's too)."""
    registry_lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)

    def _write_revised(self, kind: str, objects: dict[str, Any], key: str, value: Any, expected: int | None,
                       what: str, by: str) -> None:
        with self.registry_lock:
            current = objects.get(key)
            if expected is None and current is not None:
                raise Conflict(f"{what} already exists: to change it, send If-Match with the ETag you read it with")
            if expected is not None:
                if current is None:
                    raise NotFound(f"{what} does not exist")
                if current.revision != expected:
                    raise stale(what, current.revision, expected)
            self.stamped.append((kind, key, by))
            if value is None:
                del objects[key]
            else:
                objects[key] = value

    @staticmethod
    def _page(objects: Mapping[str, T], position: str | None, limit: int) -> Page[T]:
        ids = sorted(key for key in objects if position is None or key > position)
        return Page([objects[key] for key in ids[:limit]], ids[limit - 1] if len(ids) > limit else None)

    def with_sites(self, *site_ids: str, timezone: str = "Europe/Berlin") -> Self:
        """Arranging: these sites exist (named as their ids, at revision 1); returns the table."""
        for site_id in site_ids:
            self.sites[site_id] = Site(site_id, site_id, timezone, revision=1)
        return self

    # -- sites --
    def get_site(self, site_id: str) -> Site | None:
        return self.sites.get(site_id)

    def list_sites(self, position: str | None, limit: int) -> Page[Site]:
        return self._page(self.sites, position, limit)

    def write_site(self, site: Site, *, expected: int | None, by: str) -> None:
        self._write_revised("site", self.sites, site.site_id, site, expected, f"site {site.site_id!r}", by)

    # -- the equipment registry --
    def get_registered(self, equipment_id: str) -> RegisteredEquipment | None:
        return self.registry.get(equipment_id)

    def registered_equipment(self, equipment_ids: Collection[str]) -> dict[str, RegisteredEquipment]:
        return {e: self.registry[e] for e in equipment_ids if e in self.registry}

    def list_registered(self, site_id: str, position: str | None, limit: int) -> Page[RegisteredEquipment]:
        return self._page({e: r for e, r in self.registry.items() if r.site_id == site_id}, position, limit)

    def write_registered(self, equipment: RegisteredEquipment, *, expected: int | None, by: str) -> None:
        self._write_revised("registered_equipment", self.registry, equipment.equipment_id, equipment, expected,
                            f"equipment {equipment.equipment_id!r}", by)

    # -- grants --
    def get_grant(self, principal: str) -> Grant | None:
        return self.grants.get(principal)

    def list_grants(self, position: str | None, limit: int) -> Page[Grant]:
        return self._page(self.grants, position, limit)

    def write_grant(self, grant: Grant, *, expected: int | None, by: str) -> None:
        self._write_revised("grant", self.grants, grant.principal, grant, expected, f"grant of {grant.principal!r}",
                            by)

    def remove_grant(self, principal: str, *, expected: int | None, by: str) -> None:
        what = f"grant of {principal!r}"
        with self.registry_lock:
            current = self.grants.get(principal)
            if current is None:
                raise NotFound(f"{what} does not exist")
            self._write_revised("grant", self.grants, principal, None,
                                current.revision if expected is None else expected, what, by)


@dataclass
class InMemoryTable(InMemoryRegistry):
    checklists: dict[str, Checklist] = field(default_factory=dict)
    checklist_items: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Raw checklist items, as schedule-sync reads them (``get_checklist_record``)."""
    assigned: dict[str, list[Assignment]] = field(default_factory=dict)
    performed: dict[str, list[PerformedCheck]] = field(default_factory=dict)
    missed: dict[tuple[str, str, str], MissedCheck] = field(default_factory=dict)
    """(checklist, window start UTC, equipment) -> the missed check."""
    windows: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    """(checklist, window start UTC) -> the judged-window record."""
    watermarks: dict[str, str] = field(default_factory=dict)
    writes: list[tuple[str, str]] = field(default_factory=list)
    """Every write, in order: (operation, what), e.g. ``("advance_watermark", "drill")``."""
    notes: list[dict[str, Any]] = field(default_factory=list)
    """Every note schedule-sync asked to write, written or refused: ``{"revision", "schedule", "error"}``."""
    adopted: int = 0
    out_of_service: list[OutOfServicePeriod] = field(default_factory=list)
    """Out-of-service periods of the fleet (issue #23 item 1)."""
    out_of_service_reads: int = 0
    """How many times the periods were read (judging reads them once per batch)."""
    recorded: dict[tuple[str, str, str], tuple[str, str | None]] = field(default_factory=dict)
    """(checklist, equipment, performed_at UTC) -> (recorded_at, recorded_by) of recorded checks."""
    client_requests: dict[tuple[str, str], ClientRequest] = field(default_factory=dict)
    fail_on: dict[str, Exception] = field(default_factory=dict)
    """Operation -> the error its next call raises (once), e.g. ``{"advance_watermark": TransientError()}``."""
    calendars: dict[str, ClosureCalendar] = field(default_factory=dict)
    """Closure calendars by id (schedule-sync's ``with_closures`` reads them)."""
    changed_by: dict[str, str] = field(default_factory=dict)
    """Checklist id -> who wrote it last (``write_checklist``'s ``by``: the audit trail's ``changed_by``)."""
    item_revisions: dict[str, list[ItemList]] = field(default_factory=dict)
    """Checklist id -> the revisions of its items (#33), oldest first, as ``write_checklist`` keeps them."""
    findings: dict[tuple[str, str, str], Findings] = field(default_factory=dict)
    """(checklist, equipment, performed_at UTC) -> what the recorded check found (#33)."""
    defects: dict[str, Defect] = field(default_factory=dict)
    """Defects by id (#33), as the table's conditional writes keep them."""
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)

    # -- arranging ----------------------------------------------------------------------
    def add_checklist(self, checklist: Checklist) -> None:
        """The checklist as is; with items (#33), their revision too, in force from its creation."""
        self.checklists[checklist.checklist_id] = checklist
        if checklist.items_revision:
            effective = checklist.updated_at or checklist.created_at or datetime(2000, 1, 1, tzinfo=UTC)
            self.item_revisions.setdefault(checklist.checklist_id, []).append(
                ItemList(checklist.items_revision, effective, checklist.items))

    # -- ItemLists (#33) ---------------------------------------------------------------------------
    def item_lists(self, checklist_id: str) -> list[ItemList]:
        return list(self.item_revisions.get(checklist_id, []))

    def item_list(self, checklist_id: str, revision: int) -> ItemList | None:
        return next((r for r in self.item_revisions.get(checklist_id, []) if r.revision == revision), None)

    def assign(self, checklist_id: str, equipment_ids: Iterable[str], at: datetime) -> None:
        """As the table assigns: equipment attached already keeps its assignment (and its date), equipment
        unassigned earlier starts a new period and keeps the old one."""
        assigned = self.assigned.setdefault(checklist_id, [])
        positions = {a.equipment_id: n for n, a in enumerate(assigned)}
        for equipment_id in dict.fromkeys(equipment_ids):
            index = positions.get(equipment_id)
            if index is None:
                positions[equipment_id] = len(assigned)
                assigned.append(Assignment(checklist_id, equipment_id, at))
                continue
            earlier = assigned[index]
            if earlier.unassigned_at is not None:
                assigned[index] = replace(earlier, assigned_at=at, unassigned_at=None, earlier_periods=(
                    *earlier.earlier_periods, (earlier.assigned_at, earlier.unassigned_at)))

    # -- ending assignments (the registry's moves and retirements, #31) --------------------
    def assignments_of_equipment(self, equipment_id: str) -> list[Assignment]:
        """The equipment's assignments to every checklist."""
        return [a for assigned in self.assigned.values() for a in assigned if a.equipment_id == equipment_id]

    @_atomic
    def unassign_equipment(self, checklist_id: str, equipment_ids: Iterable[str], at: datetime, *, by: str) -> int:
        """As the table: detach equipment still attached from ``at`` on (how many); InvalidInput ``at``
        and nothing written when that would end an assignment before it began."""
        wanted = set(equipment_ids)
        assigned = self.assigned.get(checklist_id, [])
        open_ones = [n for n, a in enumerate(assigned) if a.equipment_id in wanted and a.unassigned_at is None]
        for n in open_ones:
            if at < assigned[n].assigned_at:
                raise InvalidInput("at", f"{to_utc_iso(at)} is before {assigned[n].equipment_id}'s assignment to "
                                         f"{checklist_id} began ({to_utc_iso(assigned[n].assigned_at)}): unassign it "
                                         "at or after that instant")
        for n in open_ones:
            assigned[n] = replace(assigned[n], unassigned_at=at)
        self._write("unassign_equipment", f"{checklist_id}:{by}")
        return len(open_ones)

    def perform(self, checklist_id: str, equipment_id: str, at: datetime) -> None:
        self.performed.setdefault(checklist_id, []).append(PerformedCheck(checklist_id, equipment_id, at))

    def _write(self, operation: str, what: str) -> None:
        failure = self.fail_on.pop(operation, None)
        if failure is not None:
            raise failure
        self.writes.append((operation, what))

    # -- ChecklistReader ----------------------------------------------------------------
    def get_checklist(self, checklist_id: str) -> Checklist | None:
        checklist = self.checklists.get(checklist_id)
        if checklist is None:
            return None
        mark = self.watermarks.get(checklist_id)
        if mark is not None and (checklist.evaluated_until is None or to_utc_iso(checklist.evaluated_until) < mark):
            checklist = checklist.with_changes(evaluated_until=datetime.fromisoformat(mark))
        return self.with_closures(checklist)  # as the table reads it: with its closure calendars

    # -- EquipmentReader ----------------------------------------------------------------
    def count_assignments(self, checklist_id: str) -> int:
        return len(self.assigned.get(checklist_id, []))

    def assignments(self, checklist_id: str, shard: int | None = None) -> list[Assignment]:
        return [a for a in self.assigned.get(checklist_id, []) if shard is None or shard_of(a.equipment_id) == shard]

    def performed_checks(self, checklist_id: str, shard: int, start: datetime, end: datetime) -> list[PerformedCheck]:
        return [c for c in self.performed.get(checklist_id, [])
                if shard_of(c.equipment_id) == shard and start <= c.performed_at < end]

    # -- OutOfServiceReader (issue #23 item 1) ------------------------------------------
    def out_of_service_periods(self, start: datetime, end: datetime | None = None,
                               equipment_ids: Iterable[str] | None = None) -> list[OutOfServicePeriod]:
        self.out_of_service_reads += 1
        wanted = None if equipment_ids is None else set(equipment_ids)
        return sorted((p for p in overlapping(self.out_of_service, start, end)
                       if wanted is None or p.equipment_id in wanted), key=lambda p: (p.start, p.equipment_id))

    # -- WindowRecords ------------------------------------------------------------------
    @_atomic
    def open_window(self, checklist_id: str, window: OccurrenceWindow, judged_by: JudgedBy) -> None:
        start = to_utc_iso(window.start)
        record = self.windows.setdefault((checklist_id, start), {})
        record.update({"type": "judged_window", "checklist_id": checklist_id, "window_start": start,
                       "window_end": to_utc_iso(window.end), "evaluate_at": to_utc_iso(window.evaluate_at)})
        record.setdefault("judged_by", judged_by_map(judged_by))
        self._write("open_window", start)

    @_atomic
    def put_missed_check(self, check: MissedCheck) -> bool:
        key = (check.checklist_id, to_utc_iso(check.window.start), check.equipment_id)
        if key in self.missed:
            return False
        self._write("put_missed_check", "#".join(key))
        self.missed[key] = check
        return True

    @_atomic
    def claim_window(self, checklist_id: str, judged: JudgedWindow, execution: str) -> WindowClaim:
        totals = judged_window_totals(judged)  # the record holds what the table's does
        record = self.windows.setdefault((checklist_id, str(totals["window_start"])), {})
        holder = record.get("execution")
        if holder is not None and holder != execution:
            return WindowClaim(won=False, announced=bool(record.get("announced")), holder=str(holder))
        self._write("claim_window", str(totals["window_start"]))
        kept = {name: record[name] for name in ("newly_recorded", "announced") if name in record}
        record.update({"type": "judged_window", "checklist_id": checklist_id, **totals, "execution": execution,
                       "announced": False, **kept})
        return WindowClaim(won=True, announced=bool(record["announced"]), holder=execution)

    def judged_window(self, checklist_id: str, window_start: datetime) -> dict[str, Any] | None:
        record = self.windows.get((checklist_id, to_utc_iso(window_start)))
        return dict(record) if record and record.get("execution") else None

    def claim_holder(self, checklist_id: str, window_start: datetime) -> ClaimHolder | None:
        record = self.judged_window(checklist_id, window_start)
        return None if record is None else ClaimHolder(str(record["execution"]), bool(record.get("announced")))

    def missed_equipment_of_window(self, checklist_id: str, window_start: datetime) -> list[str]:
        start = to_utc_iso(window_start)
        return sorted(e for (c, s, e) in self.missed if c == checklist_id and s == start)

    def mark_window_announced(self, checklist_id: str, window_start: str) -> None:
        self._write("mark_window_announced", window_start)
        self.windows[(checklist_id, window_start)]["announced"] = True

    @_atomic
    def advance_watermark(self, checklist_id: str, to: datetime) -> bool:
        mark = to_utc_iso(to)
        if checklist_id in self.watermarks and self.watermarks[checklist_id] >= mark:
            return False
        self._write("advance_watermark", mark)
        self.watermarks[checklist_id] = mark
        return True

    @_atomic
    def hand_over_window_claim(self, checklist_id: str, window_start: datetime, from_execution: str,
                               to_execution: str) -> bool:
        record = self.windows.get((checklist_id, to_utc_iso(window_start)))
        if not record or record.get("execution") != from_execution or record.get("announced"):
            return False
        self._write("hand_over_window_claim", to_utc_iso(window_start))
        record.update(execution=to_execution, handed_over_from=from_execution)
        return True

    # -- schedule-sync's Table ----------------------------------------------------------
    def get_checklist_record(self, checklist_id: str) -> ChecklistRecord | None:
        """The raw item read as the table adapter reads it (hand-edited items included)."""
        item = self.checklist_items.get(checklist_id)
        return None if item is None else checklist_record(item)

    @_atomic
    def record_schedule_sync(self, checklist_id: str, revision: int, *, schedule: ScheduleNote | None,
                             error: SyncError | None) -> bool:
        """As the table: noted on the item (each note set, or removed when None) only while the item
        exists with this revision; False otherwise (``notes`` keeps every note asked for, as the
        item's maps)."""
        assert isinstance(revision, int)
        schedule_map, error_map = schedule_note_map(schedule), sync_error_map(error)
        self.notes.append({"revision": revision, "schedule": schedule_map, "error": error_map})
        item = self.checklist_items.get(checklist_id)
        stored = None if item is None else item.get("revision")
        if item is None or isinstance(stored, bool) or not isinstance(stored, int | Decimal) or stored != revision:
            return False
        noted = {name: value for name, value in (("schedule", schedule_map), ("sync_error", error_map))
                 if value is not None}
        self.checklist_items[checklist_id] = {**{k: v for k, v in item.items() if k not in ("schedule", "sync_error")},
                                              **noted}
        return True

    @_atomic
    def adopt_checklist(self, checklist_id: str) -> bool:
        """As the table: an item without a revision gets the one a new checklist has (0); False when it
        has one already or is gone."""
        item = self.checklist_items.get(checklist_id)
        if item is None or "revision" in item:
            return False
        self.adopted += 1
        self.checklist_items[checklist_id] = {**item, "revision": 0}
        return True

    # -- closure calendars (#23 item 2) -------------------------------------------------
    def with_closures(self, checklist: Checklist) -> Checklist:
        if not checklist.closed_on:
            return checklist
        return checklist.with_changes(closures=self.get_calendars(checklist.closed_on))

    # -- ChecklistStore (saving a checklist: missed_checks.checklists.saving) ------------------------
    def get_calendars(self, calendar_ids: Iterable[str]) -> dict[str, ClosureCalendar | None]:
        return {calendar_id: self.calendars.get(calendar_id) for calendar_id in dict.fromkeys(calendar_ids)}

    @_atomic
    def write_checklist(self, checklist: Checklist, current: Checklist | None,
                        calendars: Mapping[str, ClosureCalendar | None], *, by: str) -> None:
        """As the table: created only while there is none, updated only at the revision read (Conflict
        otherwise); with ``calendars``, the calendars it names get it in their ``used_by`` and those it
        dropped lose it, all or nothing, each of them still existing. Who wrote it last: ``changed_by``."""
        self.changed_by[checklist.checklist_id] = by
        checklist_id = checklist.checklist_id
        stored = self.checklists.get(checklist_id)
        if current is None and stored is not None:
            raise Conflict(f"checklist {checklist_id} was created meanwhile; try again")
        if current is not None and (stored is None or stored.revision != current.revision):
            raise Conflict(f"checklist {checklist_id} changed while being written; try again")
        if calendars:
            for index, calendar_id in enumerate(checklist.closed_on):
                if calendar_id not in self.calendars:
                    raise InvalidInput(f"closed_on[{index}]", f"no calendar {calendar_id!r} (it was deleted meanwhile)")
            dropped = [c for c, calendar in calendars.items() if c not in checklist.closed_on
                       and calendar is not None and checklist_id in calendar.used_by]
            if any(c not in self.calendars for c in dropped):
                raise Conflict(f"checklist {checklist_id} changed while being written; try again")
            for calendar_id in checklist.closed_on:
                calendar = self.calendars[calendar_id]
                self.calendars[calendar_id] = replace(calendar, used_by=calendar.used_by | {checklist_id})
            for calendar_id in dropped:
                calendar = self.calendars[calendar_id]
                self.calendars[calendar_id] = replace(calendar, used_by=calendar.used_by - {checklist_id})
        self._write("write_checklist", checklist_id)
        self.checklists[checklist_id] = checklist
        if checklist.items_revision != (current.items_revision if current is not None else 0):  # #33
            self.item_revisions.setdefault(checklist_id, []).append(
                ItemList(checklist.items_revision, checklist.updated_at or datetime.now(UTC), checklist.items))

    # -- RecordingStore (recording performed checks, issue #19) --------------------------------------
    def assignments_of_pairs(self, pairs: Collection[tuple[str, str]]) -> dict[tuple[str, str], Assignment]:
        return {(a.checklist_id, a.equipment_id): a for checklist_id in {c for c, _ in pairs}
                for a in self.assigned.get(checklist_id, []) if (checklist_id, a.equipment_id) in pairs}

    @_atomic
    def record_performed_checks(self, checks: Iterable[PerformedCheck], recorded_at: datetime,
                                recorded_by: str | None = None,
                                findings: Mapping[CheckKey, Findings] | None = None) -> ChecksWritten:
        """As the table's conditional puts: a check on record already keeps its record (answered in
        ``kept``, with what it found), only a new one is written."""
        written: dict[CheckKey, PerformedCheck] = {}
        for c in checks:
            written.setdefault(check_key(c), c)
        kept: dict[CheckKey, CheckRecord] = {}
        kept_findings: dict[CheckKey, Findings] = {}
        for key, check in written.items():
            checklist_id, equipment_id, at = key
            if key in self.recorded:
                kept[key] = CheckRecord(*self.recorded[key])
                kept_findings[key] = self.findings.get(key, Findings(None))
                continue
            if findings is not None and key in findings:
                self.findings[key] = findings[key]
            self._write("record_performed_check", f"{checklist_id}/{equipment_id}@{at}")
            stored = self.performed.setdefault(checklist_id, [])
            if all((c.equipment_id, to_utc_iso(c.performed_at)) != (equipment_id, at) for c in stored):
                stored.append(check)
            self.recorded[key] = (to_utc_iso(recorded_at), recorded_by)
        return ChecksWritten(len(written) - len(kept), kept, kept_findings)

    # -- DefectStore (#33) -------------------------------------------------------------------------
    @_atomic
    def put_defect(self, defect: Defect, *, by: str) -> bool:
        if defect.defect_id in self.defects:
            return False
        self._write("put_defect", defect.defect_id)
        self.defects[defect.defect_id] = defect
        return True

    def get_defect(self, defect_id: str) -> Defect | None:
        return self.defects.get(defect_id)

    @_atomic
    def resolve_defect_item(self, defect: Defect, *, expected: int, by: str) -> None:
        current = self.defects.get(defect.defect_id)
        if current is None:
            raise NotFound(f"defect {defect.defect_id!r} does not exist")
        if current.revision != expected:
            raise stale(f"defect {defect.defect_id!r}", current.revision, expected)
        self._write("resolve_defect", defect.defect_id)
        self.defects[defect.defect_id] = defect

    def defects_of_equipment(self, equipment_id: str, status: DefectStatus | None = None) -> list[Defect]:
        return sorted((d for d in self.defects.values() if d.equipment_id == equipment_id
                       and (status is None or d.status is status)), key=lambda d: (d.found_at, d.defect_id))

    def defects_of_site(self, site_id: str | None, status: DefectStatus | None = None,
                        position: str | None = None, limit: int = 100) -> Page[Defect]:
        found = sorted((d for d in self.defects.values() if d.site_id == site_id
                        and (status is None or d.status is status)), key=lambda d: (d.found_at, d.defect_id))
        return page_after(found, lambda d: f"{to_utc_iso(d.found_at)}#{d.defect_id}", position, limit)

    def performed_check_records(self, checks: Iterable[PerformedCheck]) -> dict[CheckKey, CheckRecord]:
        return {key: CheckRecord(*self.recorded[key]) for key in map(check_key, checks) if key in self.recorded}

    def client_request(self, caller: str, idempotency_key: str) -> ClientRequest | None:
        return self.client_requests.get((caller, idempotency_key))

    @_atomic
    def claim_client_request(self, caller: str, idempotency_key: str, fingerprint: str,
                             recorded_at: datetime) -> ClientRequest:
        earlier = self.client_requests.get((caller, idempotency_key))
        if earlier is not None:
            return earlier
        self._write("claim_client_request", f"{caller}/{idempotency_key}")
        claimed = ClientRequest(fingerprint, to_utc_iso(recorded_at), None)
        self.client_requests[(caller, idempotency_key)] = claimed
        return claimed

    def finish_client_request(self, caller: str, idempotency_key: str, written: int) -> None:
        self._write("finish_client_request", f"{caller}/{idempotency_key}")
        earlier = self.client_requests[(caller, idempotency_key)]
        self.client_requests[(caller, idempotency_key)] = ClientRequest(earlier.fingerprint, earlier.recorded_at,
                                                                        written)

@dataclass
class InMemoryNotificationRecords:
    """An in-memory NotificationRecords with the table adapter's rules (conditional claim, take-over)."""

    items: dict[str, dict[str, object]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def claim_notification(self, notification: Notification, now: datetime, lease: timedelta) -> NotificationClaim:
        with self.lock:
            item = self.items.get(notification.notification_id)
            if item is None:
                self.items[notification.notification_id] = {"status": "SENDING", "claimed_at": now, "channels": {}}
                return NotificationClaim(True, False)
            if item["status"] == "SENT":
                return NotificationClaim(False, True)
            done = tuple(sorted(item["channels"]))  # type: ignore[call-overload]
            if item["status"] == "FAILED" or (item["status"] == "SENDING" and item["claimed_at"] < now - lease):
                item.update(status="SENDING", claimed_at=now)
                return NotificationClaim(True, False, done)
            return NotificationClaim(False, False, done)

    def mark_channel_sent(self, notification_id: str, channel: str, at: datetime, message_id: str) -> None:
        self.items[notification_id]["channels"][channel] = message_id  # type: ignore[index]

    def mark_notification_sent(self, notification_id: str, at: datetime) -> None:
        self.items[notification_id]["status"] = "SENT"

    def mark_notification_failed(self, notification_id: str, at: datetime, error: str) -> None:
        self.items[notification_id].update(status="FAILED", error=error)

    def notification_sent(self, notification_id: str) -> bool:
        return self.items.get(notification_id, {}).get("status") == "SENT"


@dataclass
class RecordingAnnouncer:
    published: list[JudgedWindowDetail] = field(default_factory=list)
    fail_next: bool = False
    """The next publication raises TransientError (EventBridge refused the entry)."""

    def window_judged(self, detail: JudgedWindowDetail) -> None:
        if self.fail_next:
            self.fail_next = False
            raise TransientError("EventBridge did not accept the window event")
        self.published.append(detail)


@dataclass
class InMemorySchedules:
    existing: set[str] = field(default_factory=set)
    """Names of the schedules in the group: an upsert of one of them updates it, of another creates it."""
    upserted: list[DesiredSchedule] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    refuse_names: bool = False
    """Every delete is refused as Scheduler refuses a name it cannot hold."""

    def upsert(self, desired: DesiredSchedule, target: Target, *, probably_exists: bool) -> str:
        self.upserted.append(desired)
        answer = "updated" if desired.name in self.existing else "created"
        self.existing.add(desired.name)
        return answer

    def delete(self, name: str) -> bool:
        if self.refuse_names:
            raise ScheduleRejected(f"Name {name!r} fails to satisfy constraint")
        self.deleted.append(name)
        self.existing.discard(name)
        return True


@dataclass
class InMemoryAuditTrail:
    """The audit trail in memory (``audit_trails.ports.AuditWriter`` and ``AuditReader``), as the
    table keeps it: one entry per stream record (a replay writes nothing), oldest first, positions
    the sort keys (when, sequence, record)."""

    entries: dict[str, AuditEntry] = field(default_factory=dict)
    """Sort key (``changed_at#sequence#event_id``) -> the entry."""

    @staticmethod
    def position(entry: AuditEntry) -> str:
        return f"{entry.changed_at.isoformat()}#{entry.sequence}#{entry.event_id}"

    def put_audit_entry(self, entry: AuditEntry) -> bool:
        if any(e.event_id == entry.event_id for e in self.entries.values()):
            return False
        self.entries[self.position(entry)] = entry
        return True

    def _page(self, chosen: list[tuple[str, AuditEntry]], after: str | None, limit: int) -> Page[AuditEntry]:
        rest = [(p, e) for p, e in sorted(chosen, key=lambda pair: pair[0]) if after is None or p > after]
        return Page([e for _, e in rest[:limit]], rest[limit - 1][0] if len(rest) > limit else None)

    def object_trail(self, kind: str, object_id: str, after: str | None, limit: int) -> Page[AuditEntry]:
        return self._page([(p, e) for p, e in self.entries.items() if (e.kind, e.object_id) == (kind, object_id)],
                          after, limit)

    def latest_audit_entry(self, kind: str, object_id: str) -> AuditEntry | None:
        trail = self.object_trail(kind, object_id, None, 10**6).items
        return trail[-1] if trail else None

    def site_trail(self, site_id: str | None, after: str | None, limit: int) -> Page[AuditEntry]:
        return self._page([(p, e) for p, e in self.entries.items() if e.site_id == site_id], after, limit)
