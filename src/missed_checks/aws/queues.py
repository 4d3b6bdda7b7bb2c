"""SQS dead-letter queues: sending our own records of what failed, reading them back."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from missed_checks.aws.clients import client


def send_json(queue_url: str, body: Mapping[str, Any]) -> str:
    """Send ``body`` as JSON; returns the message id."""
    response = client("sqs").send_message(QueueUrl=queue_url, MessageBody=json.dumps(body, sort_keys=True, default=str))
    return str(response["MessageId"])
