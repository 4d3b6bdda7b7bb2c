"""RecordMissedChecks task: judge one batch of equipment shards for one occurrence window.

Per shard, one Query reads its assignments and one its performed checks in ``[start, end + grace)``;
every counted piece of equipment without one gets a missed check by conditional put, so a retry,
a re-run or a redrive never writes a record twice. It returns counts only: the state stays a few
hundred bytes per batch whatever the fleet size.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from missed_checks import clock, judging
from missed_checks.aws import settings
from missed_checks.aws.table import ChecklistTable
from missed_checks.checklist import validate_checklist_id
from missed_checks.equipment import SHARD_COUNT
from missed_checks.errors import InvalidInput
from missed_checks.recurrence import OccurrenceWindow

logger = Logger()
tracer = Tracer()
metrics = Metrics()


def shards_of(value: object) -> list[int]:
    if (not isinstance(value, list) or not value
            or not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < SHARD_COUNT for s in value)):
        raise InvalidInput("shards", f"expected a list of whole numbers from 0 to {SHARD_COUNT - 1}, got {value!r}")
    return value


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    checklist_id = validate_checklist_id(event.get("checklist_id"), "checklist_id")
    shards = shards_of(event.get("shards"))
    window = OccurrenceWindow.from_dict(event.get("window") or {})
    execution = str(event.get("execution") or "manual")
    logger.append_keys(checklist_id=checklist_id, shards=shards, window_start=window.start.isoformat())

    table = ChecklistTable(settings.required("TABLE_NAME"))
    counts = judging.judge_shards(table, checklist_id, window, shards, execution, clock.now)
    logger.info("shards judged", **{k: counts[k] for k in judging.COUNTS})
    metrics.add_metric(name="MissedChecksRecorded", unit=MetricUnit.Count, value=counts["recorded"])
    return counts
