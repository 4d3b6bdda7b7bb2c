"""Two sites on the table adapter over moto, for the tests of the use cases scoped by site (#31):
sites ``north`` (Europe/Berlin) and ``south`` (America/Chicago), the callers that hold roles there,
and a checklist or registered equipment added as the operator. A test module takes the ``dynamodb``
fixture by importing it (moto started once per module) and builds its table with :func:`two_sites`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from missed_checks.aws.table import ManagementTable
from missed_checks.checklists import managing
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.equipment import assigning
from missed_checks.equipment.registering import register_equipment
from missed_checks.evaluation.missed_check import MissedCheck
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Role
from missed_checks.sites.saving import create_site
from tests.contract.stores import dynamodb_table, embedded_dynamodb

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
DAILY = "DTSTART:20260302T060000\nRRULE:FREQ=DAILY"
"""Every day at 06:00 (in the checklist's zone)."""

OPERATOR = Caller.operator("cli:ops")
MANAGER = Caller("manager-north", {"north": Role.site_manager})
SUPERVISOR = Caller("supervisor-north", {"north": Role.supervisor})
AUDITOR = Caller("auditor-north", {"north": Role.auditor})
OPERATOR_NORTH = Caller("operator-north", {"north": Role.operator})
SOUTH = Caller("manager-south", {"south": Role.site_manager})
SUPERVISOR_SOUTH = Caller("supervisor-south", {"south": Role.supervisor})


@pytest.fixture(scope="module")
def dynamodb() -> Iterator[Any]:
    """moto, started once for the module (each test gets a table of its own)."""
    with embedded_dynamodb() as client:
        yield client


@contextmanager
def two_sites(client: Any) -> Iterator[ManagementTable]:
    """A table of its own holding sites north and south (deleted afterwards)."""
    with dynamodb_table(client) as name:
        store = ManagementTable(name)
        for site_id, zone in (("north", "Europe/Berlin"), ("south", "America/Chicago")):
            create_site(store, OPERATOR, site_id, name=site_id.title(), timezone=zone, now=NOW)
        yield store


def register(store: ManagementTable, *equipment: tuple[str, str]) -> None:
    """Register each (equipment id, site) a month before :data:`NOW`."""
    for equipment_id, site_id in equipment:
        register_equipment(store, OPERATOR, equipment_id, name=equipment_id, kind="forklift", site_id=site_id,
                           now=NOW - timedelta(days=30))


def add_checklist(store: ManagementTable, checklist_id: str, site_id: str | None, equipment: Sequence[str] = (), *,
                  recurrence: str = DAILY, assigned_at: datetime = NOW, created_at: datetime = NOW,
                  **fields: Any) -> None:
    """A checklist (in UTC unless ``fields`` say otherwise) with ``equipment`` assigned from ``assigned_at``."""
    spec = {"id": checklist_id, "site_id": site_id, "recurrence": recurrence, "timezone": "UTC", **fields}
    managing.put_checklist(store, OPERATOR, spec, created_at)
    if equipment:
        assigning.change_assignments(store, store, OPERATOR, checklist_id, list(equipment), assigned_at, assign=True)


BERLIN_DAILY = "DTSTART;TZID=Europe/Berlin:20260223T060000\nRRULE:FREQ=DAILY"
"""Every day 06:00-14:00 Berlin time (with ``window="PT8H"``): :func:`with_missed_checks`' checklists."""


def with_missed_checks(store: ManagementTable) -> list[tuple[str, OccurrenceWindow]]:
    """FL-1, FL-2 registered at north, FL-9 at south; checklist ``daily`` at north (FL-1) and
    ``south-daily`` at south (FL-9), made a week before :data:`NOW`, each with a missed check of the
    window of 1 March (its record opened, as the evaluation opens it before writing one); the
    (checklist id, window) of each."""
    register(store, ("FL-1", "north"), ("FL-2", "north"), ("FL-9", "south"))
    windows = []
    for checklist_id, site, equipment_id in (("daily", "north", "FL-1"), ("south-daily", "south", "FL-9")):
        week_ago = NOW - timedelta(days=7)
        add_checklist(store, checklist_id, site, [equipment_id], recurrence=BERLIN_DAILY, timezone=None,
                      window="PT8H", created_at=week_ago, assigned_at=week_ago)
        start = datetime(2026, 3, 1, 5, 0, tzinfo=UTC)
        window = OccurrenceWindow(start, start + timedelta(hours=8), start + timedelta(hours=8))
        checklist = store.get_checklist(checklist_id)
        assert checklist is not None
        store.open_window(checklist_id, window, checklist.judged_by())
        store.put_missed_check(MissedCheck(checklist_id, equipment_id, window, NOW - timedelta(days=1), "run"))
        windows.append((checklist_id, window))
    return windows
