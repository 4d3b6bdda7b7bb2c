"""The fleet report's sections in HTML: the headline figures, the weekly compliance charts, the missed
checks' heatmap and the lists (repeat offenders, late, dismissed, recorded late, excused, every
missed check, the assignment and out-of-service periods, the rows). The operator's self-contained
HTML report (``missed_checks_ops.html_report``) and the web app's report page
(``missed_checks.webapp.pages.report``) both show them.

:func:`report_context` takes a :class:`~missed_checks.reporting.fleet_report.Report` built with
``detail`` (its window outcomes), computes the figures with :mod:`missed_checks.reporting.insights`
and lays out the charts (coordinates only, here); :func:`render_sections` writes them with the
Jinja2 template ``templates/report_sections.html.j2`` (autoescaped), whose stylesheet is
``templates/report.css`` (:func:`report_css`). Charts are SVG drawn for grey scale as well as
colour: on time solid dark, late hatched, missed light with an outline, and every bar and heatmap
cell labelled with its figure. Times are in each checklist's zone; the period in the zone the report
was asked in.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, tzinfo
from functools import cache
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from missed_checks.reporting.findings import ResultRow, in_words
from missed_checks.reporting.fleet_report import Report
from missed_checks.reporting.insights import (
    REPEAT_RUN,
    Coverage,
    HeatCell,
    HeatmapRow,
    Streak,
    dismissed_checks,
    heat_cells,
    late_checks,
    local,
    missed_checks,
    missed_heatmap,
    open_run,
    repeat_offenders,
    weekly_rows,
    weeks_of_period,
)
from missed_checks.reporting.report import (
    EXCUSED,
    RECORDED_LATE,
    TOTAL,
    ReportRow,
    WindowOutcome,
    total,
    why_no_compliance,
)
from missed_checks.timefmt import to_utc_iso

__all__ = ["HEATMAP_ROWS", "findings_context", "pct", "render_sections", "report_context", "report_css"]

HEATMAP_ROWS = 30
"""The heatmap draws the worst this many pieces of equipment; the full list follows it."""

# Chart geometry, in SVG user units (the charts scale to the page's width: 720 is about A4's).
WIDTH = 720
BAR_TOP, BAR_PLOT, BAR_BOTTOM, BAR_LEFT, BAR_RIGHT = 18, 96, 34, 44, 8
HEAT_LABEL, HEAT_TOTAL, HEAT_ROW, HEAT_HEAD = 170, 50, 22, 34


@cache
def _environment() -> Environment:
    environment = Environment(
        loader=PackageLoader("missed_checks.reporting", "templates"),
        autoescape=select_autoescape(("html", "j2")),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["pct"] = pct
    return environment


def pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f} %"


def _short_pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f}%"


def _formula(row: ReportRow) -> str:
    """``row``'s compliance worked out (``3 + 1 of 3 + 1 + 2 + 0 = 66.7 %.``), or, when it has none,
    why, in a sentence (never a sum of zeros equal to a dash)."""
    reason = why_no_compliance(row)
    if reason is not None:
        return f"{reason[0].upper()}{reason[1:]}, so there is no compliance figure."
    return (f"{row.on_time} + {row.late} of {row.on_time} + {row.late} + {row.missed} + {row.recorded_late} = "
            f"{pct(row.compliance)}.")


def _period_compliance(row: ReportRow) -> str:
    """A chart's figure for the whole period: ``66.7 % (4 of 6)``, or ``nothing judged``."""
    if row.compliance is None:
        return "nothing judged"
    return f"{pct(row.compliance)} ({row.performed} of {row.on_time + row.late + row.missed + row.recorded_late})"


def _when(instant: str | None, zone: tzinfo) -> str:
    """``Mon 2026-03-02 06:00 CET`` in ``zone``."""
    if instant is None:
        return "–"
    return local(instant, zone).strftime("%a %Y-%m-%d %H:%M %Z")


def _duration(delta: timedelta | None) -> str:
    if delta is None:
        return "–"
    minutes = int(delta.total_seconds() // 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes:02d} min"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h"


@dataclass(frozen=True)
class Week:
    monday: date

    @property
    def label(self) -> str:
        return f"W{self.monday.isocalendar()[1]:02d}"

    @property
    def dates(self) -> str:
        sunday = self.monday + timedelta(days=6)
        return f"{self.monday.day} {self.monday:%b}–{sunday.day} {sunday:%b %Y}"

    @property
    def short(self) -> str:
        return f"{self.monday.day} {self.monday:%b}"


# -- weekly compliance charts --------------------------------------------------------------------
@dataclass
class Segment:
    kind: str
    y: float
    height: float


@dataclass
class Bar:
    week: Week
    row: ReportRow
    x: float
    width: float
    center: float
    segments: list[Segment] = field(default_factory=list)
    label: str = "–"
    label_y: float = 0.0

    @property
    def judged(self) -> int:
        return self.row.on_time + self.row.late + self.row.missed + self.row.recorded_late

    @property
    def title(self) -> str:
        row = self.row
        if not row.expected and not row.pending and not row.excused:
            return f"{self.week.label} ({self.week.dates}): nothing expected"
        return (f"{self.week.label} ({self.week.dates}): {row.on_time} on time, {row.late} late, {row.missed} missed, "
                f"{row.recorded_late} recorded late, {row.dismissed} dismissed, {row.excused} excused, "
                f"{row.pending} pending; " + (
                    "no compliance figure (nothing judged)" if row.compliance is None
                    else f"compliance {pct(row.compliance)} ({row.performed} of {self.judged})"))


@dataclass
class WeeklyChart:
    key: str
    title: str
    subtitle: str
    rows: list[ReportRow]
    bars: list[Bar]
    width: int = WIDTH
    height: int = BAR_TOP + BAR_PLOT + BAR_BOTTOM
    plot_top: int = BAR_TOP
    plot_bottom: int = BAR_TOP + BAR_PLOT
    plot_left: int = BAR_LEFT
    plot_right: int = WIDTH - BAR_RIGHT

    @property
    def period_row(self) -> ReportRow:
        return total(self.rows)

    @property
    def period_compliance(self) -> str:
        return _period_compliance(self.period_row)

    def y_of(self, pct: float) -> float:
        return self.plot_bottom - BAR_PLOT * pct / 100


def _weekly_chart(key: str, title: str, subtitle: str, rows: list[ReportRow], weeks: Sequence[Week]) -> WeeklyChart:
    chart = WeeklyChart(key, title, subtitle, rows, [])
    slot = (chart.plot_right - chart.plot_left) / max(len(weeks), 1)
    width = max(min(slot * 0.62, 48.0), 2.0)
    for n, (week, row) in enumerate(zip(weeks, rows, strict=True)):
        center = chart.plot_left + slot * (n + 0.5)
        bar = Bar(week, row, center - width / 2, width, center)
        judged = bar.judged
        y = float(chart.plot_bottom)
        if judged:
            for kind, count in (("on_time", row.on_time), ("late", row.late), ("missed", row.missed),
                                ("recorded_late", row.recorded_late)):
                if count:
                    height = BAR_PLOT * count / judged
                    y -= height
                    bar.segments.append(Segment(kind, round(y, 2), round(height, 2)))
            bar.label = _short_pct(row.compliance)
            bar.label_y = chart.plot_top - 5
        else:
            bar.label_y = chart.plot_bottom - 6
        chart.bars.append(bar)
    return chart


# -- heatmap -------------------------------------------------------------------------------------
@dataclass
class Cell:
    x: float
    count: int
    level: int
    title: str
    state: str = "missed"
    label: str = ""


@dataclass
class HeatRow:
    row: HeatmapRow
    y: float
    cells: list[Cell]


@dataclass
class Heatmap:
    weeks: list[Week]
    rows: list[HeatRow]
    shown: int
    of: int
    cell_width: float
    numbers: bool
    width: int = WIDTH
    label_width: int = HEAT_LABEL
    row_height: int = HEAT_ROW
    head: int = HEAT_HEAD

    @property
    def height(self) -> int:
        return self.head + self.row_height * max(len(self.rows), 1) + 4

    @property
    def total_x(self) -> float:
        return self.width - HEAT_TOTAL / 2

    def week_x(self, n: int) -> float:
        return self.label_width + self.cell_width * (n + 0.5)


def _level(count: int) -> int:
    return min(count, 4)


CELL_LABELS = {"excused": "exc.", "dismissed": "dism.", "pending": "pend.", "paused": "paused",
               "not_assigned": "n/a", "not_due": ""}
CELL_WORDS = {"excused": "excused (out of service)", "dismissed": "dismissed", "pending": "not judged yet",
              "paused": "checklist paused", "not_assigned": "not assigned", "not_due": "nothing due"}


def _cell(x: float, row: HeatmapRow, week: Week, cell: HeatCell) -> Cell:
    where = f"{row.equipment_id}, {week.label} ({week.dates})"
    if cell.state in ("missed", "clean"):
        counts = cell.counts
        parts = [f"{counts.get(name, 0)} {name.replace('_', ' ')}" for name in ("on_time", "late", RECORDED_LATE,
                                                                                 "dismissed", EXCUSED, "pending")
                 if counts.get(name, 0)]
        title = f"{where}: {cell.missed} missed of {cell.judged} judged" + (f" ({', '.join(parts)})" if parts else "")
        if cell.reasons:
            title += f"; out of service: {', '.join(cell.reasons)}"
        return Cell(x, cell.missed, _level(cell.missed), title, cell.state, f"{cell.missed}/{cell.judged}")
    title = f"{where}: {CELL_WORDS[cell.state]}" + (f" ({', '.join(cell.reasons)})" if cell.reasons else "")
    return Cell(x, 0, 0, title, cell.state, CELL_LABELS[cell.state])


def _heatmap(rows: list[HeatmapRow], weeks: list[Week], limit: int, cells: dict[str, list[HeatCell]]) -> Heatmap:
    cell_width = (WIDTH - HEAT_LABEL - HEAT_TOTAL) / max(len(weeks), 1)
    shown = rows[:limit]
    heat_rows = []
    for n, row in enumerate(shown):
        y = HEAT_HEAD + HEAT_ROW * n
        drawn = [_cell(HEAT_LABEL + cell_width * i, row, week, cell)
                 for i, (week, cell) in enumerate(zip(weeks, cells[row.equipment_id], strict=True))]
        heat_rows.append(HeatRow(row, y, drawn))
    return Heatmap(weeks, heat_rows, len(shown), len(rows), round(cell_width, 2), numbers=cell_width >= 14)


# -- tables ----------------------------------------------------------------------------------------
@dataclass
class ChecklistSummary:
    checklist_id: str
    name: str
    zone: str
    deleted: bool
    row: ReportRow


def _checklist_summaries(report: Report) -> list[ChecklistSummary]:
    by_checklist: dict[str, list[ReportRow]] = defaultdict(list)
    for row in report.rows:
        by_checklist[row.checklist_id].append(row)
    summaries = []
    for checklist_id, rows in sorted(by_checklist.items()):
        info = report.checklists.get(checklist_id)
        summaries.append(ChecklistSummary(
            checklist_id, info.name if info else "", (info.timezone if info and info.timezone else "UTC"),
            bool(info and info.deleted), total(rows, checklist_id, TOTAL)))
    return summaries


def _window_text(outcome: WindowOutcome, zone: tzinfo) -> str:
    start = local(outcome.window_start, zone)
    if outcome.window_end is None:
        return start.strftime("%a %Y-%m-%d %H:%M %Z")
    end = local(outcome.window_end, zone)
    same_day = end.date() == start.date()
    return f"{start:%a %Y-%m-%d %H:%M} – {end:%H:%M %Z}" if same_day else (
        f"{start:%a %Y-%m-%d %H:%M} – {end:%a %Y-%m-%d %H:%M %Z}")


def _streak_view(streak: Streak, zone: tzinfo, report: Report) -> dict[str, Any]:
    ended = streak.ended_by
    run = open_run(streak, report.assignments.get((streak.checklist_id, streak.equipment_id)),
                   report.out_of_service.get(streak.equipment_id, ()), report.as_of)
    status = None
    if run is not None:
        when = _when(run.since, zone)
        status = {"undone": f"not done for {_duration(run.undone_for)} (since {when})",
                  "unassigned": f"unassigned since {when}",
                  "out_of_service": f"out of service since {when}: {run.reason}"}[run.state]
    return {"equipment_id": streak.equipment_id, "checklist_id": streak.checklist_id, "length": streak.length,
            "first": _when(streak.windows[0].window_start, zone), "last": _when(streak.windows[-1].window_start, zone),
            "ongoing": streak.ongoing, "status": status, "state": None if run is None else run.state,
            "ended_by": None if ended is None else (
                {"late": "done late", RECORDED_LATE: "done, recorded late"}.get(ended.outcome, "done"),
                local(ended.window_start, zone).strftime("%a %Y-%m-%d"))}


def _done_at(outcome: WindowOutcome, zone: tzinfo) -> str:
    """When the check was done: its time alone when on the day the window ended, else date and time."""
    if outcome.performed_at is None:
        return "–"
    done = local(outcome.performed_at, zone)
    if outcome.window_end is not None and local(outcome.window_end, zone).date() == done.date():
        return done.strftime("%H:%M %Z")
    return done.strftime("%a %Y-%m-%d %H:%M %Z")


def _outcome_view(outcome: WindowOutcome, zone: tzinfo) -> dict[str, Any]:
    dismissal = outcome.dismissal
    dismissed_at = local(dismissal.at, zone) if dismissal and dismissal.at else None
    service = outcome.out_of_service
    return {"checklist_id": outcome.checklist_id, "equipment_id": outcome.equipment_id,
            "window": _window_text(outcome, zone), "performed_at": _done_at(outcome, zone),
            "late_by": _duration(outcome.late_by),
            "recorded_at": _when(outcome.recorded_at, zone), "judged_at": _when(outcome.judged_at, zone),
            "recorded_after": _duration(outcome.recorded_after_close),
            "service": None if service is None else (_when(service.start, zone),
                                                     "open-ended" if service.end is None else _when(service.end, zone),
                                                     service.reason),
            "reason": dismissal.reason if dismissal else "", "by": dismissal.by if dismissal else "",
            "dismissed_at": ("–", "") if dismissed_at is None else (dismissed_at.strftime("%a %Y-%m-%d"),
                                                                    dismissed_at.strftime("%H:%M %Z"))}


def _periods_view(report: Report) -> list[dict[str, Any]]:
    """Per (checklist, equipment) with a row: its assignment periods and the equipment's
    out-of-service periods (with the reason), in the checklist's zone. A period is its start and
    end (``["Mon 2026-03-02 06:00 CET –", "Fri ..."]``, only the start when open-ended), each
    kept on one line; a narrow table wraps between them."""
    views = []
    zones = report.zones
    for (checklist_id, equipment_id), assignment in sorted(report.assignments.items()):
        zone = zones.get(checklist_id, UTC)
        periods = sorted([*assignment.earlier_periods, (assignment.assigned_at, assignment.unassigned_at)],
                         key=lambda period: period[0])
        assigned = [[f"{_when(to_utc_iso(a), zone)} –", *([] if u is None else [_when(to_utc_iso(u), zone)])]
                    for a, u in periods]
        service = [([f"{_when(p.start, zone)} –", *([] if p.end is None else [_when(p.end, zone)])], p.reason)
                   for p in report.out_of_service.get(equipment_id, ())]
        views.append({"checklist_id": checklist_id, "equipment_id": equipment_id, "assigned": assigned,
                      "out_of_service": service})
    return views


def _items_text(row: ResultRow) -> str:
    """``Horn sounds ×2, Tyre pressure (critical) ×1``: the items ``row``'s checks failed, most first."""
    return ", ".join(f"{i.label}{' (critical)' if i.critical else ''} ×{i.failed}" for i in row.items) or "–"


def findings_context(report: Report, zone: tzinfo = UTC) -> dict[str, Any]:
    """What the "What the checks found" section shows of ``report.findings`` (none: nothing found):
    failed items per checklist and per equipment, the defects open at the range's end with their
    age, those resolved in the range and the time they took; times in each checklist's zone, the
    instant the defects are read at in ``zone``."""
    found = report.found
    zones = report.zones

    def when(instant: datetime, checklist_id: str) -> str:
        return _when(to_utc_iso(instant), zones.get(checklist_id, UTC))

    items = [{"checklist_id": row.checklist_id, "item_id": i.item_id, "label": i.label, "critical": i.critical,
              "failed": i.failed, "critical_failed": i.critical_failed, "performed": row.performed}
             for row in found.checklists for i in row.items]
    equipment = [{"checklist_id": r.checklist_id, "equipment_id": r.equipment_id, "performed": r.performed,
                  "passed": r.passed, "failed": r.failed, "critical_failed": r.critical_failed,
                  "items": _items_text(r)}
                 for r in sorted(found.rows, key=lambda r: (-r.critical_failed, -r.failed, r.checklist_id,
                                                            r.equipment_id)) if r.failed]
    open_defects = [{"defect_id": d.defect_id, "checklist_id": d.checklist_id, "equipment_id": d.equipment_id,
                     "found_at": when(d.found_at, d.checklist_id), "found_by": d.found_by or "–",
                     "items": ", ".join(d.items), "age": d.age_words} for d in found.open_defects]
    resolved = [{"defect_id": d.defect_id, "checklist_id": d.checklist_id, "equipment_id": d.equipment_id,
                 "found_at": when(d.found_at, d.checklist_id), "resolved_at": when(d.resolved_at, d.checklist_id),
                 "by": d.resolved_by or "–", "how": d.how_words, "took": in_words(d.took),
                 "items": ", ".join(d.items)} for d in found.resolved]
    ttr = found.time_to_resolve
    return {"fleet": found.fleet, "answered": found.fleet.passed + found.fleet.failed, "items": items,
            "equipment": equipment, "open": open_defects, "resolved": resolved,
            "at": found.at.astimezone(zone).strftime("%a %Y-%m-%d %H:%M %Z"),
            "time_to_resolve": {"count": ttr.count, "by_supervisor": ttr.by_supervisor,
                                "by_passing_check": ttr.by_passing_check,
                                "median": "–" if ttr.median is None else in_words(ttr.median),
                                "longest": "–" if ttr.longest is None else in_words(ttr.longest)}}


def report_context(report: Report, *, zone: tzinfo = UTC, heatmap_rows: int = HEATMAP_ROWS) -> dict[str, Any]:
    """What the sections show of ``report`` (built with ``detail``: ValueError otherwise), and its
    period and as-of instant in ``zone`` (``period_from``, ``period_to``, ``as_of``), the zone the
    period was asked in; window times are in each checklist's own zone."""
    if report.outcomes is None:
        raise ValueError("the HTML report needs the window outcomes: build the report with detail=True")
    outcomes = report.outcomes
    zones = report.zones
    mondays = weeks_of_period(report.start, report.end, zone, outcomes, zones)
    weeks = [Week(monday) for monday in mondays]
    series = weekly_rows(outcomes, zones, mondays)
    summaries = _checklist_summaries(report)
    charts = [_weekly_chart("fleet", "Fleet", "all checklists", series[TOTAL], weeks)]
    for summary in summaries:
        rows = series.get(summary.checklist_id) or [ReportRow(summary.checklist_id, TOTAL) for _ in weeks]
        subtitle_text = (summary.name + " · " if summary.name else "") + f"weeks in {summary.zone}"
        charts.append(_weekly_chart(summary.checklist_id, summary.checklist_id, subtitle_text, rows, weeks))
    heat_rows = missed_heatmap(outcomes, zones, mondays)
    coverage = Coverage(report.assignments, {checklist_id: info.paused_since for checklist_id, info in
                                             report.checklists.items() if info.paused_since is not None})
    cells = heat_cells(outcomes, zones, mondays, [r.equipment_id for r in heat_rows[:heatmap_rows]], coverage)
    heatmap = _heatmap(heat_rows, weeks, heatmap_rows, cells)

    def zone_of(outcome: WindowOutcome) -> tzinfo:
        return zones.get(outcome.checklist_id, UTC)

    def views(items: Iterable[WindowOutcome]) -> list[dict[str, Any]]:
        return [_outcome_view(o, zone_of(o)) for o in items]

    offenders = [_streak_view(s, zones.get(s.checklist_id, UTC), report) for s in repeat_offenders(outcomes)]
    fleet = report.total
    return {
        "period_from": report.start.astimezone(zone).strftime("%a %Y-%m-%d %H:%M %Z"),
        "period_to": report.end.astimezone(zone).strftime("%a %Y-%m-%d %H:%M %Z"),
        "as_of": report.as_of.astimezone(zone).strftime("%Y-%m-%d %H:%M %Z"),
        "fleet": fleet,
        "compliance_formula": _formula(fleet),
        "checklists": summaries,
        "charts": charts,
        "weeks": weeks,
        "heatmap": heatmap,
        "repeat_run": REPEAT_RUN,
        "offenders": offenders,
        "late": views(late_checks(outcomes)),
        "dismissed": views(dismissed_checks(outcomes)),
        "recorded_late": views(sorted((o for o in outcomes if o.outcome == RECORDED_LATE),
                                      key=lambda o: (o.window_start, o.checklist_id, o.equipment_id))),
        "excused": views(sorted((o for o in outcomes if o.outcome == EXCUSED),
                                key=lambda o: (o.equipment_id, o.window_start, o.checklist_id))),
        "periods": _periods_view(report),
        "missed": views(missed_checks(outcomes, [r.equipment_id for r in heat_rows])),
        "rows": report.rows,
        "warnings": report.warnings,
        "findings": findings_context(report, zone),
    }


def render_sections(context: dict[str, Any]) -> Markup:
    """The sections (``<section id="summary">`` ... ``<section id="per-equipment">``) of a
    :func:`report_context`, as markup to place in a page."""
    return Markup(_environment().get_template("report_sections.html.j2").render(context))


@cache
def report_css() -> Markup:
    """The sections' stylesheet (``templates/report.css``)."""
    return Markup(resources.files("missed_checks.reporting").joinpath("templates/report.css").read_text("utf-8"))
