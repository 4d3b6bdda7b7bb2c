"""PlanEvaluation task: load the checklist, check its rule, list the windows due, and judge them
right here when the fleet is small enough for one task (``EQUIPMENT_PER_TASK`` equipment-windows);
otherwise hand them, with the fleet's batches of shards, to the state machine's fan-out.

An execution input may name a ``claimed_window`` (a dead-letter replay does, for the window whose
claim it was handed): when this execution holds that window's claim and nobody announced it, the
window is judged again so that CloseWindow announces it, even when the watermark has passed it.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from missed_checks import clock, judging
from missed_checks.aws import settings
from missed_checks.aws.table import ChecklistTable
from missed_checks.contracts import PlanEvaluationInput, PlanEvaluationOutput, dump, parse
from missed_checks.evaluation import Outcome, plan_evaluation
from missed_checks.recurrence import OccurrenceWindow
from missed_checks.timefmt import parse_instant, to_utc_iso

logger = Logger()
tracer = Tracer()
metrics = Metrics()


def claimed_window(table: ChecklistTable, task: PlanEvaluationInput) -> OccurrenceWindow | None:
    """The input's ``claimed_window`` if this execution holds its claim and it was not announced."""
    if task.input.claimed_window is None:
        return None
    window = task.input.claimed_window.occurrence
    record = table.judged_window(task.input.checklist_id, window.start)
    if record is None or record.get("execution") != task.execution or record.get("announced"):
        logger.info("claimed window not held by this execution, or announced already: not judged again",
                    claimed_window=to_utc_iso(window.start), claimed_by=(record or {}).get("execution"))
        return None
    return window


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    task = parse(PlanEvaluationInput, event)
    checklist_id, execution = task.input.checklist_id, task.execution
    instant = parse_instant(task.input.instant, "input.instant")
    logger.append_keys(checklist_id=checklist_id, instant=task.input.instant, execution=execution)
    table = ChecklistTable(settings.required("TABLE_NAME"))
    checklist = table.get_checklist(checklist_id)
    claimed = claimed_window(table, task)
    plan = plan_evaluation(checklist_id, checklist, instant, settings.required_int("MAX_WINDOWS_PER_RUN"),
                           now=clock.now(), claimed=claimed)
    logger.info("evaluation planned", outcome=plan.outcome.value, reason=plan.reason, windows=len(plan.windows))
    if plan.outcome is not Outcome.EVALUATE:
        metrics.add_metric(name="FiringsWithNothingDue", unit=MetricUnit.Count, value=1)
        return _output({**plan.to_dict(), "equipment": None, "judged": []})

    metrics.add_metric(name="WindowsDue", unit=MetricUnit.Count, value=len(plan.windows))
    equipment = table.count_assignments(checklist_id)
    split = plan.split(equipment, settings.required_int("EQUIPMENT_PER_TASK"))
    for window in split.fan_out:  # the rule each is judged by, before any missed check of it exists
        table.open_window(checklist_id, window, plan.judged_by)
    judged = judging.judge_windows(table, checklist_id, split.here, plan.judged_by, split.batches[0], execution,
                                   settings.required("EVENT_BUS_NAME"), clock.now) if split.here else []
    for outcome in judged:
        metrics.add_metric(name="WindowsJudged", unit=MetricUnit.Count, value=1)
        metrics.add_metric(name="MissedChecksRecorded", unit=MetricUnit.Count, value=outcome["newly_recorded"])
        if outcome["announced_now"]:
            metrics.add_metric(name="WindowsAnnounced", unit=MetricUnit.Count, value=1)
    logger.info("windows judged here" if judged else "windows fanned out", equipment=equipment,
                judged=len(judged), fanned_out=len(split.fan_out), batches=len(split.batches))
    return _output({**plan.to_dict(split), "equipment": equipment, "judged": judged})


def _output(answer: dict[str, Any]) -> dict[str, Any]:
    return dump(parse(PlanEvaluationOutput, answer))
