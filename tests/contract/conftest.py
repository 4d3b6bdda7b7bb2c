"""The storage contract's implementations: each test runs once on the in-memory fake and once on
the DynamoDB adapter (moto, in process: no built artifacts, so it runs in ``make quick``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from missed_checks.aws.table.notifications import NotificationItems
from missed_checks.evaluation.ports import NotificationRecords
from tests.contract.stores import DynamoDBStore, InMemoryStore, dynamodb_table, embedded_dynamodb
from tests.fakes import InMemoryNotificationRecords


@pytest.fixture(scope="module")
def dynamodb() -> Iterator[Any]:
    """moto, started once for the module (each test gets a table of its own)."""
    with embedded_dynamodb() as client:
        yield client


@pytest.fixture(params=["in-memory", "dynamodb"])
def given(request: pytest.FixtureRequest) -> Iterator[InMemoryStore | DynamoDBStore]:
    """One implementation with its arranging vocabulary; ``given.store`` is the implementation."""
    if request.param == "in-memory":
        yield InMemoryStore()
        return
    with dynamodb_table(request.getfixturevalue("dynamodb")) as name:
        yield DynamoDBStore(name)


@pytest.fixture(params=["in-memory", "dynamodb"])
def records(request: pytest.FixtureRequest) -> Iterator[NotificationRecords]:
    """The notifications' once-only records: the in-memory fake, or the table's."""
    if request.param == "in-memory":
        yield InMemoryNotificationRecords()
        return
    with dynamodb_table(request.getfixturevalue("dynamodb")) as name:
        yield NotificationItems(name)
