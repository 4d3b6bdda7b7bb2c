"""The Missed checks page (#32) through the web app's handler on moto, as a signed-in person's browser
sends it: what each role sees (its sites' missed checks; a dismiss form only where it may supervise;
an operator a 403 page), another site's checklist a 404 page, a dismissal with a reason (the row then
says who dismissed it and why), one without a reason re-rendered with the error next to that row's
field and nothing written, a form without the session's CSRF token refused, the outcome states
(recorded late, dismissed, excused), filters refused next to their field, and paging by cursor."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from html import unescape
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from missed_checks.aws.table import keys
from missed_checks.aws.table.windows import WindowItems
from missed_checks.checklists import managing
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.evaluation.missed_check import MissedCheck
from missed_checks.evaluation.ports import JudgedWindow
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks.timefmt import parse_instant
from missed_checks.webapp.pages.missed import PAGE_SIZE, anchor_of
from tests.unit import two_sites
from tests.unit.two_sites import NOW
from tests.unit.webapp import browser as browsers
from tests.unit.webapp.browser import Answer, Web

dynamodb, web = two_sites.dynamodb, browsers.web  # the fixtures (moto; the stack and its people)

START = "2026-03-01T05:00:00Z"
"""The window of the fixture's missed checks (06:00 in Berlin on 1 March)."""
ROW = anchor_of("daily", START, "FL-1")
DISMISSAL = {"checklist_id": "daily", "equipment_id": "FL-1", "window_start": START, "back": "site=north"}


def _judged(web: Web, checklist_id: str = "daily") -> None:
    """The fixture's window of ``checklist_id`` judged (claimed), as the evaluation leaves it."""
    start = parse_instant(START, "start")
    window = OccurrenceWindow(start, start + timedelta(hours=8), start + timedelta(hours=8))
    web.table.claim_window(checklist_id, JudgedWindow(window, 1, 0, 1, 1, 0, NOW - timedelta(days=1)), "run")


def _dismissal(web: Web, checklist_id: str = "daily", equipment_id: str = "FL-1") -> object:
    items = web.table.missed_checks_of_checklist(checklist_id, parse_instant(START, "start"),
                                                 parse_instant(START, "start") + timedelta(hours=1))
    return next(item.get("dismissal") for item in items if item["equipment_id"] == equipment_id)


def _rows(answer: Answer) -> list[str]:
    """The page's rows, by their equipment link's text."""
    import re
    return re.findall(r'<li class="card" id="missed-[0-9a-f]+">\s*<h3><a href="[^"]+">([^<]+)</a>', answer.text)


def test_each_role_sees_its_sites_missed_checks_and_may_dismiss_only_where_it_supervises(web: Web) -> None:
    supervisor = web.browser("supervisor-north").get("/missed")
    assert supervisor.status == 200, supervisor.text
    assert _rows(supervisor) == ["FL-1"] and "FL-9" not in supervisor.text
    assert "Sun 1 Mar 2026, 06:00 CET to 14:00 CET" in supervisor.text  # the checklist's zone
    assert f'id="reason-{ROW}"' in supervisor.text and f'<label for="reason-{ROW}">' in supervisor.text
    auditor = web.browser("auditor-north").get("/missed")
    assert auditor.status == 200 and _rows(auditor) == ["FL-1"]
    assert 'action="/missed/dismiss"' not in auditor.text  # an auditor reads, never dismisses
    south = web.browser("manager-south").get("/missed")
    assert _rows(south) == ["FL-9"] and 'action="/missed/dismiss"' in south.text
    admin = web.browser("admin").get("/missed")
    assert sorted(_rows(admin)) == ["FL-1", "FL-9"]
    operator = web.browser("operator-north").get("/missed")
    assert operator.status == 403 and "none of which allows read_records" in unescape(operator.text)


def test_a_fleet_page_reads_only_the_persons_checklists(web: Web, monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []
    query = WindowItems._missed_query

    def recorded(self: WindowItems, pk: str, *args: Any, **kwargs: Any) -> Any:
        read.append(pk)
        return query(self, pk, *args, **kwargs)

    monkeypatch.setattr(WindowItems, "_missed_query", recorded)
    assert _rows(web.browser("supervisor-north").get("/missed")) == ["FL-1"]
    assert read and all(pk.startswith("MISSED#daily#") for pk in read), read[:3]  # none of south-daily's
    assert set(read) == {keys.missed_key("daily", START, "FL-1")["pk"]}  # of daily, the partition FL-1 is in
    read.clear()
    assert sorted(_rows(web.browser("admin").get("/missed"))) == ["FL-1", "FL-9"]
    assert any(pk.startswith("MISSED#south-daily#") for pk in read)


def test_a_deleted_checklists_missed_checks_are_the_admins(web: Web) -> None:
    assert '<a href="/checklists/daily">daily</a>' in web.browser("supervisor-north").get("/missed").text
    managing.delete_checklist(web.table, two_sites.OPERATOR, "daily")
    admin = web.browser("admin").get("/missed")
    assert "on daily (deleted)</h3>" in admin.text and sorted(_rows(admin)) == ["FL-1", "FL-9"]
    assert f'id="reason-{ROW}"' in admin.text  # an admin may still dismiss it
    assert _rows(web.browser("supervisor-north").get("/missed")) == []  # no site any more: not north's


def test_another_sites_checklist_or_site_is_a_404_page(web: Web) -> None:
    browser = web.browser("supervisor-north")
    assert browser.get("/missed", checklist="south-daily").status == 404
    assert browser.get("/missed", checklist="no-such-checklist").status == 404  # the same answer
    assert browser.get("/missed", site="south").status == 404
    assert _rows(browser.get("/missed", site="north", checklist="daily")) == ["FL-1"]


def test_a_dismissal_with_a_reason_is_written_and_the_row_says_so(web: Web) -> None:
    browser = web.browser("supervisor-north")
    browser.get("/missed", site="north")
    done = browser.submit("/missed/dismiss", {**DISMISSAL, "reason": "site closed for the storm"})
    assert (done.status, done.location) == (303, f"/missed?site=north#{ROW}"), done.text
    assert _dismissal(web) == {"reason": "site closed for the storm", "by": "supervisor-north",
                               "at": "2026-03-02T12:00:00Z"}
    shown = browser.get("/missed", site="north")
    assert 'class="outcome-dismissed">dismissed</strong>' in shown.text
    assert "by supervisor-north on Mon 2 Mar 2026, 13:00 CET" in shown.text
    assert "site closed for the storm" in shown.text and f'id="reason-{ROW}"' not in shown.text
    again = browser.submit("/missed/dismiss", {**DISMISSAL, "reason": "twice"}, csrf=shown.field("csrf"))
    assert again.status == 400 and f'id="reason-{ROW}-error"' in again.text
    assert "already dismissed by supervisor-north" in unescape(again.text)
    assert _dismissal(web)["reason"] == "site closed for the storm"  # type: ignore[index]


def test_a_dismissal_without_a_reason_comes_back_with_the_error_next_to_its_field(web: Web) -> None:
    browser = web.browser("supervisor-north")
    browser.get("/missed", site="north")
    for reason in ("", "   "):
        refused = browser.submit("/missed/dismiss", {**DISMISSAL, "reason": reason})
        assert refused.status == 400, refused.text
        assert f'<p class="field-error" id="reason-{ROW}-error"><strong>Error:</strong> give the reason the check ' \
               "was missed, as text</p>" in refused.text
        assert f'aria-describedby="reason-{ROW}-error"' in refused.text
        assert 'value="north" selected' in refused.text  # the list as it was filtered
    too_long = browser.submit("/missed/dismiss", {**DISMISSAL, "reason": "x" * 1001})
    assert too_long.status == 400 and "keep the reason to 1000 characters at most" in too_long.text
    assert 'value="' + "x" * 1001 + '"' in too_long.text  # what was typed is kept
    assert _dismissal(web) is None


def test_a_dismissal_without_the_sessions_csrf_token_or_by_a_role_that_may_not_is_refused(web: Web) -> None:
    browser = web.browser("supervisor-north")
    browser.get("/missed")
    assert browser.post("/missed/dismiss", {**DISMISSAL, "reason": "no token"}).status == 403
    forged = browser.submit("/missed/dismiss", {**DISMISSAL, "reason": "forged"}, csrf="x" * 43)
    assert forged.status == 403 and "did not come from your current session" in forged.text
    auditor = web.browser("auditor-north")
    auditor.get("/missed")
    assert auditor.submit("/missed/dismiss", {**DISMISSAL, "reason": "not mine"}).status == 403
    south = web.browser("manager-south")
    south.get("/missed")
    assert south.submit("/missed/dismiss", {**DISMISSAL, "reason": "not my site"}).status == 404
    unknown = browser.submit("/missed/dismiss", {**DISMISSAL, "reason": "x", "by": "someone"},
                             csrf=browser.get("/missed").field("csrf"))
    assert unknown.status == 400 and "by" in unknown.text
    assert _dismissal(web) is None


def test_the_outcome_states_recorded_late_and_excused(web: Web) -> None:
    web.table.record_performed_checks([PerformedCheck("daily", "FL-1", datetime(2026, 3, 1, 12, 30, tzinfo=UTC))],
                                      NOW)
    web.table.record_out_of_service(OutOfServicePeriod.create(
        equipment_id="FL-1", start=datetime(2026, 2, 25, 6, tzinfo=UTC), end=datetime(2026, 2, 26, 6, tzinfo=UTC),
        reason="gearbox in the workshop", recorded_by="supervisor-north", recorded_at=NOW))
    shown = web.browser("auditor-north").get("/missed")
    assert 'class="outcome-recorded_late">recorded late</strong>' in shown.text
    assert "performed Sun 1 Mar 2026, 13:30 CET, recorded after the window was judged" in shown.text
    assert "gearbox in the workshop" in shown.text and "Wed 25 Feb 2026, 07:00 CET" in shown.text
    assert "gearbox" not in web.browser("manager-south").get("/missed").text  # another site's equipment


def test_filters_are_refused_next_to_their_field(web: Web) -> None:
    browser = web.browser("supervisor-north")
    bad_day = browser.get("/missed", **{"from": "1 March"})
    assert bad_day.status == 400 and 'id="from-error"' in bad_day.text
    assert "is not a day: give it as YYYY-MM-DD" in unescape(bad_day.text) and _rows(bad_day) == []
    backwards = browser.get("/missed", **{"from": "2026-03-02", "to": "2026-03-01"})
    assert backwards.status == 400 and 'id="to-error"' in backwards.text and "is before from" in backwards.text
    too_long = browser.get("/missed", **{"from": "2025-01-01", "to": "2026-03-01"})
    assert too_long.status == 400 and "at most 366 days" in too_long.text
    assert browser.get("/missed", equipment="FL 1").status == 400
    _judged(web)
    assert _rows(browser.get("/missed", equipment="FL-1")) == ["FL-1"]
    assert _rows(browser.get("/missed", equipment="FL-2")) == []
    assert _rows(browser.get("/missed", **{"from": "2026-03-02", "to": "2026-03-02"})) == []


def _next(answer: Answer) -> str | None:
    import re
    found = re.search(r'<a href="([^"]+)" rel="next">', answer.text)
    return None if found is None else unescape(found.group(1))


def test_a_long_list_comes_a_page_at_a_time(web: Web) -> None:
    checklist = web.table.get_checklist("daily")
    assert checklist is not None
    start = parse_instant(START, "start")
    window = OccurrenceWindow(start, start + timedelta(hours=8), start + timedelta(hours=8))
    extra = [f"FL-1{n:02d}" for n in range(PAGE_SIZE + 5)]
    web.table.assign_equipment("daily", extra, at=start - timedelta(days=1), by="tests")  # missed when assigned
    for equipment_id in extra:
        web.table.put_missed_check(MissedCheck("daily", equipment_id, window, NOW - timedelta(days=1), "run"))
    browser = web.browser("supervisor-north")
    first = browser.get("/missed", site="north")
    assert len(_rows(first)) == PAGE_SIZE
    link = _next(first)
    assert link is not None and link.startswith("/missed?")
    query = {name: values[0] for name, values in parse_qs(urlsplit(link).query).items()}
    assert query["site"] == "north" and query["cursor"]
    second = browser.get("/missed", **query)
    assert second.status == 200 and _next(second) is None and "First page" in second.text
    assert sorted(_rows(first) + _rows(second)) == sorted(["FL-1", *extra])
    other = browser.get("/missed", **{**query, "checklist": "daily"})  # a cursor of another query
    assert other.status == 400 and 'id="cursor-error"' in other.text
    assert browser.get("/missed", **{**query, "cursor": "made-up"}).status == 400


def test_one_pieces_missed_checks_come_a_page_at_a_time(web: Web) -> None:
    days = PAGE_SIZE + 3
    for day in range(days):  # FL-1 missed every day of February up to 1 March
        start = parse_instant(START, "start") - timedelta(days=day)
        window = OccurrenceWindow(start, start + timedelta(hours=8), start + timedelta(hours=8))
        web.table.claim_window("daily", JudgedWindow(window, 1, 0, 1, 1, 0, start + timedelta(hours=8)), "run")
        web.table.put_missed_check(MissedCheck("daily", "FL-1", window, start + timedelta(hours=8), "run"))
    browser = web.browser("auditor-north")
    first = browser.get("/missed", equipment="FL-1", **{"from": "2026-02-01", "to": "2026-03-02"})
    assert first.status == 200 and _rows(first) == ["FL-1"] * PAGE_SIZE
    assert "Mon 2 Feb 2026, 06:00 CET" in first.text and "Sun 1 Mar 2026" not in first.text  # oldest first
    link = _next(first)
    assert link is not None
    second = browser.get("/missed", **{name: values[0] for name, values in parse_qs(urlsplit(link).query).items()})
    assert _rows(second) == ["FL-1"] * (days - PAGE_SIZE) and _next(second) is None
    assert "Sun 1 Mar 2026, 06:00 CET" in second.text
    assert _rows(browser.get("/missed", equipment="FL-1", checklist="daily", **{"from": "2026-02-27"})) == ["FL-1"] * 3
    assert _rows(web.browser("manager-south").get("/missed", equipment="FL-1")) == []  # north's checklist
