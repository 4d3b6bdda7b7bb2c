"""Defect alerts (missed_checks.notifications.defect_alerts): one message per recipient of the
checklist's notify.to and escalate_to, in words on the checklist's clock, sent once over every channel
whatever repeats it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from missed_checks.checklists.checklist import Checklist
from missed_checks.defects.defect import Defect
from missed_checks.notifications.defect_alerts import alert_defect, defect_alerts
from missed_checks.notifications.notification import Kind, Notification, NotifySettings
from missed_checks.notifications.notifying import Delivery
from missed_checks.performed_checks.answers import FailedItem
from tests.fakes import InMemoryNotificationRecords

NOTIFY = NotifySettings(to=("crew@example.com", "Lead@example.com"), escalate_to=("lead@example.com",
                                                                                  "safety@example.com"),
                        escalate_after=1)
DAILY = Checklist("forklift-daily", "DTSTART;TZID=Europe/Berlin:20260301T060000\nRRULE:FREQ=DAILY", name="Forklift",
                  window="PT8H", notify=NOTIFY, pre_use=True, site_id="north")
FOUND = datetime(2026, 3, 4, 5, 42, tzinfo=UTC)  # 06:42 CET
DEFECT = Defect("D-0123456789abcdef", "forklift-daily", "FL-1", "north",
                (FailedItem("brakes", "Brakes work", True, "fail", "pass"),
                 FailedItem("pressure", "Tyre pressure", True, 1.2, "between 2 and 3 bar")),
                "op@example.com", FOUND, FOUND)


@dataclass
class Channel:
    name: str
    sent: list[Notification] = field(default_factory=list)

    def send(self, notification: Notification) -> str:
        self.sent.append(notification)
        return f"{self.name}-{len(self.sent)}"


def test_one_alert_per_recipient_in_words_on_the_checklists_clock() -> None:
    alerts = defect_alerts(DAILY, DEFECT)
    assert [a.recipient for a in alerts] == ["crew@example.com", "Lead@example.com", "safety@example.com"]
    first = alerts[0]
    assert (first.kind, first.checklist_id, first.window_start, first.occasion, first.equipment) == (
        Kind.DEFECT, "forklift-daily", "2026-03-04T05:42:00Z", "D-0123456789abcdef", ("FL-1",))
    assert first.subject == "Not cleared: FL-1 failed Forklift at Wed 4 Mar 2026 06:42 CET"
    assert first.body.startswith(
        "FL-1 failed its pre-use check Forklift (forklift-daily) at Wed 4 Mar 2026 06:42 CET (recorded by "
        "op@example.com): Brakes work (critical): fail, expected pass; Tyre pressure (critical): 1.2, expected "
        "between 2 and 3 bar.\n\nFL-1 is not cleared to operate until a supervisor resolves defect "
        "D-0123456789abcdef.\n\n")
    assert first.details["defect_id"] == "D-0123456789abcdef"
    assert len({a.notification_id for a in alerts}) == 3


def test_a_checklist_that_clears_on_pass_says_so_and_one_without_recipients_tells_nobody() -> None:
    [*alerts] = defect_alerts(DAILY.with_changes(clear_on_pass=True), DEFECT)
    assert "until a supervisor resolves defect D-0123456789abcdef or a later pre-use check passes every critical " \
           "item." in alerts[0].body
    assert defect_alerts(DAILY.with_changes(notify=None), DEFECT) == []
    assert defect_alerts(DAILY.with_changes(notify=NotifySettings()), DEFECT) == []


def test_sent_once_over_each_channel_whatever_repeats_it() -> None:
    records, email, events = InMemoryNotificationRecords(), Channel("email"), Channel("eventbridge")
    failures: list[Exception] = []
    for _ in range(3):  # a retried stream record, a replay
        outcomes = alert_defect(records, [email, events], DAILY, DEFECT, lambda: FOUND,
                                lambda n, e: failures.append(e))
    assert [o.delivery for o in outcomes] == [Delivery.ALREADY_SENT] * 3
    assert len(email.sent) == len(events.sent) == 3 and not failures
