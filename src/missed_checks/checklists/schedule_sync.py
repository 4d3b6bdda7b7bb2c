"""Keeping a checklist's schedule in step with the checklist, one stream record at a time.

The record only says *which* checklist changed: the sync always works from the checklist's
current item, so a replayed, duplicated or out-of-order record can never bring back an old
schedule. A fingerprint of the applied schedule, noted on the item, makes repeated records cost
no Scheduler call.

Whatever the item holds (it may have been written by hand, around our tools), a rule that cannot
be used ends as :class:`InvalidInput` and so on the invalid-rule path: the schedule is deleted,
the item gets ``sync_error`` and the dead-letter queue a message naming the checklist. Nothing
about the item's content makes :func:`sync_checklist` raise (only AWS errors do).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from missed_checks.checklists.checklist import RULE_FIELDS, Checklist, ChecklistRecord
from missed_checks.checklists.schedule import DesiredSchedule, Target, desired_schedule
from missed_checks.errors import InvalidInput, ScheduleRejected
from missed_checks.notifications.reminders import desired_reminders, reminder_schedule_names
from missed_checks.timefmt import parse_instant

# Changes to anything else on the checklist item (name, watermark, what the sync itself notes)
# need no schedule work.
SCHEDULE_FIELDS = (*RULE_FIELDS, "status", "closed_on")


class Action(StrEnum):
    SKIPPED = "skipped"
    CREATED = "created"
    UPDATED = "updated"
    DELETED = "deleted"
    UNCHANGED = "unchanged"
    INVALID = "invalid"


@dataclass(frozen=True)
class SyncResult:
    checklist_id: str
    action: Action
    detail: str = ""
    error: dict[str, str] | None = None


@dataclass(frozen=True)
class ChecklistImage:
    """One side (old or new) of a checklist item's stream record, as schedule-sync reads it
    (:func:`missed_checks.aws.table.checklists.checklist_image`): the fields the schedule depends on
    as the item holds them (a hand edit may hold anything there, and a change to it must still be
    synced and reported), when the rule took effect, who is reminded and the reminder schedules the
    sync noted."""

    recurrence: object = None
    timezone: object = None
    window: object = None
    grace: object = None
    status: object = None
    closed_on: object = None
    effective_from: object = None
    remind_before: object = None
    """The reminders' leads (``notify.remind_before``) as the item holds them."""
    reminds_someone: bool = False
    """``notify.to`` names someone."""
    noted_reminders: tuple[str, ...] = ()
    """The reminder schedules the sync's note names (#18)."""

    def rule(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in RULE_FIELDS)

    def schedule_fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in SCHEDULE_FIELDS)


@dataclass(frozen=True)
class CalendarImage:
    """One side of a closure calendar item's stream record, as schedule-sync reads it
    (:func:`missed_checks.aws.table.calendars.calendar_image`)."""

    dates: object = None
    """Its dates as the item holds them."""
    used_by: tuple[str, ...] = ()
    """The checklists that reference it, sorted (none when the item holds no set of them)."""


@dataclass(frozen=True)
class ScheduleNote:
    """What the sync notes on a checklist once its schedule is applied (or it needs none: FINISHED);
    its fingerprint makes a repeated record cost no Scheduler call."""

    state: str
    """ENABLED, DISABLED or FINISHED (no windows left to judge: no schedule)."""
    synced_at: datetime
    expression: str | None = None
    timezone: str | None = None
    exact: bool | None = None
    fingerprint: str | None = None
    reminders: tuple[str, ...] = ()
    """The reminder schedules applied (#18)."""


@dataclass(frozen=True)
class SyncError:
    """Why the sync could not schedule a checklist's revision (noted once per revision)."""

    field: str
    message: str
    at: datetime
    revision: int


class Table(Protocol):
    def get_checklist_record(self, checklist_id: str) -> ChecklistRecord | None: ...

    def record_schedule_sync(self, checklist_id: str, revision: int, *, schedule: ScheduleNote | None,
                             error: SyncError | None) -> bool: ...

    def adopt_checklist(self, checklist_id: str) -> bool: ...

    def with_closures(self, checklist: Checklist) -> Checklist: ...


class Schedules(Protocol):
    def upsert(self, desired: DesiredSchedule, target: Target, *, probably_exists: bool) -> str: ...

    def delete(self, name: str) -> bool: ...


class Rejected(Protocol):
    def __call__(self, checklist_id: str, error: dict[str, str], revision: int) -> None: ...


def needs_sync(event_name: str, old_image: ChecklistImage | None, new_image: ChecklistImage | None) -> bool:
    """False for a MODIFY that changed nothing the schedule depends on (the watermark moving, the
    sync noting its own result): those records cost no call at all."""
    if event_name != "MODIFY" or old_image is None or new_image is None:
        return True
    if _reminders_changed(old_image, new_image):  # reminder schedules (#18)
        return True
    return old_image.schedule_fields() != new_image.schedule_fields()


def took_effect_unnoticed(event_name: str, old_image: ChecklistImage | None,
                          new_image: ChecklistImage | None) -> bool:
    """True for a rule change or a resume written around the table adapter (a hand edit in the
    console) that did not move ``effective_from``: the sync then moves it, so the new rule still
    never judges windows that closed before it."""
    if event_name != "MODIFY" or not old_image or not new_image:
        return False
    rule_changed = old_image.rule() != new_image.rule()
    resumed = old_image.status == "PAUSED" and new_image.status != "PAUSED"
    return (rule_changed or resumed) and old_image.effective_from == new_image.effective_from


def takes_effect_at(event_name: str, old_image: ChecklistImage | None, new_image: ChecklistImage | None,
                    record_time: datetime | None) -> datetime | None:
    """Where the checklist's ``effective_from`` must move (forward only) for this record, or None.

    An INSERT is a creation: the rule takes effect when the item reached the table, never earlier,
    whatever ``created_at``/``effective_from`` a hand-written item claims (our writer sets both to
    the moment of the write, so for its items this is a no-op). A MODIFY that changed the rule or
    resumed without moving ``effective_from`` (:func:`took_effect_unnoticed`) takes effect at the
    record's time.
    """
    if record_time is None:
        return None
    if event_name == "INSERT" and new_image:
        claimed = new_image.effective_from
        try:
            if isinstance(claimed, str) and parse_instant(claimed, "effective_from") >= record_time:
                return None
        except InvalidInput:
            pass  # not an instant: the sync reports it; the forward-only write cannot compare it either
        return record_time
    return record_time if took_effect_unnoticed(event_name, old_image, new_image) else None


def sync_checklist(
    checklist_id: str,
    *,
    table: Table,
    schedules: Schedules,
    target: Target,
    group_name: str,
    now: datetime,
    report_rejected: Rejected,
    reminder_target: Target | None = None,
    known_reminders: Sequence[str] | None = None,
) -> SyncResult:
    """Bring the checklist's schedule (and, with ``reminder_target``, its reminder schedules: #18)
    in step with its item. ``known_reminders``: the reminder schedules the checklist's last item
    noted (a stream record's old image), deleted with it; None: unknown, every possible name is."""
    item = table.get_checklist_record(checklist_id)
    if item is None:
        if reminder_target is not None:
            _delete_reminders(schedules, list(known_reminders) if known_reminders is not None
                              else reminder_schedule_names(checklist_id))
        deleted = schedules.delete(checklist_id)
        return SyncResult(checklist_id, Action.DELETED if deleted else Action.UNCHANGED, "checklist deleted")
    if not item.has_revision:
        # Written by hand without one: every note below is conditional on the revision, so give it
        # the one a fresh item has (no-op when it appeared meanwhile).
        table.adopt_checklist(checklist_id)
    recorded = _mapping(item.schedule)
    revision = item.revision
    if item.checklist is None:
        # An unreadable revision (0: the notes cannot match it) or checklist: the schedule is still
        # deleted and the DLQ told.
        return _reject(checklist_id, revision, item, item.problem or InvalidInput("checklist", "unreadable"), table,
                       schedules, now, report_rejected)
    try:
        checklist = table.with_closures(item.checklist)
        desired = desired_schedule(checklist, group_name, now)
        reminders = (desired_reminders(checklist, group_name, now)
                     if reminder_target is not None and desired is not None else [])
    except InvalidInput as invalid:
        return _reject(checklist_id, revision, item, invalid, table, schedules, now, report_rejected)
    recorded_reminders = [str(name) for name in recorded.get("reminders") or []]
    if desired is None:
        _delete_reminders(schedules, recorded_reminders)
        deleted = schedules.delete(checklist_id)
        table.record_schedule_sync(checklist_id, revision, schedule=ScheduleNote("FINISHED", now), error=None)
        return SyncResult(checklist_id, Action.DELETED if deleted else Action.UNCHANGED,
                          "the recurrence has no windows left to judge")
    fingerprint = desired.fingerprint(target)
    if reminders and reminder_target is not None:  # the reminders' requests change it too (#18)
        fingerprint = _combined(fingerprint, [reminder.fingerprint(reminder_target) for reminder in reminders])
    if recorded.get("fingerprint") == fingerprint and not item.sync_error:
        return SyncResult(checklist_id, Action.UNCHANGED, "schedule already matches")
    try:
        applied = schedules.upsert(desired, target, probably_exists=bool(recorded.get("fingerprint")))
    except ScheduleRejected as rejected:
        return _reject(checklist_id, revision, item, InvalidInput("schedule", str(rejected)), table, schedules,
                       now, report_rejected)
    noted_reminders: tuple[str, ...] = ()
    if reminder_target is not None:  # reminder schedules (#18): one per lead, stale ones deleted
        try:
            for reminder in reminders:
                schedules.upsert(reminder, reminder_target, probably_exists=reminder.name in recorded_reminders)
        except ScheduleRejected as rejected:
            return _reject(checklist_id, revision, item, InvalidInput("notify.remind_before", str(rejected)), table,
                           schedules, now, report_rejected)
        _delete_reminders(schedules, [name for name in recorded_reminders
                                      if name not in {reminder.name for reminder in reminders}])
        noted_reminders = tuple(reminder.name for reminder in reminders)
    table.record_schedule_sync(
        checklist_id, revision,
        schedule=ScheduleNote(state="ENABLED" if desired.enabled else "DISABLED", synced_at=now,
                              expression=desired.expression, timezone=desired.timezone, exact=desired.exact,
                              fingerprint=fingerprint, reminders=noted_reminders),
        error=None,
    )
    return SyncResult(checklist_id, Action(applied), f"{desired.expression} in {desired.timezone}")


def _reject(checklist_id: str, revision: int, item: ChecklistRecord, invalid: InvalidInput, table: Table,
            schedules: Schedules, now: datetime, report_rejected: Rejected) -> SyncResult:
    """An unusable rule: no schedule may fire for it. Note the error on the item (once per revision)
    and hand it to the dead-letter queue so an operator sees it."""
    error = {"field": invalid.field, "message": invalid.message}
    previous = _mapping(item.sync_error)
    if (previous.get("field"), previous.get("message"), previous.get("revision")) == (
        error["field"], error["message"], revision
    ):
        return SyncResult(checklist_id, Action.SKIPPED, "invalid recurrence already reported", error)
    try:
        schedules.delete(checklist_id)
    except ScheduleRejected:
        pass  # an id Scheduler refuses as a name: no schedule by that name can exist
    _delete_reminders(schedules, [str(name) for name in _mapping(item.schedule).get("reminders") or []])
    # Dead-letter first: if noting the error on the item then fails, the retry reports again rather
    # than never (at least once).
    report_rejected(checklist_id, error, revision)
    table.record_schedule_sync(checklist_id, revision, schedule=None,
                               error=SyncError(invalid.field, invalid.message, now, revision))
    return SyncResult(checklist_id, Action.INVALID, invalid.message, error)


def _mapping(value: Any) -> Mapping[str, Any]:
    """The sync's own notes on the item, or nothing when a hand edit made them something else."""
    return value if isinstance(value, Mapping) else {}


# -- closure calendars (#23 item 2) -----------------------------------------------------------------
def calendar_needs_sync(event_name: str, old_image: CalendarImage | None,
                        new_image: CalendarImage | None) -> bool:
    """A calendar item's stream record matters when its dates changed (a new calendar, an edit, a
    deletion); a change of who references it (``used_by``) comes with the checklist's own record."""
    if event_name != "MODIFY" or old_image is None or new_image is None:
        return True
    return bool(old_image.dates != new_image.dates)


def checklists_to_resync(image: CalendarImage | None) -> list[str]:
    """The checklists a calendar item names in ``used_by`` (the stream's image), sorted."""
    return list(image.used_by) if image is not None else []


# -- reminder schedules (#18) ------------------------------------------------------------------------
def _reminders_changed(old_image: ChecklistImage, new_image: ChecklistImage) -> bool:
    """A change of ``notify`` that moves reminder schedules (its leads, or whether anyone is told)."""
    def leads(image: ChecklistImage) -> tuple[object, bool]:
        return image.remind_before, image.reminds_someone

    return leads(old_image) != leads(new_image)


def _delete_reminders(schedules: Schedules, names: list[str]) -> None:
    for name in names:
        try:
            schedules.delete(name)
        except ScheduleRejected:
            pass  # a name Scheduler refuses: no such schedule can exist


def _combined(fingerprint: str, reminders: list[str]) -> str:
    document = json.dumps([fingerprint, *reminders])
    return hashlib.sha256(document.encode("utf-8")).hexdigest()[:32]


def noted_reminders(image: ChecklistImage | None) -> list[str]:
    """The reminder schedules a checklist item's schedule note names (#18)."""
    return list(image.noted_reminders) if image is not None else []
