"""RecordMissedChecks task: judge one equipment shard for one occurrence window.

One Query reads the shard's assignments, one Query its performed checks in ``[start, end + grace)``;
every counted piece of equipment without one gets a missed check by conditional put, so a retry,
a re-run or a redrive never writes a record twice. It returns counts only: the state stays a few
hundred bytes per shard whatever the fleet size.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from missed_checks import clock
from missed_checks.aws import settings
from missed_checks.aws.table import ChecklistTable
from missed_checks.checklist import validate_checklist_id
from missed_checks.equipment import SHARD_COUNT
from missed_checks.errors import InvalidInput
from missed_checks.missed_check import judge, missed_check_item
from missed_checks.recurrence import OccurrenceWindow

logger = Logger()
tracer = Tracer()
metrics = Metrics()

WRITE_THREADS = 16


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    checklist_id = validate_checklist_id(event.get("checklist_id"), "checklist_id")
    shard = event.get("shard")
    if not isinstance(shard, int) or not 0 <= shard < SHARD_COUNT:
        raise InvalidInput("shard", f"expected a whole number from 0 to {SHARD_COUNT - 1}, got {shard!r}")
    window = OccurrenceWindow.from_dict(event.get("window") or {})
    execution = str(event.get("execution") or "manual")
    logger.append_keys(checklist_id=checklist_id, shard=shard, window_start=window.start.isoformat())

    table = ChecklistTable(settings.required("TABLE_NAME"))
    assignments = table.assignments(checklist_id, shard)
    performed = table.performed_checks(checklist_id, shard, window.start, window.evaluate_at)
    judgement = judge(window, assignments, performed)

    judged_at = clock.now()
    items = [
        missed_check_item(checklist_id=checklist_id, equipment_id=equipment_id, window=window,
                          judged_by=event.get("judged_by") or {}, judged_at=judged_at, execution=execution)
        for equipment_id in judgement.missed
    ]
    with ThreadPoolExecutor(max_workers=WRITE_THREADS) as pool:
        recorded = sum(pool.map(table.put_missed_check, items))

    logger.info("shard judged", counted=len(judgement.counted), performed=len(judgement.performed),
                missed=len(judgement.missed), recorded=recorded)
    metrics.add_metric(name="MissedChecksRecorded", unit=MetricUnit.Count, value=recorded)
    return {
        "shard": shard,
        "counted": len(judgement.counted),
        "performed": len(judgement.performed),
        "missed": len(judgement.missed),
        "recorded": recorded,
    }
