"""Reminder schedules (#18): one per checklist and lead, at ``end - lead``, kept in step by schedule-sync."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from missed_checks.aws.table.checklists import checklist_image, checklist_item, checklist_record, schedule_note_map
from missed_checks.checklists.checklist import Checklist, ChecklistRecord, Status
from missed_checks.checklists.durations import parse_duration
from missed_checks.checklists.schedule import DesiredSchedule, Target
from missed_checks.checklists.schedule_sync import Action, ScheduleNote, SyncError, needs_sync, sync_checklist
from missed_checks.notifications.notification import NotifySettings
from missed_checks.notifications.reminders import (
    checklist_of_reminder,
    desired_reminders,
    reminder_schedule_name,
    reminder_schedule_names,
    reminder_window,
)

NOW = datetime(2026, 3, 1, tzinfo=UTC)
WEEKDAYS = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"
TOLD = NotifySettings(to=("crew@example.com",), remind_before=("PT2H30M", "PT1H"))
EVALUATION = Target("arn:aws:states:us-east-1:1:stateMachine:sm", "arn:aws:iam::1:role/s",
                    "arn:aws:sqs:us-east-1:1:d", 3)
REMINDER = Target("arn:aws:lambda:us-east-1:1:function:notify", "arn:aws:iam::1:role/s", "arn:aws:sqs:us-east-1:1:n", 3)


def checklist(**changes: Any) -> Checklist:
    base = Checklist("fl", WEEKDAYS, window="PT8H", grace="PT30M", notify=TOLD, created_at=NOW, revision=1)
    return base.with_changes(**changes)


def test_each_lead_fires_at_the_window_end_less_the_lead_and_ten_minutes_later() -> None:
    first, first_again, second, second_again = desired_reminders(checklist(), "g", NOW)
    assert (first.name, first.expression, first.exact) == ("_r0.fl", "cron(30 11 ? * MON-FRI *)", True)
    assert (first_again.name, first_again.expression) == ("_s0.fl", "cron(40 11 ? * MON-FRI *)")
    assert (second.name, second.expression) == ("_r1.fl", "cron(0 13 ? * MON-FRI *)")
    assert (second_again.name, second_again.expression) == ("_s1.fl", "cron(10 13 ? * MON-FRI *)")
    assert second_again.target_input == second.target_input  # the same reminder: sent by whichever comes first
    assert first.timezone == "Europe/Berlin" and first.enabled
    assert second.target_input == ('{"kind": "reminder", "checklist_id": "fl", "lead": "PT1H", '
                                   '"instant": "<aws.scheduler.scheduled-time>"}')
    request = second.request(REMINDER)
    assert request["Target"]["Arn"] == REMINDER.state_machine_arn
    assert request["Description"].startswith("missed-checks: reminds of checklist fl PT1H before each window")


def test_no_reminders_without_leads_or_recipients_and_disabled_while_paused() -> None:
    assert desired_reminders(checklist(notify=None), "g", NOW) == []
    assert desired_reminders(checklist(notify=NotifySettings(to=("a@example.com",))), "g", NOW) == []
    assert not any(r.enabled for r in desired_reminders(checklist(status=Status.PAUSED), "g", NOW))


def test_names_never_collide_with_a_checklists_and_fit_scheduler() -> None:
    long_id = "a" * 64
    names = reminder_schedule_names(long_id)
    assert len(set(names)) == 6 and all(len(name) <= 64 and name[:2] in ("_r", "_s") for name in names)
    assert reminder_schedule_name("a" * 63 + "b", 0) != reminder_schedule_name("a" * 64, 0)


@pytest.mark.parametrize(("instant", "day"), [
    ("2026-03-28T21:00:00Z", 28),  # 22:00 CET, the night before the change
    ("2026-03-29T20:00:00Z", 29),  # 22:00 CEST, on the short day itself
    ("2026-03-29T20:00:40Z", 29),  # inside the firing's minute
    ("2026-03-29T20:10:00Z", 29),  # the second chance
])
def test_a_firing_finds_the_window_whose_reminder_it_is(instant: str, day: int) -> None:
    recurrence = Checklist("d", "DTSTART;TZID=Europe/Berlin:20260301T000000\nRRULE:FREQ=DAILY", window="P1D").parsed()
    found = reminder_window(recurrence, parse_duration("PT2H", "lead"), datetime.fromisoformat(instant))
    assert found is not None and found.start.day == day


@pytest.mark.parametrize("instant", ["2026-03-29T21:00:00Z", "2026-03-29T20:01:00Z", "2026-03-29T19:59:00Z"])
def test_a_firing_that_is_no_reminder_instant_finds_none(instant: str) -> None:
    recurrence = Checklist("d", "DTSTART;TZID=Europe/Berlin:20260301T000000\nRRULE:FREQ=DAILY", window="P1D").parsed()
    assert reminder_window(recurrence, parse_duration("PT2H", "lead"), datetime.fromisoformat(instant)) is None


# -- schedule-sync -------------------------------------------------------------------------------------
class Table:
    def __init__(self, item: dict[str, Any] | None) -> None:
        self.item = item

    def get_checklist_record(self, checklist_id: str) -> ChecklistRecord | None:
        return None if self.item is None else checklist_record(self.item)

    def record_schedule_sync(self, checklist_id: str, revision: int, *, schedule: ScheduleNote | None,
                             error: SyncError | None) -> bool:
        assert self.item is not None
        if schedule is not None:
            self.item["schedule"] = schedule_note_map(schedule)
        return True

    def adopt_checklist(self, checklist_id: str) -> bool:
        return False

    def with_closures(self, checklist: Checklist) -> Checklist:  # closure calendars (#23): none here
        return checklist


class Schedules:
    def __init__(self) -> None:
        self.existing: dict[str, DesiredSchedule] = {}
        self.calls: list[str] = []

    def upsert(self, desired: DesiredSchedule, target: Target, *, probably_exists: bool) -> str:
        self.calls.append(f"upsert {desired.name}")
        created = desired.name not in self.existing
        self.existing[desired.name] = desired
        return "created" if created else "updated"

    def delete(self, name: str) -> bool:
        self.calls.append(f"delete {name}")
        return self.existing.pop(name, None) is not None


def sync(table: Table, schedules: Schedules, reminders: Target | None = REMINDER) -> Action:
    return sync_checklist("fl", table=table, schedules=schedules, target=EVALUATION, group_name="g", now=NOW,
                          report_rejected=lambda *args: None, reminder_target=reminders).action


def test_sync_creates_replaces_and_deletes_the_reminder_schedules_with_the_checklist() -> None:
    table, schedules = Table(checklist_item(checklist())), Schedules()
    assert sync(table, schedules) is Action.CREATED
    assert set(schedules.existing) == {"fl", "_r0.fl", "_s0.fl", "_r1.fl", "_s1.fl"}
    assert table.item is not None and table.item["schedule"]["reminders"] == ["_r0.fl", "_s0.fl", "_r1.fl", "_s1.fl"]
    schedules.calls.clear()
    assert sync(table, schedules) is Action.UNCHANGED and schedules.calls == []  # nothing changed: no call
    fewer = checklist_item(checklist(notify=NotifySettings(to=("crew@example.com",), remind_before=("PT1H",))))
    table.item = {**fewer, "schedule": table.item["schedule"]}
    assert sync(table, schedules) is Action.UPDATED
    assert set(schedules.existing) == {"fl", "_r0.fl", "_s0.fl"}
    assert schedules.existing["_r0.fl"].expression.startswith("cron(0 13")
    table.item = None
    sync(table, schedules)
    assert schedules.existing == {}


def test_without_a_reminder_target_nothing_changes_for_the_evaluation_schedule() -> None:
    with_notify, without = Schedules(), Schedules()
    sync(Table(checklist_item(checklist())), with_notify, reminders=None)
    sync(Table(checklist_item(checklist(notify=None))), without)
    assert with_notify.calls == without.calls == ["upsert fl"]


def test_a_change_of_leads_wakes_schedule_sync_and_a_change_of_addresses_does_not() -> None:
    old = checklist_item(checklist())
    fewer = checklist_item(checklist(notify=NotifySettings(to=("crew@example.com",), remind_before=("PT1H",))))
    others = checklist_item(checklist(notify=NotifySettings(to=("x@example.com",), remind_before=TOLD.remind_before)))
    assert needs_sync("MODIFY", checklist_image(old), checklist_image(fewer))  # the images, read by the adapter
    assert not needs_sync("MODIFY", checklist_image(old), checklist_image(others))


def test_a_lead_too_short_for_a_second_chance_has_one_schedule() -> None:
    short = checklist(notify=NotifySettings(to=("crew@example.com",), remind_before=("PT10M",)))
    assert [r.name for r in desired_reminders(short, "g", NOW)] == ["_r0.fl"]


def test_a_reminder_schedules_name_gives_back_its_checklist() -> None:
    assert [checklist_of_reminder(n) for n in ("_r0.fl", "_s2.a.b", "fl", "_x0.fl", "_r0")] == [
        "fl", "a.b", None, None, None]


def test_a_deleted_checklist_loses_the_reminder_schedules_its_last_item_noted() -> None:
    schedules = Schedules()
    for name in ("_r0.fl", "_s0.fl"):
        schedules.existing[name] = desired_reminders(checklist(), "g", NOW)[0]
    table = Table(None)
    sync_checklist("fl", table=table, schedules=schedules, target=EVALUATION, group_name="g", now=NOW,
                   report_rejected=lambda *args: None, reminder_target=REMINDER, known_reminders=["_r0.fl", "_s0.fl"])
    assert schedules.existing == {} and schedules.calls == ["delete _r0.fl", "delete _s0.fl", "delete fl"]
    schedules.calls.clear()
    sync_checklist("fl", table=table, schedules=schedules, target=EVALUATION, group_name="g", now=NOW,
                   report_rejected=lambda *args: None, reminder_target=REMINDER, known_reminders=[])
    assert schedules.calls == ["delete fl"]  # a checklist that had no reminders costs no extra call
