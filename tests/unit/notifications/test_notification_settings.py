"""A checklist's ``notify`` block (#18): validated field by field, kept on the item, in scenario files."""

from __future__ import annotations

from decimal import Decimal

import pytest

from missed_checks.aws.table.checklists import checklist_item, checklist_of
from missed_checks.checklists.checklist import Checklist
from missed_checks.checklists.durations import Duration, parse_duration
from missed_checks.errors import InvalidInput
from missed_checks.notifications.notification import (
    MAX_RECIPIENTS,
    Kind,
    Notification,
    NotifySettings,
    notification_id,
    validate_address,
)
from missed_checks_local.product.scenario import Scenario

WINDOW = parse_duration("PT8H", "window")
FULL = {"to": ["crew@example.com", "lead@example.com"], "remind_before": ["PT1H", "PT2H30M"],
        "escalate_to": ["boss@example.com"], "escalate_after": 3}


def test_a_full_block_is_read_and_leads_come_earliest_first() -> None:
    settings = NotifySettings.parse(FULL, WINDOW)
    assert settings.to == ("crew@example.com", "lead@example.com")
    assert settings.remind_before == ("PT2H30M", "PT1H")
    assert (settings.escalate_to, settings.escalate_after) == (("boss@example.com",), 3)
    assert NotifySettings.parse(settings.to_dict(), WINDOW) == settings


@pytest.mark.parametrize(("value", "field", "says"), [
    ({**FULL, "to": ["crew@example"]}, "notify.to[0]", "not an e-mail address"),
    ({**FULL, "to": ["a b@example.com"]}, "notify.to[0]", "not an e-mail address"),
    ({**FULL, "escalate_to": ["boss@example.com", 7]}, "notify.escalate_to[1]", "a number"),
    ({**FULL, "to": [f"p{n}@example.com" for n in range(MAX_RECIPIENTS + 1)]}, "notify.to", "at most 20"),
    ({**FULL, "remind_before": ["PT8H"]}, "notify.remind_before[0]", "not shorter than the window"),
    ({**FULL, "remind_before": ["P1D"]}, "notify.remind_before[0]", "not shorter than the window"),
    ({**FULL, "remind_before": ["PT0S"]}, "notify.remind_before[0]", "zero"),
    ({**FULL, "remind_before": ["-PT1H"]}, "notify.remind_before[0]", "signed"),
    ({**FULL, "remind_before": ["PT1H"] * 2 + ["PT2H", "PT3H"]}, "notify.remind_before", "at most 3"),
    ({**FULL, "escalate_after": 0}, "notify.escalate_after", "1 or more"),
    ({**FULL, "escalate_after": -2}, "notify.escalate_after", "1 or more"),
    ({**FULL, "escalate_after": 2.5}, "notify.escalate_after", "not a whole number"),
    ({**FULL, "escalate_after": True}, "notify.escalate_after", "not a whole number"),
    ({"escalate_to": ["boss@example.com"]}, "notify.escalate_after", "is missing"),
    ({"to": ["crew@example.com"], "escalate_after": 2}, "notify.escalate_to", "is empty"),
    ({"remind_before": ["PT1H"]}, "notify.to", "is empty"),
    ({**FULL, "cc": ["x@example.com"]}, "notify.cc", "not a notify setting"),
    ("crew@example.com", "notify", "not an object"),
])
def test_bad_input_names_the_field(value: object, field: str, says: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        NotifySettings.parse(value, WINDOW)
    assert caught.value.field == field
    assert says in caught.value.message


def test_a_number_from_the_table_and_a_repeated_address_are_accepted_once() -> None:
    settings = NotifySettings.parse({"to": ["Crew@example.com", "crew@example.com"], "escalate_to": ["b@example.com"],
                                     "escalate_after": Decimal(2)}, None)
    assert settings.to == ("Crew@example.com",) and settings.escalate_after == 2
    with pytest.raises(InvalidInput, match="escalate_after"):
        NotifySettings.parse({"escalate_to": ["b@example.com"], "escalate_after": Decimal("NaN")}, None)


def test_the_checklist_item_keeps_notify_and_a_broken_one_is_kept_as_it_is() -> None:
    settings = NotifySettings.parse(FULL, WINDOW)
    checklist = Checklist("fl", "DTSTART:20260302T060000Z\nRRULE:FREQ=DAILY", window="PT8H", notify=settings)
    item = checklist_item(checklist)
    assert item["notify"]["remind_before"] == ["PT2H30M", "PT1H"]
    assert checklist_of(item).notify == settings
    broken = {**item, "notify": {"to": "not-an-address"}}
    read = checklist_of(broken)
    assert read.notify is None and read.extra["notify"] == {"to": "not-an-address"}
    assert "notify" not in checklist_item(Checklist("fl", "DTSTART:20260302T060000Z\nRRULE:FREQ=DAILY"))


def test_the_id_is_deterministic_and_tells_kind_window_occasion_and_recipient_apart() -> None:
    base = notification_id(Kind.REMINDER, "fl", "2026-03-02T05:00:00Z", "PT1H", "crew@example.com")
    assert base == notification_id("reminder", "fl", "2026-03-02T05:00:00Z", "PT1H", "CREW@example.com")
    others = {notification_id(Kind.MISSED, "fl", "2026-03-02T05:00:00Z", "PT1H", "crew@example.com"),
              notification_id(Kind.REMINDER, "fl", "2026-03-03T05:00:00Z", "PT1H", "crew@example.com"),
              notification_id(Kind.REMINDER, "fl", "2026-03-02T05:00:00Z", "PT2H", "crew@example.com"),
              notification_id(Kind.REMINDER, "fl", "2026-03-02T05:00:00Z", "PT1H", "lead@example.com"),
              notification_id(Kind.REMINDER, "other", "2026-03-02T05:00:00Z", "PT1H", "crew@example.com")}
    assert base not in others and len(others) == 5


def test_a_notification_reads_back_from_its_dict_and_a_tampered_id_is_refused() -> None:
    notification = Notification(Kind.MISSED, "fl", "2026-03-02T05:00:00Z", "crew@example.com", ("A", "B"), "s", "b")
    assert Notification.from_dict(notification.to_dict()) == notification
    with pytest.raises(InvalidInput) as caught:
        Notification.from_dict({**notification.to_dict(), "to": "lead@example.com"})
    assert caught.value.field == "notification.notification_id"
    with pytest.raises(InvalidInput, match="notification.kind"):
        Notification.from_dict({**notification.to_dict(), "kind": "sms"})


def test_an_address_is_trimmed_and_a_display_name_is_refused() -> None:
    assert validate_address(" crew@example.com ", "to") == "crew@example.com"
    with pytest.raises(InvalidInput, match="not an e-mail address"):
        validate_address("Crew <crew@example.com>", "to")


def _scenario(notify: object) -> dict[str, object]:
    return {"start": "2026-03-01T00:00:00Z", "end": "2026-03-03T00:00:00Z", "events": [
        {"at": "2026-03-01T00:00:00Z", "put_checklist": {
            "id": "fl", "recurrence": "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY",
            "window": "PT8H", "notify": notify}}]}


def test_a_scenario_takes_the_same_notify_object_and_names_the_event_and_field() -> None:
    scenario = Scenario.from_dict(_scenario(FULL))
    assert scenario.events[0].args["notify"] == NotifySettings.parse(FULL, WINDOW)
    with pytest.raises(InvalidInput) as caught:
        Scenario.from_dict(_scenario({**FULL, "remind_before": ["PT9H"]}))
    assert caught.value.field == "events[0].put_checklist.notify.remind_before[0]"


# -- a lead the reminder schedule can honour (issue: accepted, then not honoured) -----------------------
BERLIN_DAILY = "DTSTART;TZID=Europe/Berlin:20260302T013000\nRRULE:FREQ=DAILY"  # windows close at 09:30


def _rule(recurrence: str = BERLIN_DAILY, window: str = "PT8H") -> object:
    return Checklist(checklist_id="fl", recurrence=recurrence, window=window).parsed()


def _fires_before_close(rule: object, lead: str, windows: int = 400) -> bool:
    """Whether every reminder of the first ``windows`` windows (a year and more, both DST changes)
    fires, as Scheduler fires it, before its window closes: the reminder schedule's own firing
    (ReminderRecurrence's schedule time) plus the tolerance."""
    from missed_checks.checklists.schedule_expression import firing_wall_time
    from missed_checks.notifications.notification import FIRING_TOLERANCE
    from missed_checks.notifications.reminders import ReminderRecurrence

    reminders = ReminderRecurrence.of(rule, parse_duration(lead, "lead"))  # type: ignore[arg-type]
    for window in reminders.windows_after(reminders.dtstart, windows):
        wall = firing_wall_time(window.evaluate_at, reminders.zone)
        fires = wall.replace(tzinfo=reminders.zone)
        if fires.astimezone(window.end.tzinfo) + FIRING_TOLERANCE > window.end:
            return False
    return True


@pytest.mark.parametrize(("recurrence", "window", "earliest"), [
    (BERLIN_DAILY, "PT8H", "PT1M"),
    ("DTSTART;TZID=Europe/Berlin:20260302T013000\nRRULE:FREQ=DAILY;BYSECOND=40", "PT8H", "PT1M40S"),
    ("DTSTART;TZID=America/New_York:20260302T060015\nRRULE:FREQ=WEEKLY;BYDAY=MO,FR", "PT8H30S", "PT1M45S"),
])
def test_a_lead_shorter_than_the_schedule_can_honour_is_refused_with_the_earliest_that_can(
        recurrence: str, window: str, earliest: str) -> None:
    """Found by an adversarial user: remind_before PT30S on windows closing at 09:30 was accepted,
    and the "before 09:30" reminder went out at 09:30 or later (the cron fires on whole minutes,
    and inside the minute after). The one rule (notification.earliest_lead) refuses it naming the
    earliest lead that fires in time; that lead does, and one second less would not."""
    rule = _rule(recurrence, window)
    too_short = str(Duration(seconds=parse_duration(earliest, "lead").seconds - 1))
    with pytest.raises(InvalidInput) as refused:
        NotifySettings.parse({"to": ["crew@example.com"], "remind_before": ["PT1H", too_short]}, rule)
    assert refused.value.field == "notify.remind_before[1]"
    assert f"the earliest lead that fires in time is {earliest}" in refused.value.message
    assert NotifySettings.parse({"to": ["crew@example.com"], "remind_before": [earliest]}, rule).remind_before == (
        earliest,)
    assert _fires_before_close(rule, earliest)
    assert not _fires_before_close(rule, too_short)


def test_a_scenario_refuses_a_lead_its_reminders_cannot_honour_naming_the_event() -> None:
    with pytest.raises(InvalidInput) as caught:
        Scenario.from_dict(_scenario({"to": ["crew@example.com"], "remind_before": ["PT59S"]}))
    assert caught.value.field == "events[0].put_checklist.notify.remind_before[0]"
    assert "earliest lead that fires in time is PT1M" in caught.value.message


@pytest.mark.parametrize(("block", "field"), [({"": ["a@example.com"]}, "notify"), ({" ": 1}, "notify"),
                                              ({"bogus": 1}, "notify.bogus")])
def test_an_unknown_setting_is_named_and_one_of_no_name_names_the_block(block: dict[str, object], field: str) -> None:
    # hypothesis found a key of no name answered as the field "notify." (a name ending in a dot)
    with pytest.raises(InvalidInput) as refused:
        NotifySettings.parse(block, None)
    assert refused.value.field == field
