"""The README's picture: play the demo on the local runtime, write its HTML report, open it in
headless Chromium and keep a screenshot of the page's top (headline figures, weekly charts,
heatmap) as a PNG.

    make screenshot          # = .venv/bin/python tools/report_screenshot.py --png docs/report-demo.png

The browser test (``tests/e2e/test_report_browser.py``) takes the same picture of the report it
has just checked, with :func:`screenshot`, and writes it to ``docs/report-demo.png`` whenever it
differs, so the picture shows the page as it is now; this command takes it without the test.

Needs the build (`make artifacts`) and Chromium (`make browser`). Also writes the full HTML and
an A4 PDF next to the PNG when asked (--html, --pdf).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: tools.report_browser, the module the tests import

from tools.report_browser import BrowserUnavailable, Rendered, render  # noqa: E402

if TYPE_CHECKING:
    from missed_checks.reporting.fleet_report import Report

PICTURE = ROOT / "docs" / "report-demo.png"
"""Where the README (and docs/operations.md) show it."""
WIDTH = 840
"""The window's width, in pixels."""
UNTIL = "missed-heatmap"
"""The section the picture ends with."""


def _demo_scenario() -> dict[str, Any]:
    text = resources.files("missed_checks_local").joinpath("scenarios", "demo.json").read_text("utf-8")
    scenario: dict[str, Any] = json.loads(text)
    return scenario


def subtitle() -> str:
    """The picture's subtitle: what the report is of."""
    description = _demo_scenario().get("description", "")
    return f"Scenario 'demo' played on the local runtime (embedded AWS, simulated clock). {description}".rstrip()


def demo_report() -> Report:
    """The demo played on the local runtime (embedded AWS, simulated clock): its report."""
    from missed_checks_local.product.scenario import Scenario, run_scenario

    report: Report = run_scenario(Scenario.from_dict(_demo_scenario(), name="demo"))["report"]
    return report


def screenshot(report: Report, png: Path, *, html: Path, pdf: Path | None = None, width: int = WIDTH,
               until: str = UNTIL) -> Rendered:
    """The picture of ``report`` (the demo's): its HTML page written to ``html``, opened in headless
    Chromium ``width`` pixels wide, screenshot from its top to the end of the section ``until``
    into ``png``; ``pdf``: where to keep it printed on A4."""
    from missed_checks_ops.report_output import write_report

    out = io.StringIO()
    write_report(report, "html", out, subtitle=subtitle())
    html.parent.mkdir(parents=True, exist_ok=True)
    html.write_text(out.getvalue(), encoding="utf-8")
    return render(html, png=png, pdf=pdf, width=width, until_section=until)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--png", type=Path, default=Path("docs/report-demo.png"))
    parser.add_argument("--html", type=Path, help="also keep the HTML report here")
    parser.add_argument("--pdf", type=Path, help="also keep the printed A4 PDF here")
    parser.add_argument("--width", type=int, default=WIDTH)
    parser.add_argument("--until", default=UNTIL, help="the section the picture ends with")
    args = parser.parse_args(argv)
    html = args.html or args.png.with_suffix(".html")
    try:
        rendered = screenshot(demo_report(), args.png, html=html, pdf=args.pdf, width=args.width, until=args.until)
    finally:
        if args.html is None:
            html.unlink(missing_ok=True)
    problems = rendered.console_errors + rendered.page_errors + rendered.foreign_requests + rendered.failed_requests
    print(f"{args.png}: {len(rendered.charts)} charts, {rendered.pdf_pages} A4 pages when printed, "
          f"Chromium {rendered.browser_version}" + (f"; problems: {problems}" if problems else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    from missed_checks_local.product.application import install

    install()  # as the local commands do: patch 5i, and the product registered with the emulator
    try:
        sys.exit(main())
    except BrowserUnavailable as error:
        print(f"report_screenshot: {error}", file=sys.stderr)
        sys.exit(2)
