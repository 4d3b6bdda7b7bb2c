"""What a local run produced: the product's fleet report, and the run's own diagnostics.

:func:`build_result` returns one dict:

* ``report``: the fleet report exactly as ``missed-checks report`` computes it
  (:func:`missed_checks.reporting.fleet_report.build_report`, with its window outcomes), over the windows
  starting in the scenario's ``[start, end)``, as of the simulated clock at the end. There is no
  other report of a local run: the demo, ``local run`` and the end-to-end tests print and assert
  this one. In JSON it is the ``report`` command's document plus ``checklists`` and ``windows``
  (every counted window: ``outcome`` and the facts behind it, docs/report-outcomes.md).
* ``missed``: every missed-check record the state machine wrote (``checklist``, ``equipment``,
  ``window_start``, ``window_end``, ``dismissal``), whatever its window; ``performed``: every
  performed check recorded (``checklist``, ``equipment``, ``performed_at``). Facts from the
  table, not judgements.
* ``executions`` (counts by status and by the plan's outcome), ``failed_executions``,
  ``firings``, ``dead_letters`` (per queue logical id, bodies decoded), ``schedules``,
  ``schedule_problems``, ``lambda``, ``deployment_problems`` and ``stream`` statistics.
* ``readiness`` (#33): every ``Equipment readiness changed`` event a subscriber of the stack's bus
  received (its detail), in the order of the changes; ``defects``: every defect of the scenario's
  equipment (``defect_id``, ``checklist``, ``equipment``, ``found_at``, ``found_by``, ``failed_items``,
  ``status``, ``resolved_how``, ``resolved_at``, ``resolved_by``), oldest first.
* ``notifications``: every notification sent (#18: ``kind``, ``checklist``, ``window_start``, ``to``,
  ``equipment``, ``sent_at`` simulated, ``subject``), as the embedded SES captured them
  (:mod:`missed_checks_local.product.notifications`).

``missed-checks local run`` prints it for people (``missed_checks_ops.cli.local.print_run``).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from missed_checks.reporting.fleet_report import Report, build_report
from missed_checks.timefmt import to_utc_iso
from missed_checks_local.product.notifications import captured_notifications

if TYPE_CHECKING:
    from missed_checks_local.product.scenario import Scenario
    from missed_checks_local.runtime import LocalRuntime

__all__ = ["build_result", "to_json"]

_EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
_LATEST = datetime(2200, 1, 1, tzinfo=UTC)


def build_result(scenario: Scenario, runtime: LocalRuntime, table: Any,
                 readiness: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    report = build_report(table, scenario.start, scenario.end, now=runtime.clock.now(), detail=True)
    ids = scenario.checklist_ids
    missed = []
    for checklist_id in ids:
        for item in table.missed_checks_of_checklist(checklist_id, _EARLIEST, _LATEST):
            missed.append({"checklist": item["checklist_id"], "equipment": item["equipment_id"],
                           "window_start": item["window_start"], "window_end": item["window_end"],
                           "dismissal": item.get("dismissal")})
    missed.sort(key=lambda m: (m["window_start"], m["checklist"], m["equipment"]))
    performed = [{"checklist": checklist_id, "equipment": check.equipment_id,
                  "performed_at": to_utc_iso(check.performed_at)}
                 for checklist_id in ids
                 for check in table.performed_checks_of_checklist(checklist_id, _EARLIEST, _LATEST)]
    performed.sort(key=lambda p: (p["performed_at"], p["checklist"], p["equipment"]))
    failed = [
        {"checklist": record.input.get("checklist_id"), "instant": record.input.get("instant"),
         "status": record.status, "error": record.error, "execution": record.arn}
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
        "report": report,
        "missed": missed,
        "performed": performed,
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
        # notifications (#18): what the embedded SES captured, with what each is about
        "notifications": captured_notifications(runtime.stack, table.name, scenario.start,
                                                runtime.clock.now() + timedelta(seconds=1)),
        # cleared to operate (#33): what a subscriber heard, and the defects on record
        "readiness": list(readiness or []),
        "defects": _defects(table, scenario.equipment_ids),
    }


def _defects(table: Any, equipment_ids: list[str]) -> list[dict[str, Any]]:
    found = [defect for equipment_id in equipment_ids for defect in table.defects_of_equipment(equipment_id)]
    entries = [{"defect_id": d.defect_id, "checklist": d.checklist_id, "equipment": d.equipment_id,
                "found_at": to_utc_iso(d.found_at), "found_by": d.found_by,
                "failed_items": [f.item_id for f in d.failed_items], "status": str(d.status),
                "resolved_how": None if d.resolved_how is None else str(d.resolved_how),
                "resolved_at": None if d.resolved_at is None else to_utc_iso(d.resolved_at),
                "resolved_by": d.resolved_by} for d in found]
    return sorted(entries, key=lambda d: (d["found_at"], d["equipment"]))


def to_json(result: dict[str, Any]) -> str:
    """The run as one JSON document (the report as the ``report`` command's JSON, with its windows)."""
    def encode(value: Any) -> Any:
        if isinstance(value, Report):
            return value.to_dict()
        return str(value)

    return json.dumps(result, indent=2, default=encode) + "\n"


