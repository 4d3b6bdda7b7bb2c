"""The checklists pages (#32) through the web app's handler on moto, as a signed-in person's browser
sends them: create (the rule as a few fields or as text), the preview (the spring change in
Europe/Berlin marked), a stale edit (the form again with the current values, nothing written),
pause, resume, delete after its confirmation page, assignments; an operator gets a 403 page on the
new-checklist form, another site's checklist is a 404 page, and nothing is written on a refusal."""

from __future__ import annotations

from datetime import UTC, datetime
from html import unescape

from missed_checks.checklists.checklist import Status
from tests.unit import two_sites
from tests.unit.webapp import browser as browsers
from tests.unit.webapp.browser import Web

dynamodb, web = two_sites.dynamodb, browsers.web  # the fixtures (moto; the stack and its people)

NEW = {"id": "weekly", "site_id": "north", "name": "Weekly walk-round", "revision": "", "editing": "",
       "rule_as": "fields", "frequency": "weekly", "time": "06:30", "starting": "2026-03-02", "day_MO": "on",
       "day_FR": "on", "window": "PT8H"}


def test_a_site_manager_creates_a_checklist_from_a_few_fields(web: Web) -> None:
    browser = web.browser("manager-north")
    form = browser.get("/checklists/new")
    assert form.status == 200 and '<label for="frequency">' in form.text and "Create checklist" in form.text
    assert 'name="starting" type="date" value="2026-03-02"' in form.text  # today at the site chosen
    assert '<option value="north" selected>' in form.text
    created = browser.submit("/checklists", NEW)
    assert (created.status, created.location) == (303, "/checklists/weekly"), created.text
    checklist = web.table.get_checklist("weekly")
    assert checklist is not None
    assert (checklist.recurrence, checklist.timezone, checklist.site_id, checklist.name) == (
        "DTSTART:20260302T063000\nRRULE:FREQ=WEEKLY;BYDAY=MO,FR", "Europe/Berlin", "north", "Weekly walk-round")
    shown = browser.get("/checklists/weekly")
    assert shown.status == 200 and "Fri 6 Mar 2026, 06:30 CET" in shown.text and "Weekly walk-round" in shown.text
    listed = browser.get("/checklists")
    assert 'href="/checklists/weekly"' in listed.text and 'href="/checklists/south-daily"' not in listed.text
    edit = browser.get("/checklists/weekly/edit")  # the few fields again, filled from the text
    assert 'id="rule_as-fields" name="rule_as" value="fields" checked' in edit.text
    assert 'name="day_MO" value="on" checked' in edit.text and 'name="day_TU" value="on">' in edit.text
    assert 'name="time" type="time" value="06:30"' in edit.text and edit.field("revision") == "1"


def test_a_wrong_field_is_said_next_to_it_and_nothing_is_written(web: Web) -> None:
    browser = web.browser("manager-north")
    browser.get("/checklists/new")
    refused = browser.submit("/checklists", {**NEW, "time": "25:00"})
    assert refused.status == 400
    assert 'id="time-error"' in refused.text and "'25:00' is not a time of day" in unescape(refused.text)
    assert 'aria-describedby="time-error"' in refused.text
    assert 'value="Weekly walk-round"' in refused.text  # what the person typed is kept
    as_text = browser.submit("/checklists", {**NEW, "rule_as": "text", "recurrence": "RRULE:FREQ=DAILY"})
    assert as_text.status == 400 and 'id="recurrence-error"' in as_text.text
    assert browser.submit("/checklists", {**NEW, "window": "8 hours"}).text.count('id="window-error"') == 1
    assert web.table.get_checklist("weekly") is None


def test_the_preview_marks_the_spring_change_and_writes_nothing(web: Web) -> None:
    browser = web.browser("operator-north")  # may read at north: a preview is a read
    browser.get("/checklists")
    rule = {**NEW, "rule_as": "text", "recurrence": "DTSTART:20260327T023000\nRRULE:FREQ=DAILY", "window": "PT2H"}
    shown = browser.submit("/checklists/preview", rule)
    assert shown.status == 200, shown.text
    assert "Times in <strong>Europe/Berlin</strong>" in shown.text
    assert "Sat 28 Mar 2026, 02:30 CET" in shown.text and "Sun 29 Mar 2026, 03:30 CEST" in shown.text
    assert "starts at 03:30 local instead of 02:30" in shown.text and "from +01:00 to +02:00" in shown.text
    assert "1 at a daylight-saving change" in shown.text
    assert 'value="weekly"' in shown.text  # the form again, as typed
    web.table.put_calendar("north-holidays", [datetime(2026, 3, 31).date()], now=datetime(2026, 3, 2, tzinfo=UTC),
                           by="cli:ops", site_id="north")
    closed = browser.submit("/checklists/preview", {**rule, "closed_on": "north-holidays"})
    assert "Tue 31 Mar 2026" in closed.text and "superset" in closed.text
    unknown = browser.submit("/checklists/preview", {**rule, "closed_on": "nothing"})
    assert unknown.status == 200 and 'id="closed_on-error"' in unknown.text
    assert "no calendar 'nothing'" in unescape(unknown.text)
    assert browser.submit("/checklists/preview", {**rule, "site_id": "south"}).status == 404
    assert web.table.get_checklist("weekly") is None and web.table.get_checklist("preview") is None


def test_an_operator_gets_a_403_page_on_the_new_checklist_form(web: Web) -> None:
    browser = web.browser("operator-north")
    refused = browser.get("/checklists/new")
    assert refused.status == 403 and "<h1>Not allowed</h1>" in refused.text
    assert "New checklist" not in browser.get("/checklists").text
    browser.get("/checklists")
    assert browser.submit("/checklists", NEW).status == 403
    assert browser.get("/checklists/daily/edit").status == 403
    assert web.table.get_checklist("weekly") is None


def test_another_sites_checklist_is_a_404_page(web: Web) -> None:
    browser = web.browser("manager-south")
    for path in ("/checklists/daily", "/checklists/daily/edit", "/checklists/daily/delete"):
        answer = browser.get(path)
        assert answer.status == 404 and "checklist 'daily' does not exist" in unescape(answer.text), path
    browser.get("/checklists")
    revision = str(web.table.get_checklist("daily").revision)  # type: ignore[union-attr]
    for path in ("/checklists/daily/pause", "/checklists/daily/delete"):
        assert browser.submit(path, {"revision": revision}).status == 404
    assert browser.submit("/checklists/daily/equipment", {"equipment": "FL-9"}).status == 404
    assert browser.submit("/checklists", {**NEW, "site_id": "north"}).status == 404
    daily = web.table.get_checklist("daily")
    assert daily is not None and daily.status is Status.ACTIVE
    assert [a.equipment_id for a in web.table.assignments("daily")] == ["FL-1"]
    assert web.table.get_checklist("weekly") is None


def test_a_stale_edit_shows_the_current_values_and_writes_nothing(web: Web) -> None:
    first, second = web.browser("manager-north"), web.browser("manager-north")
    opened = first.get("/checklists/daily/edit")
    assert opened.status == 200 and opened.field("revision") == "1"
    second.get("/checklists/daily/edit")
    fields = {name: second.last.field(name) for name in ("id", "site_id", "revision", "editing")}  # type: ignore[union-attr]
    saved = second.submit("/checklists/daily", {**fields, "name": "Daily, by second", "rule_as": "text",
                                                "recurrence": "DTSTART;TZID=Europe/Berlin:20260223T060000\n"
                                                              "RRULE:FREQ=DAILY", "window": "PT8H"})
    assert (saved.status, saved.location) == (303, "/checklists/daily"), saved.text
    stale = first.submit("/checklists/daily", {**fields, "revision": "1", "name": "Daily, by first",
                                               "rule_as": "text", "recurrence": "DTSTART:20260302T070000\n"
                                                                                "RRULE:FREQ=DAILY"})
    assert stale.status == 409 and "changed since you opened it" in stale.text
    assert stale.field("revision") == "2" and 'value="Daily, by second"' in stale.text
    daily = web.table.get_checklist("daily")
    assert daily is not None and (daily.name, daily.revision) == ("Daily, by second", 2)


def test_pause_resume_and_delete_after_its_confirmation(web: Web) -> None:
    browser = web.browser("manager-north")
    page = browser.get("/checklists/daily")
    paused = browser.submit("/checklists/daily/pause", {"revision": page.field("revision")})
    assert (paused.status, paused.location) == (303, "/checklists/daily")
    assert web.table.get_checklist("daily").status is Status.PAUSED  # type: ignore[union-attr]
    page = browser.get("/checklists/daily")
    assert "Paused" in page.text and 'action="/checklists/daily/resume"' in page.text
    stale = browser.submit("/checklists/daily/resume", {"revision": "1"})
    assert stale.status == 409 and "Nothing was changed" in stale.text
    assert web.table.get_checklist("daily").status is Status.PAUSED  # type: ignore[union-attr]
    browser.submit("/checklists/daily/resume", {"revision": stale.field("revision")})
    assert web.table.get_checklist("daily").status is Status.ACTIVE  # type: ignore[union-attr]

    confirm = browser.get("/checklists/daily/delete")
    assert confirm.status == 200 and "This cannot be undone" in confirm.text
    assert web.table.get_checklist("daily") is not None  # asking is not deleting
    deleted = browser.submit("/checklists/daily/delete", {"revision": confirm.field("revision")})
    assert (deleted.status, deleted.location) == (303, "/checklists")
    assert web.table.get_checklist("daily") is None


def test_assigning_and_unassigning_equipment(web: Web) -> None:
    browser = web.browser("manager-north")
    browser.get("/checklists/daily")
    refused = browser.submit("/checklists/daily/equipment", {"equipment": "FL-2, FL-9"})
    assert refused.status == 400 and "FL-9 is not registered at site north" in refused.text
    assert [a.equipment_id for a in web.table.assignments("daily")] == ["FL-1"]
    done = browser.submit("/checklists/daily/equipment", {"equipment": "FL-2"})
    assert (done.status, done.location) == (303, "/checklists/daily")
    page = browser.get("/checklists/daily")
    assert 'action="/checklists/daily/equipment/FL-2/unassign"' in page.text
    undone = browser.submit("/checklists/daily/equipment/FL-2/unassign", {})
    assert undone.status == 303
    active = [a.equipment_id for a in web.table.assignments("daily") if a.unassigned_at is None]
    assert active == ["FL-1"]
    supervisor = web.browser("supervisor-north")
    supervisor.get("/checklists/daily")
    assert supervisor.submit("/checklists/daily/equipment", {"equipment": "FL-2"}).status == 403
    assert 'action="/checklists/daily/equipment' not in supervisor.get("/checklists/daily").text
