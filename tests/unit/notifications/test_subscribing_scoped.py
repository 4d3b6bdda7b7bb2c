"""Digest subscriptions and the notification log for a caller at a site (#31):
:func:`missed_checks.notifications.subscribing.subscribe_at_site`, ``subscriptions_page``,
``unsubscribe`` and :func:`missed_checks.notifications.listing.list_notifications`, on the table
adapter over moto and the in-memory schedule group: own site allowed, another site NotFound, a weak
role Forbidden, nothing written on a refusal. And a site's digest covers that site's checklists only."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest

from missed_checks.aws.table import ManagementTable
from missed_checks.checklists.schedule import Target
from missed_checks.errors import Forbidden, InvalidInput, NotFound
from missed_checks.notifications import digesting, listing, subscribing
from missed_checks.notifications.digest import Subscription, schedule_name
from missed_checks.notifications.notification import Kind, Notification
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Role
from tests.fakes import InMemorySchedules
from tests.unit.two_sites import (  # noqa: F401  (dynamodb: a fixture)
    AUDITOR,
    MANAGER,
    NOW,
    OPERATOR,
    SOUTH,
    SUPERVISOR,
    add_checklist,
    dynamodb,
    two_sites,
)

WHERE = Target("arn:aws:lambda:eu-west-1:123456789012:function:digest", "arn:aws:iam::123456789012:role/s",
               "arn:aws:sqs:eu-west-1:123456789012:dlq", 3)


@dataclass
class GroupSchedules(InMemorySchedules):
    """The schedule group the digests' schedules live in."""

    group_name: str = "missed-checks"


@pytest.fixture
def table(dynamodb: Any) -> Iterator[ManagementTable]:  # noqa: F811
    """Checklists ``daily`` at north and ``south-daily`` at south."""
    with two_sites(dynamodb) as store:
        add_checklist(store, "daily", "north", recurrence="DTSTART:20260223T060000\nRRULE:FREQ=DAILY")
        add_checklist(store, "south-daily", "south", recurrence="DTSTART:20260223T060000\nRRULE:FREQ=DAILY")
        yield store


def digest(subscription_id: str = "north-daily", site_id: str | None = "north", **fields: Any) -> Subscription:
    return Subscription.create(subscription_id, address="lead@example.com", period="daily", at="07:00",
                               timezone="Europe/Berlin", site_id=site_id, **fields)


def test_a_sites_manager_subscribes_and_unsubscribes_at_their_site(table: ManagementTable) -> None:
    schedules = GroupSchedules()
    assert subscribing.subscribe_at_site(table, schedules, WHERE, MANAGER, digest(checklists=["daily"]), NOW)
    assert table.get_subscription("north-daily").site_id == "north"  # type: ignore[union-attr]
    assert [d.name for d in schedules.upserted] == [schedule_name("north-daily")]
    page = subscribing.subscriptions_page(table, AUDITOR, None, None, 10)
    assert [s.subscription_id for s in page.items] == ["north-daily"]
    assert subscribing.subscriptions_page(table, SOUTH, None, None, 10).items == []
    assert subscribing.end_subscription(table, schedules, MANAGER, "north-daily") is not None
    assert table.get_subscription("north-daily") is None and schedules.deleted == [schedule_name("north-daily")]


@pytest.mark.parametrize(("caller", "refusal"), [(SUPERVISOR, Forbidden), (AUDITOR, Forbidden), (SOUTH, NotFound)])
def test_nobody_else_subscribes_or_unsubscribes_and_nothing_is_written(table: ManagementTable, caller: Caller,
                                                                       refusal: type[Exception]) -> None:
    schedules = GroupSchedules()
    with pytest.raises(refusal):
        subscribing.subscribe_at_site(table, schedules, WHERE, caller, digest(), NOW)
    assert table.get_subscription("north-daily") is None and schedules.upserted == []
    subscribing.subscribe_at_site(table, schedules, WHERE, MANAGER, digest(), NOW)
    with pytest.raises(refusal):
        subscribing.end_subscription(table, schedules, caller, "north-daily")
    assert table.get_subscription("north-daily") is not None and schedules.deleted == []


def test_a_site_subscription_names_that_sites_checklists_and_keeps_its_site(table: ManagementTable) -> None:
    schedules = GroupSchedules()
    with pytest.raises(InvalidInput) as other:
        subscribing.subscribe_at_site(table, schedules, WHERE, MANAGER, digest(checklists=["south-daily"]), NOW)
    assert other.value.field == "checklists[0]"
    with pytest.raises(InvalidInput) as none:
        subscribing.subscribe_at_site(table, schedules, WHERE, MANAGER, digest(site_id=None), NOW)
    assert none.value.field == "site_id"
    subscribing.subscribe_at_site(table, schedules, WHERE, OPERATOR, digest(), NOW)
    with pytest.raises(InvalidInput, match="site never changes"):
        subscribing.subscribe_at_site(table, schedules, WHERE, OPERATOR, digest(site_id="south"), NOW)
    with pytest.raises(Forbidden):  # listing needs read_management somewhere
        subscribing.subscriptions_page(table, SUPERVISOR, None, None, 10)
    with pytest.raises(NotFound):
        subscribing.subscriptions_page(table, SOUTH, "north", None, 10)


def test_a_sites_whole_fleet_digest_reports_on_that_sites_checklists(table: ManagementTable,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[Any] = []
    real = digesting.build_report

    def build_report(*args: Any, checklist_ids: Any = (), **kwargs: Any) -> Any:
        asked.append(list(checklist_ids))
        return real(*args, checklist_ids=checklist_ids, **kwargs)

    monkeypatch.setattr(digesting, "build_report", build_report)
    digesting.build_digests(table, digest(), NOW + timedelta(days=1))
    digesting.build_digests(table, digest("fleet", site_id=None), NOW + timedelta(days=1))
    assert asked == [["daily"], []]  # the site's checklists; a subscription made before sites: the whole fleet


def test_the_notification_log_holds_the_callers_sites_checklists(table: ManagementTable) -> None:
    for checklist_id in ("daily", "south-daily"):
        notification = Notification(kind=Kind.MISSED, checklist_id=checklist_id, window_start="2026-03-02T06:00:00Z",
                                    recipient="crew@example.com", equipment=("FL-1",), subject="missed", body="missed")
        table.claim_notification(notification, NOW, timedelta(minutes=5))
    assert [r["checklist_id"] for r in listing.list_notifications(table, SUPERVISOR, NOW, NOW + timedelta(hours=1))
            ] == ["daily"]
    assert len(listing.list_notifications(table, OPERATOR, NOW, NOW + timedelta(hours=1))) == 2
    with pytest.raises(Forbidden):
        listing.list_notifications(table, Caller("op", {"north": Role.operator}), NOW, NOW + timedelta(hours=1))
    with pytest.raises(NotFound):
        listing.list_notifications(table, SUPERVISOR, NOW, NOW + timedelta(hours=1), checklist_id="south-daily")
