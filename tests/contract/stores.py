"""The two implementations the storage contract runs against, each with the same small arranging
vocabulary (a checklist, assignments, out-of-service periods) written the way that implementation
is written in its own lane:

* :class:`InMemoryStore`: ``tests/fakes.py``'s :class:`InMemoryTable`, what the fast lane judges with;
* :class:`DynamoDBStore`: :class:`missed_checks.aws.table.ChecklistTable` on moto's DynamoDB, the table
  created from ``template.yaml``'s own declaration of ``ChecklistsTable`` (keys, indexes, stream),
  with the project's DynamoDB patches of moto (``missed_checks_local.patches.install_data_plane``: writes atomic
  as DynamoDB's are, queries of one partition), as the local stack runs them.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import date, datetime
from typing import Any

import pytest

from missed_checks.aws.table import ChecklistTable, serialize
from missed_checks.checklists.closure_calendar import ClosureCalendar
from missed_checks.checklists.saving import save_checklist
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from tests.fakes import InMemoryTable

RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"
"""Workdays 06:00 Berlin."""
WINDOW = "PT8H"

SMALL_PAGE = 1000
"""Bytes of items per Query page while :meth:`DynamoDBStore.small_pages` is on (DynamoDB's own
limit is 1 MB): a few items a page, so a read of a hundred items crosses many pages."""


class InMemoryStore:
    name = "in-memory"

    def __init__(self) -> None:
        self.store = InMemoryTable()

    def add_checklist(self, checklist_id: str, at: datetime, closed_on: Sequence[str] = ()) -> None:
        save_checklist(self.store, checklist_id, recurrence=RULE, window=WINDOW, now=at, closed_on=closed_on,
                       by="tests")

    def calendar(self, calendar_id: str, dates: Sequence[date], at: datetime) -> None:
        """A calendar put (a new revision of it; who uses it is the checklists' to write)."""
        current = self.store.calendars.get(calendar_id)
        self.store.calendars[calendar_id] = ClosureCalendar(
            calendar_id, tuple(sorted(set(dates))), revision=current.revision + 1 if current else 1, updated_at=at,
            used_by=current.used_by if current else frozenset(), updated_by="ops")

    def assign(self, checklist_id: str, equipment_ids: Iterable[str], at: datetime) -> None:
        self.store.assign(checklist_id, equipment_ids, at)

    def hand_written(self, item: dict[str, Any]) -> None:
        """A checklist item written around the adapter (a hand edit in the console)."""
        self.store.checklist_items[str(item["checklist_id"])] = item

    def unassign(self, checklist_id: str, equipment_id: str, at: datetime) -> None:
        assigned = self.store.assigned[checklist_id]
        assigned[:] = [replace(a, unassigned_at=at) if a.equipment_id == equipment_id else a for a in assigned]

    def out_of_service(self, period: OutOfServicePeriod) -> None:
        self.store.out_of_service.append(period)

    @contextmanager
    def small_pages(self) -> Iterator[None]:
        yield  # one list: no pages


class DynamoDBStore:
    name = "dynamodb"

    def __init__(self, table_name: str) -> None:
        self.store = ChecklistTable(table_name)

    def add_checklist(self, checklist_id: str, at: datetime, closed_on: Sequence[str] = ()) -> None:
        save_checklist(self.store, checklist_id, recurrence=RULE, window=WINDOW, now=at, closed_on=closed_on,
                       by="tests")

    def calendar(self, calendar_id: str, dates: Sequence[date], at: datetime) -> None:
        self.store.put_calendar(calendar_id, dates, now=at, by="ops")

    def assign(self, checklist_id: str, equipment_ids: Iterable[str], at: datetime) -> None:
        self.store.assign_equipment(checklist_id, equipment_ids, at, by="tests")

    def hand_written(self, item: dict[str, Any]) -> None:
        """A checklist item written around the adapter (a hand edit in the console)."""
        self.store.client.put_item(TableName=self.store.name, Item=serialize(item))

    def unassign(self, checklist_id: str, equipment_id: str, at: datetime) -> None:
        self.store.unassign_equipment(checklist_id, [equipment_id], at, by="tests")

    def out_of_service(self, period: OutOfServicePeriod) -> None:
        self.store.record_out_of_service(period)

    @contextmanager
    def small_pages(self) -> Iterator[None]:
        """Query pages of :data:`SMALL_PAGE` bytes, as DynamoDB pages at 1 MB: the adapter must follow
        ``LastEvaluatedKey`` to read everything."""
        from moto.dynamodb.models import table  # deferred: moto is a dev dependency and slow to import

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(table, "RESULT_SIZE_LIMIT", SMALL_PAGE)
            yield


def declared_table() -> dict[str, Any]:
    """``ChecklistsTable``'s properties as ``template.yaml`` declares them."""
    from missed_checks_local.cloudformation.deploy import load_sam_template
    from missed_checks_local.stack import project_root

    return dict(load_sam_template(project_root() / "template.yaml")["Resources"]["ChecklistsTable"]["Properties"])


@contextmanager
def embedded_dynamodb() -> Iterator[Any]:
    """An in-process moto (nested in the session's shared stack's when a test before opened it: then
    the tables made here must be deleted), with the project's DynamoDB patches; a DynamoDB client.

    Not :func:`missed_checks_local.embedded.embedded_aws`: its IAM loads every AWS managed policy
    (about a second each time moto starts), which nothing here needs."""
    import boto3
    from moto import mock_aws  # deferred: moto is a dev dependency and slow to import

    from missed_checks_local.embedded import local_environment, reset_clients
    from missed_checks_local.patches import install_data_plane

    with local_environment(), mock_aws():
        install_data_plane()
        reset_clients()
        try:
            yield boto3.client("dynamodb")
        finally:
            reset_clients()


@contextmanager
def dynamodb_table(client: Any) -> Iterator[str]:
    """A table of its own, made as ``template.yaml`` declares ``ChecklistsTable``; deleted afterwards."""
    declared = declared_table()
    name = f"contract-{uuid.uuid4().hex[:12]}"
    client.create_table(
        TableName=name,
        BillingMode=declared["BillingMode"],
        AttributeDefinitions=declared["AttributeDefinitions"],
        KeySchema=declared["KeySchema"],
        GlobalSecondaryIndexes=declared["GlobalSecondaryIndexes"],
        StreamSpecification={"StreamEnabled": True, **declared["StreamSpecification"]},
        SSESpecification={"Enabled": declared["SSESpecification"]["SSEEnabled"]},
    )
    try:
        yield name
    finally:
        client.delete_table(TableName=name)
