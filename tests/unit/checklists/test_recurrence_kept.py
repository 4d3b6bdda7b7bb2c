"""A parsed recurrence is kept (parse_recurrence): a checklist read again is not parsed again, which a
web app page and a readiness recheck would otherwise pay for every time (an hourly rule's feasibility
check, about 70 to 180 ms on the 2-core machine). Parsing is pure and the Recurrence frozen, so the
kept one is the same object, and what is refused is refused every time, never kept."""

from __future__ import annotations

import pytest

from missed_checks.checklists.recurrence import parse_recurrence
from missed_checks.errors import InvalidRecurrence

HOURLY = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=HOURLY"


def test_the_same_text_and_fields_give_the_same_recurrence() -> None:
    first = parse_recurrence(HOURLY, window="PT30M", grace="PT10M")
    assert parse_recurrence(HOURLY, window="PT30M", grace="PT10M") is first
    other = parse_recurrence(HOURLY, window="PT30M", grace="PT20M")
    assert other is not first and other.grace != first.grace
    assert parse_recurrence(HOURLY, window="PT30M", grace="PT10M", timezone="Europe/Berlin") is not first


def test_a_refused_rule_is_refused_every_time() -> None:
    for _ in range(2):
        with pytest.raises(InvalidRecurrence) as refused:
            parse_recurrence(HOURLY, window="PT2H")  # longer than the gap between two starts
        assert refused.value.field == "window"


def test_a_value_that_is_not_text_is_refused_naming_its_field_and_not_kept() -> None:
    for _ in range(2):
        with pytest.raises(InvalidRecurrence) as refused:
            parse_recurrence(HOURLY, window=3600)
        assert refused.value.field == "window"
