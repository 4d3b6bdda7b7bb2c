"""Reminder schedules (#18): one EventBridge Scheduler schedule per checklist and lead, firing at
``end - lead`` of every window (domain only, no AWS calls).

The expression is the evaluation's own construction (:func:`missed_checks.checklists.schedule_expression.schedule_for`)
applied to the checklist's recurrence with every window's "evaluate at" moved to its reminder
instant (:class:`ReminderRecurrence`): the same exactness rules, DST handling and superset
fallback. A superset expression fires at some instants that are no reminder instant: the notifier
sends only when a window's reminder instant is within the minute before the firing
(:func:`reminder_window`). Schedules live in the stack's schedule group beside the evaluation's,
named ``_r<n>.<checklist id>`` (``n`` the lead's position): a checklist id never starts with ``_``,
so no name can collide with a checklist's own schedule.

**Second chance.** Nothing catches a reminder up the way the next evaluation catches up a missed
firing: a reminder that does not go out at ``end - lead`` is useless after the window. So each lead
has a second schedule, ``_s<n>.<id>``, firing :data:`SECOND_CHANCE` later with the same input: it
finds the same window and the same notifications (their ids and content are those of ``end -
lead``), which the once-only record lets through only when the first firing did not send them.
"""

from __future__ import annotations

import dataclasses
import hashlib
from datetime import datetime, timedelta

from missed_checks.checklists.checklist import Checklist, Status
from missed_checks.checklists.durations import Duration, parse_duration
from missed_checks.checklists.recurrence import OccurrenceWindow, Recurrence
from missed_checks.checklists.schedule import DesiredSchedule
from missed_checks.checklists.schedule_expression import schedule_for
from missed_checks.notifications.notification import MAX_LEADS
from missed_checks.notifications.notifying import reminder_instant

__all__ = ["REMINDER_INPUT_TEMPLATE", "ReminderRecurrence", "checklist_of_reminder", "desired_reminders",
           "reminder_schedule_name",
           "reminder_schedule_names", "reminder_window"]

REMINDER_INPUT_TEMPLATE = ('{{"kind": "reminder", "checklist_id": "{checklist_id}", "lead": "{lead}", '
                           '"instant": "<aws.scheduler.scheduled-time>"}}')
"""The notifier's input from a reminder schedule (and so the body of a reminder dead letter)."""
_NAME_LIMIT = 64
_FIRING_TOLERANCE = timedelta(minutes=1)
"""Scheduler fires inside the minute of the (minute-rounded) reminder instant."""
SECOND_CHANCE = timedelta(minutes=10)
"""The second schedule of a lead fires this long after the first (leads longer than it only)."""


def reminder_schedule_name(checklist_id: str, position: int, second: bool = False) -> str:
    """``_r<n>.<id>`` (``_s<n>.<id>``: the second chance); an id too long for Scheduler's 64
    characters is cut and given a hash of itself."""
    prefix = f"_{'s' if second else 'r'}{position}."
    if len(prefix) + len(checklist_id) <= _NAME_LIMIT:
        return prefix + checklist_id
    digest = hashlib.sha256(checklist_id.encode("utf-8")).hexdigest()[:12]
    return f"{prefix}{checklist_id[:_NAME_LIMIT - len(prefix) - 13]}.{digest}"


def checklist_of_reminder(name: str) -> str | None:
    """The checklist id a reminder schedule's name carries (None: not a reminder's name). A cut name
    (an id longer than 60 characters) gives a prefix of the id, which names no checklist: syncing it
    only deletes schedules that do not exist."""
    if len(name) > 4 and name[0] == "_" and name[1] in "rs" and name[2].isdigit() and name[3] == ".":
        checklist_id = name[4:]
        return checklist_id if reminder_schedule_name(checklist_id, int(name[2]), name[1] == "s") == name else None
    return None


def reminder_schedule_names(checklist_id: str) -> list[str]:
    """Every name a reminder schedule of the checklist can have (to delete them all)."""
    return [reminder_schedule_name(checklist_id, position, second)
            for position in range(MAX_LEADS) for second in (False, True)]


def _nominal(duration: Duration) -> int:
    return duration.days * 86400 + duration.seconds


@dataclasses.dataclass(frozen=True)
class ReminderRecurrence(Recurrence):
    """The checklist's recurrence whose windows are "evaluated" at ``end - lead``."""

    lead: Duration = Duration()

    @classmethod
    def of(cls, recurrence: Recurrence, lead: Duration) -> ReminderRecurrence:
        values = {spec.name: getattr(recurrence, spec.name) for spec in dataclasses.fields(recurrence)}
        return cls(**values, lead=lead)

    @property
    def evaluation_offset(self) -> Duration:
        """``window - lead`` on the nominal clock (the cron's time of day on a day without a DST change)."""
        days, seconds = divmod(_nominal(self.window) - _nominal(self.lead), 86400)
        return Duration(days=days, seconds=seconds)

    def _window(self, wall: datetime, start: datetime) -> OccurrenceWindow:
        window = super()._window(wall, start)
        return OccurrenceWindow(window.start, window.end, reminder_instant(window, self.lead) or window.start)


def desired_reminders(checklist: Checklist, group_name: str, now: datetime) -> list[DesiredSchedule]:
    """The reminder schedules ``checklist`` needs (none without ``notify.remind_before``, none once
    its last reminder has passed). Raises InvalidInput for a rule or lead that cannot be used."""
    settings = checklist.notify
    if settings is None or not settings.remind_before or not settings.to:
        return []
    recurrence = checklist.parsed()
    schedules = []
    for position, lead_text in enumerate(settings.remind_before[:MAX_LEADS]):
        lead = parse_duration(lead_text, f"notify.remind_before[{position}]", allow_zero=False)
        fires = [(lead, False)]
        if lead.days or lead.exact > SECOND_CHANCE + _FIRING_TOLERANCE:
            fires.append((Duration(lead.days, lead.seconds - int(SECOND_CHANCE.total_seconds()))
                          if lead.seconds >= SECOND_CHANCE.total_seconds()
                          else Duration(lead.days - 1, lead.seconds + 86400 - int(SECOND_CHANCE.total_seconds())),
                          True))
        for fire_lead, second in fires:
            spec = schedule_for(ReminderRecurrence.of(recurrence, fire_lead))
            if spec.end_date is not None and spec.end_date <= now:
                continue
            start_date = spec.start_date if spec.start_date is not None and spec.start_date > now else None
            what = "second chance of the reminder" if second else "reminds"
            schedules.append(DesiredSchedule(
                name=reminder_schedule_name(checklist.checklist_id, position, second), group_name=group_name,
                expression=spec.expression, timezone=spec.timezone, start_date=start_date, end_date=spec.end_date,
                enabled=checklist.status is Status.ACTIVE, exact=spec.exact,
                target_input=REMINDER_INPUT_TEMPLATE.format(checklist_id=checklist.checklist_id, lead=lead_text),
                purpose=f"missed-checks: {what} of checklist {checklist.checklist_id} {lead_text} before each window "
                        f"closes ({'exact' if spec.exact else 'superset: firings that are no reminder do nothing'})",
            ))
    return schedules


def reminder_window(recurrence: Recurrence, lead: Duration, instant: datetime) -> OccurrenceWindow | None:
    """The window whose reminder instant (``end - lead``) is in the minute up to ``instant`` (a
    firing), or :data:`SECOND_CHANCE` before it (the second chance's firing); None for a superset
    expression's extra firing, or no window there."""
    reminders = ReminderRecurrence.of(recurrence, lead)
    lookback = recurrence.window.longest_elapsed() + SECOND_CHANCE + _FIRING_TOLERANCE
    for window in reminders.windows(instant - lookback, instant):
        at = window.evaluate_at
        late = instant - at
        if at > window.start and (timedelta(0) <= late < _FIRING_TOLERANCE
                                  or SECOND_CHANCE <= late < SECOND_CHANCE + _FIRING_TOLERANCE):
            return recurrence.window_at(window.start)
    return None
