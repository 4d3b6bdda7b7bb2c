"""Watching readiness (#33): recompute an equipment's readiness, store it, announce each change once,
and plan the recheck at the next instant it may change by time alone.

:func:`recheck` runs on every stream record that can change readiness (a check, a defect, an
out-of-service period, an assignment, a registry record, a checklist) and when the equipment's
recheck schedule fires. It compares the readiness now with the stored state item:

* the same state: nothing is announced (a retried record, a second recheck); the item's details
  (reason, lists) follow what is true now, under the same sequence;
* another state: a conditional write of ``sequence + 1`` (``announced: false``) wins or loses against
  a concurrent recheck (the loser reads again); the winner publishes the event, then marks it
  announced. A crash between the write and the publish leaves ``announced: false``: the next recheck
  publishes it (the same ``change_id``) before anything else.

Then the recheck schedule is planned: one one-time EventBridge Scheduler schedule per equipment
(:func:`recheck_schedule_name`) at ``next_change_at``, or none; an unchanged plan costs no call.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from missed_checks.checklists.checklist import Checklist
from missed_checks.defects.defect import Defect, DefectStatus
from missed_checks.errors import TransientError
from missed_checks.readiness.ports import (
    ReadinessAnnouncer,
    ReadinessReader,
    ReadinessStore,
    RecheckScheduler,
    WatchStore,
)
from missed_checks.readiness.readiness import Readiness, ReadinessRecord, current_window, readiness_of

__all__ = ["DEFERRED_RECHECK", "INLINE_RECHECKS", "RECHECK_PREFIX", "WRITE_ATTEMPTS", "TableChange",
           "on_table_change", "readiness_now", "recheck", "recheck_schedule_name"]

RECHECK_PREFIX = "_q."
WRITE_ATTEMPTS = 5
INLINE_RECHECKS = 100
"""A pre-use checklist's fleet rechecked in the invocation that reads its edit; the rest is deferred."""
DEFERRED_RECHECK = timedelta(minutes=1)
"""How soon the deferred part of a fleet is rechecked, each by its own recheck schedule."""
"""Conditional writes tried against concurrent rechecks of one equipment before the record is retried."""


def recheck_schedule_name(equipment_id: str) -> str:
    """``_q.<first 40 hex of sha256(equipment id)>``: in the stack's schedule group beside the
    checklists' (named by checklist id, never starting with ``_``), the reminders' (``_r<n>.``) and the
    digests' (``_d.``); an equipment id may hold characters a schedule name may not."""
    return RECHECK_PREFIX + hashlib.sha256(equipment_id.encode("utf-8")).hexdigest()[:40]


def readiness_now(reader: ReadinessReader, equipment_id: str, now: datetime) -> Readiness:
    """The equipment's live readiness, from the table as it is."""
    registered = reader.get_registered(equipment_id)
    checklists: list[Checklist] = []
    for assignment in reader.assignments_of_equipment(equipment_id):
        if assignment.assigned_at_instant(now):
            checklist = reader.get_checklist(assignment.checklist_id)
            if checklist is not None:
                checklists.append(checklist)
    site_id = registered.site_id if registered is not None else next(
        (c.site_id for c in sorted(checklists, key=lambda c: c.checklist_id) if c.site_id), None)
    site = reader.get_site(site_id) if site_id else None
    zone = ZoneInfo(site.timezone) if site is not None else None
    pre_use = [c for c in checklists if c.pre_use]
    starts = [w.start for c in pre_use if (w := current_window(c.parsed(), now)) is not None]
    checks = reader.checks_seen(equipment_id, min(starts), now) if starts else []
    return readiness_of(equipment_id, site_id, now,
                        periods=reader.out_of_service_of_equipment(equipment_id),
                        open_defects=reader.defects_of_equipment(equipment_id, DefectStatus.OPEN),
                        pre_use=pre_use, checks=checks, zone=zone)


def recheck(store: ReadinessStore, announcer: ReadinessAnnouncer, scheduler: RecheckScheduler,
            equipment_id: str, now: datetime) -> Readiness:
    """Recompute, store and announce (once) the equipment's readiness; plan its next recheck."""
    readiness = readiness_now(store, equipment_id, now)
    record = _store(store, announcer, readiness, now)
    if not record.announced:
        announcer.readiness_changed(record.detail())
        store.mark_announced(equipment_id, record.sequence)
    planned = recheck_instant(readiness.next_change_at)
    if planned != record.recheck_at:
        scheduler.plan_recheck(equipment_id, planned)
        store.note_recheck(equipment_id, planned)
    return readiness


def recheck_instant(at: datetime | None) -> datetime | None:
    """``at`` rounded up to the whole second (an ``at()`` expression holds whole seconds): never early."""
    if at is None or not at.microsecond:
        return at
    return at.replace(microsecond=0) + timedelta(seconds=1)


def _store(store: ReadinessStore, announcer: ReadinessAnnouncer, readiness: Readiness,
           now: datetime) -> ReadinessRecord:
    """The stored record once it says ``readiness`` (written when it did not)."""
    for _attempt in range(WRITE_ATTEMPTS):
        stored = store.readiness_record(readiness.equipment_id)
        if stored is not None and not stored.announced:  # a change whose publish was lost: out first
            announcer.readiness_changed(stored.detail())
            store.mark_announced(stored.readiness.equipment_id, stored.sequence)
            stored = replace(stored, announced=True)
        if stored is None or stored.readiness.state != readiness.state:
            record = ReadinessRecord(replace(readiness, since=readiness.since or now),
                                     sequence=(stored.sequence if stored else 0) + 1,
                                     previous=stored.readiness.state if stored else None, changed_at=now,
                                     announced=False, recheck_at=stored.recheck_at if stored else None)
            if store.write_readiness(record, expected_sequence=stored.sequence if stored else None):
                return record
            continue
        current = replace(readiness, since=readiness.since or stored.readiness.since)
        if current == stored.readiness:
            return stored
        record = replace(stored, readiness=current)  # the same state, told in today's words
        if store.write_readiness(record, expected_sequence=stored.sequence):
            return record
    raise TransientError(f"the readiness of {readiness.equipment_id} kept changing under concurrent rechecks")


@dataclass(frozen=True)
class TableChange:
    """What one change of the table (a stream record) means for readiness."""

    equipment_ids: tuple[str, ...] = ()
    """Equipment whose readiness it may change (a check, a defect, a period, an assignment, a move)."""
    checklist_id: str | None = None
    """A pre-use checklist whose rule or flags changed: every piece of equipment assigned to it now."""
    opened_defect_id: str | None = None
    """A defect just opened: its people are told."""
    through_checklist: str | None = None
    """The checklist of a performed check or an assignment: it changes readiness only when that
    checklist asks a pre-use check (or is gone): a fleet assigned to a monthly inspection, or its
    checks, cost no recheck (a failed critical item's defect is a change of its own)."""


def on_table_change(store: WatchStore, announcer: ReadinessAnnouncer, scheduler: RecheckScheduler,
                    change: TableChange, now: datetime,
                    alert: Callable[[Defect, Checklist], object],
                    checklist_of: Callable[[str], Checklist | None] | None = None) -> list[Readiness]:
    """Tell the people of a defect just opened (``alert``: each notification once), then recheck
    every piece of equipment the change touches, by id. A pre-use checklist's fleet is rechecked
    here up to :data:`INLINE_RECHECKS`; the rest by their recheck schedules, moved to
    :data:`DEFERRED_RECHECK` from now (one Scheduler call each instead of a recheck each, so a large
    fleet's edit fits in one invocation)."""
    if change.opened_defect_id is not None:
        defect = store.get_defect(change.opened_defect_id)
        checklist = store.get_checklist(defect.checklist_id) if defect is not None and defect.is_open else None
        if defect is not None and checklist is not None:
            alert(defect, checklist)
    equipment = set(change.equipment_ids)
    if change.through_checklist is not None:  # ``checklist_of``: a reader kept for the batch (default: the store)
        through = (checklist_of or store.get_checklist)(change.through_checklist)
        if through is not None and not through.pre_use:
            equipment = set()
    deferred: list[str] = []
    if change.checklist_id is not None:
        fleet = sorted({a.equipment_id for a in store.assignments(change.checklist_id) if a.assigned_at_instant(now)}
                       - equipment)
        equipment |= set(fleet[:INLINE_RECHECKS])
        deferred = fleet[INLINE_RECHECKS:]
    found = [recheck(store, announcer, scheduler, equipment_id, now) for equipment_id in sorted(equipment)]
    soon = recheck_instant(now + DEFERRED_RECHECK)
    for equipment_id in deferred:
        scheduler.plan_recheck(equipment_id, soon)
        store.note_recheck(equipment_id, soon)  # so the firing plans the next one, whatever was planned before
    return found
