"""Telling people (#18): what each notification of a checklist says, and sending it once.

* :func:`missed_alerts`: one message per recipient of ``notify.to`` for a judged window with misses;
* :func:`escalation_runs` and :func:`escalations`: per equipment, the run of consecutive judged
  windows in which it counted (windows it was excused in, or did not count for, are skipped) and
  was missed; a window in which it counted and was not missed ends the run. The N-th miss of a run
  (``notify.escalate_after``) sends one escalation to ``notify.escalate_to``, naming every piece
  of equipment whose run reached N in that window, its run and since when;
* :func:`reminder_instant` and :func:`reminders`: at ``end - lead``, the counted, not-excused
  equipment without a check performed in ``[start, end - lead]`` and recorded by then;
* :func:`deliver`: claim the notification's record (conditional write), use each channel not used
  yet, note it, mark it sent. A notification is sent by exactly one caller, whatever retries,
  duplicate firings, replays and concurrent executions do.

Domain only: the records and channels are :mod:`missed_checks.evaluation.ports`' Protocols.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from missed_checks.checklists.checklist import Checklist
from missed_checks.checklists.durations import Duration
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.checklists.recurrence.windows import resolve_local
from missed_checks.equipment.assignments import Assignment
from missed_checks.evaluation.ports import NotificationChannel, NotificationRecords
from missed_checks.notifications.notification import (
    Kind,
    Notification,
    NotificationRejected,
    NotifySettings,
    listed,
    local_time,
)
from missed_checks.timefmt import to_utc_iso

__all__ = [
    "CLAIM_LEASE", "Delivery", "Excused", "RecipientRefused", "Run", "deliver", "escalation_runs", "escalations",
    "missed_alerts",
    "reminder_instant", "reminders", "undone_equipment",
]

CLAIM_LEASE = timedelta(minutes=15)
"""A notification claimed this long ago and neither sent nor failed is taken to be abandoned (its
sender died): a retry or replay takes it over (the one gap: it may have gone out already)."""

Excused = Callable[[str, OccurrenceWindow], bool]
"""``excused(equipment_id, window)``: the equipment was out of service for part of the window
(the ``oos`` feature's answer; :func:`never_excused` until it is wired)."""


def never_excused(equipment_id: str, window: OccurrenceWindow) -> bool:
    """The seam for out-of-service periods: nothing is excused (see docs/notifications.md)."""
    return False


def _name(checklist: Checklist) -> str:
    return checklist.name or checklist.checklist_id


def _window_text(window: OccurrenceWindow) -> str:
    zone = window.start.tzinfo
    return f"{local_time(window.start, zone)} to {local_time(window.end, zone)}"


def _for_each(recipients: Iterable[str], make: Callable[[str], Notification]) -> list[Notification]:
    return [make(recipient) for recipient in recipients]


# -- missed alert ------------------------------------------------------------------------------------
def missed_alerts(checklist: Checklist, settings: NotifySettings, window: OccurrenceWindow,
                  missed: Sequence[str]) -> list[Notification]:
    """One message per ``notify.to`` recipient listing the window's missed equipment (none without misses)."""
    if not missed:
        return []
    start = to_utc_iso(window.start)
    subject = f"Missed: {_name(checklist)}: {len(missed)} not checked ({local_time(window.start, window.start.tzinfo)})"
    dismiss = (f"missed-checks missed dismiss --checklist {checklist.checklist_id} --window-start {start} "
               "--equipment ID --reason '...' --by 'your name'")
    body = (f"The checklist {_name(checklist)} ({checklist.checklist_id}) was not done for {len(missed)} piece(s) of "
            f"equipment in the window {_window_text(window)}:\n\n{listed(missed)}\n\n"
            f"If a check was done but not recorded, record it; to excuse a miss with a reason:\n  {dismiss}\n")
    return _for_each(settings.to, lambda to: Notification(
        kind=Kind.MISSED, checklist_id=checklist.checklist_id, window_start=start, recipient=to,
        equipment=tuple(missed), subject=subject, body=body))


# -- escalation --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Run:
    """Consecutive misses of one piece of equipment up to (and including) a window."""

    equipment_id: str
    length: int
    since: str
    """The start (UTC ISO) of the first window of the run."""


def escalation_runs(windows: Sequence[OccurrenceWindow], missed: Mapping[str, set[str]],
                    assignments: Mapping[str, Assignment], candidates: Iterable[str], excused: Excused,
                    longest: int) -> dict[str, Run]:
    """The run of misses of each candidate ending at the last of ``windows`` (judged windows, oldest
    first; ``missed`` maps a window start (UTC ISO) to its missed equipment). A window the equipment
    did not count for, or was excused in, is skipped; one it counted for and was not missed ends the
    run. Counting stops past ``longest`` (only the N-th miss matters)."""
    runs: dict[str, Run] = {}
    for equipment_id in candidates:
        length, since = 0, ""
        assignment = assignments.get(equipment_id)
        for window in reversed(windows):
            start = to_utc_iso(window.start)
            if equipment_id in missed.get(start, set()):
                length, since = length + 1, start
                if length > longest:
                    break
                continue
            counted = assignment is not None and assignment.counts_for(window.start, window.end)
            if counted and not excused(equipment_id, window):
                break
        if length:
            runs[equipment_id] = Run(equipment_id, length, since)
    return runs


def escalations(checklist: Checklist, settings: NotifySettings, window: OccurrenceWindow,
                runs: Mapping[str, Run]) -> list[Notification]:
    """One message per ``notify.escalate_to`` recipient naming the equipment whose run of misses
    reached ``escalate_after`` exactly in ``window`` (a longer run escalated already)."""
    if settings.escalate_after is None or not settings.escalate_to:
        return []
    reached = sorted((run for run in runs.values() if run.length == settings.escalate_after),
                     key=lambda run: run.equipment_id)
    if not reached:
        return []
    zone = window.start.tzinfo
    lines = []
    for run in reached:
        since = datetime.fromisoformat(run.since.replace("Z", "+00:00"))
        lines.append(f"  - {run.equipment_id}: missed {run.length} times in a row, since the window of "
                     f"{local_time(since, zone)}")
    equipment = tuple(run.equipment_id for run in reached)
    subject = (f"Escalation: {_name(checklist)}: {len(reached)} piece(s) of equipment missed "
               f"{settings.escalate_after} times in a row")
    body = (f"The checklist {_name(checklist)} ({checklist.checklist_id}) has now been missed "
            f"{settings.escalate_after} judged windows in a row for:\n\n" + "\n".join(lines)
            + f"\n\nThe latest window: {_window_text(window)}. You are told once per run of misses.\n")
    details = {"runs": [{"equipment": run.equipment_id, "length": run.length, "since": run.since} for run in reached]}
    start = to_utc_iso(window.start)
    return _for_each(settings.escalate_to, lambda to: Notification(
        kind=Kind.ESCALATION, checklist_id=checklist.checklist_id, window_start=start, recipient=to,
        equipment=equipment, subject=subject, body=body, details=details))


# -- reminder ----------------------------------------------------------------------------------------
def reminder_instant(window: OccurrenceWindow, lead: Duration) -> datetime | None:
    """``end - lead`` (days on the checklist's wall clock, then exact time), or None when that is
    not after the window's start (no reminder then)."""
    zone = window.end.tzinfo
    instant = window.end
    if lead.days and zone is not None:
        instant = resolve_local(window.end.replace(tzinfo=None, fold=0) - timedelta(days=lead.days), zone)
    instant = (instant - lead.exact).astimezone(zone)
    return instant if instant > window.start else None


def undone_equipment(window: OccurrenceWindow, assignments: Iterable[Assignment], done: set[str],
                     excused: Excused) -> list[str]:
    """Counted, not excused, and not in ``done``: what a reminder lists, sorted."""
    return sorted(a.equipment_id for a in assignments
                  if a.counts_for(window.start, window.end) and a.equipment_id not in done
                  and not excused(a.equipment_id, window))


def reminders(checklist: Checklist, settings: NotifySettings, window: OccurrenceWindow, lead: str,
              undone: Sequence[str]) -> list[Notification]:
    """One message per ``notify.to`` recipient listing what is still undone (none when nothing is)."""
    if not undone:
        return []
    zone = window.start.tzinfo
    subject = (f"Reminder: {_name(checklist)}: {len(undone)} still to check before "
               f"{local_time(window.end, zone)}")
    body = (f"The window of {_name(checklist)} ({checklist.checklist_id}) closes at {local_time(window.end, zone)}. "
            f"No check is recorded yet for:\n\n{listed(undone)}\n")
    start = to_utc_iso(window.start)
    return _for_each(settings.to, lambda to: Notification(
        kind=Kind.REMINDER, checklist_id=checklist.checklist_id, window_start=start, recipient=to,
        equipment=tuple(undone), subject=subject, body=body, occasion=lead))


class RecipientRefused(NotificationRejected):
    """The e-mail service refused one recipient for good (#30 item 4): in the SES sandbox an
    unverified recipient ("Email address is not verified. The following identities failed the
    check ..."), or a recipient identity the sender may not send to. Permanent for that recipient:
    not retried; the record, the log and the dead letter say so; the other recipients still get
    theirs."""

    def __init__(self, recipient: str, reason: str) -> None:
        super().__init__(f"SES refused recipient {recipient}: {reason}; in the SES sandbox every recipient must be "
                         "verified")
        self.recipient = recipient
        self.reason = reason


# -- sending once -------------------------------------------------------------------------------------
class Delivery(StrEnum):
    SENT = "sent"
    """This call sent it."""
    ALREADY_SENT = "already_sent"
    IN_FLIGHT = "in_flight"
    """Another caller holds it (sending now, or failed recently and its dead letter names it)."""


def deliver(notification: Notification, records: NotificationRecords, channels: Sequence[NotificationChannel],
            now: Callable[[], datetime]) -> Delivery:
    """Send ``notification`` once over ``channels``: claim its record, use each channel an earlier
    attempt did not, note each, then mark it sent. A channel's error marks the record FAILED (so a
    retry or replay takes it over) and is raised."""
    claim = records.claim_notification(notification, now(), CLAIM_LEASE)
    if claim.sent:
        return Delivery.ALREADY_SENT
    if not claim.won:
        return Delivery.IN_FLIGHT
    notification_id = notification.notification_id
    try:
        for channel in channels:
            if channel.name in claim.channels_done:
                continue
            message_id = channel.send(notification)
            records.mark_channel_sent(notification_id, channel.name, now(), message_id)
    except Exception as error:
        records.mark_notification_failed(notification_id, now(), f"{type(error).__name__}: {error}")
        raise
    records.mark_notification_sent(notification_id, now())
    return Delivery.SENT


def summary(notifications: Iterable[Notification]) -> list[dict[str, Any]]:
    """Short JSON of notifications (logs and handler results)."""
    return [{"kind": n.kind.value, "to": n.recipient, "window_start": n.window_start, "equipment": len(n.equipment)}
            for n in notifications]
