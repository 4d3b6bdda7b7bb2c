"""audit: DynamoDB stream of the items people manage -> the audit trail (#31, docs/audit.md).

Thin handler: Powertools' batch processor feeds each record to ``audit_record``; the table adapter
reads it into an ObjectChange (:mod:`missed_checks.aws.table.audit`) and the domain decides and
writes its entry once (:mod:`missed_checks.audit_trails.auditing`). A record that cannot be read (a
hand edit no reader understands) or written raises: it is reported as a partial batch failure,
retried, then sent to the audit dead-letter queue (the mapping's OnFailure), never dropped, and the
records after it are not held up. A replayed record finds its entry and writes nothing.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from missed_checks import clock
from missed_checks.audit_trails.auditing import record_change
from missed_checks.aws import settings
from missed_checks.aws.observability import lambda_handler, logger, metrics
from missed_checks.aws.table.audit import AuditItems

processor = BatchProcessor(event_type=EventType.DynamoDBStreams)


def audit_record(record: DynamoDBRecord) -> None:
    table = AuditItems(settings.required("TABLE_NAME"))
    change = table.change_of_record(record.raw_event, clock.now())
    if change is None:
        logger.debug("not a managed item", event_id=record.event_id)
        return
    entry = record_change(table, change)
    if entry is None:
        logger.debug("nothing to record (no change a reader sees, or recorded already)", event_id=record.event_id,
                     kind=change.kind, object_id=change.object_id)
        return
    logger.info("audit entry recorded", kind=entry.kind, object_id=entry.object_id, action=entry.action.value,
                changed_by=entry.changed_by, site_id=entry.site_id)
    metrics.add_metric(name="AuditEntriesRecorded", unit=MetricUnit.Count, value=1)


@lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    metrics.add_metric(name="ManagedChangesReceived", unit=MetricUnit.Count, value=len(event.get("Records", [])))
    return process_partial_response(event=event, record_handler=audit_record, processor=processor, context=context)
