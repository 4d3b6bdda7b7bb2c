"""The demo's HTML report in a real browser: headless Chromium (Debian's /usr/bin/chromium, driven
with Playwright) opens the file as file://, with the network off, takes a screenshot, and the
charts must have rendered: every chart's SVG and its bars and cells on the page with a size, the
sections there, no console error, no request but the file itself, and A4 pages when printed.

The page fits its window at every width from a phone's up (375, 768, 1100, 1400, 1920 px): the
page never scrolls sideways, and every table lies in its section's box; a table that cannot fit a
phone even wrapped scrolls inside its own box there, never at wider windows.

The report comes from a real run of the demo on the embedded stack. Chromium missing is a
failure, never a skip: `make test` installs it (`make browser`), and the message says how. The
test also takes the README's picture of that report (``tools/report_screenshot.py``'s) and writes
it to docs/report-demo.png when it differs, so the picture always shows the page as it is.
"""

from __future__ import annotations

import io
import json
import struct
import time
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from missed_checks_local.product.scenario import Scenario, run_scenario
from missed_checks_ops.report_output import write_report
from tools.report_browser import A4_POINTS, SECTIONS, BrowserUnavailable, chromium_path, open_offline, render
from tools.report_screenshot import PICTURE, screenshot

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.duration(22),  # Chromium: 22 s and 21 s in make unit (docs/measurements.md, 2026-11-25)
    pytest.mark.filterwarnings("ignore:No application metrics to publish:UserWarning"),
]


def play_demo() -> dict[str, Any]:
    text = resources.files("missed_checks_local").joinpath("scenarios", "demo.json").read_text("utf-8")
    return run_scenario(Scenario.from_dict(json.loads(text), name="demo"))


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


WIDTHS = (375, 768, 1100, 1400, 1920)
"""A phone, a tablet upright, and desktop windows: the page fits each."""
PHONE = 375
"""Below the tablet: a table that cannot fit even wrapped may scroll inside its own box."""

# Per width: the page's scroll width; per table, its box, its section's and (when it has one) its
# scrolling wrapper's; and every other element of a section that reaches out of the section's box.
_FIT = """() => {
  const box = (el) => { const r = el.getBoundingClientRect(); return {left: r.left, right: r.right, width: r.width}; };
  const inside = (a, b) => a.left >= b.left - 0.5 && a.right <= b.right + 0.5;
  const tables = [], out = [];
  for (const section of document.querySelectorAll('section')) {
    const edge = box(section);
    for (const el of section.querySelectorAll('*')) {
      if (el.closest('.table-scroll') && !el.classList.contains('table-scroll')) continue;
      const b = box(el);
      if (b.width > 0 && !inside(b, edge)) out.push(`${section.id}: <${el.tagName.toLowerCase()} `
        + `class="${el.getAttribute('class') || ''}"> ${b.left.toFixed(1)}-${b.right.toFixed(1)} px`);
    }
    for (const table of section.querySelectorAll('table')) {
      const wrapper = table.closest('.table-scroll');
      tables.push({section: section.id, id: table.id, table: box(table), box: edge,
                   wrapper: wrapper && {...box(wrapper), scrolls: wrapper.scrollWidth > wrapper.clientWidth,
                                        overflow: getComputedStyle(wrapper).overflowX}});
    }
  }
  return {window: window.innerWidth, page: document.documentElement.scrollWidth,
          body: document.body.scrollWidth, tables, out};
}"""


def assert_fits_every_width(page: Path) -> dict[int, list[str]]:
    """``page`` opened at each of :data:`WIDTHS`: it never scrolls sideways, no element of a section
    reaches out of it, and every table is in its section's box, or (on a phone only) scrolls in a
    wrapper that is. Returns, per width, the tables that scroll in their wrappers."""
    measured: dict[int, dict[str, Any]] = {}
    with open_offline(page, width=WIDTHS[0]) as opened:
        for width in WIDTHS:
            opened.page.set_viewport_size({"width": width, "height": 1200})
            measured[width] = opened.page.evaluate(_FIT)
        assert opened.console_errors == [] and opened.page_errors == []
    scrolling: dict[int, list[str]] = {}
    for width, data in measured.items():
        assert data["window"] == width
        assert data["page"] <= width and data["body"] <= width, (width, data["page"], data["body"])
        assert data["out"] == [], (width, data["out"])
        assert data["tables"], width
        for table in data["tables"]:
            name = f"{width} px, {table['section']} {table['id']}".rstrip()
            wrapper, edge, box = table["wrapper"], table["box"], table["table"]
            assert wrapper is not None, f"{name}: a table outside a .table-scroll wrapper"
            assert edge["left"] - 0.5 <= wrapper["left"] and wrapper["right"] <= edge["right"] + 0.5, (name, table)
            if wrapper["scrolls"]:  # wider than its section: only on a phone, and only inside its wrapper
                assert width <= PHONE and wrapper["overflow"] == "auto", (name, table)
                scrolling.setdefault(width, []).append(table["section"])
            else:
                assert edge["left"] - 0.5 <= box["left"] and box["right"] <= edge["right"] + 0.5, (name, table)
    return scrolling


def test_the_demo_report_renders_in_chromium(tmp_path: Path) -> None:
    try:  # at once, before the demo's run
        chromium_path()
    except BrowserUnavailable as error:
        pytest.fail(f"the browser test needs Chromium: {error}")
    report = play_demo()["report"]
    out = io.StringIO()
    write_report(report, "html", out, subtitle="the demo, in a browser test")
    page = tmp_path / "demo-report.html"
    page.write_text(out.getvalue(), encoding="utf-8")
    shot = tmp_path / "demo-report.png"

    started = time.monotonic()
    try:
        rendered = render(page, png=shot, pdf=tmp_path / "demo-report.pdf")
    except BrowserUnavailable as error:
        pytest.fail(f"the browser test needs Chromium: {error}")
    elapsed = time.monotonic() - started
    print(f"Chromium {rendered.browser_version}: opened, measured, screenshot and printed in {elapsed:.1f} s")

    assert rendered.console_errors == [] and rendered.page_errors == []
    assert rendered.foreign_requests == [] and rendered.failed_requests == []  # nothing but the file itself
    assert "fleet report" in rendered.title
    for section in SECTIONS:
        box = rendered.sections[section]
        assert box is not None and box.width > 0 and box.height > 0, section

    checklists = sorted({row.checklist_id for row in report.rows})
    assert len(checklists) >= 5
    expected = {"weekly-fleet", *(f"weekly-{c}" for c in checklists), "heatmap"}
    assert set(rendered.charts) == expected
    for name, box in [*rendered.charts.items(), *rendered.print_charts.items()]:
        assert box.width > 300 and box.height > 50, (name, box)
    for name in expected - {"heatmap"}:
        marks = rendered.marks[name]
        assert marks, f"{name}: no bar drawn"
        assert all(m.width > 0 and m.height > 0 for m in marks), name
        chart = rendered.charts[name]
        assert all(chart.y <= m.y and m.y + m.height <= chart.y + chart.height + 0.5 for m in marks), name
    weeks = len({m.x for m in rendered.marks["heatmap"]})
    equipment = len({o.equipment_id for o in report.outcomes if o.outcome == "missed"})
    assert len(rendered.marks["heatmap"]) == weeks * equipment >= 5 * 5
    assert all(m.width > 0 and m.height > 0 for m in rendered.marks["heatmap"])
    # every cell says what its week was (#23): the demo has misses, clean weeks and a unit unassigned
    states = rendered.cell_states["heatmap"]
    assert len(states) == len(rendered.marks["heatmap"]) and {"missed", "clean"} <= set(states)
    assert set(states) <= {"missed", "clean", "excused", "dismissed", "pending", "paused", "not_assigned", "not_due"}

    width, height = png_size(shot)
    assert width == 1000 and height > 2000  # the whole page
    assert rendered.pdf_pages >= 2
    assert rendered.pdf_page_size == pytest.approx(A4_POINTS, abs=2)

    scrolling = assert_fits_every_width(page)
    print(f"fits {', '.join(map(str, WIDTHS))} px; scrolling in their own box on a phone: {scrolling}")
    # on a phone the tables of many columns may scroll in their box; the short lists wrap instead
    assert set(scrolling.get(PHONE, ())) <= set(SECTIONS) - {"all-missed", "periods"}

    # The README's picture (tools/report_screenshot.py's), of the page just checked: written when it differs.
    picture = tmp_path / "report-demo.png"
    taken = screenshot(report, picture, html=tmp_path / "report-demo.html")
    assert taken.console_errors == [] and taken.page_errors == [] and taken.foreign_requests == []
    assert png_size(picture)[0] == 840
    if not PICTURE.is_file() or PICTURE.read_bytes() != picture.read_bytes():
        PICTURE.write_bytes(picture.read_bytes())
        print(f"{PICTURE} was not the page as it is now: rewritten ({png_size(picture)}), commit it with the change")


# The heatmap of #23's must-show run, worst first (missed, then the longest run, then the id), one cell per
# week (W13, W14): what each week was, never a blank that could mean anything.
REAL_MISSES_CELLS = {
    "FL-3": ["missed", "excused"],  # 4 of 4 missed, then sold (out of service)
    "FL-4": ["missed", "not_assigned"],  # 4 of 4 missed, then unassigned
    "FL-2": ["missed", "missed"],  # 1 of 5, then 3 of 4
    "FL-1": ["missed", "clean"],  # 2 of 8 over its two checklists, then 0 of 2 (the rest excused)
    "NY-1": ["missed", "clean"],  # 1 of 6, then 0 of 3 (one pending)
}


def test_the_new_cells_render_in_chromium(tmp_path: Path, real_misses: dict[str, Any]) -> None:
    """#23: each heatmap cell says what its week was, with its denominator; recorded-late, excused and
    periods sections; open runs say how long undone, or that the unit was unassigned or went out of
    service since: never "not done since"."""
    out = io.StringIO()
    write_report(real_misses["report"], "html", out, subtitle="#23: only real misses, in a browser test")
    html = out.getvalue()
    page = tmp_path / "real-misses.html"
    page.write_text(html, encoding="utf-8")
    try:
        rendered = render(page, pdf=tmp_path / "real-misses.pdf")
    except BrowserUnavailable as error:
        pytest.fail(f"the browser test needs Chromium: {error}")
    assert rendered.console_errors == [] and rendered.page_errors == [] and rendered.foreign_requests == []
    for section in SECTIONS:
        box = rendered.sections[section]
        assert box is not None and box.width > 0 and box.height > 0, section
    cells = rendered.marks["heatmap"]
    assert rendered.cell_states["heatmap"] == [state for states in REAL_MISSES_CELLS.values() for state in states]
    assert len(cells) == 10 and all(m.width > 0 and m.height > 0 for m in cells)  # drawn, whatever the state
    for label in ("4/4", "1/5", "3/4", "2/8", "0/2", "1/6", "0/3", "exc.", "n/a"):  # each cell its denominator
        assert f">{label}</text>" in html, label
    assert 'data-open="out_of_service"' in html and 'data-open="unassigned"' in html and 'data-open="undone"' in html
    assert "not done since" not in html
    assert "gearbox in the workshop" in html and "sold, awaiting pickup" in html
    assert rendered.print_charts["heatmap"].width > 300
    assert_fits_every_width(page)  # with the recorded-late, excused and periods tables filled
