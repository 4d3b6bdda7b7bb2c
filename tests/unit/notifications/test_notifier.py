"""The notifier's work (#18) on an in-memory store: which notifications a judged window and a
reminder firing call for, out-of-service equipment skipped, paused and deleted checklists silent."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from missed_checks.checklists.checklist import Checklist, Status
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.equipment.assignments import Assignment
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.notifications.notification import NotifySettings
from missed_checks.notifications.notifier import judged_notifications, reminder_notifications
from missed_checks.notifications.notifying import Delivery, deliver
from missed_checks.timefmt import to_utc_iso
from tests.fakes import InMemoryNotificationRecords

CREATED = datetime(2026, 3, 1, 9, tzinfo=UTC)
SETTINGS = NotifySettings(to=("crew@example.com",), remind_before=("PT2H",), escalate_to=("lead@example.com",),
                          escalate_after=2)
CHECKLIST = Checklist("fl", "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY", window="PT8H",
                      grace="PT30M", created_at=CREATED, notify=SETTINGS)


def day(n: int) -> OccurrenceWindow:
    start = datetime(2026, 3, n, 5, tzinfo=UTC)
    return OccurrenceWindow(start, start + timedelta(hours=8), start + timedelta(hours=8, minutes=30))


@dataclass
class Store(InMemoryNotificationRecords):
    checklist: Checklist | None = CHECKLIST
    judged: list[OccurrenceWindow] = field(default_factory=list)
    missed: dict[str, set[str]] = field(default_factory=dict)
    fleet: list[Assignment] = field(default_factory=lambda: [Assignment("fl", e, CREATED) for e in ("A", "B")])
    done: set[str] = field(default_factory=set)
    periods: list[OutOfServicePeriod] = field(default_factory=list)

    def get_checklist(self, checklist_id: str) -> Checklist | None:
        return self.checklist

    def judged_window(self, checklist_id: str, window_start: datetime) -> dict[str, Any] | None:
        return None

    def missed_equipment_of_window(self, checklist_id: str, window_start: datetime) -> list[str]:
        return sorted(self.missed.get(to_utc_iso(window_start), set()))

    def assignments(self, checklist_id: str, shard: int | None = None) -> list[Assignment]:
        return self.fleet

    def recent_judged_windows(self, checklist_id: str, up_to: datetime, limit: int) -> list[OccurrenceWindow]:
        return [w for w in self.judged if w.start <= up_to][-limit:]

    def missed_by_window(self, checklist_id: str, start: datetime, end: datetime) -> dict[str, set[str]]:
        return self.missed

    def performed_by(self, checklist_id: str, start: datetime, until: datetime, recorded_by: datetime,
                     shards: Any = None) -> set[str]:
        return self.done

    def out_of_service_periods(self, start: datetime, end: datetime | None = None,
                               equipment_ids: Any = None) -> list[OutOfServicePeriod]:
        return [p for p in self.periods if end is None or p.overlaps(start, end)]


def out_of_service(equipment: str, start: str, end: str) -> OutOfServicePeriod:
    return OutOfServicePeriod.create(equipment_id=equipment, start=datetime.fromisoformat(start),
                                     end=datetime.fromisoformat(end), reason="workshop", recorded_by="j.doe",
                                     recorded_at=CREATED)


def summary(notes: list[Any]) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(n.kind.value, n.recipient, n.equipment) for n in notes]


def test_a_judged_window_alerts_and_escalates_and_an_excused_window_does_not_end_a_run() -> None:
    store = Store(judged=[day(2), day(3), day(4)],
                  missed={to_utc_iso(day(2).start): {"A"}, to_utc_iso(day(4).start): {"A", "B"}})
    # A was out of service on the 3rd (no missed check that day): its run is the 2nd and the 4th.
    store.periods = [out_of_service("A", "2026-03-03T00:00:00+00:00", "2026-03-03T23:00:00+00:00")]
    assert summary(judged_notifications(store, "fl", day(4).start)) == [
        ("missed", "crew@example.com", ("A", "B")), ("escalation", "lead@example.com", ("A",))]
    store.periods = []  # not excused: the 3rd was done, so A's run starts again on the 4th
    assert summary(judged_notifications(store, "fl", day(4).start)) == [("missed", "crew@example.com", ("A", "B"))]


def test_nothing_for_a_window_not_judged_or_a_checklist_gone_or_telling_nobody() -> None:
    store = Store(judged=[day(2)], missed={to_utc_iso(day(2).start): {"A"}})
    assert judged_notifications(store, "fl", day(3).start) == []
    assert judged_notifications(Store(checklist=None, judged=[day(2)]), "fl", day(2).start) == []
    silent = Store(checklist=CHECKLIST.with_changes(notify=None), judged=[day(2)], missed=store.missed)
    assert judged_notifications(silent, "fl", day(2).start) == []


REMINDER_AT = datetime(2026, 3, 2, 11, tzinfo=UTC)  # 14:00 Berlin less two hours


def test_a_reminder_skips_equipment_done_or_out_of_service() -> None:
    store = Store(done={"A"}, fleet=[Assignment("fl", e, CREATED) for e in ("A", "B", "C")])
    store.periods = [out_of_service("C", "2026-03-02T10:00:00+00:00", "2026-03-05T00:00:00+00:00")]
    assert summary(reminder_notifications(store, "fl", "PT2H", REMINDER_AT)) == [
        ("reminder", "crew@example.com", ("B",))]
    assert summary(reminder_notifications(store, "fl", "PT2H", REMINDER_AT + timedelta(minutes=10))) == [
        ("reminder", "crew@example.com", ("B",))]  # the second chance: the same reminder
    store.done = {"A", "B"}
    assert reminder_notifications(store, "fl", "PT2H", REMINDER_AT) == []  # nothing undone


def test_a_reminder_sent_already_is_not_worked_out_again() -> None:
    store = Store()
    (reminder,) = reminder_notifications(store, "fl", "PT2H", REMINDER_AT)
    assert deliver(reminder, store, [], lambda: REMINDER_AT) is Delivery.SENT

    def not_read(*args: Any, **kwargs: Any) -> list[Assignment]:
        raise AssertionError("the fleet was read again for a reminder sent already")

    store.assignments = not_read  # type: ignore[method-assign]
    assert reminder_notifications(store, "fl", "PT2H", REMINDER_AT + timedelta(minutes=10)) == []


def test_no_reminder_when_paused_deleted_judged_for_a_lead_it_lost_or_off_its_instant() -> None:
    assert reminder_notifications(Store(checklist=CHECKLIST.with_changes(status=Status.PAUSED)), "fl", "PT2H",
                                  REMINDER_AT) == []
    assert reminder_notifications(Store(checklist=None), "fl", "PT2H", REMINDER_AT) == []
    judged = CHECKLIST.with_changes(evaluated_until=datetime(2026, 3, 2, 13, tzinfo=UTC))
    assert reminder_notifications(Store(checklist=judged), "fl", "PT2H", REMINDER_AT) == []
    assert reminder_notifications(Store(), "fl", "PT1H", REMINDER_AT) == []
    assert reminder_notifications(Store(), "fl", "PT2H", REMINDER_AT + timedelta(minutes=5)) == []
