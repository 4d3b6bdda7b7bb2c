"""Closure calendars for a caller at the calendar's site (#31): :mod:`missed_checks.checklists.closing`,
the use cases of the ``calendar`` commands and of the ``/calendars`` routes, on the table adapter over
moto: own site allowed, another site NotFound (as a missing calendar), a role without ``manage``
Forbidden, nothing written on a refusal, a stale revision PreconditionFailed (the write's own condition)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest

from missed_checks.aws.table import ManagementTable
from missed_checks.checklists import closing
from missed_checks.errors import Conflict, Forbidden, NotFound, PreconditionFailed
from tests.unit.two_sites import AUDITOR, MANAGER, NOW, OPERATOR, SOUTH, dynamodb, two_sites  # noqa: F401

DATES = [date(2026, 4, 3), date(2026, 4, 6)]


@pytest.fixture
def table(dynamodb: Any) -> Iterator[ManagementTable]:  # noqa: F811  (dynamodb: a fixture)
    """Calendar ``easter`` at north, ``legacy`` made before sites existed."""
    with two_sites(dynamodb) as store:
        closing.put_calendar(store, MANAGER, "easter", DATES, NOW, site_id="north", create=True)
        closing.put_calendar(store, OPERATOR, "legacy", DATES, NOW)
        yield store


def _revision(table: ManagementTable, calendar_id: str = "easter") -> int:
    found = table.get_calendar(calendar_id)
    assert found is not None
    return found.revision


def test_a_calendar_is_read_and_listed_at_its_own_site_only(table: ManagementTable) -> None:
    assert closing.get_calendar(table, AUDITOR, "easter").site_id == "north"
    with pytest.raises(NotFound, match="^calendar 'easter' does not exist$"):
        closing.get_calendar(table, SOUTH, "easter")
    with pytest.raises(NotFound):
        closing.get_calendar(table, MANAGER, "legacy")
    assert [c.calendar_id for c in closing.list_calendars(table, AUDITOR)] == ["easter"]
    assert closing.list_calendars(table, SOUTH) == []
    assert [c.calendar_id for c in closing.list_calendars(table, OPERATOR)] == ["easter", "legacy"]
    page = closing.calendars_page(table, OPERATOR, None, None, 1)
    assert ([c.calendar_id for c in page.items], page.next_position) == (["easter"], "easter")
    assert closing.get_calendar(table, AUDITOR, "easter", revision=1).dates == tuple(DATES)


def test_only_the_sites_manager_replaces_or_deletes_and_nothing_is_written_otherwise(table: ManagementTable) -> None:
    with pytest.raises(Forbidden):
        closing.put_calendar(table, AUDITOR, "easter", [date(2026, 4, 3)], NOW, if_match=1)
    with pytest.raises(NotFound):
        closing.put_calendar(table, SOUTH, "easter", [date(2026, 4, 3)], NOW, if_match=1)
    with pytest.raises(NotFound, match="site 'north' does not exist"):
        closing.put_calendar(table, SOUTH, "new", DATES, NOW, site_id="north", create=True)
    with pytest.raises(Forbidden):
        closing.delete_calendar(table, AUDITOR, "easter", if_match=1)
    assert (_revision(table), table.get_calendar("new")) == (1, None)
    replaced = closing.put_calendar(table, MANAGER, "easter", [date(2026, 4, 3)], NOW, if_match=1, create=False)
    assert (replaced.revision, replaced.dates, replaced.updated_by) == (2, (date(2026, 4, 3),), "manager-north")
    with pytest.raises(Conflict):
        closing.put_calendar(table, MANAGER, "easter", DATES, NOW, site_id="north", create=True)
    closing.delete_calendar(table, MANAGER, "easter", if_match=2)
    assert table.get_calendar("easter") is None


def test_a_stale_revision_is_refused_with_the_current_etag(table: ManagementTable) -> None:
    closing.put_calendar(table, MANAGER, "easter", [date(2026, 4, 3)], NOW, if_match=1)
    with pytest.raises(PreconditionFailed) as stale:
        closing.put_calendar(table, MANAGER, "easter", DATES, NOW, if_match=1)
    assert stale.value.current_etag == '"2"'
    with pytest.raises(PreconditionFailed):
        closing.delete_calendar(table, MANAGER, "easter", if_match=1)
    assert _revision(table) == 2 and table.get_calendar("easter") is not None


def test_the_adapter_refuses_a_stale_revision_by_its_own_condition(table: ManagementTable) -> None:
    """What the use case relies on when another edit lands between its read and its write."""
    closing.put_calendar(table, MANAGER, "easter", [date(2026, 4, 3)], NOW, if_match=1)
    with pytest.raises(Conflict):
        table.put_calendar("easter", DATES, now=NOW, by="late", expected_revision=1)
    with pytest.raises(Conflict):
        table.delete_calendar("easter", by="late", expected_revision=1)
    found = table.get_calendar("easter")
    assert found is not None and (found.revision, found.dates) == (2, (date(2026, 4, 3),))
