"""readiness (#33, docs/readiness.md): keeps each piece of equipment's readiness and announces every
change once (``Equipment readiness changed`` on the stack's bus); tells a defect's people at once.

Invoked (a) by the table's stream, filtered in template.yaml to performed checks, defects,
out-of-service periods, assignments, registry records and checklists: Powertools' batch processor
feeds each record to ``watch_record``, which reads what it touches
(:func:`missed_checks.aws.table.readiness.table_change_of_record`) and hands it to
:func:`missed_checks.readiness.watching.on_table_change`; a record that raises is a partial batch
failure (retried, then its batch's place in the stream goes to the readiness dead-letter queue);
(b) by an equipment's one-time recheck schedule, ``{"kind": "recheck", "equipment_id": ...}``, at the
instant its readiness may change by time alone (a failure is retried by Lambda, then by Scheduler,
then lands in the same queue). A defect alert an address refused for good goes to the notification
dead-letter queue as the notifier's own letter (``dlq replay`` sends it again); the others go out.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from missed_checks import clock
from missed_checks.aws import settings
from missed_checks.aws.events import EventBusAnnouncer
from missed_checks.aws.notify_channels import stack_channels
from missed_checks.aws.observability import lambda_handler, logger, metrics
from missed_checks.aws.queues import send_json
from missed_checks.aws.scheduler import RecheckSchedules
from missed_checks.aws.table.readiness import WatchTable, table_change_of_record
from missed_checks.checklists.checklist import Checklist
from missed_checks.contracts import dump, parse
from missed_checks.dead_letters import NotificationLetter, RecheckLetter
from missed_checks.defects.defect import Defect
from missed_checks.equipment.assignments import validate_equipment_id
from missed_checks.notifications.defect_alerts import alert_defect
from missed_checks.notifications.notification import Notification
from missed_checks.notifications.notifying import Delivery
from missed_checks.readiness.watching import on_table_change, recheck
from missed_checks.timefmt import to_utc_iso

processor = BatchProcessor(event_type=EventType.DynamoDBStreams)


class Stack:
    """The adapters of one invocation (the function's own ARN is the recheck schedules' target)."""

    def __init__(self, function_arn: str) -> None:
        self.table = WatchTable(settings.required("TABLE_NAME"))
        self.announcer = EventBusAnnouncer(settings.required("EVENT_BUS_NAME"))
        self.scheduler = RecheckSchedules(settings.required("SCHEDULE_GROUP_NAME"), function_arn,
                                          settings.required("RECHECK_SCHEDULER_ROLE_ARN"),
                                          settings.required("READINESS_DLQ_ARN"))
        self._checklists: dict[str, Checklist | None] = {}

    def checklist(self, checklist_id: str) -> Checklist | None:
        """A checklist as read once in this invocation (whether a batch's checks and assignments are a
        pre-use checklist's: a fleet's thousand assignments cost one read, not a thousand)."""
        if checklist_id not in self._checklists:
            self._checklists[checklist_id] = self.table.get_checklist(checklist_id)
        return self._checklists[checklist_id]

    def alert(self, defect: Defect, checklist: Checklist) -> None:
        """Tell the defect's people, each once, over e-mail (when the stack has a sender) and the bus."""
        channels = stack_channels(settings.optional("NOTIFICATION_SENDER"), settings.required("EVENT_BUS_NAME"))
        outcomes = alert_defect(self.table, channels, checklist, defect, clock.now, dead_letter)
        sent = sum(1 for o in outcomes if o.delivery is Delivery.SENT)
        logger.info("defect alerts handled", defect_id=defect.defect_id, sent=sent, notifications=len(outcomes))
        metrics.add_metric(name="NotificationsSent", unit=MetricUnit.Count, value=sent)

    def watch_record(self, record: DynamoDBRecord) -> None:
        change = table_change_of_record(record.raw_event)
        for readiness in on_table_change(self.table, self.announcer, self.scheduler, change, clock.now(),
                                         self.alert, self.checklist):
            logger.debug("rechecked", equipment_id=readiness.equipment_id, state=readiness.state.value)


def dead_letter(notification: Notification, error: Exception) -> None:
    logger.error("defect alert not sent", notification_id=notification.notification_id, to=notification.recipient,
                 error=f"{type(error).__name__}: {error}")
    metrics.add_metric(name="NotificationsFailed", unit=MetricUnit.Count, value=1)
    letter = NotificationLetter(kind="notification", source="readiness", notification=notification.to_dict(),
                                error=f"{type(error).__name__}: {error}"[:2000], failed_at=to_utc_iso(clock.now()))
    send_json(settings.required("NOTIFICATION_DLQ_URL"), dump(letter))


@lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    stack = Stack(context.invoked_function_arn)
    if isinstance(event, dict) and event.get("kind") == "recheck":
        firing = parse(RecheckLetter, event, "event")  # the schedule's input (and a replayed dead letter)
        equipment_id = validate_equipment_id(firing.equipment_id, "event.equipment_id")
        logger.append_keys(equipment_id=equipment_id, trigger="recheck")
        readiness = recheck(stack.table, stack.announcer, stack.scheduler, equipment_id, clock.now())
        logger.info("rechecked", state=readiness.state.value)
        return {"equipment_id": equipment_id, "readiness": readiness.state.value}
    logger.remove_keys(["equipment_id", "trigger"])  # a warm start's earlier firing
    metrics.add_metric(name="ReadinessChangesReceived", unit=MetricUnit.Count, value=len(event.get("Records", [])))
    return dict(process_partial_response(event=event, record_handler=stack.watch_record, processor=processor,
                                         context=context))
