"""boto3 sessions and clients.

Every client uses botocore's own ``standard`` retry mode (exponential backoff with jitter on
throttling and transient errors). The functions' clients are created once per process and on
first use (:func:`client`), so that tests and the local runtime can start moto before the first
call; :func:`reset` drops them when the backend changes. The operator's tools bind clients to a
region and endpoint of their own (:func:`new_session`, :func:`bound_client`).

Every session of a process shares one botocore data loader (:func:`new_session`): botocore parses
a service's JSON model, the endpoints and the endpoint ruleset again for every new session, so a
command that opened two sessions, or a test process that runs hundreds of commands, spent most of
its CPU in ``json.loads`` of the same files.
"""

from __future__ import annotations

import threading
from functools import cache
from typing import Any, ClassVar

import boto3
import botocore.session
from botocore.config import Config
from botocore.credentials import RefreshableCredentials
from botocore.loaders import Loader

RETRIES = Config(
    retries={"mode": "standard", "max_attempts": 8},
    connect_timeout=5,
    read_timeout=30,
    max_pool_connections=32,  # RecordMissedChecks writes on 16 threads
)
_STREAMS = RETRIES.merge(Config(account_id_endpoint_mode="disabled"))
"""DynamoDB Streams has no account-based endpoint: botocore's account id routing is left out (the
embedded AWS answered DescribeStream 404 with it; the audit queue's replay reads the stream, #31)."""


@cache
def client(service_name: str) -> Any:
    """The process-wide client for ``service_name`` (honours ``AWS_ENDPOINT_URL``)."""
    return new_session().client(service_name, config=RETRIES)


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
    with _SESSION_LOCK:
        _BOUND.clear()


_SESSION_LOCK = threading.Lock()
_LOADER: Loader | None = None


def _shared_loader() -> Loader:
    """This process's one botocore data loader: the one a new botocore session gets (with
    ``AWS_DATA_PATH`` honoured), kept for every later session."""
    global _LOADER  # noqa: PLW0603 - one loader per process is the point
    if _LOADER is None:
        created = botocore.session.get_session().get_component("data_loader")
        with _SESSION_LOCK:
            if _LOADER is None:
                _LOADER = created
    return _LOADER


def new_session(region: str | None = None, **credentials: str) -> Any:
    """A new boto3 session: credentials (``aws_access_key_id`` and the rest) and region from the
    usual chain unless given. It has its own credentials, region and clients, and shares this
    process's botocore data loader (:func:`_shared_loader`), whose cache holds every model,
    endpoint file and ruleset already parsed (about 0.1 s of CPU per session and service otherwise)."""
    loader = _shared_loader()
    with _SESSION_LOCK:
        core = botocore.session.get_session()
        core.register_component("data_loader", loader)
        paths = list(loader.search_paths)
        session = boto3.session.Session(botocore_session=core, region_name=region or None, **credentials)
        loader.search_paths[:] = dict.fromkeys([*paths, *loader.search_paths])  # boto3 adds its data path each time
    return session


_BOUND: dict[tuple[str | None, ...], Any] = {}


def bound_client(session: Any, service_name: str, region: str, endpoint_url: str | None) -> Any:
    """A client for ``region`` (and ``endpoint_url`` when given), with :data:`RETRIES`, made by
    ``session``. Kept for the process when the session's credentials are static keys (a profile's
    or the environment's): the next session with the same keys gets the same client, so a
    process that runs many commands (the in-process CLI tests run hundreds) makes each once.
    Credentials that refresh themselves (an assumed role, SSO) get a new client every time."""
    key = _bound_key(session, service_name, region, endpoint_url)
    if key is not None:
        with _SESSION_LOCK:
            found = _BOUND.get(key)
        if found is not None:
            return found
    made = session.client(service_name, region_name=region, endpoint_url=endpoint_url,
                          config=_STREAMS if service_name == "dynamodbstreams" else RETRIES)
    if key is None:
        return made
    with _SESSION_LOCK:
        return _BOUND.setdefault(key, made)


def _bound_key(session: Any, service_name: str, region: str, endpoint_url: str | None) -> tuple[str | None, ...] | None:
    credentials = session.get_credentials()
    if credentials is None or isinstance(credentials, RefreshableCredentials):
        return None
    frozen = credentials.get_frozen_credentials()
    return (service_name, region, endpoint_url, frozen.access_key, frozen.secret_key, frozen.token)
