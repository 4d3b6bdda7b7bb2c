"""boto3 clients, created once per process and on first use.

Every client uses botocore's own ``standard`` retry mode (exponential backoff with jitter on
throttling and transient errors). Clients are created lazily so that tests and the local runtime
can start moto before the first call; :func:`reset` drops them when the backend changes.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import boto3
from botocore.config import Config

RETRIES = Config(
    retries={"mode": "standard", "max_attempts": 8},
    connect_timeout=5,
    read_timeout=30,
    max_pool_connections=32,  # RecordMissedChecks writes on 16 threads
)


@cache
def client(service_name: str) -> Any:
    """The process-wide client for ``service_name`` (honours ``AWS_ENDPOINT_URL``)."""
    return boto3.session.Session().client(service_name, config=RETRIES)


def reset() -> None:
    """Forget every client (after starting or stopping a moto mock or server)."""
    client.cache_clear()
