"""The table adapter against the template's own table: writes that must not lose or rewrite history."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from missed_checks.aws.table import ChecklistTable, Conflict, NotFound
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.checklists.saving import save_checklist
from missed_checks.evaluation.ports import JudgedWindow
from missed_checks.timefmt import parse_instant

RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def table(local_stack):
    table = ChecklistTable(local_stack.table_name)
    save_checklist(table, "forklift", recurrence=RULE, window="PT8H", now=T0, by="tests")
    return table


def test_assigning_a_fleet_again_keeps_the_original_assignment_dates(table):
    assert table.assign_equipment("forklift", ["fl-1", "fl-2"], at=T0, by="tests") == 2
    assert table.assign_equipment("forklift", ["fl-1", "fl-2", "fl-3"], at=T0 + timedelta(days=1), by="tests") == 1
    dates = {a.equipment_id: a.assigned_at for a in table.assignments("forklift")}
    assert dates == {"fl-1": T0, "fl-2": T0, "fl-3": T0 + timedelta(days=1)}


def test_reassigning_unassigned_equipment_keeps_the_earlier_period(table):
    table.assign_equipment("forklift", ["fl-1"], at=T0, by="tests")
    table.unassign_equipment("forklift", ["fl-1"], at=T0 + timedelta(days=2), by="tests")
    assert table.assign_equipment("forklift", ["fl-1"], at=T0 + timedelta(days=5), by="tests") == 1
    (assignment,) = table.assignments("forklift")
    assert assignment.assigned_at == T0 + timedelta(days=5) and assignment.unassigned_at is None
    assert assignment.earlier_periods == ((T0, T0 + timedelta(days=2)),)
    # Monday 2 March still counts it; Thursday 5 March (unassigned) does not; Friday 6 does.
    monday = datetime(2026, 3, 2, 5, tzinfo=UTC)
    assert assignment.counts_for(monday, monday + timedelta(hours=8))
    assert not assignment.counts_for(monday + timedelta(days=3), monday + timedelta(days=3, hours=8))
    assert assignment.counts_for(monday + timedelta(days=5), monday + timedelta(days=5, hours=8))


def test_an_edit_racing_an_evaluation_never_moves_the_watermark_back(table):
    stale = table.get_checklist("forklift")
    table.advance_watermark("forklift", datetime(2026, 3, 2, 13, tzinfo=UTC))
    save_checklist(table, "forklift", recurrence=stale.recurrence, window="PT8H", name="Renamed", now=T0, by="tests")
    assert table.get_checklist("forklift").watermark == datetime(2026, 3, 2, 13, tzinfo=UTC)


def test_a_rule_change_and_a_resume_take_effect_when_written(table):
    edit = datetime(2026, 3, 10, 8, tzinfo=UTC)
    table.advance_watermark("forklift", datetime(2026, 3, 2, 13, tzinfo=UTC))
    save_checklist(table, "forklift", recurrence=RULE.replace("T060000", "T070000"), window="PT8H", now=edit,
                   by="tests")
    assert table.get_checklist("forklift").watermark == edit
    table.pause_checklist("forklift", now=edit + timedelta(days=1), by="tests")
    table.resume_checklist("forklift", now=edit + timedelta(days=9), by="tests")
    assert table.get_checklist("forklift").watermark == edit + timedelta(days=9)


def test_an_edit_after_someone_else_changed_the_checklist_is_a_conflict_not_a_lost_update(table, monkeypatch):
    stale = table.get_checklist("forklift")
    table.pause_checklist("forklift", now=T0, by="tests")
    monkeypatch.setattr(table, "get_checklist", lambda _id: stale)
    with pytest.raises(Conflict):
        save_checklist(table, "forklift", recurrence=RULE, window="PT4H", now=T0, by="tests")


def test_dismissing_twice_or_a_missing_record_is_an_error(table):
    from missed_checks.checklists.recurrence import parse_recurrence
    from missed_checks.evaluation.missed_check import MissedCheck

    window = parse_recurrence(RULE, window="PT8H").windows(T0, T0 + timedelta(days=2))[0]
    table.put_missed_check(MissedCheck(checklist_id="forklift", equipment_id="fl-1", window=window, judged_at=T0,
                                       execution="x"))
    dismissed = table.dismiss_missed_check("forklift", window.start, "fl-1", reason="in workshop", by="ops",
                                           at=T0)
    assert dismissed["dismissal"] == {"reason": "in workshop", "by": "ops", "at": "2026-03-01T09:00:00Z"}
    with pytest.raises(Conflict, match="already dismissed by ops"):
        table.dismiss_missed_check("forklift", window.start, "fl-1", reason="again", by="someone-else",
                                   at=T0 + timedelta(hours=1))
    kept = table.missed_checks_of_checklist("forklift", window.start, window.end)
    assert [item["dismissal"] for item in kept] == [dismissed["dismissal"]]  # who dismissed it, and when, stay
    with pytest.raises(NotFound):
        table.dismiss_missed_check("forklift", window.start, "fl-9", reason="x", by="ops", at=T0)


def test_a_performed_check_recorded_again_keeps_who_recorded_it_first(table):
    """Audit data is never rewritten: a second put of the same check (checklist, equipment, instant)
    by someone else leaves the first recorded_by and recorded_at, and answers them."""
    from missed_checks.evaluation.ports import CheckRecord
    from missed_checks.performed_checks.performed_check import PerformedCheck

    monday = datetime(2026, 3, 2, 6, 12, tzinfo=UTC)
    check = PerformedCheck("forklift", "fl-1", monday)
    assert table.record_performed_checks([check], T0, "alice").written == 1
    again = table.record_performed_checks([check, PerformedCheck("forklift", "fl-2", monday), check],
                                          T0 + timedelta(hours=1), "bob")
    first = CheckRecord("2026-03-01T09:00:00Z", "alice")
    assert (again.written, again.kept) == (1, {("forklift", "fl-1", "2026-03-02T06:12:00Z"): first})
    stored = [item for item in table.checks_of_equipment("fl-1", monday, monday + timedelta(hours=1))
              if item["type"] == "performed_check"]
    assert [(item["recorded_by"], item["recorded_at"]) for item in stored] == [("alice", "2026-03-01T09:00:00Z")]
    assert table.performed_check_records([check]) == {("forklift", "fl-1", "2026-03-02T06:12:00Z"): first}


def judged(missed: int, newly: int, at: str = "2026-03-02T13:30:00Z") -> JudgedWindow:
    window = OccurrenceWindow(datetime(2026, 3, 2, 5, tzinfo=UTC), datetime(2026, 3, 2, 13, tzinfo=UTC),
                              datetime(2026, 3, 2, 13, 30, tzinfo=UTC))
    return JudgedWindow(window=window, equipment_counted=3, performed=3 - missed, missed=missed,
                        newly_recorded=newly, excused=0, judged_at=parse_instant(at, "at"))


MONDAY = datetime(2026, 3, 2, 5, tzinfo=UTC)


def test_one_execution_per_window_wins_the_claim_and_announces_it(table):
    first = table.claim_window("forklift", judged(2, 2), "arn:execution:firing")
    assert (first.won, first.announced, first.must_announce) == (True, False, True)

    # Another execution judging the same window before the winner announced (a duplicate delivery,
    # a re-run, a replay): it loses, and the winner's totals stay.
    second = table.claim_window("forklift", judged(2, 0, at="2026-03-02T13:31:00Z"), "arn:execution:rerun")
    assert (second.won, second.announced, second.must_announce) == (False, False, False)
    assert second.holder == "arn:execution:firing"
    record = table.judged_window("forklift", MONDAY)
    assert (record["execution"], record["newly_recorded"], record["judged_at"]) == (
        "arn:execution:firing", 2, "2026-03-02T13:30:00Z")

    # The winner crashed between its claim and the event: its retry (same execution) still announces.
    retry = table.claim_window("forklift", judged(2, 2), "arn:execution:firing")
    assert retry.must_announce
    table.mark_window_announced("forklift", "2026-03-02T05:00:00Z")
    # A retry after the event went out (e.g. the watermark update failed) does not announce again.
    assert not table.claim_window("forklift", judged(2, 2), "arn:execution:firing").must_announce
    late = table.claim_window("forklift", judged(2, 0), "arn:execution:rerun")
    assert (late.won, late.announced, late.holder) == (False, True, "arn:execution:firing")
    assert table.judged_window("forklift", MONDAY)["announced"] is True


def test_a_dead_letter_replay_takes_over_an_unannounced_claim_once(table):
    table.claim_window("forklift", judged(1, 1), "arn:execution:failed")  # then failed for good

    assert not table.hand_over_window_claim("forklift", MONDAY, "arn:execution:other", "arn:execution:replay")
    assert table.hand_over_window_claim("forklift", MONDAY, "arn:execution:failed", "arn:execution:replay")
    assert not table.hand_over_window_claim("forklift", MONDAY, "arn:execution:failed", "arn:execution:replay-2")

    # The failed execution, redriven after all, no longer holds the claim; the replay does.
    assert not table.claim_window("forklift", judged(1, 1), "arn:execution:failed").won
    assert table.claim_window("forklift", judged(1, 0), "arn:execution:replay").must_announce
    table.mark_window_announced("forklift", "2026-03-02T05:00:00Z")
    record = table.judged_window("forklift", MONDAY)
    assert (record["execution"], record["handed_over_from"]) == ("arn:execution:replay", "arn:execution:failed")
    # An announced window is never handed over (its event went out).
    assert not table.hand_over_window_claim("forklift", MONDAY, "arn:execution:replay", "arn:execution:replay-3")
    # Nothing to hand over for a window nobody claimed.
    assert not table.hand_over_window_claim("forklift", MONDAY + timedelta(days=1), "arn:execution:failed",
                                            "arn:execution:replay")


def test_the_adapter_alone_shapes_the_items_and_reads_back_what_it_wrote(table):
    """#35 item 2: the checklist, calendar and out-of-service items are written by the adapter's own
    functions, keyed as before (pk/sk and the ByPeriod list), and read back as the domain types."""
    from missed_checks.aws.table import keys
    from missed_checks.aws.table.base import STAMP_ATTRIBUTES
    from missed_checks.aws.table.calendars import calendar_item, calendar_of
    from missed_checks.aws.table.checklists import checklist_item, checklist_of
    from missed_checks.aws.table.out_of_service import period_item, period_of
    from missed_checks.equipment.out_of_service import OutOfServicePeriod

    saved = table.get_checklist("forklift")
    stored = table.get_checklist_item("forklift")

    def unstamped(item):  # every write also stamps who and when (the audit trail, #31)
        return {name: value for name, value in item.items() if name not in STAMP_ATTRIBUTES}

    assert unstamped(stored) == checklist_item(saved) and stored["changed_by"] == "tests"
    assert (stored["pk"], stored["sk"], stored["gsi2pk"], stored["gsi2sk"]) == (
        "CHECKLIST#forklift", "CHECKLIST", "CHECKLISTS", "forklift")
    assert checklist_of(stored) == saved
    calendar = table.put_calendar("site", [T0.date()], now=T0, by="ops")
    calendar_stored = table._get(keys.calendar_key("site"))
    assert unstamped(calendar_stored) == calendar_item(calendar) and calendar_of(calendar_stored) == calendar
    assert calendar_stored["changed_by"] == "ops"
    table.assign_equipment("forklift", ["fl-1"], at=T0, by="tests")
    period = OutOfServicePeriod.create(equipment_id="fl-1", start=T0, end=T0 + timedelta(days=2), reason="gearbox",
                                       recorded_by="ops", recorded_at=T0)
    table.record_out_of_service(period)
    period_stored = table._get(keys.out_of_service_key("2026-03-01T09:00:00Z", "fl-1"))
    assert unstamped(period_stored) == period_item(period) and period_of(period_stored) == period
    assert period_stored["changed_by"] == "ops"
