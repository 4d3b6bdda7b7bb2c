"""The Report page (#32) through the web app's handler on moto, as a signed-in person's browser sends it:
its figures are the people's API's ``GET /report`` for the same range and site (the same scoped use
case), the CSV download is the API's CSV, each person sees their sites' rows only (another site is a
404 page, an operator a 403 page), a range that cannot be read is refused next to its field and no
report is built, and the page holds no inline style (the app's Content-Security-Policy allows none)."""

from __future__ import annotations

import json
import re
from html import unescape
from typing import Any

from functions.api_report import app as api_report
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks.reporting.report import COLUMNS
from missed_checks.timefmt import parse_instant
from missed_checks.webapp.pages.report import MAX_RANGE_DAYS
from tests.unit import two_sites
from tests.unit.two_sites import NOW
from tests.unit.webapp import browser as browsers
from tests.unit.webapp.browser import Answer, Web

dynamodb, web = two_sites.dynamodb, browsers.web  # the fixtures (moto; the stack and its people)

RANGE = {"from": "2026-02-23", "to": "2026-03-01"}
"""Days in Berlin: the API's range is their midnights, ``to`` the day after the last."""
API_RANGE = {"from": "2026-02-23", "to": "2026-03-02", "tz": "Europe/Berlin"}
FIGURES = ("expected", "on_time", "late", "missed", "recorded_late", "dismissed", "excused")


def api(who: str, groups: str, query: dict[str, str]) -> tuple[int, Any]:
    """``GET /report`` of the people's API, as API Gateway hands it over for ``who`` signed in."""
    event = {"version": "2.0", "routeKey": "GET /report", "rawPath": "/report", "rawQueryString": "",
             "queryStringParameters": query, "headers": {},
             "requestContext": {"http": {"method": "GET", "path": "/report"}, "stage": "$default",
                                "authorizer": {"jwt": {"claims": {"sub": who, "username": who,
                                                                  "cognito:groups": f"[{groups}]"}, "scopes": None}}},
             "body": None, "isBase64Encoded": False}
    answer = api_report.app.resolve(event, None)
    kind = (answer.get("headers") or {}).get("Content-Type", "")
    body = answer.get("body") or ""
    return answer["statusCode"], json.loads(body) if "json" in kind else body


def figures(answer: Answer) -> dict[str, int]:
    """The headline cards' figures."""
    found = re.findall(r'data-figure="(\w+)"><div class="label">[^<]*</div><div class="value">(\d+)</div>', answer.text)
    return {name: int(value) for name, value in found}


def per_equipment(answer: Answer) -> list[tuple[str, str]]:
    """(checklist, equipment) of the page's "Per checklist and equipment" rows."""
    section = answer.text.split('<section id="per-equipment">', 1)[1].split("</tbody>", 1)[0]
    return re.findall(r"<tr><td>([^<]+)</td><td>([^<]+)</td>", section)


def test_the_figures_are_the_apis_report_for_the_same_range_and_site(web: Web) -> None:
    # done in the 1 March window, recorded after it was judged missed: recorded late
    web.table.record_performed_checks([PerformedCheck("daily", "FL-1", parse_instant("2026-03-01T12:30:00Z", "at"))],
                                      NOW)
    page = web.browser("manager-north").get("/report", site="north", **RANGE)
    assert page.status == 200, page.text
    status, report = api("manager-north", "site_manager@north", {**API_RANGE, "site_id": "north"})
    assert status == 200, report
    assert figures(page) == {name: report["total"][name] for name in FIGURES}
    assert (figures(page)["recorded_late"], figures(page)["missed"]) == (1, 0)
    assert per_equipment(page) == [(row["checklist_id"], row["equipment_id"]) for row in report["rows"]]
    for section in ("summary", "compliance-by-week", "missed-heatmap", "repeat-offenders", "late-checks",
                    "dismissed-checks", "recorded-late", "excused-checks", "all-missed", "periods", "per-equipment"):
        assert f'<section id="{section}">' in page.text, section
    assert 'href="/static/report.css"' in page.text
    assert "style=" not in page.text and "<style" not in page.text  # CSP: style-src 'self', nothing inline
    assert "Windows starting from Mon 2026-02-23 00:00 CET to Mon 2026-03-02 00:00 CET" in page.text


def test_the_csv_download_is_the_apis_csv(web: Web) -> None:
    browser = web.browser("auditor-north")
    answer = browser.get("/report.csv", site="north", **RANGE)
    assert answer.status == 200, answer.text
    assert answer.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert answer.headers["Content-Disposition"] == (
        'attachment; filename="missed-checks-report-north-2026-02-23-2026-03-01.csv"')
    status, csv = api("auditor-north", "auditor@north", {**API_RANGE, "site_id": "north", "format": "csv"})
    assert status == 200 and answer.text == csv
    assert answer.text.splitlines()[0] == ",".join(COLUMNS) and "south-daily" not in answer.text
    page = browser.get("/report", site="north", **RANGE)
    assert 'href="/report.csv?site=north&amp;from=2026-02-23&amp;to=2026-03-01"' in page.text


def test_each_person_sees_their_sites_rows_only(web: Web) -> None:
    north = web.browser("manager-north").get("/report", **RANGE)  # no site: all of theirs
    assert north.status == 200 and per_equipment(north) == [("daily", "FL-1")]
    south = web.browser("manager-south").get("/report", **RANGE)
    assert south.status == 200 and per_equipment(south) == [("south-daily", "FL-9")]
    admin = web.browser("admin").get("/report", **RANGE)
    assert per_equipment(admin) == [("daily", "FL-1"), ("south-daily", "FL-9")]
    other = web.browser("manager-north").get("/report", site="south", **RANGE)
    assert other.status == 404 and "south" in unescape(other.text) and "FL-9" not in other.text
    assert web.browser("manager-north").get("/report.csv", site="south", **RANGE).status == 404


def test_an_operator_gets_a_403_page(web: Web) -> None:
    browser = web.browser("operator-north")
    for path in ("/report", "/report.csv"):
        answer = browser.get(path, site="north", **RANGE)
        assert answer.status == 403, answer.text
        assert "read_records" in unescape(answer.text) and answer.headers["Content-Type"].startswith("text/html")
    assert 'href="/report"' not in browser.get("/").text  # and the navigation does not offer it


def test_a_range_that_cannot_be_read_is_refused_next_to_its_field(web: Web) -> None:
    browser = web.browser("manager-north")
    backwards = browser.get("/report", **{"from": "2026-03-01", "to": "2026-02-23"})
    assert backwards.status == 400 and 'id="to-error"' in backwards.text
    assert 'aria-describedby="to-error"' in backwards.text and '<section id="summary">' not in backwards.text
    too_long = browser.get("/report", **{"from": "2025-01-01", "to": "2026-03-01"})
    assert too_long.status == 400 and f"at most {MAX_RANGE_DAYS} days" in unescape(too_long.text)
    not_a_day = browser.get("/report", **{"from": "yesterday"})
    assert not_a_day.status == 400 and 'id="from-error"' in not_a_day.text
    unknown = browser.get("/report", checklist="daily")
    assert unknown.status == 400 and "is not a parameter of this page" in unescape(unknown.text)
    assert browser.get("/report.csv", **{"from": "2026-03-01", "to": "2026-02-23"}).status == 400


def test_without_a_range_it_is_the_four_weeks_up_to_today_and_signed_out_it_asks_to_sign_in(web: Web) -> None:
    answer = web.browser("manager-north").get("/report")
    assert answer.status == 200
    assert 'value="2026-02-03"' in answer.text and 'value="2026-03-02"' in answer.text  # NOW: 2 March, Berlin
    signed_out = web.browser().get("/report", site="north")
    assert signed_out.status == 303 and signed_out.location.startswith("/sign-in?next=/report")


def test_the_stylesheet_is_served_to_anyone(web: Web) -> None:
    answer = web.browser().get("/static/report.css")
    assert answer.status == 200 and answer.headers["Content-Type"] == "text/css; charset=utf-8"
    assert ".heatmap-figure" in answer.text and "svg .cell-text.on-dark" in answer.text
