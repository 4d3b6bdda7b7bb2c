"""What a local run produced, read back from the embedded stack, and how it is printed.

:func:`build_report` reads the table (every missed-check record, every performed check), the
executions, the firings and every dead-letter queue, and returns one JSON-ready dict:

* ``missed``: ``checklist``, ``equipment``, ``window_start``, ``window_end`` of each record;
* ``performed``: ``checklist``, ``equipment``, ``performed_at`` with the occurrence window it
  belongs to (``window_start``) and ``timeliness``: ``on_time`` inside ``[start, end)``, ``late``
  inside ``[end, end + grace)`` of the rule in force when it was performed, ``no_window``
  otherwise (``also_counts_for`` lists a second window when the check is inside one window's
  grace and the next window, as the evaluation counts it for both);
* ``summary``: per checklist and equipment, windows ``on_time``, ``late``, ``missed`` and
  ``compliance_pct = (on_time + late) / (on_time + late + missed)``. A window counts once (the
  best performed check wins), and a missed-check record wins over a check recorded after it;
* ``executions`` (counts by status and by the plan's outcome), ``firings``, ``dead_letters`` (per
  queue logical id, bodies decoded), ``schedules``, ``lambda`` and ``stream`` statistics.

:func:`render_table` prints it for people (rich), :func:`render_csv` writes the summary as CSV.
"""

from __future__ import annotations

import csv
import io
from bisect import bisect_right
from collections import defaultdict
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from missed_checks.timefmt import to_utc_iso

if TYPE_CHECKING:
    from rich.console import Console

    from missed_checks_local.runtime import LocalRuntime
    from missed_checks_local.scenario import Scenario

__all__ = ["SUMMARY_COLUMNS", "build_report", "render_csv", "render_table"]

SUMMARY_COLUMNS = ("checklist", "equipment", "on_time", "late", "missed", "compliance_pct")
_EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
_LATEST = datetime(2200, 1, 1, tzinfo=UTC)
_LOOKBACK = timedelta(days=400)


def build_report(scenario: Scenario, runtime: LocalRuntime, table: Any) -> dict[str, Any]:
    ids = scenario.checklist_ids
    missed = []
    for checklist_id in ids:
        for item in table.missed_checks_of_checklist(checklist_id, _EARLIEST, _LATEST):
            missed.append(
                {
                    "checklist": item["checklist_id"],
                    "equipment": item["equipment_id"],
                    "window_start": item["window_start"],
                    "window_end": item["window_end"],
                }
            )
    missed.sort(key=lambda m: (m["window_start"], m["checklist"], m["equipment"]))
    rules = _RuleHistory(scenario)
    performed = []
    for checklist_id in ids:
        for check in table.performed_checks_of_checklist(checklist_id, _EARLIEST, _LATEST):
            matches = rules.classify(checklist_id, check.performed_at)
            window_start, timeliness = matches[0] if matches else (None, "no_window")
            entry = {
                "checklist": checklist_id,
                "equipment": check.equipment_id,
                "performed_at": to_utc_iso(check.performed_at),
                "window_start": window_start,
                "timeliness": timeliness,
            }
            if len(matches) > 1:
                entry["also_counts_for"] = [{"window_start": w, "timeliness": t} for w, t in matches[1:]]
            performed.append(entry)
    performed.sort(key=lambda p: (p["performed_at"], p["checklist"], p["equipment"]))
    failed = [
        {
            "checklist": record.input.get("checklist_id"),
            "instant": record.input.get("instant"),
            "status": record.status,
            "error": record.error,
            "execution": record.arn,
        }
        for record in runtime.executions
        if record.status != "SUCCEEDED"
    ]
    stream_stats = [
        {key: value for key, value in asdict(poller.stats).items() if key != "on_failure_messages"}
        for poller in runtime.pollers
    ]
    return {
        "scenario": scenario.name,
        "description": scenario.description,
        "start": to_utc_iso(scenario.start),
        "end": to_utc_iso(scenario.end),
        "stack": {"name": runtime.stack.stack_name, "outputs": dict(runtime.stack.outputs)},
        "missed": missed,
        "performed": performed,
        "summary": summarize(missed, performed),
        "executions": runtime.execution_counts(),
        "failed_executions": failed,
        "firings": runtime.firing_counts(),
        "dead_letters": runtime.read_dead_letters(),
        "schedules": {
            name: {
                "expression": definition.get("ScheduleExpression"),
                "timezone": definition.get("ScheduleExpressionTimezone"),
                "state": definition.get("State"),
            }
            for name, definition in sorted(runtime.scheduler.schedules.items())
        },
        "schedule_problems": dict(runtime.scheduler.problems),
        "lambda": runtime.invocation_summary(),
        "deployment_problems": runtime.deployment_problems(),
        "stream": stream_stats[0] if len(stream_stats) == 1 else stream_stats,
    }


class _RuleHistory:
    """The windows of each checklist's rule as it was at any instant of the scenario."""

    def __init__(self, scenario: Scenario) -> None:
        self._versions: dict[str, list[tuple[datetime, dict[str, Any]]]] = defaultdict(list)
        for event in scenario.events:
            if event.action == "put_checklist":
                self._versions[event.args["id"]].append((event.at, event.args))
        self._lo = scenario.start - _LOOKBACK
        self._hi = scenario.end + timedelta(days=1)
        self._windows: dict[tuple[str, int], list[Any]] = {}

    def _windows_of(self, checklist_id: str, version: int) -> list[Any]:
        key = (checklist_id, version)
        if key not in self._windows:
            from missed_checks.checklist import Checklist
            from missed_checks.errors import InvalidInput

            args = self._versions[checklist_id][version][1]
            checklist = Checklist(
                checklist_id=checklist_id,
                recurrence=args["recurrence"],
                timezone=args["timezone"],
                window=args["window"],
                grace=args["grace"],
            )
            try:
                windows = sorted(checklist.parsed().windows(self._lo, self._hi), key=lambda w: w.start)
            except InvalidInput:
                windows = []  # an invalid rule (written unvalidated) has no windows
            self._windows[key] = windows
        return self._windows[key]

    def classify(self, checklist_id: str, performed_at: datetime) -> list[tuple[str, str]]:
        """Every (window start, on_time|late) the check counts for, on-time window first.

        A check inside one window's grace and the next window's span counts for both, as the
        evaluation judges it."""
        versions = self._versions.get(checklist_id, [])
        if not versions:
            return []
        version = max(0, bisect_right([at for at, _ in versions], performed_at) - 1)
        windows = self._windows_of(checklist_id, version)
        starts = [w.start for w in windows]
        matches: list[tuple[str, str]] = []
        for i in range(bisect_right(starts, performed_at) - 1, -1, -1):
            window = windows[i]
            if window.evaluate_at <= performed_at:
                break  # this window and every earlier one closed before the check
            if performed_at < window.end:
                matches.insert(0, (to_utc_iso(window.start), "on_time"))
            else:
                matches.append((to_utc_iso(window.start), "late"))
        return matches


def summarize(missed: list[dict[str, Any]], performed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows per (checklist, equipment), each checklist's followed by its total, then the fleet total."""
    outcome: dict[tuple[str, str, str], str] = {}
    for check in performed:
        if check["window_start"] is None:
            continue
        counted = [(check["window_start"], check["timeliness"])] + [
            (extra["window_start"], extra["timeliness"]) for extra in check.get("also_counts_for", [])
        ]
        for window_start, timeliness in counted:
            key = (check["checklist"], check["equipment"], window_start)
            if outcome.get(key) != "on_time":
                outcome[key] = timeliness
    for record in missed:
        outcome[(record["checklist"], record["equipment"], record["window_start"])] = "missed"
    counts: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: {"on_time": 0, "late": 0, "missed": 0})
    for (checklist, equipment, _), result in outcome.items():
        counts[(checklist, equipment)][result] += 1
    rows = []
    fleet = {"on_time": 0, "late": 0, "missed": 0}
    for checklist in sorted({checklist for checklist, _ in counts}):
        subtotal = {"on_time": 0, "late": 0, "missed": 0}
        for (name, equipment), values in sorted(counts.items()):
            if name != checklist:
                continue
            rows.append(_row(checklist, equipment, values))
            for key, value in values.items():
                subtotal[key] += value
                fleet[key] += value
        rows.append(_row(checklist, "*", subtotal))
    rows.append(_row("*", "*", fleet))
    return rows


def _row(checklist: str, equipment: str, values: dict[str, int]) -> dict[str, Any]:
    judged = values["on_time"] + values["late"] + values["missed"]
    compliance = None if judged == 0 else round(100.0 * (values["on_time"] + values["late"]) / judged, 1)
    return {"checklist": checklist, "equipment": equipment, **values, "compliance_pct": compliance}


def render_csv(report: dict[str, Any]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=SUMMARY_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in report["summary"]:
        writer.writerow({key: "" if row[key] is None else row[key] for key in SUMMARY_COLUMNS})
    return out.getvalue()


def render_table(report: dict[str, Any], console: Console, *, where_next: list[str] | None = None) -> None:
    from rich.table import Table

    title = f"{report['scenario']}: {report['start']} to {report['end']}"
    table = Table(title=title, title_justify="left", show_lines=False)
    for column, justify in zip(
        ("Checklist", "Equipment", "On time", "Late", "Missed", "Compliance"),
        ("left", "left", "right", "right", "right", "right"),
        strict=True,
    ):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    previous = None
    for row in report["summary"]:
        is_total = row["equipment"] == "*"
        if row["checklist"] == "*":
            checklist, label = "[bold]fleet[/bold]", "[italic]all[/italic]"
        elif is_total:
            checklist, label = "", "[italic]all[/italic]"
        else:
            checklist, label = ("" if row["checklist"] == previous else row["checklist"]), row["equipment"]
        compliance = "-" if row["compliance_pct"] is None else f"{row['compliance_pct']:.1f} %"
        missed = f"[red]{row['missed']}[/red]" if row["missed"] else "0"
        table.add_row(
            checklist,
            label,
            str(row["on_time"]),
            str(row["late"]),
            missed,
            compliance,
            style="bold" if is_total else "",
        )
        if is_total:
            table.add_section()
        previous = row["checklist"]
    console.print(table)
    executions = report["executions"]
    firings = report["firings"]
    statuses = ", ".join(f"{count} {status.lower()}" for status, count in executions["by_status"].items())
    outcomes = ", ".join(f"{count} {outcome}" for outcome, count in executions["by_outcome"].items())
    console.print(
        f"Schedules fired {firings['fired']} times ({firings['failed_to_start']} failed to start); "
        f"{executions['started']} evaluations: {statuses or 'none'}"
        + (f" (plans: {outcomes})" if outcomes else "")
        + "."
    )
    console.print(f"Missed checks recorded: {len(report['missed'])}; performed checks: {len(report['performed'])}.")
    letters = report["dead_letters"]
    if any(letters.values()):
        console.print("\n[bold]Dead-letter queues[/bold]")
        for queue, messages in letters.items():
            if messages:
                console.print(f"  {queue}: {len(messages)} message(s)")
                for message in messages[:5]:
                    console.print(f"    - {_describe_letter(message)}", markup=False, highlight=False)
    if report.get("schedule_problems"):
        console.print("\n[bold]Schedules AWS would have refused[/bold]")
        for name, problem in report["schedule_problems"].items():
            console.print(f"  {name}: {problem}", markup=False)
    if where_next:
        console.print("\n[bold]Where to look next[/bold]")
        for line in where_next:
            console.print(f"  - {line}", highlight=False)


def _describe_letter(message: dict[str, Any]) -> str:
    body = message.get("body")
    attributes = message.get("attributes") or {}
    if isinstance(body, dict) and body.get("source") == "schedule-sync":
        error = body.get("error") or {}
        return f"schedule-sync refused {body.get('checklist_id')}: {error.get('field')}: {error.get('message')}"
    if isinstance(body, dict) and body.get("source") == "evaluation":
        when = body.get("window") or body.get("instant")
        if isinstance(when, dict):
            when = when.get("start")
        return f"evaluation of {body.get('checklist_id')} ({when}) failed: {body.get('error')}"
    if isinstance(body, dict) and "DDBStreamBatchInfo" in body:
        info = body["DDBStreamBatchInfo"]
        return (
            f"stream batch given up after {body['requestContext'].get('approximateInvokeCount')} attempts: "
            f"{info.get('batchSize')} record(s) from sequence {info.get('startSequenceNumber')}"
        )
    if "ERROR_CODE" in attributes:
        return f"firing not started ({attributes['ERROR_CODE']}): {body}"
    return str(body)[:200]
