"""boto3 sessions and clients.

Every client uses botocore's own ``standard`` retry mode (exponential backoff with jitter on
throttling and transient errors). The functions' clients are created once per process and on
first use (:func:`client`), so that tests and the local runtime can start moto before the first
call; :func:`reset` drops them when the backend changes. The operator's tools bind clients to a
region and endpoint of their own (:func:`new_session`, :func:`bound_client`).
"""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar

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


class ServiceAdapter:
    """Base of the thin adapters over one AWS service: they use the client they are given (a test's,
    or an operator's stack-bound one), else this process's shared one (:func:`client`, looked up at
    each use so that :func:`reset` reaches it)."""

    service_name: ClassVar[str]

    def __init__(self, given: Any | None = None) -> None:
        self._client = given

    @property
    def client(self) -> Any:
        return self._client or client(self.service_name)


def reset() -> None:
    """Forget every client (after starting or stopping a moto mock or server)."""
    client.cache_clear()


def new_session(region: str | None = None) -> Any:
    """A boto3 session (credentials and region from the usual chain unless ``region`` is given)."""
    return boto3.session.Session(region_name=region) if region else boto3.session.Session()


def bound_client(session: Any, service_name: str, region: str, endpoint_url: str | None) -> Any:
    """A client of ``session`` for ``region`` (and ``endpoint_url`` when given), with :data:`RETRIES`."""
    return session.client(service_name, region_name=region, endpoint_url=endpoint_url, config=RETRIES)
