"""Telling people (#18): what each message says, escalation runs, reminder instants, and sending once."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from missed_checks.checklists.checklist import Checklist
from missed_checks.checklists.durations import parse_duration
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.equipment.assignments import Assignment
from missed_checks.notifications.notification import Kind, Notification, NotificationRejected, NotifySettings
from missed_checks.notifications.notifying import (
    CLAIM_LEASE,
    Delivery,
    deliver,
    escalation_runs,
    escalations,
    missed_alerts,
    reminder_instant,
    reminders,
    undone_equipment,
)
from tests.fakes import InMemoryNotificationRecords

BERLIN = ZoneInfo("Europe/Berlin")  # a DST zone
BRISBANE = ZoneInfo("Australia/Brisbane")  # a non-UTC zone without DST
NOW = datetime(2026, 3, 2, 13, 30, tzinfo=UTC)
CHECKLIST = Checklist("fl", "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY", name="Forklift",
                      window="PT8H")
SETTINGS = NotifySettings(to=("crew@example.com", "lead@example.com"), remind_before=("PT1H",),
                          escalate_to=("boss@example.com",), escalate_after=3)


def window(day: int, zone: ZoneInfo = BERLIN, hours: int = 8) -> OccurrenceWindow:
    start = datetime(2026, 3, day, 6, tzinfo=zone)
    return OccurrenceWindow(start, start + timedelta(hours=hours), start + timedelta(hours=hours, minutes=30))


# -- messages ------------------------------------------------------------------------------------------
def test_a_missed_alert_is_one_message_per_recipient_listing_the_misses_in_local_time() -> None:
    alerts = missed_alerts(CHECKLIST, SETTINGS, window(2), ["FL-1", "FL-2"])
    assert [a.recipient for a in alerts] == ["crew@example.com", "lead@example.com"]
    alert = alerts[0]
    assert (alert.kind, alert.window_start, alert.equipment) == (Kind.MISSED, "2026-03-02T05:00:00Z", ("FL-1", "FL-2"))
    assert "Mon 2 Mar 2026 06:00 CET to Mon 2 Mar 2026 14:00 CET" in alert.body
    assert "  - FL-1\n  - FL-2" in alert.body
    assert "missed-checks missed dismiss --checklist fl --window-start 2026-03-02T05:00:00Z" in alert.body
    assert missed_alerts(CHECKLIST, SETTINGS, window(2), []) == []


def test_a_reminder_names_when_the_window_closes_on_the_checklists_clock() -> None:
    sent = reminders(CHECKLIST, SETTINGS, window(2, BRISBANE), "PT1H", ["FL-2"])
    assert {n.occasion for n in sent} == {"PT1H"} and sent[0].equipment == ("FL-2",)
    assert "closes at Mon 2 Mar 2026 14:00 AEST" in sent[0].body
    assert reminders(CHECKLIST, SETTINGS, window(2), "PT1H", []) == []


# -- escalation runs ----------------------------------------------------------------------------------
ASSIGNED = {e: Assignment("fl", e, datetime(2026, 3, 1, tzinfo=UTC)) for e in ("A", "B", "C")}
DAYS = [window(day) for day in range(2, 8)]


def starts(*days: int) -> set[str]:
    return {f"2026-03-{day:02d}T05:00:00Z" for day in days}


def missed_on(**equipment_days: tuple[int, ...]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for equipment, days in equipment_days.items():
        for start in starts(*days):
            found.setdefault(start, set()).add(equipment)
    return found


def never(equipment: str, w: OccurrenceWindow) -> bool:
    return False


def test_a_run_counts_consecutive_misses_and_a_done_window_ends_it() -> None:
    missed = missed_on(A=(2, 3, 5, 6, 7), B=(3, 4, 5, 6, 7))
    runs = escalation_runs(DAYS, missed, ASSIGNED, ["A", "B"], never, longest=10)
    assert (runs["A"].length, runs["A"].since) == (3, "2026-03-05T05:00:00Z")  # done on the 4th
    assert (runs["B"].length, runs["B"].since) == (5, "2026-03-03T05:00:00Z")


def test_excused_windows_and_windows_it_did_not_count_for_are_skipped() -> None:
    missed = missed_on(A=(2, 3, 5, 7), C=(5, 6, 7))
    excused_a = {f"2026-03-0{day}T05:00:00Z" for day in (4, 6)}

    def excused(equipment: str, w: OccurrenceWindow) -> bool:
        return equipment == "A" and w.start.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") in excused_a

    late = {**ASSIGNED, "C": Assignment("fl", "C", datetime(2026, 3, 4, 12, tzinfo=UTC))}  # counts from the 5th
    runs = escalation_runs(DAYS, missed, late, ["A", "C"], excused, longest=10)
    assert (runs["A"].length, runs["A"].since) == (4, "2026-03-02T05:00:00Z")
    assert (runs["C"].length, runs["C"].since) == (3, "2026-03-05T05:00:00Z")


def test_the_nth_miss_escalates_once_naming_every_run_that_reached_it() -> None:
    missed = missed_on(A=(5, 6, 7), B=(4, 5, 6, 7), C=(6, 7))
    runs = escalation_runs(DAYS, missed, ASSIGNED, ["A", "B", "C"], never, longest=3)
    sent = escalations(CHECKLIST, SETTINGS, DAYS[-1], runs)
    assert [n.recipient for n in sent] == ["boss@example.com"]
    assert sent[0].equipment == ("A",)  # B's run passed 3 a window ago (escalated then); C is at 2
    assert sent[0].details == {"runs": [{"equipment": "A", "length": 3, "since": "2026-03-05T05:00:00Z"}]}
    assert "since the window of Thu 5 Mar 2026 06:00 CET" in sent[0].body
    assert escalations(CHECKLIST, NotifySettings(to=("a@example.com",)), DAYS[-1], runs) == []


# -- reminder instants ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("start", "window_text", "lead", "expected"), [
    (datetime(2026, 3, 2, 6, tzinfo=BERLIN), "PT8H", "PT1H", datetime(2026, 3, 2, 13, tzinfo=BERLIN)),
    # a day-long window over the spring-forward night: ends at midnight local, 23 h later
    (datetime(2026, 3, 29, 0, tzinfo=BERLIN), "P1D", "PT2H", datetime(2026, 3, 29, 22, tzinfo=BERLIN)),
    # a lead in days is taken off the wall clock, then the hours as elapsed time
    (datetime(2026, 3, 23, 0, tzinfo=BERLIN), "P1W", "P1DT1H", datetime(2026, 3, 28, 23, tzinfo=BERLIN)),
    (datetime(2026, 3, 2, 6, tzinfo=BRISBANE), "PT8H", "PT30M", datetime(2026, 3, 2, 13, 30, tzinfo=BRISBANE)),
])
def test_the_reminder_comes_lead_before_the_window_closes(start: datetime, window_text: str, lead: str,
                                                          expected: datetime) -> None:
    frequency = "WEEKLY" if window_text.endswith("W") else "DAILY"
    recurrence = Checklist("x", f"DTSTART;TZID={start.tzinfo}:{start:%Y%m%dT%H%M%S}\nRRULE:FREQ={frequency}",
                           window=window_text).parsed()
    occurrence = recurrence.window_at(start)
    assert reminder_instant(occurrence, parse_duration(lead, "lead")) == expected


def test_no_reminder_at_or_before_the_window_opens() -> None:
    assert reminder_instant(window(2), parse_duration("PT8H", "lead")) is None


def test_a_reminder_lists_counted_not_excused_undone_equipment() -> None:
    fleet = [*ASSIGNED.values(), Assignment("fl", "D", datetime(2026, 3, 2, 7, tzinfo=UTC)),  # after the start
             Assignment("fl", "E", datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 3, 2, 9, tzinfo=UTC))]
    undone = undone_equipment(window(2), fleet, {"A"}, lambda e, w: e == "C")
    assert undone == ["B"]


# -- sending once ----------------------------------------------------------------------------------------
@dataclass
class Channel:
    name: str
    failures: list[Exception] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)

    def send(self, notification: Notification) -> str:
        if self.failures:
            raise self.failures.pop(0)
        self.sent.append(notification.notification_id)
        return f"{self.name}-{len(self.sent)}"


NOTE = Notification(Kind.MISSED, "fl", "2026-03-02T05:00:00Z", "crew@example.com", ("A",), "s", "b")


def clock() -> Iterator[datetime]:
    moment = NOW
    while True:
        yield moment
        moment += timedelta(seconds=1)


def test_a_notification_is_sent_once_whatever_repeats_it() -> None:
    records, email, events = InMemoryNotificationRecords(), Channel("email"), Channel("eventbridge")
    ticks = clock()
    assert deliver(NOTE, records, [email, events], lambda: next(ticks)) is Delivery.SENT
    for _ in range(3):  # a retry, a duplicate event, a replay
        assert deliver(NOTE, records, [email, events], lambda: next(ticks)) is Delivery.ALREADY_SENT
    assert (len(email.sent), len(events.sent)) == (1, 1)


def test_concurrent_deliveries_send_it_once() -> None:
    records, email = InMemoryNotificationRecords(), Channel("email")
    barrier = threading.Barrier(8)
    results: list[Delivery] = []

    def run() -> None:
        barrier.wait()
        results.append(deliver(NOTE, records, [email], lambda: NOW))

    threads = [threading.Thread(target=run) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count(Delivery.SENT) == 1 and len(email.sent) == 1
    assert set(results) <= {Delivery.SENT, Delivery.IN_FLIGHT, Delivery.ALREADY_SENT}


def test_a_failed_channel_marks_it_failed_and_a_retry_uses_only_the_channels_not_used_yet() -> None:
    records, email = InMemoryNotificationRecords(), Channel("email")
    events = Channel("eventbridge", failures=[NotificationRejected("bus refused")])
    with pytest.raises(NotificationRejected):
        deliver(NOTE, records, [email, events], lambda: NOW)
    assert records.items[NOTE.notification_id]["status"] == "FAILED"
    assert deliver(NOTE, records, [email, events], lambda: NOW) is Delivery.SENT
    assert (len(email.sent), len(events.sent)) == (1, 1)  # the e-mail went out once


def test_an_abandoned_claim_is_taken_over_after_the_lease_only() -> None:
    records, email = InMemoryNotificationRecords(), Channel("email")
    records.claim_notification(NOTE, NOW, CLAIM_LEASE)  # a sender that died after claiming
    assert deliver(NOTE, records, [email], lambda: NOW + CLAIM_LEASE / 2) is Delivery.IN_FLIGHT
    assert deliver(NOTE, records, [email], lambda: NOW + CLAIM_LEASE * 2) is Delivery.SENT
    assert len(email.sent) == 1
