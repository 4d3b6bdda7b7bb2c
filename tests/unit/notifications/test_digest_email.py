"""The digest e-mail's HTML: what mail clients keep (inline CSS only, no script, nothing remote),
every report column, worst first, names escaped, times in the right zones."""

from __future__ import annotations

from datetime import UTC, datetime
from html.parser import HTMLParser
from zoneinfo import ZoneInfo

import pytest

from missed_checks.notifications.digest import Subscription
from missed_checks.notifications.digest_email import (
    COUNT_COLUMNS,
    EQUIPMENT_ROWS,
    render_digest,
    render_text,
    subject,
    worst_first,
)
from missed_checks.reporting.fleet_report import ChecklistInfo, Report
from missed_checks.reporting.report import ReportRow, WindowOutcome

BERLIN = ZoneInfo("Europe/Berlin")
FIRING = datetime(2026, 3, 30, 7, 0, tzinfo=BERLIN)  # the Monday after the clocks went forward
SUB = Subscription.create("fleet-daily", address="fleet@example.com", period="daily", at="07:00",
                          timezone="Europe/Berlin")
START, END = SUB.period_ending(FIRING)


class Page(HTMLParser):
    """Every start tag with its attributes, and the text, in document order."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def rows(self, kind: str) -> list[str]:
        return [str(attrs["data-id"]) for tag, attrs in self.tags if tag == "tr" and attrs.get("data-row") == kind]


def outcome(checklist: str, equipment: str, start: str, end: str, kind: str) -> WindowOutcome:
    return WindowOutcome(checklist, equipment, start, end, kind)


def report(rows: list[ReportRow], outcomes: list[WindowOutcome] | None = None,
           checklists: dict[str, ChecklistInfo] | None = None) -> Report:
    return Report(START, END, FIRING, rows, warnings=[], checklists=checklists or {}, outcomes=outcomes or [])


ROWS = [
    ReportRow("forklift", "FL-1", expected=1, on_time=1),
    ReportRow("forklift", "FL-2", expected=1, missed=1),
    ReportRow("forklift", "FL-3", expected=2, late=1, missed=1),
    ReportRow("fire", "EXT-1", expected=1, on_time=1),
    ReportRow("fire", "EXT-2", pending=1),
]
OUTCOMES = [
    outcome("forklift", "FL-2", "2026-03-29T04:00:00Z", "2026-03-29T12:00:00Z", "missed"),
    outcome("forklift", "FL-3", "2026-03-29T04:00:00Z", "2026-03-29T12:00:00Z", "missed"),
]
INFO = {"forklift": ChecklistInfo("Forklift <pre-use> & co", "Europe/Berlin"),
        "fire": ChecklistInfo("Fire extinguishers", "America/New_York")}


def test_only_what_mail_clients_keep_inline_css_no_script_nothing_remote() -> None:
    text = render_digest(SUB, report(ROWS, OUTCOMES, INFO))
    page = Page(text)
    tags = {tag for tag, _ in page.tags}
    assert tags <= {"html", "head", "meta", "title", "body", "table", "thead", "tbody", "tr", "th", "td", "h1",
                    "h2", "p", "span", "br"}, tags
    assert not tags & {"script", "style", "link", "img", "iframe", "object", "svg", "form", "a"}
    lowered = text.lower()
    assert "<script" not in lowered and "<style" not in lowered and "javascript:" not in lowered
    assert "http:" not in lowered and "https:" not in lowered and "url(" not in lowered and "@import" not in lowered
    for tag, attrs in page.tags:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert "class" not in attrs and "src" not in attrs and "href" not in attrs, (tag, attrs)
        if tag in {"body", "table", "td", "th", "h1", "h2", "p", "span"}:
            assert attrs.get("style"), f"<{tag}> has no inline style"


def test_every_report_column_and_the_fleet_figures_are_there() -> None:
    page = Page(render_digest(SUB, report(ROWS, OUTCOMES, INFO)))
    headings = [t for t in page.text if t.strip()]
    for column in COUNT_COLUMNS:
        assert column.replace("_", " ") in headings, column
    sections = {attrs.get("data-section") for _, attrs in page.tags} - {None}
    assert sections == {"summary", "checklists", "equipment", "missed"}
    # Fleet: 3 done (on time + late) of 5 judged = 60 %.
    assert "60.0 %" in page.text


def test_checklists_and_equipment_are_worst_first() -> None:
    page = Page(render_digest(SUB, report(ROWS, OUTCOMES, INFO)))
    assert page.rows("checklist") == ["forklift", "fire"]  # 50 % before 100 %
    # 0 % (FL-2), 50 % (FL-3), then 100 % by id, nothing judged (EXT-2) last.
    assert page.rows("equipment") == ["FL-2", "FL-3", "EXT-1", "FL-1", "EXT-2"]
    assert page.rows("missed") == ["FL-2", "FL-3"]
    assert [r.equipment_id for r in worst_first(ROWS)] == page.rows("equipment")


def test_names_are_escaped_and_times_are_in_each_zone() -> None:
    text = render_digest(SUB, report(ROWS, OUTCOMES, INFO))
    assert "Forklift &lt;pre-use&gt; &amp; co" in text and "<pre-use>" not in text
    # The missed window 04:00Z-12:00Z on 29 March is 06:00-14:00 CEST in the checklist's zone.
    assert "Sun 29 Mar 06:00–14:00 CEST" in text
    # The period in the subscription's zone: Sunday 29 March, 00:00 CET to Monday 00:00 CEST.
    assert "Sun 2026-03-29 00:00 CET" in text and "Mon 2026-03-30 00:00 CEST" in text


def test_the_subject_names_period_compliance_and_misses() -> None:
    assert subject(SUB, report(ROWS, OUTCOMES, INFO)) == (
        "Daily missed-checks digest, Sunday 29 March 2026: 60.0 % done, 2 missed")
    weekly = Subscription.create("w", address="a@example.com", period="weekly", at="07:00", timezone="Europe/Berlin")
    start, end = weekly.period_ending(FIRING)
    empty = Report(start, end, FIRING, [], outcomes=[])
    assert subject(weekly, empty) == ("Weekly missed-checks digest, Mon 23 Mar – Sun 29 Mar 2026: "
                                      "no windows judged, 0 missed")


def test_a_period_with_nothing_due_says_so() -> None:
    page = Page(render_digest(SUB, report([])))
    assert any("No window of all checklists was due" in t for t in page.text)
    assert page.rows("equipment") == []


def test_no_fleet_compliance_figure_says_why() -> None:
    nothing_judged = report([ReportRow("fire", "EXT-2", expected=1, dismissed=1, pending=2)])
    reason = "no window in this period counts toward compliance (1 dismissed, 2 not judged yet)"
    page = Page(render_digest(SUB, nothing_judged))
    assert f"no fleet compliance figure: {reason}" in page.text
    text = render_text(SUB, nothing_judged)
    assert f"Fleet compliance: no figure, {reason}; 1 expected," in text and "Fleet compliance: –" not in text
    assert "  - fire: nothing judged, 0 missed" in text


@pytest.mark.parametrize("count", [EQUIPMENT_ROWS + 3])
def test_a_long_fleet_is_cut_to_the_worst_with_a_count_of_the_rest(count: int) -> None:
    rows = [ReportRow("forklift", f"FL-{n:03d}", expected=1, missed=1) for n in range(count)]
    page = Page(render_digest(SUB, report(rows)))
    assert len(page.rows("equipment")) == EQUIPMENT_ROWS
    assert any("and 3 more" in t for t in page.text)


def test_it_is_the_same_message_for_the_same_report() -> None:
    first = render_digest(SUB, report(ROWS, OUTCOMES, INFO))
    assert first == render_digest(SUB, report(ROWS, OUTCOMES, INFO))
    assert datetime(2026, 3, 28, 23, tzinfo=UTC) == START


def findings_report() -> Report:
    """#33: Sunday 29 March in Berlin (the clocks went forward): FL-2's check at 06:30 CEST failed
    its brakes (critical) and horn, FL-3's its horn; FL-2's defect is open at the period's end, so is
    one found on Friday; one found on Saturday evening was cleared by a passing check."""
    from missed_checks.defects.defect import Defect, ResolvedHow
    from missed_checks.performed_checks.answers import FailedItem
    from missed_checks.reporting.findings import CheckResult, report_findings

    brakes = FailedItem("brakes", "<Brakes> work", True, "fail", "pass")
    horn = FailedItem("horn", "Horn", False, "fail", "pass")
    checks = [CheckResult("forklift", "FL-2", "2026-03-29T04:30:00Z", "failed", (brakes, horn)),
              CheckResult("forklift", "FL-1", "2026-03-29T05:00:00Z", "passed"),
              CheckResult("forklift", "FL-3", "2026-03-29T06:00:00Z", "failed", (horn,))]

    def defect(defect_id: str, equipment: str, found: datetime) -> Defect:
        return Defect(defect_id, "forklift", equipment, None, (brakes,), "ann", found, found)

    cleared = defect("D-r", "FL-4", datetime(2026, 3, 28, 20, tzinfo=UTC)).resolved(
        by="bob", at=datetime(2026, 3, 29, 10, tzinfo=UTC), note="cleared", how=ResolvedHow.PASSING_CHECK)
    defects = [defect("D-1", "FL-2", datetime(2026, 3, 29, 4, 30, tzinfo=UTC)),
               defect("D-0", "FL-9", datetime(2026, 3, 27, 9, tzinfo=UTC)), cleared]
    built = report(ROWS, OUTCOMES, INFO)
    built.findings = report_findings(checks, defects, START, END, FIRING)
    return built


def test_the_digest_says_what_the_checks_found_open_defects_and_failed_critical_items() -> None:
    built = findings_report()
    assert subject(SUB, built) == (
        "Daily missed-checks digest, Sunday 29 March 2026: 60.0 % done, 2 missed, 2 open defects")
    text = render_digest(SUB, built)
    page = Page(text)
    assert {attrs.get("data-section") for _, attrs in page.tags} - {None} == {
        "summary", "checklists", "equipment", "findings", "critical", "defects", "missed"}
    words = " ".join(" ".join(page.text).split())
    assert ("3 checks performed, 2 with a failed item, 1 with a failed critical item (a check with failed items "
            "still counts as performed in compliance).") in words
    assert ("1 defect resolved: 0 by a supervisor, 1 by a passing check; time to resolve: median 14 hours, "
            "longest 14 hours.") in words  # 28 Mar 20:00Z to 29 Mar 10:00Z
    assert {tag for tag, _ in page.tags} <= {"html", "head", "meta", "title", "body", "table", "thead", "tbody", "tr",
                                             "th", "td", "h1", "h2", "p", "span", "br"}
    assert page.rows("critical") == ["FL-2"]
    assert "FL-2 forklift Sun 29 Mar 06:30 CEST <Brakes> work" in words  # 04:30Z in summer time
    assert "&lt;Brakes&gt; work" in text and "<Brakes>" not in text
    # open at the period's end (Mon 30 Mar 00:00 CEST = 29 Mar 22:00Z), oldest first
    assert page.rows("defect") == ["D-0", "D-1"]
    assert "Open defects at Mon 30 Mar 00:00 CEST" in words
    assert "FL-9 D-0 <Brakes> work (critical) Fri 27 Mar 10:00 CET 2 days 13 hours" in words  # from 27 Mar 09:00Z
    assert "FL-2 D-1 <Brakes> work (critical) Sun 29 Mar 06:30 CEST 17 hours 30 minutes" in words
    plain = render_text(SUB, built)
    assert ("Failed critical items:\n  - FL-2 (forklift) Sun 29 Mar 06:30 CEST: <Brakes> work\n\n"
            "Open defects at Mon 30 Mar 00:00 CEST:\n"
            "  - FL-9 D-0: <Brakes> work (critical); found Fri 27 Mar 10:00 CET, open for 2 days 13 hours\n"
            "  - FL-2 D-1: <Brakes> work (critical); found Sun 29 Mar 06:30 CEST, open for 17 hours 30 minutes\n"
            ) in plain
    assert "What the checks found:\n  3 checks performed, 2 with a failed item" in plain


def test_open_defects_are_in_a_digest_of_a_period_with_nothing_due() -> None:
    built = findings_report()
    built.rows = []
    page = Page(render_digest(SUB, built))
    assert any("No window of all checklists was due" in t for t in page.text)
    assert page.rows("defect") == ["D-0", "D-1"]
