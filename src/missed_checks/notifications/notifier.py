"""The notifier's work (#18): what a judged window or a reminder firing tells whom, sent once each.

Called by ``functions/notify/app.py`` for three inputs:

* a judged window (the ``Occurrence window judged`` event): its missed alert and, for equipment whose
  run of misses reaches ``escalate_after`` in it, one escalation (:func:`notify_judged_window`);
* a reminder firing (``{"kind": "reminder", "checklist_id", "lead", "instant"}`` from the reminder
  schedule): the window whose ``end - lead`` it is, and what is still undone (:func:`remind`);
* a notification handed back by a dead-letter replay (:func:`Notification.from_dict`).

Everything is read from the table at the time of sending (the event only says which window), so a
late, duplicated or replayed input finds the same facts and the same deterministic ids: each
notification is sent once (:func:`missed_checks.notifications.notifying.deliver`). A notification a channel
refuses or that keeps failing is handed to ``on_failure`` (the handler dead-letters it) and never
stops the others.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from missed_checks.checklists.checklist import Checklist, Status
from missed_checks.checklists.durations import parse_duration
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.equipment.assignments import Assignment, shard_of
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.errors import InvalidInput
from missed_checks.evaluation.ports import NotificationChannel, NotificationRecords, OutOfServiceReader
from missed_checks.notifications.notification import Kind, Notification, notification_id
from missed_checks.notifications.notifying import (
    Delivery,
    Excused,
    deliver,
    escalation_runs,
    escalations,
    missed_alerts,
    never_excused,
    reminder_instant,
    reminders,
    undone_equipment,
)
from missed_checks.notifications.reminders import reminder_window
from missed_checks.timefmt import to_utc_iso

__all__ = ["NotifierStore", "Outcome", "deliver_each", "notify_judged_window", "remind"]

ESCALATION_LOOKBACK = 20
"""Judged windows read back beyond ``escalate_after`` to find a run (windows the equipment did not
count for, or was excused in, are skipped over)."""


class NotifierStore(NotificationRecords, OutOfServiceReader, Protocol):
    def get_checklist(self, checklist_id: str) -> Checklist | None: ...

    def missed_equipment_of_window(self, checklist_id: str, window_start: datetime) -> list[str]: ...

    def assignments(self, checklist_id: str, shard: int | None = None) -> list[Assignment]: ...

    def recent_judged_windows(self, checklist_id: str, up_to: datetime, limit: int) -> list[OccurrenceWindow]: ...

    def missed_by_window(self, checklist_id: str, start: datetime, end: datetime) -> dict[str, set[str]]: ...

    def performed_by(self, checklist_id: str, start: datetime, until: datetime, recorded_by: datetime,
                     shards: Iterable[int] | None = None) -> set[str]: ...

    def notification_sent(self, notification_id: str) -> bool: ...


@dataclass(frozen=True)
class Outcome:
    """What became of one notification."""

    notification: Notification
    delivery: Delivery | None
    """None when it failed (``error`` says why; it was handed to ``on_failure``)."""
    error: str = ""


OnFailure = Callable[[Notification, Exception], None]


def deliver_each(notifications: Sequence[Notification], store: NotificationRecords,
                 channels: Sequence[NotificationChannel], now: Callable[[], datetime],
                 on_failure: OnFailure) -> list[Outcome]:
    """Deliver each notification once; a failure goes to ``on_failure`` and the next one is sent."""
    outcomes = []
    for notification in notifications:
        try:
            outcomes.append(Outcome(notification, deliver(notification, store, channels, now)))
        except Exception as error:  # one recipient's failure never stops the others
            on_failure(notification, error)
            outcomes.append(Outcome(notification, None, f"{type(error).__name__}: {error}"))
    return outcomes


def excused_in(store: OutOfServiceReader, start: datetime, end: datetime, equipment_ids: Iterable[str]) -> Excused:
    """Who is excused in which window, from the out-of-service periods overlapping ``[start, end)``
    of ``equipment_ids`` (one Query): a piece of equipment out of service for any part of a window."""
    by_equipment: dict[str, list[OutOfServicePeriod]] = {}
    for period in store.out_of_service_periods(start, end, list(equipment_ids)):
        by_equipment.setdefault(period.equipment_id, []).append(period)

    def excused(equipment_id: str, window: OccurrenceWindow) -> bool:
        return any(period.excuses(window) for period in by_equipment.get(equipment_id, ()))

    return excused


def _zone_window(checklist: Checklist, window: OccurrenceWindow) -> OccurrenceWindow:
    """The window on the checklist's clock (messages name local times)."""
    try:
        zone = checklist.parsed().zone
    except InvalidInput:
        return window
    return OccurrenceWindow(window.start.astimezone(zone), window.end.astimezone(zone),
                            window.evaluate_at.astimezone(zone))


def judged_notifications(store: NotifierStore, checklist_id: str, window_start: datetime,
                         excused: Excused | None = None) -> list[Notification]:
    """The missed alert and escalations a judged window calls for (none when it was not judged,
    the checklist is gone or tells nobody). ``excused``: by default the out-of-service periods."""
    checklist = store.get_checklist(checklist_id)
    settings = checklist.notify if checklist is not None else None
    if checklist is None or settings is None or settings.is_empty:
        return []
    windows = store.recent_judged_windows(checklist_id, window_start,
                                          (settings.escalate_after or 1) + ESCALATION_LOOKBACK)
    if not windows or windows[-1].start != window_start:
        return []  # not judged (yet): the event came from a run that failed before claiming it
    window = _zone_window(checklist, windows[-1])
    missed = store.missed_equipment_of_window(checklist_id, window.start)
    found = missed_alerts(checklist, settings, window, missed)
    if settings.escalate_after is not None and missed:
        by_window = store.missed_by_window(checklist_id, windows[0].start, window.start)
        assignments = {a.equipment_id: a for a in store.assignments(checklist_id) if a.equipment_id in set(missed)}
        if excused is None:
            excused = excused_in(store, windows[0].start, window.end, missed)
        runs = escalation_runs(windows, by_window, assignments, missed, excused, settings.escalate_after)
        found += escalations(checklist, settings, window, runs)
    return found


def notify_judged_window(store: NotifierStore, channels: Sequence[NotificationChannel], checklist_id: str,
                         window_start: datetime, now: Callable[[], datetime], on_failure: OnFailure,
                         excused: Excused | None = None) -> list[Outcome]:
    return deliver_each(judged_notifications(store, checklist_id, window_start, excused), store, channels, now,
                        on_failure)


def reminder_notifications(store: NotifierStore, checklist_id: str, lead_text: str, instant: datetime,
                           excused: Excused | None = None) -> list[Notification]:
    """The reminders a firing at ``instant`` calls for: none for a deleted, paused or finished
    checklist, a lead it no longer has, a firing that is no reminder instant (a superset cron), a
    window already judged, or when nothing is undone."""
    checklist = store.get_checklist(checklist_id)
    settings = checklist.notify if checklist is not None else None
    if (checklist is None or checklist.status is not Status.ACTIVE or settings is None or not settings.to
            or lead_text not in settings.remind_before):
        return []
    lead = parse_duration(lead_text, "lead", allow_zero=False)
    window = reminder_window(checklist.parsed(), lead, instant)
    at = reminder_instant(window, lead) if window is not None else None
    watermark = checklist.watermark
    if window is None or at is None or (watermark is not None and window.settled_by(watermark)):
        return []
    start = to_utc_iso(window.start)
    if all(store.notification_sent(notification_id(Kind.REMINDER, checklist_id, start, lead_text, to))
           for to in settings.to):
        return []  # a second chance, a duplicate or late firing: sent already, nothing to read
    assignments = store.assignments(checklist_id)
    counted = undone_equipment(window, assignments, set(), never_excused)
    if excused is None:
        excused = excused_in(store, window.start, window.end, counted)
    candidates = [equipment_id for equipment_id in counted if not excused(equipment_id, window)]
    if not candidates:
        return []
    done = store.performed_by(checklist_id, window.start, at, recorded_by=at,
                              shards={shard_of(equipment_id) for equipment_id in candidates})
    undone = [equipment_id for equipment_id in candidates if equipment_id not in done]
    return reminders(checklist, settings, window, lead_text, undone)


def remind(store: NotifierStore, channels: Sequence[NotificationChannel], checklist_id: str, lead_text: str,
           instant: datetime, now: Callable[[], datetime], on_failure: OnFailure,
           excused: Excused | None = None) -> list[Outcome]:
    return deliver_each(reminder_notifications(store, checklist_id, lead_text, instant, excused), store, channels,
                        now, on_failure)
