"""Open an HTML report in headless Chromium (Debian's, /usr/bin/chromium), screenshot it, and say
what rendered: the sections, each chart's SVG elements with their sizes, console errors, requests
other than the file itself, and the pages it prints to.

    .venv/bin/python tools/report_browser.py report.html [--png shot.png] [--pdf shot.pdf]

Driven with Playwright's Python package against the system Chromium (``executable_path``; nothing
is downloaded), with a fresh profile, the fonts of ``browser-fonts.conf`` (DejaVu) and the flags that
keep a browser quiet on a closed network.
``make browser`` installs Chromium when it is missing; ``MISSED_CHECKS_CHROMIUM`` names another.
Used by ``tests/e2e/test_report_browser.py`` and ``tools/report_screenshot.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
FONTS = Path(__file__).resolve().parent / "browser-fonts.conf"
"""The fonts Chromium renders with here (fontconfig's FONTCONFIG_FILE): Debian's DejaVu only, so a
page is measured with the same glyphs on every machine, whatever fonts it has besides."""
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")
SECTIONS = ("summary", "compliance-by-week", "missed-heatmap", "repeat-offenders", "late-checks", "dismissed-checks",
            "recorded-late", "excused-checks", "all-missed", "periods", "per-equipment")
A4_POINTS = (595.92, 842.88)


class BrowserUnavailable(RuntimeError):
    """Chromium (or Playwright) is not there: the message says how to get it."""


def chromium_path() -> str:
    path = os.environ.get("MISSED_CHECKS_CHROMIUM", CHROMIUM)
    if not (Path(path).is_file() and os.access(path, os.X_OK)):
        raise BrowserUnavailable(
            f"no Chromium at {path}: run `make browser` (it runs `apt-get install chromium` as root or with "
            "passwordless sudo), or install Debian's chromium package yourself, or set MISSED_CHECKS_CHROMIUM "
            "to a Chromium/Chrome executable")
    return path


@dataclass
class Box:
    x: float
    y: float
    width: float
    height: float


@dataclass
class Rendered:
    """What the browser made of the page."""

    title: str
    sections: dict[str, Box | None]
    charts: dict[str, Box]
    """``data-chart`` -> the chart's SVG box."""
    marks: dict[str, list[Box]]
    """``data-chart`` -> the boxes of its bars' segments (weekly charts) or cells (heatmap)."""
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    foreign_requests: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    pdf_pages: int = 0
    pdf_page_size: tuple[float, float] | None = None
    print_charts: dict[str, Box] = field(default_factory=dict)
    """The charts' boxes with print media emulated."""
    browser_version: str = ""
    cell_states: dict[str, list[str]] = field(default_factory=dict)
    """``data-chart`` -> the ``data-state`` of its heatmap cells, in the order of ``marks`` (#23)."""


_MEASURE = """() => {
  const box = (el) => { if (!el) return null; const r = el.getBoundingClientRect();
                        return {x: r.x, y: r.y, width: r.width, height: r.height}; };
  const charts = {}, marks = {}, states = {};
  for (const svg of document.querySelectorAll('svg.chart')) {
    const key = svg.dataset.chart;
    charts[key] = box(svg);
    marks[key] = [...svg.querySelectorAll('rect.segment, rect.cell')].map(box);
    states[key] = [...svg.querySelectorAll('rect.cell')].map((el) => el.dataset.state || '');
  }
  const sections = {};
  for (const id of SECTIONS) sections[id] = box(document.getElementById(id));
  return {title: document.title, charts, marks, sections, states};
}"""


def _boxes(data: dict[str, Any] | None) -> Box | None:
    return None if data is None else Box(**data)


@dataclass
class OpenPage:
    """A page opened by :func:`open_offline`, with what it logged and asked for so far."""

    page: Any
    url: str
    browser_version: str
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    foreign_requests: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)


@contextmanager
def open_offline(html: Path, width: int = 1000) -> Iterator[OpenPage]:
    """``html`` (a file) opened in headless Chromium with the network off and a fresh profile,
    recording console errors, page errors and every request but the file itself."""
    executable = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as error:  # pragma: no cover - a dev dependency
        raise BrowserUnavailable(f"Playwright is not installed ({error}): run `make test` (pip install -e '.[dev]')") \
            from None
    url = html.resolve().as_uri()
    with tempfile.TemporaryDirectory(prefix="missed-checks-chromium-") as profile, sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=executable, headless=True, args=list(FLAGS),
            env={**os.environ, "FONTCONFIG_FILE": str(FONTS), "XDG_CACHE_HOME": str(Path(profile) / "cache")},
            viewport={"width": width, "height": 1200}, device_scale_factor=1, offline=True)
        try:
            page = context.new_page()
            opened = OpenPage(page, url, context.browser.version if context.browser else "")
            page.on("console", lambda m: opened.console_errors.append(f"{m.type}: {m.text}") if m.type in (
                "error", "warning") else None)
            page.on("pageerror", lambda e: opened.page_errors.append(str(e)))
            page.on("request", lambda r: opened.foreign_requests.append(r.url) if r.url != url and not r.url.startswith(
                "data:") else None)
            page.on("requestfailed", lambda r: opened.failed_requests.append(f"{r.url}: {r.failure}"))
            page.goto(url, wait_until="load")
            yield opened
        finally:
            context.close()


def render(html: Path, *, png: Path | None = None, pdf: Path | None = None, width: int = 1000,
           until_section: str | None = None) -> Rendered:
    """Open ``html`` (a file) in headless Chromium and measure it; ``png``: a screenshot of the
    whole page, or from its top to the end of the section ``until_section``; ``pdf``: where to keep
    the printed PDF (A4)."""
    measure = _MEASURE.replace("SECTIONS", json.dumps(list(SECTIONS)))
    with open_offline(html, width) as opened:
        page = opened.page
        data = page.evaluate(measure)
        if png is not None:
            png.parent.mkdir(parents=True, exist_ok=True)
            section = data["sections"].get(until_section) if until_section else None
            if section is None:
                page.screenshot(path=str(png), full_page=True)
            else:
                height = section["y"] + section["height"] + 24
                page.screenshot(path=str(png), full_page=True,
                                clip={"x": 0, "y": 0, "width": width, "height": height})
        page.emulate_media(media="print")
        printed = page.evaluate(measure)
        pdf_bytes = page.pdf(prefer_css_page_size=True, print_background=True)
        if pdf is not None:
            pdf.write_bytes(pdf_bytes)
    sizes = re.findall(rb"/MediaBox\s*\[\s*0 0 ([\d.]+) ([\d.]+)\s*\]", pdf_bytes)
    return Rendered(
        title=data["title"],
        sections={key: _boxes(value) for key, value in data["sections"].items()},
        charts={key: Box(**value) for key, value in data["charts"].items()},
        marks={key: [Box(**b) for b in value] for key, value in data["marks"].items()},
        console_errors=opened.console_errors, page_errors=opened.page_errors,
        foreign_requests=opened.foreign_requests, failed_requests=opened.failed_requests,
        pdf_pages=len(re.findall(rb"/Type\s*/Page[^s]", pdf_bytes)),
        pdf_page_size=(float(sizes[0][0]), float(sizes[0][1])) if sizes else None,
        print_charts={key: Box(**value) for key, value in printed["charts"].items()},
        browser_version=opened.browser_version,
        cell_states=data.get("states", {}),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("html", type=Path)
    parser.add_argument("--png", type=Path)
    parser.add_argument("--pdf", type=Path)
    parser.add_argument("--width", type=int, default=1000, help="the window's width in pixels (default 1000)")
    parser.add_argument("--until", metavar="SECTION", help="screenshot only down to this section's end (an id)")
    args = parser.parse_args(argv)
    try:
        rendered = render(args.html, png=args.png, pdf=args.pdf, width=args.width, until_section=args.until)
    except BrowserUnavailable as error:
        print(f"report_browser: {error}", file=sys.stderr)
        return 2
    print(json.dumps(asdict(rendered), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
