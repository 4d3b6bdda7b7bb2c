"""Previewing a rule (#31): the next windows in the checklist's local time, each DST shift marked (a
start moved out of a spring-forward gap, an offset that changed since the window before, a window
that spans a change), the closed dates of its calendars, and whether the schedule is exact or a
superset (:mod:`missed_checks.checklists.previewing`)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from missed_checks.checklists.previewing import preview, preview_at_site, validate_rule
from missed_checks.errors import InvalidInput, NotFound
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Role


def marks(rule: str, now: datetime, count: int, window: str = "PT2H") -> list[tuple[str, str | None]]:
    shown = preview(validate_rule(rule, "Europe/Berlin", window, None), now, count).to_detail()
    return [(w["start"], w["dst_shift"]) for w in shown["next_windows"]]


def test_a_start_in_the_spring_forward_gap_is_marked_with_the_offset_change() -> None:
    found = marks("DTSTART:20260327T023000\nRRULE:FREQ=DAILY", datetime(2026, 3, 27, tzinfo=UTC), 4)
    assert [start for start, _ in found] == ["2026-03-27T02:30:00+01:00", "2026-03-28T02:30:00+01:00",
                                              "2026-03-29T03:30:00+02:00", "2026-03-30T02:30:00+02:00"]
    assert [mark is None for _, mark in found] == [True, True, False, True]
    assert "starts at 03:30 local instead of 02:30" in str(found[2][1])
    assert "changes from +01:00 to +02:00 before this window" in str(found[2][1])


def test_the_autumn_change_marks_the_first_window_after_it_and_a_window_spanning_it() -> None:
    found = marks("DTSTART:20261024T220000\nRRULE:FREQ=DAILY", datetime(2026, 10, 24, tzinfo=UTC), 3, "PT8H")
    assert [start for start, _ in found] == ["2026-10-24T22:00:00+02:00", "2026-10-25T22:00:00+01:00",
                                              "2026-10-26T22:00:00+01:00"]
    assert "during this window (it ends at 05:00 local, 8:00:00 after it starts)" in str(found[0][1])
    assert "changes from +02:00 to +01:00 before this window" in str(found[1][1])
    assert found[2][1] is None


def test_closed_dates_are_left_out_and_make_the_schedule_a_superset() -> None:
    rule = validate_rule("DTSTART:20260302T060000\nRRULE:FREQ=DAILY", "Europe/Berlin", "PT8H", None)
    exact = preview(rule, datetime(2026, 3, 2, tzinfo=UTC), 3).to_detail()
    assert (exact["schedule"]["kind"], exact["closed_dates"]) == ("exact", [])
    closed = preview(rule.with_closures(frozenset({date(2026, 3, 3), date(2026, 5, 1)})),
                     datetime(2026, 3, 2, tzinfo=UTC), 3).to_detail()
    assert [w["start"][:10] for w in closed["next_windows"]] == ["2026-03-02", "2026-03-04", "2026-03-05"]
    assert (closed["schedule"]["kind"], closed["closed_dates"]) == ("superset", ["2026-03-03"])


def test_a_preview_at_a_site_needs_a_role_there_and_a_sane_count() -> None:
    rule = validate_rule("DTSTART:20260302T060000\nRRULE:FREQ=DAILY", "Europe/Berlin", "PT8H", None)
    now = datetime(2026, 3, 2, tzinfo=UTC)
    operator = Caller("operator-north", {"north": Role.operator})
    assert len(preview_at_site(operator, "north", rule, now, 2).windows) == 2
    with pytest.raises(NotFound, match="site 'south' does not exist"):
        preview_at_site(operator, "south", rule, now, 2)
    with pytest.raises(InvalidInput) as refused:
        preview_at_site(operator, "north", rule, now, 101)
    assert refused.value.field == "windows"
    with pytest.raises(InvalidInput) as no_site:
        preview_at_site(operator, None, rule, now, 2)
    assert no_site.value.field == "site_id"
    assert len(preview_at_site(Caller.operator("cli:ops"), None, rule, now, 2).windows) == 2
