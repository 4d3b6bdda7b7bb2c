"""The Equipment pages (#32) through the web app's handler on moto, as a signed-in person's browser sends
them: the list of the person's sites' equipment (paged; another site a 404 page), one piece's page
(its status on its checklists, its history, its out-of-service periods; another site's a 404 page, an
operator sees no periods and no form), recording a period in the site's local time and ending it,
a refused field said next to it with nothing written, a form without the session's CSRF token or by a
role that may not supervise refused."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from html import unescape
from urllib.parse import parse_qs, urlsplit

from missed_checks.equipment import assigning
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.equipment.registering import register_equipment
from missed_checks.webapp.pages.equipment import PAGE_SIZE
from tests.unit import two_sites
from tests.unit.two_sites import NOW, OPERATOR
from tests.unit.webapp import browser as browsers
from tests.unit.webapp.browser import Answer, Web

dynamodb, web = two_sites.dynamodb, browsers.web  # the fixtures (moto; the stack and its people)

PERIOD = {"from": "2026-03-03T06:00", "to": "2026-03-05T18:00", "reason": "gearbox in the workshop"}
"""Berlin times: 05:00Z on 3 March to 17:00Z on 5 March."""


def _listed(answer: Answer) -> list[str]:
    return re.findall(r'<td><a href="/equipment/[^"]+">([^<]+)</a></td>', answer.text)


def test_the_list_holds_the_persons_sites_equipment(web: Web) -> None:
    north = web.browser("operator-north").get("/equipment")
    assert north.status == 200 and _listed(north) == ["FL-1", "FL-2"]
    assert "in service" in web.browser("auditor-north").get("/equipment").text
    assert _listed(web.browser("admin").get("/equipment")) == ["FL-1", "FL-2", "FL-9"]
    assert _listed(web.browser("admin").get("/equipment", site="south")) == ["FL-9"]
    assert web.browser("manager-north").get("/equipment", site="south").status == 404
    web.table.record_out_of_service(OutOfServicePeriod.create(
        equipment_id="FL-2", start=NOW - timedelta(hours=1), end=None, reason="flat tyre",
        recorded_by="supervisor-north", recorded_at=NOW))
    shown = web.browser("supervisor-north").get("/equipment")
    assert "out of service</span>: flat tyre" in shown.text
    operator = web.browser("operator-north").get("/equipment")  # may not read periods: never "in service"
    assert "flat tyre" not in operator.text and operator.text.count("not shown to your role") == 2


def test_a_long_list_comes_a_page_at_a_time(web: Web) -> None:
    for n in range(PAGE_SIZE):
        register_equipment(web.table, OPERATOR, f"FX-{n:03d}", name=f"Forklift {n}", kind="forklift",
                           site_id="north", now=NOW)
    browser = web.browser("auditor-north")
    first = browser.get("/equipment")
    assert len(_listed(first)) == PAGE_SIZE
    link = re.search(r'<a href="([^"]+)" rel="next">', first.text)
    assert link is not None
    query = {name: values[0] for name, values in parse_qs(urlsplit(unescape(link.group(1))).query).items()}
    second = browser.get("/equipment", **query)
    assert second.status == 200 and _listed(second) == ["FX-048", "FX-049"] and 'rel="next"' not in second.text
    assert browser.get("/equipment", **{**query, "site": "north"}).status == 400  # a cursor of another list


def test_one_pieces_page_shows_its_status_history_and_periods_to_each_role(web: Web) -> None:
    web.table.record_out_of_service(OutOfServicePeriod.create(
        equipment_id="FL-1", start=datetime(2026, 2, 20, 6, tzinfo=UTC), end=datetime(2026, 2, 21, 6, tzinfo=UTC),
        reason="annual service", recorded_by="supervisor-north", recorded_at=NOW))
    supervisor = web.browser("supervisor-north").get("/equipment/FL-1")
    assert supervisor.status == 200, supervisor.text
    assert '<a href="/checklists/daily">' in supervisor.text
    assert "not done yet</span>, due by 14:00 CET" in supervisor.text
    assert "Registered at site north on Sat 31 Jan 2026, 13:00 CET" in supervisor.text
    assert "annual service" in supervisor.text and "Fri 20 Feb 2026, 07:00 CET" in supervisor.text
    assert 'action="/equipment/FL-1/out-of-service"' in supervisor.text
    assert '<label for="oos-reason">' in supervisor.text
    operator = web.browser("operator-north").get("/equipment/FL-1")
    assert operator.status == 200 and "daily" in operator.text
    assert "annual service" not in operator.text and 'action="/equipment/FL-1/out-of-service"' not in operator.text
    auditor = web.browser("auditor-north").get("/equipment/FL-1")
    assert "annual service" in auditor.text and "/out-of-service\"" not in auditor.text
    assert web.browser("supervisor-north").get("/equipment/FL-9").status == 404  # another site's
    assert web.browser("supervisor-north").get("/equipment/NOPE-1").status == 404  # the same answer
    assert web.browser("manager-south").get("/equipment/FL-9").status == 200


def test_a_period_is_recorded_in_the_sites_time_and_ended(web: Web) -> None:
    browser = web.browser("supervisor-north")
    browser.get("/equipment/FL-1")
    done = browser.submit("/equipment/FL-1/out-of-service", PERIOD)
    assert (done.status, done.location) == (303, "/equipment/FL-1#out-of-service"), done.text
    [period] = web.table.out_of_service_of_equipment("FL-1")
    assert (period.start, period.end, period.reason, period.recorded_by) == (
        datetime(2026, 3, 3, 5, tzinfo=UTC), datetime(2026, 3, 5, 17, tzinfo=UTC), "gearbox in the workshop",
        "supervisor-north")
    shown = browser.get("/equipment/FL-1")
    assert "Tue 3 Mar 2026, 06:00 CET" in shown.text and "Thu 5 Mar 2026, 18:00 CET" in shown.text
    assigning.change_assignments(web.table, web.table, OPERATOR, "daily", ["FL-2"], NOW - timedelta(days=1),
                                 assign=True)
    now_on = browser.submit("/equipment/FL-2/out-of-service", {"from": "2026-03-02T12:00", "to": "",
                                                               "reason": "flat tyre"}, csrf=shown.field("csrf"))
    assert now_on.status == 303
    page = browser.get("/equipment/FL-2")
    assert "Out of service since Mon 2 Mar 2026, 12:00 CET, until further notice: flat tyre" in page.text
    assert 'action="/equipment/FL-2/back-in-service"' in page.text and '<label for="back-at">' in page.text
    back = browser.submit("/equipment/FL-2/back-in-service", {"at": ""})
    assert (back.status, back.location) == (303, "/equipment/FL-2#out-of-service")
    [ended] = web.table.out_of_service_of_equipment("FL-2")
    assert (ended.end, ended.ended_by) == (NOW, "supervisor-north")
    again = browser.submit("/equipment/FL-2/back-in-service", {"at": ""}, csrf=page.field("csrf"))
    assert again.status == 400 and 'id="at-error"' in again.text and "is not out of service" in unescape(again.text)


def test_a_refused_field_is_said_next_to_it_and_nothing_is_written(web: Web) -> None:
    browser = web.browser("supervisor-north")
    browser.get("/equipment/FL-1")
    no_reason = browser.submit("/equipment/FL-1/out-of-service", {**PERIOD, "reason": ""})
    assert no_reason.status == 400 and 'id="reason-error"' in no_reason.text
    assert 'aria-describedby="reason-error"' in no_reason.text and 'value="2026-03-03T06:00"' in no_reason.text
    backwards = browser.submit("/equipment/FL-1/out-of-service", {**PERIOD, "to": "2026-03-02T06:00"},
                               csrf=no_reason.field("csrf"))
    assert backwards.status == 400 and 'id="to-error"' in backwards.text and "is not after from" in backwards.text
    typo = browser.submit("/equipment/FL-1/out-of-service", {**PERIOD, "from": "3 March"},
                          csrf=no_reason.field("csrf"))
    assert typo.status == 400 and 'id="from-error"' in typo.text
    assert "is not a date and time: give it as YYYY-MM-DDTHH:MM (in Europe/Berlin)" in unescape(typo.text)
    unassigned = web.browser("supervisor-north")
    register_equipment(web.table, OPERATOR, "FL-3", name="FL-3", kind="forklift", site_id="north", now=NOW)
    page = unassigned.get("/equipment/FL-3")
    refused = unassigned.submit("/equipment/FL-3/out-of-service", PERIOD, csrf=page.field("csrf"))
    assert refused.status == 400 and "has no assignment to any checklist" in unescape(refused.text)
    assert web.table.out_of_service_of_equipment("FL-1") == [] and web.table.out_of_service_of_equipment("FL-3") == []


def test_a_form_without_the_csrf_token_or_by_a_role_that_may_not_supervise_is_refused(web: Web) -> None:
    browser = web.browser("supervisor-north")
    browser.get("/equipment/FL-1")
    assert browser.post("/equipment/FL-1/out-of-service", PERIOD).status == 403
    assert browser.submit("/equipment/FL-1/out-of-service", PERIOD, csrf="y" * 43).status == 403
    auditor = web.browser("auditor-north")
    auditor.get("/equipment/FL-1")
    refused = auditor.submit("/equipment/FL-1/out-of-service", PERIOD)
    assert refused.status == 403 and "does not allow supervise" in unescape(refused.text)
    south = web.browser("manager-south")
    south.get("/equipment/FL-9")
    assert south.submit("/equipment/FL-1/out-of-service", PERIOD).status == 404
    assert south.submit("/equipment/FL-1/back-in-service", {"at": ""}).status == 404
    assert web.table.out_of_service_of_equipment("FL-1") == []
