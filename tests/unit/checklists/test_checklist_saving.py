"""Saving a checklist (missed_checks.checklists.saving), the one use case every writer goes through:
its rules on the in-memory table (the same rules on the DynamoDB adapter: tests/contract,
tests/integration/aws/test_table.py and test_calendars.py)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from missed_checks.checklists.closure_calendar import ClosureCalendar
from missed_checks.checklists.saving import save_checklist
from missed_checks.errors import InvalidInput, InvalidRecurrence
from missed_checks.notifications.notification import NotifySettings
from tests.fakes import InMemoryTable

RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"
T0 = datetime(2026, 3, 1, 9, tzinfo=UTC)
LATER = T0 + timedelta(days=3)


def test_a_new_checklist_takes_effect_now_and_only_a_rule_change_moves_it() -> None:
    table = InMemoryTable()
    created = save_checklist(table, "forklift", recurrence=RULE, window="PT8H", now=T0, by="tests")
    assert (created.revision, created.created_at, created.effective_from) == (1, T0, T0)
    renamed = save_checklist(table, "forklift", recurrence=RULE, window="PT8H", name="Forklift", now=LATER, by="tests")
    assert (renamed.revision, renamed.effective_from, renamed.name) == (2, T0, "Forklift")  # not a rule change
    widened = save_checklist(table, "forklift", recurrence=RULE, window="PT9H", now=LATER, by="tests")
    assert (widened.revision, widened.effective_from, widened.name) == (3, LATER, "Forklift")
    assert table.get_checklist("forklift") == widened
    assert [operation for operation, _ in table.writes] == ["write_checklist"] * 3


def test_a_named_calendar_must_exist_and_nothing_is_written_otherwise() -> None:
    table = InMemoryTable(calendars={"site": ClosureCalendar("site", (date(2026, 3, 4),), revision=1)})
    with pytest.raises(InvalidInput) as refused:
        save_checklist(table, "forklift", recurrence=RULE, now=T0, closed_on=["site", "holidays"], by="tests")
    assert refused.value.field == "closed_on[1]" and "no calendar 'holidays'" in refused.value.message
    assert table.writes == [] and table.get_checklist("forklift") is None
    saved = save_checklist(table, "forklift", recurrence=RULE, now=T0, closed_on=["site"], by="tests")
    assert saved.closed_on == ("site",) and table.calendars["site"].used_by == {"forklift"}


def test_a_reminder_lead_must_fit_the_rule_it_is_saved_with() -> None:
    table = InMemoryTable()
    told = NotifySettings(to=("crew@example.com",), remind_before=("PT2H",))
    with pytest.raises(InvalidInput) as refused:  # a 1-hour window cannot be reminded of 2 hours ahead
        save_checklist(table, "forklift", recurrence=RULE, window="PT1H", now=T0, notify=told, by="tests")
    assert refused.value.field.startswith("notify.remind_before")
    save_checklist(table, "forklift", recurrence=RULE, window="PT8H", now=T0, notify=told, by="tests")
    with pytest.raises(InvalidInput):  # the kept lead no longer fits the narrowed window
        save_checklist(table, "forklift", recurrence=RULE, window="PT1H", now=LATER, by="tests")
    with pytest.raises(InvalidInput):  # unchecked rules still keep their leads honest
        save_checklist(table, "forklift", recurrence=RULE, window="PT1H", now=LATER, validate=False, by="tests")
    assert table.get_checklist("forklift").window == "PT8H"  # type: ignore[union-attr]


def test_an_unchecked_rule_is_written_as_given() -> None:
    table = InMemoryTable()
    with pytest.raises(InvalidRecurrence):
        save_checklist(table, "broken", recurrence="RRULE:FREQ=SOMETIMES", now=T0, by="tests")
    written = save_checklist(table, "broken", recurrence="RRULE:FREQ=SOMETIMES", now=T0, validate=False, by="tests")
    assert table.get_checklist("broken") == written
