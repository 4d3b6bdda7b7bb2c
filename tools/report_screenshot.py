"""The README's picture: play the demo on the local runtime, write its HTML report, open it in
headless Chromium and keep a screenshot of the page's top (headline figures, weekly charts,
heatmap) as a PNG.

    make screenshot          # = .venv/bin/python tools/report_screenshot.py --png docs/report-demo.png

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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report_browser import BrowserUnavailable, render


def demo_html() -> str:
    from missed_checks_local.scenario import Scenario, run_scenario
    from missed_checks_ops.report_output import write_report

    text = resources.files("missed_checks_local").joinpath("scenarios", "demo.json").read_text("utf-8")
    scenario = Scenario.from_dict(json.loads(text), name="demo")
    result = run_scenario(scenario)
    out = io.StringIO()
    subtitle = f"Scenario 'demo' played on the local runtime (embedded AWS, simulated clock). {scenario.description}"
    write_report(result["report"], "html", out, subtitle=subtitle)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--png", type=Path, default=Path("docs/report-demo.png"))
    parser.add_argument("--html", type=Path, help="also keep the HTML report here")
    parser.add_argument("--pdf", type=Path, help="also keep the printed A4 PDF here")
    parser.add_argument("--width", type=int, default=840)
    parser.add_argument("--until", default="missed-heatmap", help="the section the picture ends with")
    args = parser.parse_args(argv)
    html = args.html or args.png.with_suffix(".html")
    html.parent.mkdir(parents=True, exist_ok=True)
    html.write_text(demo_html(), encoding="utf-8")
    try:
        rendered = render(html, png=args.png, pdf=args.pdf, width=args.width, until_section=args.until)
    finally:
        if args.html is None:
            html.unlink()
    problems = rendered.console_errors + rendered.page_errors + rendered.foreign_requests + rendered.failed_requests
    print(f"{args.png}: {len(rendered.charts)} charts, {rendered.pdf_pages} A4 pages when printed, "
          f"Chromium {rendered.browser_version}" + (f"; problems: {problems}" if problems else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrowserUnavailable as error:
        print(f"report_screenshot: {error}", file=sys.stderr)
        sys.exit(2)
