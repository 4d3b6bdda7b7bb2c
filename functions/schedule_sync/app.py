"""schedule-sync: DynamoDB stream of checklist items -> one EventBridge Scheduler schedule each.

Thin handler: Powertools' batch processor feeds each record to ``sync_record``, which asks the
domain (``missed_checks.checklists.schedule_sync``) what to do. A record that raises is reported as a partial
batch failure (retried, then sent to the OnFailure queue); an invalid recurrence does not raise:
it is noted on the checklist, logged, counted and sent to the dead-letter queue at once. Only AWS
errors (throttling, an outage, Scheduler refusing the stack's setup: its role, a target, a
permission; logged and counted as ScheduleSetupErrors) make a record fail: whatever a hand-written
item holds ends on the invalid-rule path.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from missed_checks import clock
from missed_checks.aws import settings
from missed_checks.aws.observability import lambda_handler, logger, metrics
from missed_checks.aws.queues import send_json
from missed_checks.aws.scheduler import SchedulerSetupError, ScheduleStore
from missed_checks.aws.table import calendar_named_by, checklist_named_by
from missed_checks.aws.table.calendars import calendar_image
from missed_checks.aws.table.checklists import ChecklistItems, checklist_image
from missed_checks.checklists.schedule import Target
from missed_checks.checklists.schedule_sync import (
    Action,
    Rejected,
    calendar_needs_sync,
    checklists_to_resync,
    needs_sync,
    noted_reminders,
    sync_checklist,
    takes_effect_at,
)
from missed_checks.checklists.schedule_sync import (
    Table as SyncTable,
)
from missed_checks.contracts import dump, parse
from missed_checks.dead_letters import ScheduleSyncLetter

processor = BatchProcessor(event_type=EventType.DynamoDBStreams)

METRIC_BY_ACTION = {
    Action.CREATED: "SchedulesCreated",
    Action.UPDATED: "SchedulesUpdated",
    Action.DELETED: "SchedulesDeleted",
    Action.INVALID: "InvalidRecurrences",
}


def scheduler_target() -> Target:
    """Where every schedule points (set on the function by template.yaml)."""
    return Target(
        state_machine_arn=settings.required("STATE_MACHINE_ARN"),
        role_arn=settings.required("SCHEDULER_ROLE_ARN"),
        dead_letter_arn=settings.required("SCHEDULER_DLQ_ARN"),
        max_retry_attempts=settings.required_int("SCHEDULER_MAX_RETRY_ATTEMPTS"),
    )


def reminder_target() -> Target | None:
    """Where reminder schedules point (#18): the notifier, with its dead-letter queue; None on a
    stack without notifications."""
    arn = settings.optional("NOTIFY_FUNCTION_ARN")
    if not arn:
        return None
    return Target(
        state_machine_arn=arn,  # the schedule's target ARN: here a function
        role_arn=settings.required("SCHEDULER_ROLE_ARN"),
        dead_letter_arn=settings.required("NOTIFICATION_DLQ_ARN"),
        max_retry_attempts=settings.required_int("SCHEDULER_MAX_RETRY_ATTEMPTS"),
    )


def checklist_id_of(record: DynamoDBRecord) -> str:
    pk = str(record.dynamodb.keys.get("pk", "")) if record.dynamodb else ""
    checklist_id = checklist_named_by(pk)
    if checklist_id is None:
        raise ValueError(f"stream record {record.event_id} is not a checklist item (pk={pk!r}); check the filter")
    return checklist_id


def sync_record(record: DynamoDBRecord) -> None:
    if record.dynamodb and calendar_named_by(str(record.dynamodb.keys.get("pk", ""))) is not None:
        resync_calendar(record)
        return
    checklist_id = checklist_id_of(record)
    event_name = record.event_name.name if record.event_name else ""
    stream = record.dynamodb
    old_image = checklist_image(stream.old_image if stream and stream.old_image else None)
    new_image = checklist_image(stream.new_image if stream and stream.new_image else None)
    if not needs_sync(event_name, old_image, new_image):
        logger.debug("no schedule field changed", checklist_id=checklist_id, event_id=record.event_id)
        return
    table = ChecklistItems(settings.required("TABLE_NAME"))
    record_time = None
    if stream and stream.approximate_creation_date_time:
        record_time = datetime.fromtimestamp(stream.approximate_creation_date_time, UTC)
    effective_from = takes_effect_at(event_name, old_image, new_image, record_time)
    if effective_from is not None and table.move_effective_from(checklist_id, effective_from):
        logger.warning("rule written outside the ops tools; it takes effect from the write", checklist_id=checklist_id,
                       event_name=event_name, effective_from=effective_from.isoformat())
    sync_one(checklist_id, table, rejected_reporter(record),
             known_reminders=noted_reminders(old_image) if event_name == "REMOVE" else None)


def rejected_reporter(record: DynamoDBRecord) -> Rejected:
    """Sends a checklist the sync cannot schedule to the dead-letter queue, naming the record."""
    stream = record.dynamodb

    def report_rejected(checklist: str, error: dict[str, str], revision: int) -> None:
        letter = parse(ScheduleSyncLetter, {
            "kind": "schedule-sync",
            "source": "schedule-sync",
            "checklist_id": checklist,
            "revision": revision,
            "error": error,
            "event_id": record.event_id,
            "sequence_number": stream.sequence_number if stream else None,
        })
        send_json(settings.required("SYNC_DLQ_URL"), dump(letter))

    return report_rejected


def sync_one(checklist_id: str, table: SyncTable, report_rejected: Rejected,
             known_reminders: list[str] | None = None) -> None:
    """Bring one checklist's schedule in step (from its current item) and log and count what was done.
    ``known_reminders``: a deleted checklist's reminder schedules, as its old image noted them (#18)."""
    try:
        result = sync_checklist(
            checklist_id,
            table=table,
            schedules=ScheduleStore(settings.required("SCHEDULE_GROUP_NAME")),
            target=scheduler_target(),
            group_name=settings.required("SCHEDULE_GROUP_NAME"),
            now=clock.now(),
            report_rejected=report_rejected,
            reminder_target=reminder_target(),
            known_reminders=known_reminders,
        )
    except SchedulerSetupError as error:
        # The stack's setup, not the rule (missed_checks.aws.scheduler.classify): the record fails and
        # is retried (then the OnFailure queue); the checklist is not flagged. Metric ScheduleSetupErrors.
        logger.error("EventBridge Scheduler refused the stack's setup; the record is retried",
                     checklist_id=checklist_id, error=str(error), error_kind="ScheduleSetupError")
        metrics.add_metric(name="ScheduleSetupErrors", unit=MetricUnit.Count, value=1)
        raise
    if result.action is Action.INVALID:
        logger.error("checklist cannot be scheduled", checklist_id=checklist_id, error=result.error)
    else:
        logger.info("schedule synced", checklist_id=checklist_id, action=result.action.value, detail=result.detail)
    metric = METRIC_BY_ACTION.get(result.action)
    if metric:
        metrics.add_metric(name=metric, unit=MetricUnit.Count, value=1)


def resync_calendar(record: DynamoDBRecord) -> None:
    """A closure calendar changed (#23 item 2): re-sync every checklist that references it, so each
    schedule's start, end and exactness follow the dates left open."""
    stream = record.dynamodb
    event_name = record.event_name.name if record.event_name else ""
    old_image = calendar_image(stream.old_image if stream and stream.old_image else None)
    new_image = calendar_image(stream.new_image if stream and stream.new_image else None)
    if not calendar_needs_sync(event_name, old_image, new_image):
        logger.debug("no calendar date changed", event_id=record.event_id)
        return
    table = ChecklistItems(settings.required("TABLE_NAME"))
    checklists = checklists_to_resync(new_image or old_image)
    logger.info("calendar changed; re-syncing its checklists", event_id=record.event_id, checklists=checklists)
    for checklist_id in checklists:
        sync_one(checklist_id, table, rejected_reporter(record))


@lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    metrics.add_metric(name="ChecklistChangesReceived", unit=MetricUnit.Count, value=len(event.get("Records", [])))
    return process_partial_response(event=event, record_handler=sync_record, processor=processor, context=context)
