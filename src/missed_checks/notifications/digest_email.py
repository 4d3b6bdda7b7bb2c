"""The digest e-mail: the fleet report of a period as one HTML message that mail clients render.

Mail clients drop ``<style>`` blocks, scripts, web fonts and remote images (or ask before loading
them), so the message uses only what they all keep: nested ``<table>`` layout, CSS in ``style``
attributes on each element, system fonts, no ``<script>``, no ``<link>``, no image, no URL at all.
Every figure is also written as text (compliance is never a colour alone).

The figures are the report's own (:mod:`missed_checks.reporting.report`): its rows, their
:meth:`~missed_checks.reporting.report.ReportRow.to_dict` counts (every outcome the report has, in its
column order :data:`~missed_checks.reporting.report.COLUMNS`), its compliance, and the missed windows of
its outcomes (:func:`missed_checks.reporting.insights.missed_checks`), and what the checks found
(#33, :mod:`missed_checks.reporting.findings`: the checks that failed a critical item in the period,
the defects open at its end and how long they had been open, the defects resolved and the time
they took). Nothing is re-counted here.
**Worst first**: checklists and equipment by compliance, lowest first (none yet: last), then most
missed; missed checks grouped by that equipment order.

Plain Python (``html.escape``), no template engine: the digest Lambda renders it with what its
layer holds.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta, tzinfo
from html import escape
from typing import Protocol
from zoneinfo import ZoneInfo

from missed_checks.notifications.digest import Period, Subscription
from missed_checks.reporting.findings import ReportFindings, in_words
from missed_checks.reporting.insights import local, missed_checks
from missed_checks.reporting.report import COLUMNS, TOTAL, ReportRow, WindowOutcome, total, why_no_compliance

__all__ = ["EQUIPMENT_ROWS", "FINDINGS_ROWS", "MISSED_ROWS", "ChecklistInfoView", "DigestReport", "render_digest",
           "render_text", "subject", "worst_first"]

EQUIPMENT_ROWS = 25
"""The equipment table lists the worst this many (the rest are counted in a line)."""
MISSED_ROWS = 50
"""The missed-check list shows this many (the rest are counted in a line)."""
FINDINGS_ROWS = 50
"""The lists of failed critical items and of open defects show this many each (the rest counted)."""

_IDS = ("checklist_id", "equipment_id")
COUNT_COLUMNS = tuple(c for c in COLUMNS if c not in _IDS and c != "compliance_pct")
"""The report's count columns, in its order (``expected``, ``on_time``, ...)."""

# Colours and fonts: one place, inline everywhere.
_FONT = "font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif"
_TEXT = "color:#1f2933"
_MUTED = "color:#52606d"
# The message is at most 720 px wide whatever fonts the reader's client has (DejaVu, a new Debian
# machine's, is wider than most): every table is laid out fixed (`table-layout:fixed`, its columns
# the shares of its width the headings give them, never what the text asks for), every text may
# break a word that is longer than its column (a long id or address), and nothing is `nowrap`.
_WRAP = "overflow-wrap:break-word;word-wrap:break-word"
_CELL = "padding:6px 4px;border-bottom:1px solid #e4e7eb;font-size:14px;text-align:right"
_CELL_LEFT = "padding:6px 8px;border-bottom:1px solid #e4e7eb;font-size:14px;text-align:left"
_HEAD = "padding:6px 4px;border-bottom:2px solid #9aa5b1;font-size:11px;font-weight:normal;text-align:right;" + _MUTED
_HEAD_LEFT = ("padding:6px 8px;border-bottom:2px solid #9aa5b1;font-size:11px;font-weight:normal;text-align:left;"
              + _MUTED)
_SUB = f"display:block;font-size:12px;{_MUTED}"
_H2 = f"margin:24px 0 8px 0;font-size:18px;font-weight:600;{_TEXT}"
_TABLE = f"border-collapse:collapse;width:100%;table-layout:fixed;{_WRAP}"
_COMPLIANCE_WIDTH = 11.5
"""The compliance column's share of a table, in percent ("100.0 %" and its heading, with padding)."""
_BANDS = ((95.0, "#e3f9e5", "#05400a", "good"), (80.0, "#fffbea", "#513c06", "fair"),
          (-1.0, "#ffeeee", "#610404", "poor"))


class ChecklistInfoView(Protocol):
    """What the digest shows of a checklist (``missed_checks.reporting.fleet_report.ChecklistInfo``)."""

    @property
    def name(self) -> str: ...

    @property
    def timezone(self) -> str | None: ...

    @property
    def deleted(self) -> bool: ...


class DigestReport(Protocol):
    """The fleet report the digest shows (``missed_checks.reporting.fleet_report.Report``, built with detail)."""

    @property
    def start(self) -> datetime: ...

    @property
    def end(self) -> datetime: ...

    @property
    def as_of(self) -> datetime: ...

    @property
    def rows(self) -> Sequence[ReportRow]: ...

    @property
    def outcomes(self) -> Sequence[WindowOutcome] | None: ...

    @property
    def checklists(self) -> Mapping[str, ChecklistInfoView]: ...

    @property
    def warnings(self) -> Sequence[str]: ...

    @property
    def findings(self) -> ReportFindings | None: ...


def worst_first(rows: Iterable[ReportRow]) -> list[ReportRow]:
    """``rows`` by compliance, lowest first (rows with nothing judged yet last), then most missed,
    then checklist and equipment."""
    return sorted(rows, key=lambda r: (r.compliance is None, r.compliance if r.compliance is not None else 0.0,
                                       -r.missed, r.checklist_id, r.equipment_id))


def _period_text(subscription: Subscription, start: datetime, end: datetime) -> str:
    zone = subscription.zone
    first = start.astimezone(zone)
    if subscription.period is Period.DAILY:
        return f"{first:%A %d %B %Y}"
    last = end.astimezone(zone).date() - timedelta(days=1)
    return f"{first:%a %d %b} – {last:%a %d %b %Y}"


def subject(subscription: Subscription, report: DigestReport) -> str:
    """The message's subject: period, fleet compliance and misses, and the defects open at its end
    when there are any (plain text)."""
    fleet = total(report.rows)
    done = "no windows judged" if fleet.compliance is None else f"{fleet.compliance:.1f} % done"
    kind = "Daily" if subscription.period is Period.DAILY else "Weekly"
    opened = len(report.findings.open_defects) if report.findings is not None else 0
    defects = f", {opened} open defect{'' if opened == 1 else 's'}" if opened else ""
    return (f"{kind} missed-checks digest, {_period_text(subscription, report.start, report.end)}: "
            f"{done}, {fleet.missed} missed{defects}")


def _label(column: str) -> str:
    return column.replace("_", " ")


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f} %"


def _band(value: float | None) -> tuple[str, str, str]:
    if value is None:
        return "#f5f7fa", "#52606d", "nothing judged"
    return next((bg, fg, word) for floor, bg, fg, word in _BANDS if value >= floor)


def _compliance_cell(value: float | None) -> str:
    background, colour, word = _band(value)
    return (f'<td style="{_CELL};background:{background};color:{colour};font-weight:600" '
            f'title="{escape(word)}">{escape(_pct(value))}</td>')


def _counts(row: ReportRow) -> str:
    data = row.to_dict()
    return "".join(f'<td style="{_CELL};{_TEXT}">{escape(str(data[c]))}</td>' for c in COUNT_COLUMNS)


def _count_width(column: str) -> float:
    """A count column's share of a table, in percent: its heading's longest word (the heading wraps
    between words) at about 1 % a letter (6.7 px of the 670 px inside the message; DejaVu's letters
    at 11 px are about 6), plus the padding; at least room for a four-digit count."""
    return max(7.0, max(len(word) for word in _label(column).split()) + 1.5)


_COUNT_HEADINGS: tuple[tuple[str, float | None], ...] = (
    ("compliance", _COMPLIANCE_WIDTH), *((_label(c), _count_width(c)) for c in COUNT_COLUMNS))
"""The headings of the compliance and count columns, with their shares of the table (percent)."""


def _table(headings: Sequence[tuple[str, float | None]], left: int, body: Sequence[str], name: str) -> str:
    """A table of ``body`` rows under ``headings`` (text, share of the width in percent; None: an
    equal part of what the others leave), the first ``left`` columns aligned left."""
    rest = 100.0 - sum(width for _, width in headings if width is not None)
    free = rest / max(sum(width is None for _, width in headings), 1)
    head = "".join(f'<th style="{_HEAD_LEFT if n < left else _HEAD};width:{free if width is None else width:g}%">'
                   f"{escape(heading)}</th>" for n, (heading, width) in enumerate(headings))
    return (f'<table role="presentation" data-section="{name}" cellpadding="0" cellspacing="0" '
            f'style="{_TABLE}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>')


def _checklist_name(report: DigestReport, checklist_id: str) -> str:
    info = report.checklists.get(checklist_id)
    if info is None:
        return checklist_id
    if info.deleted:
        return f"{checklist_id} (deleted)"
    return f"{checklist_id} · {info.name}" if info.name else checklist_id


def _zone_of(report: DigestReport, checklist_id: str) -> tzinfo:
    info = report.checklists.get(checklist_id)
    return ZoneInfo(info.timezone) if info is not None and info.timezone else UTC


def _checklist_section(report: DigestReport) -> str:
    by_checklist: dict[str, list[ReportRow]] = defaultdict(list)
    for row in report.rows:
        by_checklist[row.checklist_id].append(row)
    rows = worst_first(total(rows, checklist_id, TOTAL) for checklist_id, rows in by_checklist.items())
    body = [f'<tr data-row="checklist" data-id="{escape(row.checklist_id)}">'
            f'<td style="{_CELL_LEFT};{_TEXT}">{escape(_checklist_name(report, row.checklist_id))}</td>'
            f"{_compliance_cell(row.compliance)}{_counts(row)}</tr>" for row in rows]
    return (f'<h2 style="{_H2}">Checklists, worst first</h2>'
            + _table([("checklist", None), *_COUNT_HEADINGS], 1, body, "checklists"))


def _equipment_section(report: DigestReport, rows: Sequence[ReportRow]) -> str:
    shown = rows[:EQUIPMENT_ROWS]
    body = [f'<tr data-row="equipment" data-id="{escape(row.equipment_id)}">'
            f'<td style="{_CELL_LEFT};{_TEXT}">{escape(row.equipment_id)}'
            f'<span style="{_SUB}">{escape(row.checklist_id)}</span></td>'
            f"{_compliance_cell(row.compliance)}{_counts(row)}</tr>" for row in shown]
    more = (f'<p style="margin:6px 0;font-size:13px;{_MUTED}">and {len(rows) - len(shown)} more '
            "(missed-checks report has them all)</p>") if len(rows) > len(shown) else ""
    return (f'<h2 style="{_H2}">Equipment, worst first</h2>'
            + _table([("equipment, checklist", None), *_COUNT_HEADINGS], 1, body, "equipment")
            + more)


def _window(outcome: WindowOutcome, zone: tzinfo) -> str:
    start = local(outcome.window_start, zone)
    if outcome.window_end is None:
        return f"{start:%a %d %b %H:%M %Z}"
    end = local(outcome.window_end, zone)
    return (f"{start:%a %d %b %H:%M}–{end:%H:%M %Z}" if end.date() == start.date()
            else f"{start:%a %d %b %H:%M} – {end:%a %d %b %H:%M %Z}")


def _missed_section(report: DigestReport, order: Sequence[str]) -> str:
    missed = missed_checks(report.outcomes or (), order)
    if not missed:
        return ""
    shown = missed[:MISSED_ROWS]
    body = [f'<tr data-row="missed" data-id="{escape(o.equipment_id)}">'
            f'<td style="{_CELL_LEFT};{_TEXT}">{escape(o.equipment_id)}</td>'
            f'<td style="{_CELL_LEFT};{_MUTED}">{escape(o.checklist_id)}</td>'
            f'<td style="{_CELL_LEFT};{_TEXT}">{escape(_window(o, _zone_of(report, o.checklist_id)))}</td></tr>'
            for o in shown]
    more = (f'<p style="margin:6px 0;font-size:13px;{_MUTED}">and {len(missed) - len(shown)} more</p>'
            if len(missed) > len(shown) else "")
    return (f'<h2 style="{_H2}">Missed checks</h2>'
            + _table([("equipment", 22.0), ("checklist", 30.0), ("window (checklist's zone)", None)], 3, body,
                     "missed") + more)


def _found_lines(found: ReportFindings) -> list[str]:
    """The findings' figures in sentences (the HTML's paragraphs and the text's lines)."""
    fleet, ttr = found.fleet, found.time_to_resolve
    lines = [f"{fleet.performed} check{'' if fleet.performed == 1 else 's'} performed, {fleet.failed} with a failed "
             f"item, {fleet.critical_failed} with a failed critical item (a check with failed items still counts "
             "as performed in compliance)."]
    if ttr.count:
        lines.append(f"{ttr.count} defect{'' if ttr.count == 1 else 's'} resolved: {ttr.by_supervisor} by a "
                     f"supervisor, {ttr.by_passing_check} by a passing check; time to resolve: median "
                     f"{in_words(ttr.median or timedelta(0))}, longest {in_words(ttr.longest or timedelta(0))}.")
    return lines


def _has_findings(found: ReportFindings | None) -> bool:
    return found is not None and bool(found.fleet.failed or found.open_defects or found.resolved)


def _critical_texts(report: DigestReport, found: ReportFindings) -> list[tuple[str, str, str, str]]:
    """(equipment, checklist, when in the checklist's zone, the critical items it failed) of each
    check of the period that failed a critical item."""
    return [(c.equipment_id, c.checklist_id,
             local(c.performed_at, _zone_of(report, c.checklist_id)).strftime("%a %d %b %H:%M %Z"),
             ", ".join(i.label for i in c.failed_items if i.critical)) for c in found.critical_checks]


def _open_texts(report: DigestReport, found: ReportFindings) -> list[tuple[str, str, str, str, str]]:
    """(equipment, defect id, what failed, when found in the checklist's zone, open for) of each defect open."""
    return [(d.equipment_id, d.defect_id, ", ".join(d.items),
             f"{d.found_at.astimezone(_zone_of(report, d.checklist_id)):%a %d %b %H:%M %Z}", d.age_words)
            for d in found.open_defects]


def _left(text: str, sub: str | None = None) -> str:
    """A cell aligned left, ``sub`` on a line of its own below the text."""
    below = f'<span style="{_SUB}">{escape(sub)}</span>' if sub else ""
    return f'<td style="{_CELL_LEFT};{_TEXT}">{escape(text)}{below}</td>'


def _more(shown: int, of: int) -> str:
    return (f'<p style="margin:6px 0;font-size:13px;{_MUTED}">and {of - shown} more</p>' if of > shown else "")


def _findings_section(report: DigestReport, zone: tzinfo) -> str:
    """What the checks found: its figures, the checks that failed a critical item, the open defects."""
    found = report.findings
    if found is None or not _has_findings(found):
        return ""
    html = (f'<h2 style="{_H2}">What the checks found</h2>'
            + "".join(f'<p data-section="findings" style="margin:4px 0;font-size:14px;{_TEXT}">{escape(line)}</p>'
                      for line in _found_lines(found)))
    critical = _critical_texts(report, found)
    if critical:
        body = [f'<tr data-row="critical" data-id="{escape(equipment)}">{_left(equipment, checklist)}{_left(when)}'
                f"{_left(items)}</tr>" for equipment, checklist, when, items in critical[:FINDINGS_ROWS]]
        html += (f'<h2 style="{_H2}">Failed critical items</h2>'
                 + _table([("equipment, checklist", 30.0), ("performed (checklist's zone)", 30.0),
                           ("critical items failed", None)], 3, body, "critical")
                 + _more(len(body), len(critical)))
    opened = _open_texts(report, found)
    if opened:
        body = [f'<tr data-row="defect" data-id="{escape(defect_id)}">{_left(equipment, defect_id)}{_left(items)}'
                f"{_left(when)}{_left(age)}</tr>" for equipment, defect_id, items, when, age in opened[:FINDINGS_ROWS]]
        at = found.at.astimezone(zone).strftime("%a %d %b %H:%M %Z")
        html += (f'<h2 style="{_H2}">Open defects at {escape(at)}</h2>'
                 + _table([("equipment, defect", 26.0), ("what failed", None), ("found (checklist's zone)", 24.0),
                           ("open for", 18.0)], 4, body, "defects")
                 + _more(len(body), len(opened)))
    return html


def _summary(report: DigestReport) -> str:
    fleet = total(report.rows)
    background, colour, word = _band(fleet.compliance)
    reason = why_no_compliance(fleet)
    meaning = f"fleet compliance ({word})" if reason is None else f"no fleet compliance figure: {reason}"
    data = fleet.to_dict()
    share = f"{100 / len(COUNT_COLUMNS):g}"
    figures = "".join(
        f'<td style="width:{share}%;padding:4px 6px 4px 0;font-size:13px;vertical-align:top;{_MUTED}">'
        f'<span style="display:block;font-size:20px;font-weight:600;{_TEXT}">{escape(str(data[c]))}</span>'
        f"{escape(_label(c))}</td>" for c in COUNT_COLUMNS)
    return (f'<table role="presentation" data-section="summary" cellpadding="0" cellspacing="0" style="{_TABLE}">'
            f'<tr><td style="padding:12px;background:{background};color:{colour};font-size:14px">'
            f'<span style="display:block;font-size:28px;font-weight:700">{escape(_pct(fleet.compliance))}</span>'
            f"{escape(meaning)}</td></tr></table>"
            f'<table role="presentation" cellpadding="0" cellspacing="0" style="{_TABLE};margin-top:8px">'
            f"<tr>{figures}</tr></table>")


def render_digest(subscription: Subscription, report: DigestReport, reference: str = "",
                  address: str | None = None) -> str:
    """The digest of ``report`` (the period :meth:`Subscription.period_ending` gave) for
    ``subscription``, as a complete HTML document sent to ``address`` (default its first);
    ``reference``: its notification id, named in the last line as every notification e-mail names
    it (``missed-checks notification <id>``)."""
    zone = subscription.zone
    period = _period_text(subscription, report.start, report.end)
    equipment = worst_first(report.rows)
    scope = "all checklists" if subscription.whole_fleet else "checklists " + ", ".join(subscription.checklists)
    if report.rows:
        body = (_summary(report) + _checklist_section(report) + _equipment_section(report, equipment)
                + _findings_section(report, zone) + _missed_section(report, [r.equipment_id for r in equipment]))
    else:
        body = (f'<p data-section="summary" style="font-size:15px;{_TEXT}">No window of {escape(scope)} was due in '
                "this period.</p>" + _findings_section(report, zone))
    warnings = "".join(f'<p style="margin:4px 0;font-size:13px;color:#8d2b0b">Warning: {escape(w)}</p>'
                       for w in report.warnings)
    title = f"{'Daily' if subscription.period is Period.DAILY else 'Weekly'} digest: {period}"
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title></head>"
        f'<body style="margin:0;padding:0;background:#f5f7fa;{_FONT}">'
        f'<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f5f7fa">'
        '<tr><td align="center" style="padding:16px">'
        '<table role="presentation" cellpadding="0" cellspacing="0" style="width:100%;max-width:720px;'
        'table-layout:fixed;background:#ffffff;border:1px solid #e4e7eb">'
        f'<tr><td style="padding:20px 24px;{_FONT};{_WRAP}">'
        f'<h1 style="margin:0 0 4px 0;font-size:22px;{_TEXT}">Missed checks · {escape(title)}</h1>'
        f'<p style="margin:0 0 16px 0;font-size:13px;{_MUTED}">{escape(scope.capitalize())}; windows starting '
        f"{escape(report.start.astimezone(zone).strftime('%a %Y-%m-%d %H:%M %Z'))} to "
        f"{escape(report.end.astimezone(zone).strftime('%a %Y-%m-%d %H:%M %Z'))}, as of "
        f"{escape(report.as_of.astimezone(zone).strftime('%Y-%m-%d %H:%M %Z'))}. Window times are in each "
        "checklist's zone.</p>"
        f"{warnings}{body}"
        f'<p style="margin:24px 0 0 0;font-size:12px;{_MUTED}">Subscription {escape(subscription.subscription_id)} '
        f"for {escape(address or subscription.address)}: {escape(subscription.describe_when())}. To stop it: "
        f"missed-checks digest unsubscribe {escape(subscription.subscription_id)}"
        + (f"<br>missed-checks notification {escape(reference)}" if reference else "") + "</p>"
        "</td></tr></table></td></tr></table></body></html>"
    )


def render_text(subscription: Subscription, report: DigestReport) -> str:
    """The same digest as plain text (the message's text part, for clients that show no HTML)."""
    zone = subscription.zone
    lines = [f"{'Daily' if subscription.period is Period.DAILY else 'Weekly'} missed-checks digest: "
             f"{_period_text(subscription, report.start, report.end)} ({subscription.timezone})", ""]
    lines += [f"Warning: {w}" for w in report.warnings]
    if not report.rows:
        lines.append("No window was due in this period.")
    else:
        fleet_row = total(report.rows)
        fleet = fleet_row.to_dict()
        counts = ", ".join(f"{fleet[c]} {_label(c)}" for c in COUNT_COLUMNS)
        reason = why_no_compliance(fleet_row)
        lines.append(f"Fleet compliance: {_pct(fleet_row.compliance)} ({counts})" if reason is None
                     else f"Fleet compliance: no figure, {reason}; {counts}")
        by_checklist: dict[str, list[ReportRow]] = defaultdict(list)
        for row in report.rows:
            by_checklist[row.checklist_id].append(row)
        lines += ["", "Checklists, worst first:"]
        lines += [f"  - {_checklist_name(report, row.checklist_id)}: "
                  f"{'nothing judged' if row.compliance is None else _pct(row.compliance)}, {row.missed} missed"
                  for row in worst_first(total(rows, c, TOTAL) for c, rows in by_checklist.items())]
        equipment = worst_first(report.rows)
        missed = missed_checks(report.outcomes or (), [r.equipment_id for r in equipment])
        if missed:
            lines += ["", "Missed checks:"]
            lines += [f"  - {o.equipment_id} ({o.checklist_id}): {_window(o, _zone_of(report, o.checklist_id))}"
                      for o in missed[:MISSED_ROWS]]
            if len(missed) > MISSED_ROWS:
                lines.append(f"  ... and {len(missed) - MISSED_ROWS} more")
    lines += _findings_text(subscription, report)
    lines += ["", f"As of {report.as_of.astimezone(zone):%Y-%m-%d %H:%M %Z}. Subscription "
                  f"{subscription.subscription_id}: {subscription.describe_when()}; to stop it: "
                  f"missed-checks digest unsubscribe {subscription.subscription_id}"]
    return "\n".join(lines) + "\n"


def _findings_text(subscription: Subscription, report: DigestReport) -> list[str]:
    """The text part's lines of what the checks found (none: nothing was)."""
    found = report.findings
    if found is None or not _has_findings(found):
        return []
    lines = ["", "What the checks found:", *(f"  {line}" for line in _found_lines(found))]
    critical = _critical_texts(report, found)
    if critical:
        lines += ["", "Failed critical items:"]
        lines += [f"  - {equipment} ({checklist}) {when}: {items}"
                  for equipment, checklist, when, items in critical[:FINDINGS_ROWS]]
        if len(critical) > FINDINGS_ROWS:
            lines.append(f"  ... and {len(critical) - FINDINGS_ROWS} more")
    opened = _open_texts(report, found)
    if opened:
        lines += ["", f"Open defects at {found.at.astimezone(subscription.zone):%a %d %b %H:%M %Z}:"]
        lines += [f"  - {equipment} {defect_id}: {items}; found {when}, open for {age}"
                  for equipment, defect_id, items, when, age in opened[:FINDINGS_ROWS]]
        if len(opened) > FINDINGS_ROWS:
            lines.append(f"  ... and {len(opened) - FINDINGS_ROWS} more")
    return lines
