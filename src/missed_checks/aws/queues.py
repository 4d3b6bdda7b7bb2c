"""SQS dead-letter queues: sending our own records of what failed, reading them back."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from missed_checks.aws.clients import ServiceAdapter, client


def send_json(queue_url: str, body: Mapping[str, Any]) -> str:
    """Send ``body`` as JSON; returns the message id."""
    response = client("sqs").send_message(QueueUrl=queue_url, MessageBody=json.dumps(body, sort_keys=True, default=str))
    return str(response["MessageId"])


class Queue(ServiceAdapter):
    """One queue, by URL: what an operator's tools need of a dead-letter queue."""

    service_name = "sqs"

    def __init__(self, url: str, sqs: Any | None = None) -> None:
        super().__init__(sqs)
        self.url = url

    def approximate_count(self) -> int:
        """ApproximateNumberOfMessages (visible ones)."""
        attributes = self.client.get_queue_attributes(QueueUrl=self.url, AttributeNames=["ApproximateNumberOfMessages"])
        return int(attributes["Attributes"].get("ApproximateNumberOfMessages", 0))

    def arn(self) -> str:
        attributes = self.client.get_queue_attributes(QueueUrl=self.url, AttributeNames=["QueueArn"])
        return str(attributes["Attributes"]["QueueArn"])

    def receive_all(self, visibility_s: int) -> list[dict[str, Any]]:
        """Every message currently in the queue (as ReceiveMessage returns it, with all system and
        message attributes), each hidden for ``visibility_s`` (SQS has no peek)."""
        expected = self.approximate_count()
        seen: dict[str, dict[str, Any]] = {}
        while expected and len(seen) < expected:
            response = self.client.receive_message(
                QueueUrl=self.url, MaxNumberOfMessages=10, VisibilityTimeout=visibility_s, WaitTimeSeconds=1,
                AttributeNames=["All"], MessageAttributeNames=["All"])
            messages = response.get("Messages") or []
            if not messages:
                break
            for message in messages:
                seen.setdefault(message["MessageId"], message)
        return list(seen.values())

    def release(self, receipt_handles: Sequence[str]) -> None:
        """Make received messages visible again at once."""
        for offset in range(0, len(receipt_handles), 10):
            entries = [{"Id": str(i), "ReceiptHandle": handle, "VisibilityTimeout": 0}
                       for i, handle in enumerate(receipt_handles[offset:offset + 10])]
            self.client.change_message_visibility_batch(QueueUrl=self.url, Entries=entries)

    def delete(self, receipt_handle: str) -> None:
        self.client.delete_message(QueueUrl=self.url, ReceiptHandle=receipt_handle)
