"""A scenario played into ``local serve`` (#32: ``missed-checks local serve --scenario demo``), so that its
weeks can be explored in the web app and through the APIs by the people ``local serve`` creates.

The scenario's checklists are put at one of the serve's sites (``north`` by default) and every
piece of equipment it assigns is registered there first (as the operator), since a person sees a
site's objects only; then its events are played as ``local run`` plays them (the same player:
:func:`~missed_checks_local.product.scenario.play_events`), each at its instant on the serve's
simulated clock, which then stands at the scenario's end (``local advance`` moves it on).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from missed_checks_local.product.scenario import Scenario, ScenarioEvent, play_events

__all__ = ["LOADED_BY", "load_scenario"]

LOADED_BY = "local serve"
"""Who registered the scenario's equipment (the audit trail's ``changed_by``)."""


def _kind(equipment_id: str) -> str:
    """The kind of a scenario's equipment, from its id (``fl-01`` -> ``fl``): scenarios name none."""
    return re.sub(r"[-_.]?\d+$", "", equipment_id) or "equipment"


def load_scenario(server: Any, scenario: Scenario, site_id: str = "north") -> int:
    """Play ``scenario`` into the started ``server`` (a :class:`~missed_checks_local.serve.LocalServer`
    on a simulated clock standing at the scenario's start), its checklists and equipment at
    ``site_id``; the number of events played."""
    from missed_checks.aws.table import ManagementTable  # deferred: boto3
    from missed_checks.equipment.registering import register_equipment
    from missed_checks.permissions.caller import Caller

    table = ManagementTable(server.stack.table_name, server.stack.client("dynamodb"))
    operator = Caller.operator(LOADED_BY)
    equipment = sorted({e for event in scenario.events if event.action == "assign" for e in event.args["equipment"]})
    for equipment_id in equipment:
        if table.get_registered(equipment_id) is None:
            register_equipment(table, operator, equipment_id, name=equipment_id, kind=_kind(equipment_id),
                               site_id=site_id, now=server.clock.now())
    events: list[ScenarioEvent] = [replace(event, args={**event.args, "site_id": site_id})
                                   if event.action == "put_checklist" else event for event in scenario.events]
    waiting = play_events(events, scenario.end, server.runtime, table, server.clock)
    server.runtime.settle()
    server.publish_clock()
    if waiting:
        raise ValueError(f"{waiting[0].where}: its missed check was never recorded: nothing to dismiss")
    return len(events)
