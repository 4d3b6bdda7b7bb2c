"""The operator tools' clients: one per service, Region, endpoint and static keys in a process."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from botocore.credentials import RefreshableCredentials

from missed_checks.aws import clients


@pytest.fixture(autouse=True)
def _forget() -> None:
    clients.reset()


def session(key: str = "AKIAEXAMPLE", secret: str = "secret") -> object:
    return clients.new_session("eu-west-1", aws_access_key_id=key, aws_secret_access_key=secret)


def test_sessions_with_the_same_keys_share_each_client() -> None:
    first = clients.bound_client(session(), "dynamodb", "eu-west-1", "http://127.0.0.1:1")
    assert clients.bound_client(session(), "dynamodb", "eu-west-1", "http://127.0.0.1:1") is first
    others = [
        clients.bound_client(session(), "sqs", "eu-west-1", "http://127.0.0.1:1"),
        clients.bound_client(session(), "dynamodb", "eu-central-1", "http://127.0.0.1:1"),
        clients.bound_client(session(), "dynamodb", "eu-west-1", "http://127.0.0.1:2"),
        clients.bound_client(session(), "dynamodb", "eu-west-1", None),
        clients.bound_client(session(key="AKIAOTHER"), "dynamodb", "eu-west-1", "http://127.0.0.1:1"),
        clients.bound_client(session(secret="rotated"), "dynamodb", "eu-west-1", "http://127.0.0.1:1"),
    ]
    assert len({id(c) for c in [first, *others]}) == 7
    assert others[4]._request_signer._credentials.access_key == "AKIAOTHER"
    clients.reset()
    assert clients.bound_client(session(), "dynamodb", "eu-west-1", "http://127.0.0.1:1") is not first


def test_credentials_that_refresh_themselves_get_their_own_client() -> None:
    refreshing = session()
    expiry = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    creds = RefreshableCredentials.create_from_metadata(
        {"access_key": "ASIAROLE", "secret_key": "s", "token": "t", "expiry_time": expiry},
        refresh_using=lambda: {}, method="assume-role")
    refreshing._session._credentials = creds
    one = clients.bound_client(refreshing, "dynamodb", "eu-west-1", None)
    assert clients.bound_client(refreshing, "dynamodb", "eu-west-1", None) is not one
