"""What the checks found, read back from the table (#33 item 4): checks recorded with answers through
recording (which opens their defects), one defect resolved by a supervisor, then the fleet report on
moto. A check with failed items counts as performed exactly as a passing one: the same checks
recorded once failing and once passing give the same rows and compliance; only the findings differ.
Figures by hand below."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from missed_checks.aws.table import ManagementTable
from missed_checks.defects.defect import defect_id_of
from missed_checks.defects.resolving import resolve_defect
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks.performed_checks.recording import Row, record_checks
from missed_checks.reporting.findings import ItemCount, ResultRow
from missed_checks.reporting.fleet_report import Report, build_report
from missed_checks.reporting.reading import report_for
from missed_checks.reporting.report import TOTAL
from missed_checks.reporting.report_formats import FINDINGS_COLUMNS
from tests.unit.two_sites import (  # noqa: F401  (dynamodb: the fixture, moto once per module)
    BERLIN_DAILY,
    MANAGER,
    NOW,
    SUPERVISOR,
    add_checklist,
    dynamodb,
    register,
    two_sites,
)
from tests.unit.webapp.browser import Web, web  # noqa: F401  (web: the fixture, the web app on moto)

ITEMS = [{"id": "brakes", "label": "Brakes work", "kind": "pass_fail", "critical": True},
         {"id": "horn", "label": "Horn", "kind": "pass_fail"}]
START, END = datetime(2026, 2, 24, tzinfo=UTC), datetime(2026, 3, 2, tzinfo=UTC)
PASS = {"brakes": "pass", "horn": "pass"}
CHECKS = [  # (equipment, performed_at UTC, answers): windows are 06:00-14:00 Berlin, 05:00-13:00 UTC
    ("FL-1", datetime(2026, 2, 24, 6, 0, tzinfo=UTC), {"brakes": "fail", "horn": "pass"}),  # opens a defect
    ("FL-1", datetime(2026, 2, 25, 6, 0, tzinfo=UTC), PASS),
    ("FL-2", datetime(2026, 2, 24, 7, 0, tzinfo=UTC), {"brakes": "pass", "horn": "fail"}),  # not critical
    ("FL-2", datetime(2026, 2, 25, 7, 0, tzinfo=UTC), {"brakes": "fail", "horn": "pass"}),  # opens a defect
    ("FL-2", datetime(2026, 2, 27, 7, 0, tzinfo=UTC), PASS),
]


def fleet(client: Any, *, failing: bool) -> Iterator[ManagementTable]:
    """North's forklifts FL-1 and FL-2 on a daily checklist with items since a week before NOW, and
    :data:`CHECKS` recorded (every answer a pass unless ``failing``), each a minute after it was done."""
    with two_sites(client) as store:
        register(store, ("FL-1", "north"), ("FL-2", "north"))
        week_ago = NOW - timedelta(days=7)
        add_checklist(store, "forklift", "north", ["FL-1", "FL-2"], recurrence=BERLIN_DAILY, timezone=None,
                      window="PT8H", created_at=week_ago, assigned_at=week_ago, items=ITEMS)
        for equipment_id, at, answers in CHECKS:
            check = PerformedCheck("forklift", equipment_id, at, answers if failing else PASS)
            record_checks(store, [Row(check)], now=at + timedelta(minutes=1), recorded_by="ann")
        yield store


@pytest.fixture
def failing(dynamodb: Any) -> Iterator[ManagementTable]:  # noqa: F811
    yield from fleet(dynamodb, failing=True)


@pytest.fixture
def passing(dynamodb: Any) -> Iterator[ManagementTable]:  # noqa: F811
    yield from fleet(dynamodb, failing=False)


def report_of(store: ManagementTable, **options: Any) -> Report:
    return build_report(store, START, END, now=NOW, detail=True, **options)


def test_a_failed_check_counts_exactly_as_a_passed_one_in_compliance(failing: ManagementTable,
                                                                     passing: ManagementTable) -> None:
    failed, passed = report_of(failing), report_of(passing)
    assert failed.rows == passed.rows and failed.total == passed.total
    assert [o.to_dict() for o in failed.outcomes or ()] == [o.to_dict() for o in passed.outcomes or ()]
    by_equipment = {row.equipment_id: row for row in failed.rows}
    # FL-1: done on 24 and 25 Feb (one failed its brakes): 2 on time; FL-2: 24, 25, 27 Feb: 3 on time
    assert (by_equipment["FL-1"].on_time, by_equipment["FL-2"].on_time) == (2, 3)
    assert failed.findings is not None and passed.findings is not None
    assert (failed.findings.fleet.failed, passed.findings.fleet.failed) == (3, 0)
    assert passed.findings.open_defects == () and passed.findings.resolved == ()


def test_the_findings_read_back_with_the_defects_open_and_resolved(failing: ManagementTable) -> None:
    first = defect_id_of("forklift", "FL-1", CHECKS[0][1])
    resolve_defect(failing, first, "new brake pads", caller=SUPERVISOR, now=datetime(2026, 2, 24, 9, 30, tzinfo=UTC))
    found = report_of(failing).findings
    assert found is not None
    brakes, horn = ItemCount("brakes", "Brakes work", 1, 1), ItemCount("horn", "Horn", 1, 0)
    assert found.rows == (
        ResultRow("forklift", "FL-1", performed=2, passed=1, failed=1, critical_failed=1, items=(brakes,)),
        ResultRow("forklift", "FL-2", performed=3, passed=1, failed=2, critical_failed=1, items=(brakes, horn)))
    assert found.checklists == (ResultRow("forklift", TOTAL, performed=5, passed=2, failed=3, critical_failed=2,
                                          items=(ItemCount("brakes", "Brakes work", 2, 2), horn)),)
    # FL-2's defect, found 25 Feb 07:00 UTC, is open at the range's end (2 Mar 00:00 UTC, before now)
    assert [(d.defect_id, d.equipment_id, d.age_words) for d in found.open_defects] == [
        (defect_id_of("forklift", "FL-2", CHECKS[3][1]), "FL-2", "4 days 17 hours")]
    # FL-1's, found 24 Feb 06:00 UTC, resolved by the supervisor at 09:30: 3 h 30 min
    assert [(d.defect_id, d.how, d.resolved_by, d.took) for d in found.resolved] == [
        (first, "supervisor", SUPERVISOR.principal, timedelta(hours=3, minutes=30))]
    assert found.to_dict()["time_to_resolve"]["median"] == "3 hours 30 minutes"


def test_named_equipment_reads_its_own_defects(failing: ManagementTable) -> None:
    found = report_of(failing, equipment_ids=["FL-1"]).findings
    assert found is not None
    assert [r.equipment_id for r in found.rows] == ["FL-1"]
    assert [d.equipment_id for d in found.open_defects] == ["FL-1"]  # not resolved here


def test_the_callers_report_and_its_json_carry_the_findings(failing: ManagementTable) -> None:
    built = report_for(failing, MANAGER, START, END, now=NOW, site_id="north", detail=True)
    document = built.to_dict()["findings"]
    assert document["fleet"] == {"performed": 5, "passed": 2, "failed": 3, "critical_failed": 2}
    assert [d["equipment_id"] for d in document["open_defects"]] == ["FL-1", "FL-2"]
    assert [c["performed_at"] for c in document["critical_failures"]] == ["2026-02-24T06:00:00Z",
                                                                         "2026-02-25T07:00:00Z"]


def test_the_web_apps_report_page_shows_them_and_downloads_them_as_csv(web: Web) -> None:  # noqa: F811
    """The Report page (#32) of north for 23 Feb-1 Mar (Berlin days): its "What the checks found"
    section, and the findings CSV of the same range (the rows' CSV keeps its columns)."""
    add_checklist(web.table, "forklift", "north", ["FL-1"], recurrence=BERLIN_DAILY, timezone=None, window="PT8H",
                  created_at=NOW - timedelta(days=7), assigned_at=NOW - timedelta(days=7), items=ITEMS)
    equipment_id, at, answers = CHECKS[0]  # FL-1, Tue 24 Feb 06:00 UTC (07:00 CET): brakes failed
    record_checks(web.table, [Row(PerformedCheck("forklift", equipment_id, at, answers))],
                  now=at + timedelta(minutes=1), recorded_by="ann")
    browser = web.browser("manager-north")
    page = browser.get("/report", site="north", **{"from": "2026-02-23", "to": "2026-03-01"})
    assert page.status == 200, page.text
    section = " ".join(page.text.split('<section id="findings">', 1)[1].split("</section>", 1)[0].split())
    assert "1 check(s) performed in this period, 1 with a failed item, 1 with a failed critical item" in section
    assert 'data-item="brakes"' in section and "Brakes work" in section
    defect = defect_id_of("forklift", "FL-1", at)
    # open at the range's end, Mon 2 Mar 00:00 CET: found Tue 24 Feb 07:00 CET, 5 days 17 hours before
    assert f'data-defect="{defect}"' in section and "Tue 2026-02-24 07:00 CET" in section
    assert "5 days 17 hours" in section
    assert 'href="/report-findings.csv?site=north&amp;from=2026-02-23&amp;to=2026-03-01"' in page.text
    assert "style=" not in page.text  # the app's CSP: nothing inline
    answer = browser.get("/report-findings.csv", site="north", **{"from": "2026-02-23", "to": "2026-03-01"})
    assert answer.status == 200 and answer.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert answer.headers["Content-Disposition"] == (
        'attachment; filename="missed-checks-findings-north-2026-02-23-2026-03-01.csv"')
    assert answer.text.splitlines() == [
        ",".join(FINDINGS_COLUMNS),  # daily had no check in the range (its 1 March window was missed): no line
        "forklift,FL-1,1,0,1,1,brakes,Brakes work,true,1",
        "forklift,*,1,0,1,1,brakes,Brakes work,true,1"]
    assert web.browser("manager-north").get("/report-findings.csv", site="south",
                                            **{"from": "2026-02-23", "to": "2026-03-01"}).status == 404
