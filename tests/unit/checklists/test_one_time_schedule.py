"""A single-window rule's one-time schedule is never sent in the past (#30 item 2): a window that
closed while nothing judged it is fired once soon after the sync; one already judged needs none."""

from __future__ import annotations

from datetime import UTC, datetime

from missed_checks.checklists.checklist import Checklist
from missed_checks.checklists.schedule import desired_schedule

ONCE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY;COUNT=1"
"""One window, 06:00-14:00 Berlin (05:00-13:00 UTC) on 2 March 2026; judged from 13:30 UTC."""
CREATED = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def once(**changes: object) -> Checklist:
    base = Checklist("audit", ONCE, window="PT8H", grace="PT30M", created_at=CREATED, effective_from=CREATED)
    return base.with_changes(**changes)


def test_before_its_window_closes_it_fires_when_the_window_is_due() -> None:
    desired = desired_schedule(once(), "g", datetime(2026, 3, 1, 10, 0, tzinfo=UTC))
    assert desired is not None and desired.expression == "at(2026-03-02T14:30:00)"
    assert desired.timezone == "Europe/Berlin" and desired.exact


def test_a_window_that_closed_while_nothing_judged_it_is_fired_once_right_after_the_sync() -> None:
    late = datetime(2026, 3, 5, 10, 0, 20, tzinfo=UTC)  # a stream record redriven days later
    desired = desired_schedule(once(), "g", late)
    assert desired is not None
    assert desired.expression == "at(2026-03-05T11:02:00)"  # 10:01:20 UTC rounded up, on Berlin's clock
    assert desired.start_date is None and desired.end_date is None


def test_a_judged_window_needs_no_schedule() -> None:
    judged = once(evaluated_until=datetime(2026, 3, 2, 13, 0, tzinfo=UTC))
    assert desired_schedule(judged, "g", datetime(2026, 3, 5, 10, 0, tzinfo=UTC)) is None


def test_a_window_closed_before_the_rule_took_effect_is_never_judged_and_needs_no_schedule() -> None:
    after = datetime(2026, 3, 4, 8, 0, tzinfo=UTC)
    late_rule = once(created_at=after, effective_from=after)
    assert desired_schedule(late_rule, "g", datetime(2026, 3, 5, 10, 0, tzinfo=UTC)) is None
