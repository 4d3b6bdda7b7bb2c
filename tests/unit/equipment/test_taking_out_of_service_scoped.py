"""Out-of-service periods for a caller at the equipment's site (#31): the registry says where the
equipment is; recording, ending and cancelling a period need ``supervise`` there, reading them
``read_records``; another site's equipment is NotFound, a weak role Forbidden, nothing written on a
refusal. On the table adapter over moto."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from missed_checks.aws.table import ManagementTable
from missed_checks.equipment import taking_out_of_service as periods
from missed_checks.errors import Forbidden, NotFound
from missed_checks.permissions.caller import Caller
from tests.unit.two_sites import (  # noqa: F401  (dynamodb: a fixture)
    AUDITOR,
    NOW,
    OPERATOR,
    OPERATOR_NORTH,
    SUPERVISOR,
    SUPERVISOR_SOUTH,
    add_checklist,
    dynamodb,
    register,
    two_sites,
)

SOUTH = SUPERVISOR_SOUTH


@pytest.fixture
def table(dynamodb: Any) -> Iterator[ManagementTable]:  # noqa: F811
    """FL-1 registered at north, assigned to north's checklist; X-1 assigned to a checklist without a
    site and never registered (made before the registry)."""
    with two_sites(dynamodb) as store:
        register(store, ("FL-1", "north"))
        add_checklist(store, "daily", "north", ["FL-1"], assigned_at=NOW - timedelta(days=1))
        add_checklist(store, "legacy", None, ["X-1"], assigned_at=NOW - timedelta(days=1))
        yield store


def _take(table: ManagementTable, caller: Caller, equipment_id: str = "FL-1") -> periods.Recorded:
    return periods.take_out_of_service(table, caller, equipment_id, NOW + timedelta(days=1), NOW + timedelta(days=2),
                                       reason="service", now=NOW)


def test_a_supervisor_records_ends_and_cancels_at_their_site(table: ManagementTable) -> None:
    recorded = _take(table, SUPERVISOR)
    assert (recorded.written, recorded.period.recorded_by) == (True, "supervisor-north")
    assert [p.start for p in periods.periods_of(table, AUDITOR, "FL-1")] == [NOW + timedelta(days=1)]
    cancelled = periods.cancel_planned(table, SUPERVISOR, "FL-1", NOW + timedelta(days=1), now=NOW)
    assert cancelled.equipment_id == "FL-1" and table.out_of_service_of_equipment("FL-1") == []
    periods.take_out_of_service(table, SUPERVISOR, "FL-1", NOW - timedelta(hours=1), None, reason="broken", now=NOW)
    ended = periods.back_in_service(table, SUPERVISOR, "FL-1", NOW + timedelta(hours=1), now=NOW)
    assert (ended.end, ended.ended_by) == (NOW + timedelta(hours=1), "supervisor-north")


@pytest.mark.parametrize(("caller", "refusal"), [(OPERATOR_NORTH, Forbidden), (AUDITOR, Forbidden),
                                                 (SOUTH, NotFound)])
def test_nobody_else_records_and_nothing_is_written(table: ManagementTable, caller: Caller,
                                                    refusal: type[Exception]) -> None:
    with pytest.raises(refusal) as refused:
        _take(table, caller)
    if refusal is NotFound:
        assert str(refused.value) == "equipment 'FL-1' does not exist"
    assert table.out_of_service_of_equipment("FL-1") == []
    _take(table, SUPERVISOR)
    for change in (lambda: periods.cancel_planned(table, caller, "FL-1", NOW + timedelta(days=1), now=NOW),
                   lambda: periods.back_in_service(table, caller, "FL-1", NOW + timedelta(days=1, hours=1), now=NOW)):
        with pytest.raises(refusal):
            change()
    assert [(p.start, p.end) for p in table.out_of_service_of_equipment("FL-1")] == [
        (NOW + timedelta(days=1), NOW + timedelta(days=2))]


def test_reading_periods_needs_read_records_at_the_site(table: ManagementTable) -> None:
    _take(table, SUPERVISOR)
    with pytest.raises(Forbidden):
        periods.periods_of(table, OPERATOR_NORTH, "FL-1")
    with pytest.raises(NotFound):
        periods.periods_of(table, SOUTH, "FL-1")
    assert [p.equipment_id for p in periods.list_periods(table, SUPERVISOR, None, None)] == ["FL-1"]
    assert periods.list_periods(table, SOUTH, None, None) == []


def test_unregistered_equipment_is_the_operators_alone(table: ManagementTable) -> None:
    with pytest.raises(NotFound, match="equipment 'X-1' does not exist"):
        _take(table, SUPERVISOR, "X-1")
    assert _take(table, OPERATOR, "X-1").written
    assert [p.equipment_id for p in periods.list_periods(table, OPERATOR, None, None)] == ["X-1"]
    assert periods.list_periods(table, SUPERVISOR, None, None) == []
