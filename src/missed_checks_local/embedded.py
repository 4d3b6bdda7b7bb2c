"""The embedded AWS: moto, configured the way the local runtime needs it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from missed_checks_local.application import registered
from missed_checks_local.stack import DEFAULT_REGION, LOCAL_CREDENTIALS

__all__ = ["MOTO_CONFIG", "embedded_aws", "local_environment", "reset_clients"]

if TYPE_CHECKING:
    from moto.core.config import DefaultConfig

MOTO_CONFIG: DefaultConfig = {
    # Run state machine definitions for real (moto's ASL interpreter) instead of a stub.
    "stepfunctions": {"execute_state_machine": True},
    # AWS managed policies exist (a role SAM generates gets e.g. AWSLambdaDynamoDBExecutionRole), so
    # IAM decides on them as AWS would.
    "iam": {"load_aws_managed_policies": True},
}

# Variables that would send boto3 somewhere else than the embedded AWS.
_STRAY = ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN")


def reset_clients() -> None:
    """Tell the registered application the AWS changed, so the clients it keeps go and the next
    ones bind to the current backend (:mod:`missed_checks_local.application`)."""
    registered().backend_changed()


@contextmanager
def local_environment(region: str = DEFAULT_REGION, endpoint_url: str | None = None) -> Iterator[None]:
    """Fake credentials and the region in ``os.environ``; restored afterwards."""
    values = {
        "AWS_DEFAULT_REGION": region,
        "AWS_REGION": region,
        "AWS_ACCESS_KEY_ID": LOCAL_CREDENTIALS["aws_access_key_id"],
        "AWS_SECRET_ACCESS_KEY": LOCAL_CREDENTIALS["aws_secret_access_key"],
    }
    saved = {key: os.environ.get(key) for key in (*values, *_STRAY)}
    for key in _STRAY:
        os.environ.pop(key, None)
    os.environ.update(values)
    if endpoint_url:
        os.environ["AWS_ENDPOINT_URL"] = endpoint_url
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextmanager
def embedded_aws(region: str = DEFAULT_REGION) -> Iterator[None]:
    """An in-process moto for everything boto3 does inside the block (state machines execute)."""
    from moto import mock_aws  # deferred: moto is a dev dependency and slow to import

    with local_environment(region), mock_aws(config=MOTO_CONFIG):
        reset_clients()
        try:
            yield
        finally:
            reset_clients()
