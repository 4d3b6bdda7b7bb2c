"""CloseWindow task: record the judged window, announce it once on EventBridge, advance the watermark.

The judged-window record doubles as the announcement claim, won by exactly one execution per
window in a conditional write: the first to judge it. Only that execution announces (on its first
attempt, or on a retry or redrive when an earlier attempt failed before the event went out), so
an execution racing it (a duplicate Scheduler delivery, a re-run, a dead-letter replay) neither
announces nor overwrites the totals; it still succeeds and moves the watermark. The watermark
moves last and only forward, so a failure before it leaves the window to be judged
(idempotently) again. The work itself is :func:`missed_checks.evaluation.judging.close_window`.
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
from missed_checks.contracts import CloseWindowInput, dump, parse
from missed_checks.evaluation import judging


@lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    task = parse(CloseWindowInput, event)
    window = task.window
    logger.append_keys(checklist_id=task.checklist_id, window_start=window.start.isoformat())
    table = EvaluationTable(settings.required("TABLE_NAME"))
    outcome = judging.close_window(table, EventBusAnnouncer(settings.required("EVENT_BUS_NAME")), task.checklist_id,
                                   window, task.batches, task.execution, clock.now)
    if outcome.announced_now:
        metrics.add_metric(name="WindowsAnnounced", unit=MetricUnit.Count, value=1)
    elif not outcome.announced:
        # Another execution judged this window first and owns its announcement: if it has not
        # announced yet it is doing so now (or failed, and its dead letter's replay takes it over).
        log = logger.info if outcome.announced_by_it else logger.warning
        log("window claimed by another execution", claimed_by=outcome.claimed_by,
            announced_by_it=outcome.announced_by_it)
        metrics.add_metric(name="WindowsClaimedByAnotherExecution", unit=MetricUnit.Count, value=1)
    metrics.add_metric(name="WindowsJudged", unit=MetricUnit.Count, value=1)
    logger.info("window closed", missed=outcome.missed, announced=outcome.announced,
                watermark_advanced=outcome.watermark_advanced)
    return dump(outcome)
