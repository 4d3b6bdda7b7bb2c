"""A recurrence from a few fields (the web app's checklist form): the RFC 5545 text it gives, which
the recurrence engine takes, the text read back into the fields, and each wrong field named."""

from __future__ import annotations

from datetime import UTC, date, datetime, time

import pytest

from missed_checks.checklists.recurrence import parse_recurrence
from missed_checks.checklists.simple_rule import Frequency, SimpleRule
from missed_checks.errors import InvalidInput


def test_weekly_days_in_week_order_at_a_local_time() -> None:
    rule = SimpleRule.parse("weekly", "6:30", "2026-03-02", ["FR", "MO"])
    assert rule == SimpleRule(Frequency.weekly, time(6, 30), date(2026, 3, 2), ("MO", "FR"))
    assert rule.to_text() == "DTSTART:20260302T063000\nRRULE:FREQ=WEEKLY;BYDAY=MO,FR"
    windows = parse_recurrence(rule.to_text(), timezone="Europe/Berlin", window="PT2H").windows(
        datetime(2026, 3, 2, tzinfo=UTC), datetime(2026, 3, 10, tzinfo=UTC))
    assert [w.start.isoformat() for w in windows] == [
        "2026-03-02T06:30:00+01:00", "2026-03-06T06:30:00+01:00", "2026-03-09T06:30:00+01:00"]


def test_daily_and_monthly() -> None:
    assert SimpleRule.parse("Daily", "06:00", "2026-03-02").to_text() == "DTSTART:20260302T060000\nRRULE:FREQ=DAILY"
    monthly = SimpleRule.parse("monthly", "23:59", "2026-03-02", month_day="15")
    assert monthly.to_text() == "DTSTART:20260302T235900\nRRULE:FREQ=MONTHLY;BYMONTHDAY=15"
    assert parse_recurrence(monthly.to_text(), timezone="UTC").windows(
        datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 5, 1, tzinfo=UTC))[1].start.date() == date(2026, 4, 15)


@pytest.mark.parametrize(("fields", "field", "words"), [
    (("hourly", "06:00", "2026-03-02"), "frequency", "not one of daily, weekly, monthly"),
    (("daily", "24:00", "2026-03-02"), "time", "not a time of day"),
    (("daily", "6", "2026-03-02"), "time", "give HH:MM"),
    (("daily", "06:00", "2026-02-30"), "starting", "not a date"),
    (("weekly", "06:00", "2026-03-02"), "days", "choose at least one day"),
    (("weekly", "06:00", "2026-03-02", ["XX"]), "days", "'XX' is not a weekday"),
    (("daily", "06:00", "2026-03-02", ["MO"]), "days", "go with weekly, not daily"),
    (("monthly", "06:00", "2026-03-02", (), "32"), "month_day", "give 1 to 31"),
    (("monthly", "06:00", "2026-03-02", (), ""), "month_day", "not a day of the month"),
    (("weekly", "06:00", "2026-03-02", ["MO"], "3"), "month_day", "goes with monthly, not weekly"),
])
def test_each_wrong_field_is_named(fields: tuple, field: str, words: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(InvalidInput) as raised:
        SimpleRule.parse(*fields)
    assert raised.value.field == field and words in raised.value.message


def test_text_it_writes_is_read_back_and_other_text_is_not() -> None:
    for rule in (SimpleRule.parse("weekly", "06:00", "2026-03-02", ["TU", "SU"]),
                 SimpleRule.parse("monthly", "07:15", "2026-01-31", month_day="31"),
                 SimpleRule.parse("daily", "00:00", "2026-12-31")):
        assert SimpleRule.of_text(rule.to_text()) == rule
    for text in ("DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY",
                 "DTSTART:20260302T060000\nRRULE:FREQ=DAILY;INTERVAL=2",
                 "DTSTART:20260302T060000\nRRULE:FREQ=WEEKLY;BYDAY=FR,MO",  # not in week order: as typed
                 "DTSTART:20260302T060030\nRRULE:FREQ=DAILY", "not a rule"):
        assert SimpleRule.of_text(text) is None
