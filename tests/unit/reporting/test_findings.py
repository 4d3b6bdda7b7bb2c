"""What the checks found in a report's range (#33 item 4, :mod:`missed_checks.reporting.findings`):
failed items per checklist and equipment, defects open at the range's end and their age, time to
resolve. The worked example of docs/report-outcomes.md, every figure computed by hand below."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from missed_checks.defects.defect import Defect, ResolvedHow
from missed_checks.performed_checks.answers import FailedItem
from missed_checks.reporting.findings import (
    CheckResult,
    ItemCount,
    ReportFindings,
    ResultRow,
    in_words,
    report_findings,
)
from missed_checks.reporting.report import TOTAL

START = datetime(2026, 3, 2, tzinfo=UTC)  # Monday
END = datetime(2026, 3, 9, tzinfo=UTC)  # the Monday after
AS_OF = datetime(2026, 3, 10, 8, 0, tzinfo=UTC)

BRAKES = FailedItem("brakes", "Brakes work", True, "fail", "pass")
HORN = FailedItem("horn", "Horn sounds", False, "fail", "pass")
TYRES = FailedItem("tyres", "Tyre pressure", True, 1.6, "between 2 and 3 bar")


def check(equipment: str, at: str, *failed: FailedItem, result: str | None = None) -> CheckResult:
    return CheckResult("forklift-daily", equipment, at, result or ("failed" if failed else "passed"), failed)


CHECKS = [
    check("FL-1", "2026-03-01T06:00:00Z", HORN),  # before the range: not counted
    check("FL-1", "2026-03-02T06:10:00Z"),
    check("FL-1", "2026-03-03T06:05:00Z", BRAKES),
    check("FL-1", "2026-03-04T06:20:00Z"),
    check("FL-1", "2026-03-05T06:00:00Z", HORN),
    check("FL-2", "2026-03-02T06:30:00Z", HORN, TYRES),
    check("FL-2", "2026-03-03T06:40:00Z"),
    check("FL-2", "2026-03-06T06:15:00Z", HORN),
    check("FL-3", "2026-03-02T07:00:00Z", result="no_items"),
    check("FL-3", "2026-03-09T06:00:00Z", BRAKES),  # at the range's end: not counted
]


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def defect(defect_id: str, equipment: str, found: str, resolved: str | None = None, how: ResolvedHow | None = None,
           item: FailedItem = BRAKES) -> Defect:
    opened = Defect(defect_id, "forklift-daily", equipment, "north", (item,), "ann", at(found), at(found))
    if resolved is None:
        return opened
    return opened.resolved(by="sam" if how is ResolvedHow.SUPERVISOR else "ann", at=at(resolved), note="fixed",
                           how=how or ResolvedHow.SUPERVISOR)


DEFECTS = [
    defect("D-a", "FL-1", "2026-03-03T06:05:00Z", "2026-03-03T09:35:00Z", ResolvedHow.SUPERVISOR),  # 3 h 30 min
    defect("D-b", "FL-2", "2026-03-02T06:30:00Z", "2026-03-03T06:40:00Z", ResolvedHow.PASSING_CHECK,
           TYRES),  # 24 h 10 min
    defect("D-c", "FL-9", "2026-02-20T10:00:00Z"),  # open: 16 days 14 hours at the range's end
    defect("D-d", "FL-4", "2026-03-06T12:00:00Z", "2026-03-09T06:00:00Z",
           ResolvedHow.SUPERVISOR),  # resolved after the end: open then, 2 days 12 hours old
    defect("D-e", "FL-5", "2026-02-25T08:00:00Z", "2026-03-01T08:00:00Z",
           ResolvedHow.SUPERVISOR),  # resolved before the range: in neither
    defect("D-f", "FL-6", "2026-03-04T08:00:00Z", "2026-03-08T20:00:00Z", ResolvedHow.SUPERVISOR),  # 4 days 12 hours
    defect("D-g", "FL-7", "2026-03-09T07:00:00Z"),  # found after the range's end: in neither
]


def test_failed_items_per_equipment_and_per_checklist() -> None:
    found = report_findings(CHECKS, [], START, END, AS_OF)
    assert found.rows == (
        # 4 checks in the range, 2 passed; 2 failed: brakes (critical) on the 3rd, horn on the 5th
        ResultRow("forklift-daily", "FL-1", performed=4, passed=2, failed=2, critical_failed=1,
                  items=(ItemCount("brakes", "Brakes work", 1, 1), ItemCount("horn", "Horn sounds", 1, 0))),
        # 3 checks, 1 passed; 2 failed: horn twice, tyres (critical) once
        ResultRow("forklift-daily", "FL-2", performed=3, passed=1, failed=2, critical_failed=1,
                  items=(ItemCount("horn", "Horn sounds", 2, 0), ItemCount("tyres", "Tyre pressure", 1, 1))),
        # 1 check of a revision without items: neither passed nor failed
        ResultRow("forklift-daily", "FL-3", performed=1, passed=0, failed=0, critical_failed=0),
    )
    assert found.checklists == (ResultRow(
        "forklift-daily", TOTAL, performed=8, passed=3, failed=4, critical_failed=2,
        items=(ItemCount("horn", "Horn sounds", 3, 0), ItemCount("brakes", "Brakes work", 1, 1),
               ItemCount("tyres", "Tyre pressure", 1, 1))),)
    assert found.checklists[0].failed_share == "4 of 8"
    assert [(c.equipment_id, c.performed_at) for c in found.critical_checks] == [
        ("FL-2", "2026-03-02T06:30:00Z"), ("FL-1", "2026-03-03T06:05:00Z")]
    assert found.to_dict()["fleet"] == {"performed": 8, "passed": 3, "failed": 4, "critical_failed": 2}
    assert found.to_dict()["critical_failures"][0] == {
        "checklist_id": "forklift-daily", "equipment_id": "FL-2", "performed_at": "2026-03-02T06:30:00Z",
        "failed_items": ["Tyre pressure (critical)"]}


def test_an_item_reads_by_its_latest_label_and_is_critical_when_it_failed_critical() -> None:
    renamed = FailedItem("horn", "Horn is loud", True, "fail", "pass")
    found = report_findings([check("FL-1", "2026-03-03T06:00:00Z", renamed), check("FL-1", "2026-03-02T06:00:00Z",
                                                                                  HORN)], [], START, END, AS_OF)
    assert found.rows[0].items == (ItemCount("horn", "Horn is loud", 2, 1),)
    assert found.rows[0].items[0].critical


def test_open_defects_and_their_age_at_the_ranges_end() -> None:
    found = report_findings([], DEFECTS, START, END, AS_OF)
    assert found.at == END  # the range ended before as_of
    assert [(d.defect_id, d.age, d.age_words) for d in found.open_defects] == [
        ("D-c", timedelta(days=16, hours=14), "16 days 14 hours"),  # 20 Feb 10:00 to 9 Mar 00:00
        ("D-d", timedelta(days=2, hours=12), "2 days 12 hours"),  # 6 Mar 12:00 to 9 Mar 00:00
    ]
    assert found.to_dict()["open_defects"][0] == {
        "defect_id": "D-c", "checklist_id": "forklift-daily", "equipment_id": "FL-9",
        "found_at": "2026-02-20T10:00:00Z", "found_by": "ann", "failed_items": ["Brakes work (critical)"],
        "age_s": 16 * 86400 + 14 * 3600, "age": "16 days 14 hours"}


def test_a_range_reaching_past_now_ages_open_defects_to_now() -> None:
    now = datetime(2026, 3, 4, 9, 5, tzinfo=UTC)
    found = report_findings([], DEFECTS, START, END, now)
    assert found.at == now
    # D-b and D-a were resolved before now; D-f (4 Mar 08:00) is open then; D-d not found yet
    assert [(d.defect_id, d.age_words) for d in found.open_defects] == [
        ("D-c", "11 days 23 hours"), ("D-f", "1 hour 5 minutes")]  # 20 Feb 10:00 + 11 d = 3 Mar 10:00


def test_time_to_resolve_median_longest_and_how() -> None:
    found = report_findings([], DEFECTS, START, END, AS_OF)
    assert [(d.defect_id, d.took, d.how) for d in found.resolved] == [
        ("D-b", timedelta(hours=24, minutes=10), "passing_check"),  # resolved 3 Mar 06:40
        ("D-a", timedelta(hours=3, minutes=30), "supervisor"),  # resolved 3 Mar 09:35
        ("D-f", timedelta(days=4, hours=12), "supervisor"),  # resolved 8 Mar 20:00
    ]
    ttr = found.time_to_resolve
    # sorted: 3 h 30, 24 h 10, 108 h: the median is the middle one
    assert (ttr.count, ttr.median, ttr.longest) == (3, timedelta(hours=24, minutes=10), timedelta(days=4, hours=12))
    assert (ttr.by_supervisor, ttr.by_passing_check) == (2, 1)
    assert ttr.to_dict() == {"count": 3, "median_s": 87000, "longest_s": 388800, "median": "1 day",
                             "longest": "4 days 12 hours", "by_supervisor": 2, "by_passing_check": 1}


def test_an_even_count_has_the_mean_of_the_middle_two_as_its_median() -> None:
    two = [DEFECTS[0], defect("D-x", "FL-1", "2026-03-05T06:00:00Z", "2026-03-05T08:00:00Z")]  # 3 h 30, 2 h
    ttr = report_findings([], two, START, END, AS_OF).time_to_resolve
    assert (ttr.count, ttr.median, ttr.longest) == (2, timedelta(hours=2, minutes=45), timedelta(hours=3, minutes=30))


def test_nothing_found_has_no_figures() -> None:
    found = report_findings([], [], START, END, AS_OF)
    assert found == ReportFindings(END)
    assert found.to_dict()["time_to_resolve"] == {"count": 0, "median_s": None, "longest_s": None, "median": None,
                                                  "longest": None, "by_supervisor": 0, "by_passing_check": 0}


def test_elapsed_time_in_words() -> None:
    assert [in_words(timedelta(seconds=s)) for s in (0, 59, 60, 3599, 3600, 3660, 7320, 86399, 86400, 90000,
                                                     2 * 86400 + 7200)] == [
        "less than a minute", "less than a minute", "1 minute", "59 minutes", "1 hour", "1 hour 1 minute",
        "2 hours 2 minutes", "23 hours 59 minutes", "1 day", "1 day 1 hour", "2 days 2 hours"]


# -- properties ----------------------------------------------------------------------------------
ITEMS = [BRAKES, HORN, TYRES]
checks_strategy = st.lists(st.builds(
    lambda checklist, equipment, minutes, failed: CheckResult(
        checklist, equipment, (START + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "failed" if failed else "passed", tuple(ITEMS[i] for i in sorted(failed))),
    st.sampled_from(["a", "b"]), st.sampled_from(["FL-1", "FL-2", "FL-3"]),
    st.integers(-3000, 13000), st.sets(st.integers(0, 2))), max_size=40)
defects_strategy = st.lists(st.builds(
    lambda n, found, took, how: defect(f"D-{n}", "FL-1", (START + timedelta(minutes=found)).isoformat(),
                                       None if took is None else (START + timedelta(minutes=found + took)).isoformat(),
                                       how),
    st.integers(0, 10**6), st.integers(-20000, 15000), st.none() | st.integers(0, 20000),
    st.sampled_from(list(ResolvedHow))), max_size=20, unique_by=lambda d: d.defect_id)


@settings(max_examples=200, deadline=None)
@given(checks_strategy, defects_strategy, st.integers(0, 20000))
def test_every_check_and_defect_is_counted_where_it_belongs(checks: list[CheckResult], defects: list[Defect],
                                                            now_minutes: int) -> None:
    now = START + timedelta(minutes=now_minutes)
    found = report_findings(checks, defects, START, END, now)
    in_range = [c for c in checks if START <= at(c.performed_at) < END]
    assert sum(r.performed for r in found.rows) == len(in_range) == found.fleet.performed
    for total_row in found.checklists:  # a checklist's row is the sum of its equipment's
        rows = [r for r in found.rows if r.checklist_id == total_row.checklist_id]
        for name in ("performed", "passed", "failed", "critical_failed"):
            assert getattr(total_row, name) == sum(getattr(r, name) for r in rows)
        for item in total_row.items:
            assert item.failed == sum(i.failed for r in rows for i in r.items if i.item_id == item.item_id)
    for row in found.rows:
        assert row.passed + row.failed == row.performed  # every check here answered items
        assert row.critical_failed <= row.failed <= sum(i.failed for i in row.items)
    when = min(END, now)
    for d in defects:  # open at the end, resolved before it, or found after it: exactly one
        open_then = d.defect_id in {o.defect_id for o in found.open_defects}
        assert open_then == (d.found_at < when and (d.resolved_at is None or d.resolved_at >= when))
        resolved_in_range = d.defect_id in {r.defect_id for r in found.resolved}
        assert resolved_in_range == (d.resolved_at is not None and START <= d.resolved_at < END)
    took = sorted(r.took for r in found.resolved)
    ttr = found.time_to_resolve
    assert ttr.count == len(took) == ttr.by_supervisor + ttr.by_passing_check
    if took:
        assert took[0] <= ttr.median <= took[-1] == ttr.longest  # type: ignore[operator]
    assert all(d.age > timedelta(0) for d in found.open_defects)


def test_the_findings_csv_has_a_line_per_failed_item_and_one_for_a_row_without() -> None:
    from missed_checks.reporting.fleet_report import Report
    from missed_checks.reporting.report_formats import findings_csv_text

    report = Report(START, END, AS_OF, [], outcomes=[], findings=report_findings(CHECKS, DEFECTS, START, END, AS_OF))
    assert findings_csv_text(report).splitlines() == [
        "checklist_id,equipment_id,checks_performed,checks_passed,checks_failed,checks_critical_failed,item_id,"
        "label,critical,item_failed",
        "forklift-daily,FL-1,4,2,2,1,brakes,Brakes work,true,1",
        "forklift-daily,FL-1,4,2,2,1,horn,Horn sounds,false,1",
        "forklift-daily,FL-2,3,1,2,1,horn,Horn sounds,false,2",
        "forklift-daily,FL-2,3,1,2,1,tyres,Tyre pressure,true,1",
        "forklift-daily,FL-3,1,0,0,0,,,,",
        "forklift-daily,*,8,3,4,2,horn,Horn sounds,false,3",
        "forklift-daily,*,8,3,4,2,brakes,Brakes work,true,1",
        "forklift-daily,*,8,3,4,2,tyres,Tyre pressure,true,1"]
    assert findings_csv_text(Report(START, END, AS_OF, [])).splitlines() == [
        "checklist_id,equipment_id,checks_performed,checks_passed,checks_failed,checks_critical_failed,item_id,"
        "label,critical,item_failed"]  # built without detail: no findings, the header alone


def test_a_reports_json_with_its_windows_always_says_what_was_found() -> None:
    from missed_checks.reporting.fleet_report import Report

    nothing = Report(START, END, AS_OF, [], outcomes=[]).to_dict()["findings"]  # e.g. a caller of no checklist
    assert nothing["at"] == "2026-03-09T00:00:00Z" and nothing["checks"] == [] and nothing["open_defects"] == []
    assert nothing["fleet"] == {"performed": 0, "passed": 0, "failed": 0, "critical_failed": 0}
    assert "findings" not in Report(START, END, AS_OF, []).to_dict()  # the rows alone, as before
