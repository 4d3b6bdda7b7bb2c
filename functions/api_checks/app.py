"""HTTP API, record routes: ``POST /checks`` (one performed check) and ``POST /checks/batch``.

Thin: the body is read here, the rules are :mod:`missed_checks.performed_checks.recording`'s (every row validated
before any write, the equipment assigned at ``performed_at``, a client ``Idempotency-Key`` so a
retry never records twice); the caller's identity (SigV4 or JWT) is ``recorded_by``. A caller with a
role (#31) records only at the checklists' sites where it may ``record``: another site's checklist is
refused as a missing one, a role that may not record there is 403.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from missed_checks import clock
from missed_checks.api import http_api
from missed_checks.api.callers import caller_of
from missed_checks.aws import settings
from missed_checks.aws.observability import lambda_handler, metrics
from missed_checks.aws.table import Conflict, NotFound, RecordingTable
from missed_checks.aws.table.grants import GrantItems
from missed_checks.performed_checks.recording import Recorded, Row, check_from, record_checks, rows_from

app = APIGatewayHttpResolver()
http_api.install_problems(app, not_found_errors=(NotFound,), conflict_errors=(Conflict,))


class ChecksTable(RecordingTable, GrantItems):
    """Recording performed checks, and the caller's grant (#31)."""


def table() -> ChecksTable:
    """The stack's table (its client is the process's shared one: created once per environment)."""
    return ChecksTable(settings.required("TABLE_NAME"))


def _record(rows: list[Row]) -> Response[Any]:
    key = app.current_event.headers.get("idempotency-key")
    store = table()
    recorded: Recorded = record_checks(store, rows, now=clock.now(),
                                       recorded_by=http_api.caller_identity(app.current_event.raw_event),
                                       idempotency_key=key, caller=caller_of(app.current_event.raw_event, store))
    # only the checks this call wrote: a concurrent attempt of the same request counts its own (#34)
    metrics.add_metric(name="ChecksRecorded", unit=MetricUnit.Count, value=recorded.written_now)
    return Response(status_code=HTTPStatus.OK if recorded.replayed else HTTPStatus.CREATED,
                    content_type="application/json", body=recorded.to_dict())


BATCH_FIELDS = ("checks",)
"""A batch's body: one field (openapi/missed-checks.yaml, closed: ``additionalProperties: false``)."""


@app.post("/checks")
def record_one() -> Response[Any]:
    http_api.query_parameters(app)
    return _record([Row(check_from(http_api.json_body(app)))])


@app.post("/checks/batch")
def record_batch() -> Response[Any]:
    http_api.query_parameters(app)
    body = http_api.fields(http_api.json_body(app), BATCH_FIELDS, what="a batch")
    checks = body.get("checks")
    if isinstance(checks, list) and len(checks) > http_api.MAX_BATCH:
        raise http_api.TooLarge("checks", f"{len(checks)} checks in one request: send at most "
                                          f"{http_api.MAX_BATCH} per batch")
    return _record(rows_from(checks))


@lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
