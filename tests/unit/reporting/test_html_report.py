"""The HTML report's page, read back with an HTML parser: self-contained, print rules, the sections,
bars drawn to scale, times in each checklist's zone, text escaped. (How a browser renders it:
tests/e2e/test_report_browser.py.)"""

from __future__ import annotations

import io
import tomllib
from datetime import UTC, datetime, timedelta
from fnmatch import fnmatch
from html.parser import HTMLParser
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

import missed_checks
import missed_checks_ops
from missed_checks.reporting.fleet_report import ChecklistInfo, Report
from missed_checks.reporting.report import Dismissal, ReportRow, WindowOutcome, checklist_report, why_no_compliance
from missed_checks.timefmt import to_utc_iso
from missed_checks_ops.html_report import render_html
from missed_checks_ops.report_output import write_report

ROOT = Path(__file__).resolve().parents[3]
BERLIN, NEW_YORK = ZoneInfo("Europe/Berlin"), ZoneInfo("America/New_York")


class Page(HTMLParser):
    """Every element with its attributes and the text directly inside it."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self.style = ""
        self._in_style = False
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.style += data
        self.text.append(data)

    def find(self, tag: str, **attrs: str) -> list[dict[str, str]]:
        """Elements ``tag`` whose attributes have these values."""
        return [a for t, a in self.elements if t == tag and all(a.get(k) == v for k, v in attrs.items())]

    @property
    def words(self) -> str:
        return " ".join(" ".join(self.text).split())


def window(checklist: str, equipment: str, start: datetime, outcome: str, *, hours: int = 8, late_min: int = 20,
           dismissal: Dismissal | None = None) -> WindowOutcome:
    end = start + timedelta(hours=hours)
    done = {"on_time": start + timedelta(hours=1), "late": end + timedelta(minutes=late_min)}.get(outcome)
    return WindowOutcome(checklist, equipment, to_utc_iso(start), to_utc_iso(end), outcome,
                         None if done is None else to_utc_iso(done), dismissal)


MONDAY = datetime(2026, 3, 23, 6, tzinfo=BERLIN)  # Berlin moves to summer time on Sunday the 29th
EXCUSE = Dismissal("<script>alert('workshop')</script> & co", "j.doe", "2026-03-25T08:00:00Z")


def report(heatmap_outcomes: int = 0) -> Report:
    outcomes = [
        # forklift, week 13: a, 3 on time, 1 late, 1 dismissed; b, missed Mon-Wed, then on time
        *(window("forklift", "a", MONDAY + timedelta(days=d), "on_time") for d in range(3)),
        window("forklift", "a", MONDAY + timedelta(days=3), "late"),
        window("forklift", "a", MONDAY + timedelta(days=4), "dismissed", dismissal=EXCUSE),
        *(window("forklift", "b", MONDAY + timedelta(days=d), "missed") for d in range(3)),
        window("forklift", "b", MONDAY + timedelta(days=3), "on_time"),
        # forklift, week 14 (summer time): a missed once
        window("forklift", "a", MONDAY + timedelta(days=7), "missed"),
        # pallet (New York), week 13: late
        window("pallet", "p", datetime(2026, 3, 23, 8, tzinfo=NEW_YORK), "late", hours=9, late_min=75),
    ]
    rows = [ReportRow("forklift", "a", expected=6, on_time=3, late=1, missed=1, dismissed=1),
            ReportRow("forklift", "b", expected=4, on_time=1, missed=3),
            ReportRow("pallet", "p", expected=1, late=1)]
    return Report(datetime(2026, 3, 23, tzinfo=UTC), datetime(2026, 4, 6, tzinfo=UTC),
                  datetime(2026, 4, 6, tzinfo=UTC), rows, ["a warning & more"],
                  {"forklift": ChecklistInfo("Forklift pre-use check", "Europe/Berlin"),
                   "pallet": ChecklistInfo("Pallet jacks", "America/New_York")},
                  outcomes)


def test_the_page_is_self_contained_and_prints_on_a4() -> None:
    html = render_html(report())
    page = Page(html)
    assert html.startswith("<!DOCTYPE html>")
    tags = {tag for tag, _ in page.elements}
    assert not tags & {"script", "link", "img", "iframe", "object", "embed"}
    assert all(not a.get("src") for _, a in page.elements)
    assert all(a["href"].startswith("#") for _, a in page.elements if "href" in a)
    assert "http" not in page.style and "@import" not in page.style
    assert "@page { size: A4" in page.style and "@media print" in page.style
    for section in ("summary", "compliance-by-week", "missed-heatmap", "repeat-offenders", "late-checks",
                    "dismissed-checks", "recorded-late", "excused-checks", "all-missed", "periods", "per-equipment"):
        assert page.find("section", id=section), section


def test_headline_and_weekly_bars_are_drawn_to_scale() -> None:
    page = Page(render_html(report()))
    figures = {a["data-figure"] for a in page.find("div") if "data-figure" in a}
    assert figures == {"expected", "on_time", "late", "missed", "recorded_late", "dismissed", "excused", "compliance"}
    assert "Compliance 60.0 %" in page.words  # (4 on time + 2 late) / (11 expected - 1 dismissed)
    charts = [a["data-chart"] for a in page.find("svg") if "chart" in a.get("class", "").split()]
    assert charts == ["weekly-fleet", "weekly-forklift", "weekly-pallet", "heatmap"]  # "gone" has no rows here
    segments = [a for a in page.find("rect") if "segment" in a.get("class", "").split()]
    heights = [(a["class"].split()[1], float(a["height"])) for a in segments]
    # forklift week 13: 4 on time, 1 late, 3 missed of 8 judged (the dismissed one left out); plot 96 high
    assert ("on_time", 48.0) in heights and ("late", 12.0) in heights and ("missed", 36.0) in heights
    assert "62%" in page.words and "0%" in page.words  # week 13: 5/8; week 14: 0/1


def test_times_are_in_each_checklists_zone_and_text_is_escaped() -> None:
    html = render_html(report())
    words = Page(html).words
    assert "Mon 2026-03-23 06:00 – 14:00 CET" in words  # 05:00Z in Berlin, winter
    assert "Mon 2026-03-30 06:00 – 14:00 CEST" in words  # 04:00Z, summer
    assert "Mon 2026-03-23 08:00 – 17:00 EDT 18:15 EDT 1 h 15 min" in words  # New York: summer time already
    assert "14:20 CET" in words and "20 min" in words  # the late check and how late
    assert "<script>alert" not in html and "&lt;script&gt;alert(&#39;workshop&#39;)&lt;/script&gt; &amp; co" in html
    assert "j.doe" in words and "Wed 2026-03-25 09:00 CET" in words  # dismissed by, at (Berlin)
    assert "Warning: a warning & more" in words


def test_repeat_offenders_and_heatmap_order() -> None:
    page = Page(render_html(report(), heatmap_rows=1))
    words = page.words
    assert "b forklift 3 Mon 2026-03-23 06:00 CET Wed 2026-03-25 06:00 CET done Thu 2026-03-26" in words
    rows = [a["data-equipment"] for a in page.find("g") if "data-equipment" in a]
    assert rows == ["b"]  # the worst of two: b missed 3, a missed 1
    assert "The 1 worst of 2 are drawn" in words


def test_an_empty_period_says_so() -> None:
    empty = Report(datetime(2026, 3, 2, tzinfo=UTC), datetime(2026, 3, 9, tzinfo=UTC), datetime(2026, 3, 9, tzinfo=UTC),
                   [], outcomes=[])
    words = Page(render_html(empty)).words
    assert "No missed checks in this period." in words and "No late checks in this period." in words
    assert "Compliance –" in words


def test_no_compliance_figure_is_said_in_words_never_as_a_sum_of_zeros() -> None:
    """An empty period (or one where no window counts) printed "0 + 0 of 0 + 0 + 0 + 0 = –": the
    HTML report, its charts' captions and the table say why there is no figure instead."""
    start, end = datetime(2026, 3, 2, tzinfo=UTC), datetime(2026, 3, 9, tzinfo=UTC)
    empty = Report(start, end, end, [], outcomes=[])
    row = ReportRow("forklift", "a", expected=1, dismissed=1, excused=1, pending=2)
    nothing_judged = Report(start, end, end, [row], checklists={"forklift": ChecklistInfo("F", "Europe/Berlin")},
                            outcomes=[])
    for report_, reason in (
            (empty, "No windows were expected in this period"),
            (nothing_judged, "No window in this period counts toward compliance (1 dismissed, 1 out of service, "
                             "2 not judged yet)")):
        words = Page(render_html(report_)).words
        assert f"{reason}, so there is no compliance figure." in words
        assert "0 + 0 of" not in words and "= –" not in words and "(0 of 0)" not in words
        table = io.StringIO()
        write_report(report_, "table", table)
        assert f"No compliance figure: {reason[0].lower()}{reason[1:]}." in " ".join(table.getvalue().split())
    assert "period: nothing judged" in Page(render_html(nothing_judged)).words  # the checklists' charts too
    # with a figure, the formula as before
    assert "4 + 2 of 4 + 2 + 4 + 0 = 60.0 %." in Page(render_html(report())).words
    assert why_no_compliance(report().total) is None


def test_it_needs_the_window_outcomes() -> None:
    without = report()
    without.outcomes = None
    with pytest.raises(ValueError, match="detail=True"):
        render_html(without)


def test_outcomes_from_the_domain_render() -> None:
    # End to end through the domain classification, DST week included.
    from missed_checks.equipment.assignments import Assignment

    starts = [MONDAY + timedelta(days=d) for d in range(10)]
    windows = [type("Win", (), {"start": s, "end": s + timedelta(hours=8), "evaluate_at": s + timedelta(hours=9)})()
               for s in starts]
    outcomes: list[WindowOutcome] = []
    rows = checklist_report("forklift", windows, [Assignment("forklift", "a", MONDAY - timedelta(days=1))],
                            {"a": [to_utc_iso(starts[0] + timedelta(hours=1))]}, [], now=MONDAY + timedelta(days=20),
                            outcomes=outcomes)
    # no missed-check records were written: only the on-time window counts
    assert [(o.outcome, o.window_start) for o in outcomes] == [("on_time", "2026-03-23T05:00:00Z")]
    html = render_html(Report(MONDAY, MONDAY + timedelta(days=10), MONDAY + timedelta(days=20), rows,
                              checklists={"forklift": ChecklistInfo("F", "Europe/Berlin")}, outcomes=outcomes))
    assert "100%" in Page(html).words


def test_the_template_ships_as_package_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["missed_checks_ops"]
    package = Path(missed_checks_ops.__file__).parent
    templates = [p.relative_to(package).as_posix() for p in (package / "templates").rglob("*") if p.is_file()]
    assert "templates/report.html.j2" in templates
    assert all(any(fnmatch(t, pattern) for pattern in patterns) for t in templates), (templates, patterns)
    # the sections and their stylesheet are the product's (#32: the web app's report page shows them too)
    product = Path(missed_checks.__file__).parent
    patterns = config["tool"]["setuptools"]["package-data"]["missed_checks"]
    shared = [p.relative_to(product).as_posix() for p in (product / "reporting" / "templates").rglob("*")
              if p.is_file()]
    assert {"reporting/templates/report_sections.html.j2", "reporting/templates/report.css"} <= set(shared)
    assert all(any(fnmatch(t, pattern) for pattern in patterns) for t in shared), (shared, patterns)
    dependencies = config["project"]["dependencies"]
    assert any(d.lower().startswith("jinja2") for d in dependencies)
    layer = (ROOT / "src" / "layer-requirements.txt").read_text(encoding="utf-8").lower()
    assert "jinja2==" in layer  # the product renders the sections in the web app's Lambda (#32)


def test_the_report_command_offers_html_with_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    from missed_checks_ops.cli.main import main

    with pytest.raises(SystemExit) as exited:
        main(["report", "--help"])
    assert exited.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "{table,json,csv,html}" in text and "--output FILE" in text
    assert "missed-checks report --from 2026-03-01 --to 2026-04-01 --tz Europe/Berlin --format html --output" in text


def cells_report() -> Report:
    """Four weeks (13-16, Berlin) in which each heatmap cell means something else:

    * b (forklift): week 13 missed Mon-Wed, done Thu (3/4); week 14 out of service (excused); week 15
      unassigned (not assigned); week 16 missed Monday, still undone at report time (an open run);
    * c (pallet, paused since week 15): week 13 missed 1 of 2; week 14 done once and once recorded
      after judging (0 missed of 2 judged: clean); weeks 15-16 paused;
    * d (forklift): missed Mon-Wed of week 13, then unassigned: its open run says so, never "not done";
    * e (monthly): missed in week 13, nothing due after (not due).
    """
    from missed_checks.equipment.assignments import Assignment
    from missed_checks.reporting.report import OutOfService

    day = timedelta(days=1)
    service = OutOfService("b", "2026-03-29T22:00:00Z", "2026-04-05T22:00:00Z", "workshop: hydraulics")
    tuesday = MONDAY + 8 * day
    recorded = WindowOutcome("pallet", "c", to_utc_iso(tuesday), to_utc_iso(tuesday + timedelta(hours=8)),
                             "recorded_late", to_utc_iso(tuesday + timedelta(hours=2)),
                             closes_at=to_utc_iso(tuesday + timedelta(hours=9)),
                             judged_at=to_utc_iso(tuesday + timedelta(hours=9, minutes=1)),
                             recorded_at=to_utc_iso(tuesday + timedelta(days=1, hours=3)))
    outcomes = [
        *(window("forklift", "b", MONDAY + d * day, "missed") for d in range(3)),
        window("forklift", "b", MONDAY + 3 * day, "on_time"),
        *(WindowOutcome("forklift", "b", to_utc_iso(MONDAY + d * day),
                        to_utc_iso(MONDAY + d * day + timedelta(hours=8)), "excused", out_of_service=service)
          for d in range(7, 12)),
        window("forklift", "b", MONDAY + 21 * day, "missed"),
        window("pallet", "c", MONDAY, "missed"), window("pallet", "c", MONDAY + day, "on_time"),
        window("pallet", "c", MONDAY + 7 * day, "on_time"), recorded,
        *(window("forklift", "d", MONDAY + d * day, "missed") for d in range(3)),
        window("monthly", "e", MONDAY, "missed"),
    ]
    rows = [ReportRow("forklift", "b", expected=5, on_time=1, missed=4, excused=5),
            ReportRow("forklift", "d", expected=3, missed=3),
            ReportRow("monthly", "e", expected=1, missed=1),
            ReportRow("pallet", "c", expected=4, on_time=2, missed=1, recorded_late=1)]
    start = datetime(2026, 3, 23, tzinfo=BERLIN)
    assignments = {
        ("forklift", "b"): Assignment("forklift", "b", start + 21 * day, earlier_periods=((start, start + 14 * day),)),
        ("forklift", "d"): Assignment("forklift", "d", start, start + 3 * day),
        ("monthly", "e"): Assignment("monthly", "e", start),
        ("pallet", "c"): Assignment("pallet", "c", start),
    }
    report = Report(start.astimezone(UTC), (start + 28 * day).astimezone(UTC), (start + 26 * day).astimezone(UTC),
                    rows, [], {"forklift": ChecklistInfo("Forklift", "Europe/Berlin"),
                               "monthly": ChecklistInfo("Monthly", "Europe/Berlin"),
                               "pallet": ChecklistInfo("Pallet", "Europe/Berlin", paused_since=start + 14 * day)},
                    outcomes)
    report.assignments = assignments
    report.out_of_service = {"b": [service]}
    return report


def test_heatmap_cells_say_what_each_week_was_with_its_denominator() -> None:
    page = Page(render_html(cells_report()))
    cells = [(a["data-state"]) for a in page.find("rect") if "data-state" in a]
    rows = [a["data-equipment"] for a in page.find("g") if "data-equipment" in a]
    assert rows == ["b", "d", "c", "e"]  # most missed first, then the longest run
    by_row = {equipment: cells[4 * n:4 * n + 4] for n, equipment in enumerate(rows)}
    assert by_row == {"b": ["missed", "excused", "not_assigned", "missed"],
                      "d": ["missed", "not_assigned", "not_assigned", "not_assigned"],
                      "c": ["missed", "clean", "paused", "paused"],
                      "e": ["missed", "not_due", "not_due", "not_due"]}
    words = page.words
    assert "3/4" in words and "1/2" in words and "0/2" in words and "1/1" in words  # each cell its denominator
    assert "b, W14 (30 Mar–5 Apr 2026): excused (out of service) (workshop: hydraulics)" in words
    assert "c, W14 (30 Mar–5 Apr 2026): 0 missed of 2 judged (1 on time, 1 recorded late)" in words


def test_open_runs_say_how_long_and_an_unassigned_unit_never_reads_not_done() -> None:
    from missed_checks.equipment.assignments import Assignment

    report = cells_report()
    report.rows.append(ReportRow("forklift", "f", expected=3, missed=3))
    report.outcomes = [*(report.outcomes or []),
                       *(window("forklift", "f", MONDAY + timedelta(days=d), "missed") for d in (21, 22, 23))]
    report.assignments[("forklift", "f")] = Assignment("forklift", "f", MONDAY - timedelta(days=1))
    page = Page(render_html(report))
    opens = {a["data-open"] for a in page.find("td") if "data-open" in a}
    assert opens == {"unassigned", "undone"}
    words = page.words
    assert "unassigned since Thu 2026-03-26 00:00 CET" in words  # d
    # f: missed 13, 14, 15 April; undone since Monday's window ended (14:00; no grace known) to the as-of,
    # Sat 18 Apr 00:00
    assert "not done for 4 d 10 h (since Mon 2026-04-13 14:00 CEST)" in words
    assert "not done since" not in words


def test_recorded_late_excused_and_periods_are_listed_with_their_facts() -> None:
    words = Page(render_html(cells_report())).words
    # c: done Tue 31 Mar 08:00 CEST on the device, judged missed at 15:01, recorded Wed 09:00 (18 h after the close)
    assert ("c pallet Tue 2026-03-31 06:00 – 14:00 CEST 08:00 CEST Tue 2026-03-31 15:01 CEST "
            "Wed 2026-04-01 09:00 CEST 18 h 00 min") in words
    assert ("b forklift Fri 2026-04-03 06:00 – 14:00 CEST Mon 2026-03-30 00:00 CEST – Mon 2026-04-06 00:00 CEST "
            "workshop: hydraulics") in words
    assert ("b forklift Mon 2026-03-23 00:00 CET – Mon 2026-04-06 00:00 CEST Mon 2026-04-13 00:00 CEST – "
            "Mon 2026-03-30 00:00 CEST – Mon 2026-04-06 00:00 CEST (workshop: hydraulics)") in words


def test_what_the_checks_found_in_the_checklists_zone() -> None:
    """#33: the "What the checks found" section: failed items per checklist (critical marked, with the
    checks performed), the equipment whose checks failed, the defects open at the range's end with
    their age, those resolved with the time they took; in Berlin time on both sides of the change."""
    from missed_checks.defects.defect import Defect, ResolvedHow
    from missed_checks.performed_checks.answers import FailedItem
    from missed_checks.reporting.findings import CheckResult, report_findings

    brakes = FailedItem("brakes", "Brakes <work>", True, "fail", "pass")
    horn = FailedItem("horn", "Horn", False, "fail", "pass")
    checks = [CheckResult("forklift", "a", "2026-03-27T05:05:00Z", "failed", (brakes, horn)),  # 06:05 CET
              CheckResult("forklift", "a", "2026-03-31T04:10:00Z", "failed", (horn,)),  # 06:10 CEST
              CheckResult("forklift", "b", "2026-03-24T05:00:00Z", "passed")]
    found = Defect("D-1", "forklift", "a", "north", (brakes,), "ann", datetime(2026, 3, 27, 5, 5, tzinfo=UTC),
                   datetime(2026, 3, 27, 5, 6, tzinfo=UTC))
    resolved = found.resolved(by="sam", at=datetime(2026, 3, 30, 7, 35, tzinfo=UTC), note="new pads",
                              how=ResolvedHow.SUPERVISOR)
    still_open = Defect("D-2", "forklift", "b", "north", (brakes,), "bob", datetime(2026, 4, 2, 6, 0, tzinfo=UTC),
                        datetime(2026, 4, 2, 6, 0, tzinfo=UTC))
    built = report()
    built.findings = report_findings(checks, [resolved, still_open], built.start, built.end, built.as_of)
    html = render_html(built, zone=BERLIN, zone_name="Europe/Berlin")  # the range asked in Berlin
    page = Page(html)
    assert page.find("section", id="findings")
    section = Page(html[html.index('<section id="findings">'):html.index('<section id="compliance-by-week">')]).words
    assert "counts as done in every compliance figure above, exactly as a passing one" in section
    assert "3 check(s) performed in this period, 2 with a failed item, 1 with a failed critical item" in section
    # per checklist: horn failed twice, brakes (critical) once, of the checklist's 3 checks
    assert "forklift Horn horn 2 3 forklift Brakes <work> critical brakes 1 3" in section
    assert "a forklift 2 / 2 1 Horn ×2, Brakes <work> (critical) ×1" in section
    assert "Brakes &lt;work&gt;" in html and "Brakes <work>" not in html
    # open at the range's end (6 April 00:00 UTC = 02:00 CEST): D-2, found 2 April 08:00 CEST, 3 days 18 hours
    assert "Defects open at Mon 2026-04-06 02:00 CEST" in section
    assert "b forklift · D-2 Brakes <work> (critical) Thu 2026-04-02 08:00 CEST bob 3 days 18 hours" in section
    # resolved: found Fri 27 March 06:05 CET, resolved Mon 30 March 09:35 CEST: 3 days 1 hour 30 min (elapsed)
    assert ("1 resolved: 1 by a supervisor, 0 cleared by a passing check. Time to resolve (from the check that found "
            "it): median 3 days 2 hours, longest 3 days 2 hours.") in section
    assert ("a forklift · D-1 Brakes <work> (critical) Fri 2026-03-27 06:05 CET Mon 2026-03-30 09:35 CEST "
            "by a supervisor (sam) 3 days 2 hours") in section


def test_a_report_without_findings_says_nothing_was_found() -> None:
    words = Page(render_html(report())).words
    assert "0 check(s) performed in this period, 0 with a failed item" in words
    assert "No check in this period answered items, and no defect was open or resolved." in words
    assert "Failed items per checklist" not in words and "Defects open at" not in words


def test_checks_that_all_passed_their_items_say_no_item_failed() -> None:
    from missed_checks.reporting.findings import CheckResult, report_findings

    built = report()
    built.findings = report_findings([CheckResult("forklift", "a", "2026-03-24T05:00:00Z", "passed")], [],
                                     built.start, built.end, built.as_of)
    words = Page(render_html(built)).words
    assert "1 check(s) performed in this period, 0 with a failed item" in words
    assert "No item failed in this period." in words and "No defect was open then." in words
    assert "No defect was resolved in this period." in words
