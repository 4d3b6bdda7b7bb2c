"""PlanEvaluation task: load the checklist, check its rule, list the windows due."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from missed_checks import clock
from missed_checks.aws import settings
from missed_checks.aws.table import ChecklistTable
from missed_checks.checklist import validate_checklist_id
from missed_checks.evaluation import Outcome, plan_evaluation
from missed_checks.timefmt import parse_instant

logger = Logger()
tracer = Tracer()
metrics = Metrics()


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    checklist_id = validate_checklist_id(event.get("checklist_id"), "checklist_id")
    instant = parse_instant(event.get("instant", ""), "instant")
    logger.append_keys(checklist_id=checklist_id, instant=event["instant"], execution=event.get("execution"))
    checklist = ChecklistTable(settings.required("TABLE_NAME")).get_checklist(checklist_id)
    plan = plan_evaluation(checklist_id, checklist, instant, settings.optional_int("MAX_WINDOWS_PER_RUN", 20),
                           now=clock.now())
    logger.info("evaluation planned", outcome=plan.outcome.value, reason=plan.reason, windows=len(plan.windows))
    if plan.outcome is Outcome.EVALUATE:
        metrics.add_metric(name="WindowsDue", unit=MetricUnit.Count, value=len(plan.windows))
    else:
        metrics.add_metric(name="FiringsWithNothingDue", unit=MetricUnit.Count, value=1)
    return plan.to_dict()
