"""The digest e-mail in a real browser: headless Chromium (the report's browser setup,
``tools.report_browser.open_offline``) opens a weekly digest built from a real run of the demo,
with the network off. It must render as mail clients would get it: no style sheet at all (every
rule inline), no request but the file itself, no console error, every section and row laid out
with a size, the rows worst first from top to bottom, and no wider than the message's 720 px, whatever
the fonts: also with every letter wider than DejaVu's (a new Debian machine's, wider than most), and
in a phone's 375 px window without scrolling sideways.

Chromium missing is a failure, never a skip (``make browser`` installs it).
"""

from __future__ import annotations

import json
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from missed_checks.notifications.digest import Subscription
from missed_checks.notifications.digesting import Digest, build_digest
from missed_checks_local.product.scenario import Scenario, run_scenario
from tools.report_browser import BrowserUnavailable, chromium_path, open_offline

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.filterwarnings("ignore:No application metrics to publish:UserWarning"),
]

BERLIN = ZoneInfo("Europe/Berlin")
# The demo runs 1 March to 6 April 2026; the week before Monday 30 March has misses, late checks,
# a pause and the spring-forward night.
FIRING = datetime(2026, 3, 30, 7, 0, tzinfo=BERLIN)

_MEASURE = """() => {
  const box = (el) => { const r = el.getBoundingClientRect();
                        return {x: r.x, y: r.y, width: r.width, height: r.height}; };
  const sections = {};
  for (const el of document.querySelectorAll('[data-section]')) sections[el.dataset.section] = box(el);
  const rows = [...document.querySelectorAll('tr[data-row]')].map(
    (el) => ({kind: el.dataset.row, id: el.dataset.id, ...box(el)}));
  return {title: document.title, sheets: document.styleSheets.length,
          scripts: document.scripts.length, images: document.images.length, links: document.links.length,
          message: box(document.querySelector('body > table table')),
          width: document.documentElement.scrollWidth, sections, rows};
}"""


def weekly_digest_of_the_demo() -> Digest:
    text = resources.files("missed_checks_local").joinpath("scenarios", "demo.json").read_text("utf-8")
    subscription = Subscription.create("fleet-weekly", address="fleet@example.com", period="weekly", at="07:00",
                                       timezone="Europe/Berlin", day="MO")
    built: list[Digest] = []

    def observe(runtime: Any) -> None:
        from missed_checks.aws.table import ChecklistTable

        built.append(build_digest(ChecklistTable(runtime.stack.table_name), subscription, FIRING))

    run_scenario(Scenario.from_dict(json.loads(text), name="demo"), observe=observe)
    return built[0]


def test_the_weekly_digest_renders_in_chromium_as_a_mail_client_gets_it(tmp_path: Path) -> None:
    try:
        chromium_path()
    except BrowserUnavailable as error:
        pytest.fail(f"the browser test needs Chromium: {error}")
    digest = weekly_digest_of_the_demo()
    page = tmp_path / "digest.html"
    page.write_text(digest.html, encoding="utf-8")
    try:
        with open_offline(page, width=1000) as opened:
            data = opened.page.evaluate(_MEASURE)
            opened.page.screenshot(path=str(tmp_path / "digest.png"), full_page=True)
            # Whatever the reader's fonts: with every letter 3 px wider than DejaVu's (already wider than
            # most), and in a phone's window, the message keeps its width and the page never scrolls sideways.
            opened.page.add_style_tag(content="* { letter-spacing: 3px !important; }")
            wide_letters = opened.page.evaluate(_MEASURE)
            opened.page.set_viewport_size({"width": 375, "height": 800})
            phone = opened.page.evaluate(_MEASURE)
    except BrowserUnavailable as error:
        pytest.fail(f"the browser test needs Chromium: {error}")

    print(f"screenshot: {tmp_path / 'digest.png'}; the digest's HTML: {len(digest.html.encode())} bytes")
    assert opened.console_errors == [] and opened.page_errors == []
    assert opened.foreign_requests == [] and opened.failed_requests == []
    assert (data["sheets"], data["scripts"], data["images"], data["links"]) == (0, 0, 0, 0)
    assert "Weekly digest: Mon 23 Mar – Sun 29 Mar 2026" in data["title"]
    assert set(data["sections"]) == {"summary", "checklists", "equipment", "missed"}
    for name, box in data["sections"].items():
        assert box["width"] > 300 and box["height"] > 20, (name, box)
    assert data["message"]["width"] <= 720 and data["width"] <= 1000
    print(f"message width: {data['message']['width']} px; with wider letters {wide_letters['message']['width']} px; "
          f"in a 375 px window {phone['message']['width']} px (page {phone['width']} px)")
    assert wide_letters["message"]["width"] <= 720 and wide_letters["width"] <= 1000
    assert phone["message"]["width"] <= 375 and phone["width"] <= 375

    rows: dict[str, list[dict[str, Any]]] = {}
    for row in data["rows"]:
        assert row["width"] > 300 and row["height"] > 10, row
        rows.setdefault(row["kind"], []).append(row)
    report = digest.report
    by_checklist = sorted({r.checklist_id for r in report.rows})
    assert sorted(r["id"] for r in rows["checklist"]) == by_checklist and len(by_checklist) >= 2
    # Worst first, as laid out: each row below the one before, in the order the digest ranked them.
    for kind in ("checklist", "equipment", "missed"):
        ys = [r["y"] for r in rows[kind]]
        assert ys == sorted(ys) and len(set(ys)) == len(ys), kind
    assert report.total.missed > 0 and len(rows["missed"]) == min(report.total.missed, 50)
    worst = min((r for r in report.rows if r.compliance is not None), key=lambda r: (r.compliance, -r.missed))
    assert rows["equipment"][0]["id"] == worst.equipment_id
