"""PlanEvaluation task: load the checklist, check its rule, list the windows due.

An execution input may name a ``claimed_window`` (a dead-letter replay does, for the window whose
claim it was handed): when this execution holds that window's claim and nobody announced it, the
window is judged again so that CloseWindow announces it, even when the watermark has passed it.
"""

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
from missed_checks.recurrence import OccurrenceWindow
from missed_checks.timefmt import parse_instant, to_utc_iso

logger = Logger()
tracer = Tracer()
metrics = Metrics()


def claimed_window(table: ChecklistTable, checklist_id: str, event: dict[str, Any]) -> OccurrenceWindow | None:
    """The input's ``claimed_window`` if this execution holds its claim and it was not announced."""
    given = (event.get("input") or {}).get("claimed_window") if isinstance(event.get("input"), dict) else None
    if not given:
        return None
    window = OccurrenceWindow.from_dict(given if isinstance(given, dict) else {})
    record = table.judged_window(checklist_id, window.start)
    if record is None or record.get("execution") != event.get("execution") or record.get("announced"):
        logger.info("claimed window not held by this execution, or announced already: not judged again",
                    claimed_window=to_utc_iso(window.start), claimed_by=(record or {}).get("execution"))
        return None
    return window


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    checklist_id = validate_checklist_id(event.get("checklist_id"), "checklist_id")
    instant = parse_instant(event.get("instant", ""), "instant")
    logger.append_keys(checklist_id=checklist_id, instant=event["instant"], execution=event.get("execution"))
    table = ChecklistTable(settings.required("TABLE_NAME"))
    checklist = table.get_checklist(checklist_id)
    claimed = claimed_window(table, checklist_id, event)
    plan = plan_evaluation(checklist_id, checklist, instant, settings.optional_int("MAX_WINDOWS_PER_RUN", 20),
                           now=clock.now(), claimed=claimed)
    logger.info("evaluation planned", outcome=plan.outcome.value, reason=plan.reason, windows=len(plan.windows))
    if plan.outcome is Outcome.EVALUATE:
        metrics.add_metric(name="WindowsDue", unit=MetricUnit.Count, value=len(plan.windows))
    else:
        metrics.add_metric(name="FiringsWithNothingDue", unit=MetricUnit.Count, value=1)
    return plan.to_dict()
