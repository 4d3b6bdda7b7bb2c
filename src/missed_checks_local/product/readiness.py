"""What a local run announced about readiness (#33): every ``Equipment readiness changed`` event the
stack published, as a subscriber saw it.

:class:`ReadinessCapture` subscribes a queue to the stack's event bus before the run (an EventBridge
rule on the event's source and detail-type, as a customer's interlock or telematics system would)
and reads it at the end: each delivery once, in the order of the changes (per equipment by its
``sequence``), so a test sees a change announced twice as two entries.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

__all__ = ["READINESS_CHANGED", "ReadinessCapture", "readiness_line"]

READINESS_CHANGED = "Equipment readiness changed"
"""The event's detail-type (``missed_checks.aws.events``; docs/readiness.md)."""

_QUEUE = "local-readiness-subscriber"


class ReadinessCapture:
    """A subscriber of the readiness events: :meth:`prepare` on a running runtime, :meth:`read` at the end."""

    def __init__(self) -> None:
        self._url: str | None = None
        self.received: list[dict[str, Any]] = []

    def prepare(self, runtime: Any) -> None:
        stack = runtime.stack
        sqs, events = stack.client("sqs"), stack.client("events")
        self._url = sqs.create_queue(QueueName=_QUEUE)["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=self._url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        bus = stack.outputs["EventBusName"]
        pattern = {"source": ["missed-checks"], "detail-type": [READINESS_CHANGED]}
        events.put_rule(Name=_QUEUE, EventBusName=bus, EventPattern=json.dumps(pattern))
        events.put_targets(Rule=_QUEUE, EventBusName=bus, Targets=[{"Id": "subscriber", "Arn": arn}])

    def read(self, runtime: Any) -> list[dict[str, Any]]:
        """Every event delivered so far (its ``detail``), added to :attr:`received`; all of them, in
        the order of the changes."""
        sqs = runtime.stack.client("sqs")
        while self._url:
            batch = sqs.receive_message(QueueUrl=self._url, MaxNumberOfMessages=10,
                                        VisibilityTimeout=600).get("Messages", [])
            if not batch:
                break
            for message in batch:
                self.received.append(dict(json.loads(message["Body"]).get("detail") or {}))
                sqs.delete_message(QueueUrl=self._url, ReceiptHandle=message["ReceiptHandle"])
        self.received.sort(key=lambda d: (str(d.get("changed_at")), str(d.get("equipment_id")),
                                          int(d.get("sequence") or 0)))
        return list(self.received)


def readiness_line(readiness: list[dict[str, Any]], defects: list[dict[str, Any]]) -> str:
    """``Readiness changes announced: 34 (13 cleared, ...); defects: 3 (1 open, 1 resolved by a
    supervisor, 1 cleared by a passing check).`` for a run's summary."""
    states = Counter(str(event.get("readiness")) for event in readiness)
    said = ", ".join(f"{count} {state}" for state, count in sorted(states.items()))
    ended = Counter(str(defect.get("resolved_how")) for defect in defects if defect.get("status") != "open")
    parts = [f"{sum(1 for d in defects if d.get('status') == 'open')} open"]
    parts += [f"{ended['supervisor']} resolved by a supervisor"] if ended["supervisor"] else []
    parts += [f"{ended['passing_check']} cleared by a passing check"] if ended["passing_check"] else []
    return (f"Readiness changes announced: {len(readiness)}" + (f" ({said})" if said else "")
            + f"; defects: {len(defects)}" + (f" ({', '.join(parts)})" if defects else "") + ".")
