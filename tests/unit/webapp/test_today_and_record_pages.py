"""The Today and Record-a-check pages (#32) through the web app's handler on moto, as a signed-in
person's browser asks for them: what is due and undone at a site in its zone, what was missed since
yesterday, who is out of service; recording a check with one tap and the answer in words; scoping
(another site's page and equipment are 404 pages, an auditor cannot record: a 403 page, nothing
written)."""

from __future__ import annotations

from datetime import timedelta
from html import unescape

import pytest

from missed_checks.equipment.taking_out_of_service import take_out_of_service
from missed_checks.webapp.pages.today import yesterday_midnight
from tests.unit import two_sites
from tests.unit.two_sites import SUPERVISOR
from tests.unit.webapp import browser as browsers
from tests.unit.webapp.browser import NOW, Web

dynamodb, web = two_sites.dynamodb, browsers.web  # the fixtures (moto; the stack and its people)


def performed(web: Web, equipment_id: str) -> list[tuple[str, str]]:
    return web.table.performed_checks_of_equipment(equipment_id, "2026-02-01T00:00:00Z", "2026-04-01T00:00:00Z")


def main_of(text: str) -> str:
    return unescape(text[text.index('<main id="main"'):])


def test_today_shows_the_sites_undone_checks_and_misses_in_its_zone(web: Web) -> None:
    answer = web.browser("manager-north").get("/")
    assert answer.status == 200
    shown = main_of(answer.text)
    assert "<h1>Today at North</h1>" in shown and "Now: Mon 2 Mar 2026, 13:00 CET" in shown
    undone = shown[shown.index("Still undone (1)"):shown.index("Done in the current window")]
    assert "FL-1" in undone and "daily" in undone and "Mon 2 Mar, 14:00" in undone  # due by 14:00 Berlin
    assert 'href="/record/FL-1"' in undone
    missed = shown[shown.index("Missed since yesterday (1)"):shown.index("Out of service now")]
    assert "FL-1" in missed and "Sun 1 Mar, 06:00" in missed
    assert "Out of service now (0)" in shown
    assert "FL-9" not in shown and "south-daily" not in shown


@pytest.mark.parametrize("user", ["manager-north", "operator-north"])
def test_equipment_out_of_service_during_the_window_is_excused_not_undone(web: Web, user: str) -> None:
    take_out_of_service(web.table, SUPERVISOR, "FL-1", NOW - timedelta(hours=2), None, reason="Hydraulic leak",
                        now=NOW)
    shown = main_of(web.browser(user).get("/").text)
    assert "Still undone (0)" in shown and 'href="/record/FL-1"' not in shown  # nothing to do: it is excused
    coming = shown[shown.index("Coming up"):]
    assert "FL-1" in coming and "excused: out of service during the window until Mon 2 Mar, 14:00" in coming
    out = shown[shown.index("Out of service now"):shown.index("Coming up")]
    if user == "manager-north":  # may read the periods themselves
        assert "Out of service now (1)" in out and "Hydraulic leak" in out and "since Mon 2 Mar, 11:00" in out
    else:  # an operator may not read_records: the period is not listed, the row is still excused
        assert "not shown to your role" in out and "Hydraulic leak" not in shown


def test_a_done_check_leaves_the_undone_list(web: Web) -> None:
    browser = web.browser("operator-north")
    browser.get("/record/FL-1")
    assert browser.submit("/record/FL-1", {"checklist_id": "daily"}).status == 303
    shown = main_of(browser.get("/").text)
    assert "Still undone (0)" in shown and "Done in the current window (1)" in shown
    assert "done at Mon 2 Mar, 13:00" in shown
    assert "Missed since yesterday" in shown and "not shown to your role" in shown  # none read: no read_records


def test_today_at_another_site_is_a_404_page_and_an_admin_chooses_any(web: Web) -> None:
    refused = web.browser("manager-north").get("/", site="south")
    assert refused.status == 404 and "<h1>Not found</h1>" in refused.text
    assert web.browser("manager-north").get("/", site="no such site!").status == 400
    admin = web.browser("admin")
    south = main_of(admin.get("/", site="south").text)
    assert "<h1>Today at South</h1>" in south and "FL-9" in south and "CST" in south  # America/Chicago
    assert 'value="south" selected' in admin.last.text if admin.last else False


def test_yesterday_is_the_sites_midnight_across_a_dst_change() -> None:
    from datetime import UTC, datetime
    now = datetime(2026, 3, 30, 6, 0, tzinfo=UTC)  # Monday after Berlin's spring change (29 March)
    assert yesterday_midnight(now, "Europe/Berlin") == datetime(2026, 3, 28, 23, 0, tzinfo=UTC)


def test_recording_a_check_answers_in_words_and_writes_it_by_the_person(web: Web) -> None:
    browser = web.browser("operator-north")
    page = browser.get("/record/FL-1")
    assert page.status == 200 and "Due now" in page.text and 'class="qr-code"' in page.text
    assert "<title>QR code of http://app.example/record/FL-1</title>" in page.text
    answer = browser.submit("/record/FL-1", {"checklist_id": "daily"})
    assert (answer.status, answer.location) == (303, "/record/FL-1?recorded=daily")
    shown = main_of(browser.get(answer.location).text)
    assert 'role="status">Recorded daily on FL-1 at 13:00: on time (due by 14:00).' in shown
    assert performed(web, "FL-1") == [("daily", "2026-03-02T12:00:00Z")]
    assert "Record daily done now" not in shown  # done: no button any more


def test_an_auditor_sees_the_page_without_a_button_and_recording_is_a_403_page(web: Web) -> None:
    browser = web.browser("auditor-north")
    page = browser.get("/record/FL-1")
    assert page.status == 200 and "Record daily done now" not in page.text
    assert "Your role at north does not record checks" in page.text
    refused = browser.submit("/record/FL-1", {"checklist_id": "daily"})
    assert refused.status == 403 and "<h1>Not allowed</h1>" in refused.text
    assert performed(web, "FL-1") == []


def test_another_sites_equipment_is_a_404_page_and_nothing_is_written(web: Web) -> None:
    browser = web.browser("manager-south")
    assert browser.get("/record/FL-1").status == 404
    browser.get("/record/FL-9")
    refused = browser.submit("/record/FL-1", {"checklist_id": "daily"})
    assert refused.status == 404 and performed(web, "FL-1") == []
    assert browser.get("/record/NO-SUCH").status == 404


def test_a_checklist_the_equipment_is_not_on_is_said_on_the_page(web: Web) -> None:
    browser = web.browser("admin")
    browser.get("/record/FL-1")
    refused = browser.submit("/record/FL-1", {"checklist_id": "south-daily"})
    assert refused.status == 400 and "Error:" in refused.text and "assigned" in unescape(refused.text)
    assert performed(web, "FL-1") == []
