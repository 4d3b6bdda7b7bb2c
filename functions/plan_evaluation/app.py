"""PlanEvaluation task: load the checklist, check its rule, list the windows due, and judge them
right here when the fleet is small enough for one task (``EQUIPMENT_PER_TASK`` equipment-windows);
otherwise hand them, with the fleet's batches of shards, to the state machine's fan-out.

An execution input may name a ``claimed_window`` (a dead-letter replay does, for the window whose
claim it was handed): when this execution holds that window's claim and nobody announced it, the
window is judged again so that CloseWindow announces it, even when the watermark has passed it.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from missed_checks import clock
from missed_checks.aws import settings
from missed_checks.aws.events import EventBusAnnouncer
from missed_checks.aws.observability import lambda_handler, logger, metrics
from missed_checks.aws.table import EvaluationTable
from missed_checks.contracts import PlanEvaluationInput, dump, parse
from missed_checks.evaluation import judging
from missed_checks.evaluation.planning import Outcome
from missed_checks.timefmt import parse_instant


@lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    task = parse(PlanEvaluationInput, event)
    checklist_id, execution = task.input.checklist_id, task.execution
    instant = parse_instant(task.input.instant, "input.instant")
    logger.append_keys(checklist_id=checklist_id, instant=task.input.instant, execution=execution)
    table = EvaluationTable(settings.required("TABLE_NAME"))
    claimed = judging.claimed_window(table, task)
    if task.input.claimed_window is not None and claimed is None:
        logger.info("claimed window not held by this execution, or announced already: not judged again",
                    claimed_window=task.input.claimed_window.start)
    answer = judging.evaluate(
        table, EventBusAnnouncer(settings.required("EVENT_BUS_NAME")), task, instant, claimed=claimed,
        max_windows=settings.required_int("MAX_WINDOWS_PER_RUN"),
        per_task=settings.required_int("EQUIPMENT_PER_TASK"), now=clock.now)
    due = len(answer.windows) + len(answer.judged)
    logger.info("evaluation planned", outcome=answer.outcome.value, reason=answer.reason, windows=due)
    if answer.outcome is not Outcome.EVALUATE:
        metrics.add_metric(name="FiringsWithNothingDue", unit=MetricUnit.Count, value=1)
        return dump(answer)
    metrics.add_metric(name="WindowsDue", unit=MetricUnit.Count, value=due)
    for outcome in answer.judged:
        metrics.add_metric(name="WindowsJudged", unit=MetricUnit.Count, value=1)
        metrics.add_metric(name="MissedChecksRecorded", unit=MetricUnit.Count, value=outcome.newly_recorded)
        if outcome.announced_now:
            metrics.add_metric(name="WindowsAnnounced", unit=MetricUnit.Count, value=1)
    logger.info("windows judged here" if answer.judged else "windows fanned out", equipment=answer.equipment,
                judged=len(answer.judged), fanned_out=len(answer.windows), batches=len(answer.batches))
    return dump(answer)
