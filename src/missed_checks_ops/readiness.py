"""Readiness (#33) for ``equipment readiness``: one piece of equipment's readiness now (computed from
the table as it is, as its status route shows it), or the stored readiness of a site's equipment (what
was last announced, as ``GET /sites/{site_id}/readiness`` lists it), as the operator or the person
``--as`` names (``read`` at the site)."""

from __future__ import annotations

from datetime import datetime

from missed_checks.equipment.assignments import validate_equipment_id
from missed_checks.equipment.status import readiness_for
from missed_checks.errors import NotFound
from missed_checks.paging import MAX_PAGE
from missed_checks.permissions.caller import Caller
from missed_checks.readiness.listing import site_readiness
from missed_checks.readiness.readiness import Readiness, ReadinessRecord
from missed_checks_ops.defects import store_of
from missed_checks_ops.target import StackTarget

__all__ = ["equipment_readiness", "readiness_of_site"]


def equipment_readiness(target: StackTarget, caller: Caller, equipment_id: str, now: datetime) -> Readiness:
    """The equipment's readiness now, as its status route shows it (``read`` at its site; another
    site's: NotFound, as a missing one)."""
    equipment_id = validate_equipment_id(equipment_id, "equipment")
    found = readiness_for(store_of(target), caller, equipment_id, now)
    if found is None:
        raise NotFound(f"equipment {equipment_id!r} does not exist")
    return found


def readiness_of_site(target: StackTarget, caller: Caller, site_id: str) -> list[ReadinessRecord]:
    """The stored readiness of every piece of the site's equipment, by equipment id (every page)."""
    store = store_of(target)
    found: list[ReadinessRecord] = []
    position: str | None = None
    while True:
        page = site_readiness(store, site_id, caller=caller, limit=MAX_PAGE, cursor=position)
        found += page.items
        position = page.next_position
        if position is None:
            return found
