"""The closure calendars pages (#32) through the web app's handler on moto: the list of the person's
sites' calendars, a new one, its dates replaced over the revision the page showed (a stale one: the
form again with the current dates, nothing written), a wrong date said next to the field, another
site's calendar a 404 page and a role without ``manage`` a 403 page."""

from __future__ import annotations

from datetime import date
from html import unescape

from tests.unit import two_sites
from tests.unit.two_sites import NOW
from tests.unit.webapp import browser as browsers
from tests.unit.webapp.browser import Web

dynamodb, web = two_sites.dynamodb, browsers.web  # the fixtures (moto; the stack and its people)


def _calendars(web: Web) -> None:
    web.table.put_calendar("north-holidays", [date(2026, 4, 3), date(2026, 2, 1)], now=NOW, by="cli:ops",
                           site_id="north", description="Easter")
    web.table.put_calendar("south-holidays", [date(2026, 4, 3)], now=NOW, by="cli:ops", site_id="south")


def test_the_list_holds_the_persons_sites_calendars(web: Web) -> None:
    _calendars(web)
    listed = web.browser("auditor-north").get("/calendars")
    assert listed.status == 200 and 'href="/calendars/north-holidays"' in listed.text
    assert "south-holidays" not in listed.text and "Fri 3 Apr 2026" in listed.text
    assert "New closure calendar" not in listed.text  # an auditor manages nothing


def test_a_calendar_is_created_and_its_dates_replaced(web: Web) -> None:
    browser = web.browser("manager-north")
    browser.get("/calendars")
    refused = browser.submit("/calendars", {"id": "shutdown", "site_id": "north", "description": "",
                                            "dates": "2026-08-03\n2026-02-30"})
    assert refused.status == 400 and 'id="dates-error"' in refused.text
    assert "'2026-02-30' is not a calendar date" in unescape(refused.text)
    assert web.table.get_calendar("shutdown") is None
    created = browser.submit("/calendars", {"id": "shutdown", "site_id": "north", "description": "Summer shutdown",
                                            "dates": "2026-08-03, 2026-08-04"})
    assert (created.status, created.location) == (303, "/calendars/shutdown"), created.text
    shown = browser.get("/calendars/shutdown")
    assert shown.status == 200 and "Mon 3 Aug 2026" in shown.text and shown.field("revision") == "1"
    replaced = browser.submit("/calendars/shutdown", {"revision": "1", "description": "Summer shutdown",
                                                      "dates": "2026-08-03\n2026-08-05"})
    assert replaced.status == 303
    calendar = web.table.get_calendar("shutdown")
    assert calendar is not None and (calendar.dates, calendar.revision) == ((date(2026, 8, 3), date(2026, 8, 5)), 2)
    browser.get("/calendars")
    taken = browser.submit("/calendars", {"id": "shutdown", "site_id": "north", "description": "",
                                          "dates": "2026-09-01"})
    assert taken.status == 409 and 'id="id-error"' in taken.text


def test_a_stale_replacement_shows_the_current_dates_and_writes_nothing(web: Web) -> None:
    _calendars(web)
    browser = web.browser("manager-north")
    browser.get("/calendars/north-holidays")
    web.table.put_calendar("north-holidays", [date(2026, 12, 24)], now=NOW, by="cli:ops", expected_revision=1)
    stale = browser.submit("/calendars/north-holidays", {"revision": "1", "description": "", "dates": "2026-05-01"})
    assert stale.status == 409 and "changed since you opened it" in stale.text
    assert stale.field("revision") == "2" and "2026-12-24" in stale.text
    calendar = web.table.get_calendar("north-holidays")
    assert calendar is not None and calendar.dates == (date(2026, 12, 24),)


def test_another_sites_calendar_is_a_404_page_and_a_weak_role_a_403(web: Web) -> None:
    _calendars(web)
    south = web.browser("manager-south")
    assert south.get("/calendars/north-holidays").status == 404
    south.get("/calendars")
    assert south.submit("/calendars/north-holidays", {"revision": "1", "description": "",
                                                      "dates": "2026-05-01"}).status == 404
    assert south.submit("/calendars", {"id": "x", "site_id": "north", "description": "",
                                       "dates": "2026-05-01"}).status == 404
    supervisor = web.browser("supervisor-north")
    page = supervisor.get("/calendars/north-holidays")
    assert page.status == 200 and "Change the dates" not in page.text
    edit = {"revision": "1", "description": "", "dates": "2026-05-01"}
    assert supervisor.submit("/calendars/north-holidays", edit, csrf=page.field("csrf")).status == 403
    calendar = web.table.get_calendar("north-holidays")
    assert calendar is not None and calendar.revision == 1 and web.table.get_calendar("x") is None
