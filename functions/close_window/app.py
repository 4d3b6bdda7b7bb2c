"""CloseWindow task: advance the watermark past a judged window, then announce it on EventBridge.

The watermark moves first and only forward, so a retry after a failed announcement re-announces
without judging anything twice. Each event carries the missed equipment, or only their count
when there are more than fit comfortably in an event.
"""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

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


def window_event(checklist_id: str, window: OccurrenceWindow, batches: list[dict[str, Any]],
                 execution: str) -> dict[str, Any]:
    missed = sorted(e for batch in batches for e in batch.get("missed_equipment", []))
    missed_count = sum(int(batch.get("missed", 0)) for batch in batches)
    detail: dict[str, Any] = {
        "checklist_id": checklist_id,
        "window": window.to_dict(),
        "equipment_counted": sum(int(batch.get("counted", 0)) for batch in batches),
        "performed": sum(int(batch.get("performed", 0)) for batch in batches),
        "missed": missed_count,
        "newly_recorded": sum(int(batch.get("recorded", 0)) for batch in batches),
        "execution": execution,
    }
    if missed_count <= MAX_LISTED:
        detail["missed_equipment"] = missed
    return detail


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    checklist_id = validate_checklist_id(event.get("checklist_id"), "checklist_id")
    window = OccurrenceWindow.from_dict(event.get("window") or {})
    execution = str(event.get("execution") or "manual")
    batches = list(event.get("batches") or [])
    logger.append_keys(checklist_id=checklist_id, window_start=window.start.isoformat())

    advanced = ChecklistTable(settings.required("TABLE_NAME")).advance_watermark(checklist_id, window.end)
    detail = window_event(checklist_id, window, batches, execution)
    response = client("events").put_events(Entries=[{
        "Source": EVENT_SOURCE,
        "DetailType": EVENT_DETAIL_TYPE,
        "Detail": json.dumps(detail),
        "EventBusName": settings.required("EVENT_BUS_NAME"),
        "Resources": [],
    }])
    if response.get("FailedEntryCount"):
        raise TransientError(f"EventBridge did not accept the window event: {response.get('Entries')}")
    metrics.add_metric(name="WindowsJudged", unit=MetricUnit.Count, value=1)
    logger.info("window closed", missed=detail["missed"], watermark_advanced=advanced)
    return {
        "window_start": to_utc_iso(window.start),
        "window_end": to_utc_iso(window.end),
        "missed": detail["missed"],
        "newly_recorded": detail["newly_recorded"],
        "watermark_advanced": advanced,
    }
