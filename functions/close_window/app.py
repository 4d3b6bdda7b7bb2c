"""CloseWindow task: record the judged window, announce it once on EventBridge, advance the watermark.

The judged-window record doubles as the announcement claim, won by exactly one execution per
window in a conditional write: the first to judge it. Only that execution announces (on its first
attempt, or on a retry or redrive when an earlier attempt failed before the event went out), so
an execution racing it (a duplicate Scheduler delivery, a re-run, a dead-letter replay) neither
announces nor overwrites the totals; it still succeeds and moves the watermark. The watermark
moves last and only forward, so a failure before it leaves the window to be judged
(idempotently) again.
"""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from missed_checks import clock
from missed_checks.aws import settings
from missed_checks.aws.clients import client
from missed_checks.aws.table import ChecklistTable
from missed_checks.checklist import validate_checklist_id
from missed_checks.errors import TransientError
from missed_checks.recurrence import OccurrenceWindow
from missed_checks.timefmt import to_utc_iso

logger = Logger()
tracer = Tracer()
metrics = Metrics()

EVENT_SOURCE = "missed-checks"
EVENT_DETAIL_TYPE = "Occurrence window judged"
MAX_LISTED = 100


def window_summary(window: OccurrenceWindow, batches: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "window_start": to_utc_iso(window.start),
        "window_end": to_utc_iso(window.end),
        "evaluate_at": to_utc_iso(window.evaluate_at),
        "equipment_counted": sum(int(batch.get("counted", 0)) for batch in batches),
        "performed": sum(int(batch.get("performed", 0)) for batch in batches),
        "missed": sum(int(batch.get("missed", 0)) for batch in batches),
        "newly_recorded": sum(int(batch.get("recorded", 0)) for batch in batches),
    }


def window_event(checklist_id: str, window: OccurrenceWindow, summary: dict[str, Any], execution: str,
                 missed_equipment: list[str] | None) -> dict[str, Any]:
    detail: dict[str, Any] = {
        "checklist_id": checklist_id,
        "window_id": f"{checklist_id}#{summary['window_start']}",
        "window": window.to_dict(),
        **{k: summary[k] for k in ("equipment_counted", "performed", "missed", "newly_recorded")},
        "execution": execution,
    }
    if missed_equipment is not None:
        detail["missed_equipment"] = missed_equipment
    return detail


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    checklist_id = validate_checklist_id(event.get("checklist_id"), "checklist_id")
    window = OccurrenceWindow.from_dict(event.get("window") or {})
    execution = str(event.get("execution") or "manual")
    logger.append_keys(checklist_id=checklist_id, window_start=window.start.isoformat())
    table = ChecklistTable(settings.required("TABLE_NAME"))
    summary = window_summary(window, list(event.get("batches") or []))

    claim = table.claim_window(checklist_id, {**summary, "judged_at": to_utc_iso(clock.now())}, execution)
    if claim.must_announce:
        listed = (table.missed_equipment_of_window(checklist_id, window.start)
                  if summary["missed"] <= MAX_LISTED else None)
        detail = window_event(checklist_id, window, summary, execution, listed)
        response = client("events").put_events(Entries=[{
            "Source": EVENT_SOURCE,
            "DetailType": EVENT_DETAIL_TYPE,
            "Detail": json.dumps(detail),
            "EventBusName": settings.required("EVENT_BUS_NAME"),
        }])
        if response.get("FailedEntryCount"):
            raise TransientError(f"EventBridge did not accept the window event: {response.get('Entries')}")
        table.mark_window_announced(checklist_id, summary["window_start"])
        metrics.add_metric(name="WindowsAnnounced", unit=MetricUnit.Count, value=1)
    elif not claim.won:
        # Another execution judged this window first and owns its announcement: if it has not
        # announced yet it is doing so now (or failed, and its dead letter's replay takes it over).
        log = logger.info if claim.announced else logger.warning
        log("window claimed by another execution", claimed_by=claim.holder, announced_by_it=claim.announced)
        metrics.add_metric(name="WindowsClaimedByAnotherExecution", unit=MetricUnit.Count, value=1)
    advanced = table.advance_watermark(checklist_id, window.end)
    metrics.add_metric(name="WindowsJudged", unit=MetricUnit.Count, value=1)
    logger.info("window closed", missed=summary["missed"], announced=claim.won, watermark_advanced=advanced)
    return {**{k: summary[k] for k in ("window_start", "window_end", "missed", "newly_recorded")},
            "announced": claim.won, "claimed_by": claim.holder, "watermark_advanced": advanced}
