"""RecordMissedChecks task: judge one batch of equipment shards for one occurrence window.

Per shard, one Query reads its assignments and one its performed checks in ``[start, end + grace)``;
every counted piece of equipment without one gets a missed check by conditional put, so a retry,
a re-run or a redrive never writes a record twice. It returns counts only: the state stays a few
hundred bytes per batch whatever the fleet size.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from missed_checks import clock
from missed_checks.aws import settings
from missed_checks.aws.observability import lambda_handler, logger, metrics
from missed_checks.aws.table import EvaluationTable
from missed_checks.contracts import RecordMissedChecksInput, dump, parse
from missed_checks.evaluation import judging


@lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    task = parse(RecordMissedChecksInput, event)
    window = task.window
    logger.append_keys(checklist_id=task.checklist_id, shards=task.shards, window_start=window.start.isoformat())

    table = EvaluationTable(settings.required("TABLE_NAME"))
    counts = judging.judge_shards(table, task.checklist_id, window, task.shards, task.execution, clock.now)
    logger.info("shards judged", **{k: getattr(counts, k) for k in judging.COUNTS})
    metrics.add_metric(name="MissedChecksRecorded", unit=MetricUnit.Count, value=counts.recorded)
    return dump(counts)
