"""Keeping a checklist's schedule in step with the checklist, one stream record at a time.

The record only says *which* checklist changed: the sync always works from the checklist's
current item, so a replayed, duplicated or out-of-order record can never bring back an old
schedule. A fingerprint of the applied schedule, noted on the item, makes repeated records cost
no Scheduler call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from missed_checks.checklist import RULE_FIELDS, Checklist
from missed_checks.errors import InvalidInput, ScheduleRejected
from missed_checks.schedule import DesiredSchedule, Target, desired_schedule
from missed_checks.timefmt import to_utc_iso

# Changes to anything else on the checklist item (name, watermark, what the sync itself notes)
# need no schedule work.
SCHEDULE_FIELDS = (*RULE_FIELDS, "status")


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


class Table(Protocol):
    def get_checklist_item(self, checklist_id: str) -> dict[str, Any] | None: ...

    def record_schedule_sync(self, checklist_id: str, revision: int, *, schedule: Mapping[str, Any] | None,
                             error: Mapping[str, Any] | None) -> bool: ...


class Schedules(Protocol):
    def upsert(self, desired: DesiredSchedule, target: Target, *, probably_exists: bool) -> str: ...

    def delete(self, name: str) -> bool: ...


class Rejected(Protocol):
    def __call__(self, checklist_id: str, error: dict[str, str], revision: int) -> None: ...


def needs_sync(event_name: str, old_image: Mapping[str, Any] | None, new_image: Mapping[str, Any] | None) -> bool:
    """False for a MODIFY that changed nothing the schedule depends on (the watermark moving, the
    sync noting its own result): those records cost no call at all."""
    if event_name != "MODIFY" or old_image is None or new_image is None:
        return True
    return any(old_image.get(name) != new_image.get(name) for name in SCHEDULE_FIELDS)


def took_effect_unnoticed(event_name: str, old_image: Mapping[str, Any] | None,
                          new_image: Mapping[str, Any] | None) -> bool:
    """True for a rule change or a resume written around the table adapter (a hand edit in the
    console) that did not move ``effective_from``: the sync then moves it, so the new rule still
    never judges windows that closed before it."""
    if event_name != "MODIFY" or not old_image or not new_image:
        return False
    rule_changed = any(old_image.get(name) != new_image.get(name) for name in RULE_FIELDS)
    resumed = old_image.get("status") == "PAUSED" and new_image.get("status") != "PAUSED"
    return (rule_changed or resumed) and old_image.get("effective_from") == new_image.get("effective_from")


def sync_checklist(
    checklist_id: str,
    *,
    table: Table,
    schedules: Schedules,
    target: Target,
    group_name: str,
    now: datetime,
    report_rejected: Rejected,
) -> SyncResult:
    item = table.get_checklist_item(checklist_id)
    if item is None:
        deleted = schedules.delete(checklist_id)
        return SyncResult(checklist_id, Action.DELETED if deleted else Action.UNCHANGED, "checklist deleted")
    revision = int(item.get("revision") or 0)
    recorded = item.get("schedule") or {}
    try:
        checklist = Checklist.from_item(item)
        desired = desired_schedule(checklist, group_name, now)
    except InvalidInput as invalid:
        return _reject(checklist_id, revision, item, invalid, table, schedules, now, report_rejected)
    if desired is None:
        deleted = schedules.delete(checklist_id)
        table.record_schedule_sync(checklist_id, revision, schedule={"state": "FINISHED", "synced_at": to_utc_iso(now)},
                                   error=None)
        return SyncResult(checklist_id, Action.DELETED if deleted else Action.UNCHANGED,
                          "the recurrence has no windows left to judge")
    fingerprint = desired.fingerprint(target)
    if recorded.get("fingerprint") == fingerprint and not item.get("sync_error"):
        return SyncResult(checklist_id, Action.UNCHANGED, "schedule already matches")
    try:
        applied = schedules.upsert(desired, target, probably_exists=bool(recorded.get("fingerprint")))
    except ScheduleRejected as rejected:
        return _reject(checklist_id, revision, item, InvalidInput("schedule", str(rejected)), table, schedules,
                       now, report_rejected)
    table.record_schedule_sync(
        checklist_id, revision,
        schedule={
            "expression": desired.expression,
            "timezone": desired.timezone,
            "exact": desired.exact,
            "state": "ENABLED" if desired.enabled else "DISABLED",
            "fingerprint": fingerprint,
            "synced_at": to_utc_iso(now),
        },
        error=None,
    )
    return SyncResult(checklist_id, Action(applied), f"{desired.expression} in {desired.timezone}")


def _reject(checklist_id: str, revision: int, item: Mapping[str, Any], invalid: InvalidInput, table: Table,
            schedules: Schedules, now: datetime, report_rejected: Rejected) -> SyncResult:
    """An unusable rule: no schedule may fire for it. Note the error on the item (once per revision)
    and hand it to the dead-letter queue so an operator sees it."""
    error = {"field": invalid.field, "message": invalid.message}
    previous = item.get("sync_error") or {}
    if previous.get("field") == error["field"] and previous.get("message") == error["message"] and int(
        previous.get("revision", -1)
    ) == revision:
        return SyncResult(checklist_id, Action.SKIPPED, "invalid recurrence already reported", error)
    schedules.delete(checklist_id)
    # Dead-letter first: if noting the error on the item then fails, the retry reports again rather
    # than never (at least once).
    report_rejected(checklist_id, error, revision)
    table.record_schedule_sync(checklist_id, revision, schedule=None,
                               error={**error, "at": to_utc_iso(now), "revision": revision})
    return SyncResult(checklist_id, Action.INVALID, invalid.message, error)
