"""Lambda's asynchronous invocation, as EventBridge rules and EventBridge Scheduler use it (#18).

moto cannot deliver an EventBridge rule's event to a Lambda target (it raises), and the simulated
Scheduler invokes its Lambda targets through the runtime. Both hand the event to
:class:`AsyncInvocations`, which does what Lambda's event queue does: the event is queued (the
caller is answered at once), run by the function when the runtime settles, retried twice when the
function fails (Lambda's default ``MaximumRetryAttempts``), then sent to the function's
``DeadLetterConfig`` queue, with the function's role, as Lambda does: the body is the event, the
message attributes ``RequestID``, ``ErrorCode`` and ``ErrorMessage``. Unlike AWS: the retries come
at once (no back-off of one and two minutes), and nothing is ever delivered twice by the queue
itself (AWS's is at least once: the functions must, and do, tolerate it).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass
from typing import Any

from missed_checks_local.stack import EmbeddedStack, local_session

__all__ = ["AsyncInvocations", "QueuedEvent"]

MAXIMUM_RETRY_ATTEMPTS = 2


@dataclass(frozen=True)
class QueuedEvent:
    function_arn: str
    event: Any
    source: str
    """``events`` (a rule's target) or ``scheduler``."""


class AsyncInvocations:
    """The event queue of the stack's functions; :meth:`drain` runs what is queued."""

    def __init__(self, stack: EmbeddedStack, lambda_runtime: Any) -> None:
        self.stack = stack
        self.lambda_runtime = lambda_runtime
        self._queue: deque[QueuedEvent] = deque()
        self._lock = threading.Lock()
        self.delivered = 0
        self.dead_lettered = 0

    def submit(self, function_arn: str, event: Any, source: str) -> bool:
        """Queue ``event`` for the function; False when the function is not one of the stack's."""
        if self.stack.function_by_name(function_arn) is None:
            return False
        with self._lock:
            self._queue.append(QueuedEvent(function_arn, event, source))
        return True

    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def drain(self) -> int:
        """Run every queued event (and those queued meanwhile); returns how many ran."""
        ran = 0
        while True:
            with self._lock:
                if not self._queue:
                    return ran
                queued = self._queue.popleft()
            self._run(queued)
            ran += 1

    def _run(self, queued: QueuedEvent) -> None:
        invocation = None
        for _attempt in range(1 + MAXIMUM_RETRY_ATTEMPTS):
            invocation = self.lambda_runtime.invoke(queued.function_arn, queued.event)
            if invocation.ok:
                self.delivered += 1
                return
        self._dead_letter(queued, invocation)

    def _template_dead_letter(self, function_name: str) -> str | None:
        """The function's ``DeadLetterConfig`` target as the template deployed it (moto's Lambda
        does not keep it: :mod:`missed_checks_local.awslambda.patches` notes it on the function)."""
        from moto.awslambda.models import lambda_backends  # deferred: moto is a dev dependency

        function = lambda_backends[self.stack.account_id][self.stack.region].get_function(function_name)
        target = (getattr(function, "dead_letter_config", None) or {}).get("TargetArn")
        return str(target) if target else None

    def _dead_letter(self, queued: QueuedEvent, invocation: Any) -> None:
        spec = self.stack.function_by_name(queued.function_arn)
        if spec is None:
            return
        config = self.stack.client("lambda").get_function_configuration(FunctionName=spec.name)
        target = (config.get("DeadLetterConfig") or {}).get("TargetArn") or self._template_dead_letter(spec.name)
        if not target:
            return  # Lambda drops the event (its OnFailure destinations are not emulated)
        error = (invocation.error if invocation is not None else None) or {}
        message = f"{error.get('errorType', '')}: {error.get('errorMessage', '')}"[:1024]
        credentials = self.lambda_runtime.roles.client_kwargs(spec.role_arn, "lambda-async")
        sqs = local_session(self.stack.region, **credentials).client("sqs", endpoint_url=self.stack.endpoint_url)
        sqs.send_message(
            QueueUrl=self.stack.queue_url_for_arn(target), MessageBody=json.dumps(queued.event),
            MessageAttributes={
                "RequestID": {"DataType": "String", "StringValue": str(getattr(invocation, "request_id", ""))},
                "ErrorCode": {"DataType": "String", "StringValue": "200"},
                "ErrorMessage": {"DataType": "String", "StringValue": message},
            })
        self.dead_lettered += 1
