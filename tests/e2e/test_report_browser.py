"""The demo's HTML report in a real browser: headless Chromium (Debian's /usr/bin/chromium, driven
with Playwright) opens the file as file://, with the network off, takes a screenshot, and the
charts must have rendered: every chart's SVG and its bars and cells on the page with a size, the
sections there, no console error, no request but the file itself, and A4 pages when printed.

The report comes from a real run of the demo on the embedded stack. Chromium missing is a
failure, never a skip: `make test` installs it (`make browser`), and the message says how.
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

from missed_checks_local.scenario import Scenario, run_scenario
from missed_checks_ops.report_output import write_report
from tools.report_browser import A4_POINTS, SECTIONS, BrowserUnavailable, chromium_path, render

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.filterwarnings("ignore:No application metrics to publish:UserWarning"),
]


def play_demo() -> dict[str, Any]:
    text = resources.files("missed_checks_local").joinpath("scenarios", "demo.json").read_text("utf-8")
    return run_scenario(Scenario.from_dict(json.loads(text), name="demo"))


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


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

    width, height = png_size(shot)
    assert width == 1000 and height > 2000  # the whole page
    assert rendered.pdf_pages >= 2
    assert rendered.pdf_page_size == pytest.approx(A4_POINTS, abs=2)
