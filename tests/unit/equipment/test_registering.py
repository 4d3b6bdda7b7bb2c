"""The equipment registry (#31): register at a site one manages, edit, move (ending open assignments
to the old site's checklists at the move, nothing before it), retire (ending every open assignment),
read and list only where the caller holds a role; every write over the revision read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from missed_checks.checklists.checklist import Checklist
from missed_checks.equipment.registering import (
    edit_equipment,
    get_equipment,
    list_equipment,
    move_equipment,
    register_equipment,
    retire_equipment,
)
from missed_checks.equipment.registration import RegisteredEquipment, SiteMove
from missed_checks.errors import Conflict, Forbidden, InvalidInput, NotFound, PreconditionFailed
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Role
from missed_checks.sites.saving import create_site
from tests.fakes import InMemoryTable

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
LATER = NOW + timedelta(days=3)
ADMIN = Caller("root", admin=True)
NORTH = Caller("mia", roles={"north": Role.site_manager})
BOTH = Caller("max", roles={"north": Role.site_manager, "south": Role.site_manager})
RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY"


@pytest.fixture
def table() -> InMemoryTable:
    return InMemoryTable().with_sites("north", "south")


def register(table: InMemoryTable, equipment_id: str = "FL-1", site_id: str = "north",
             caller: Caller = NORTH) -> RegisteredEquipment:
    return register_equipment(table, caller, equipment_id, name="Forklift 1", kind="forklift", site_id=site_id,
                              attributes={"serial": "A-123"}, now=NOW)


def test_register_and_read(table: InMemoryTable) -> None:
    registered = register(table)
    assert registered.to_dict() == {
        "equipment_id": "FL-1", "name": "Forklift 1", "kind": "forklift", "site_id": "north",
        "attributes": {"serial": "A-123"}, "moves": [{"site_id": "north", "since": "2026-03-02T09:00:00Z"}],
        "retired_at": None, "revision": 1, "created_at": "2026-03-02T09:00:00Z",
        "updated_at": "2026-03-02T09:00:00Z"}
    assert get_equipment(table, Caller("op", roles={"north": Role.operator}), "FL-1") == registered
    assert table.stamped[-1] == ("registered_equipment", "FL-1", "mia")
    with pytest.raises(Conflict, match="equipment 'FL-1' already exists"):
        register(table)


def test_registering_needs_manage_at_an_existing_site(table: InMemoryTable) -> None:
    with pytest.raises(NotFound, match="^site 'south' does not exist$"):
        register(table, site_id="south")
    with pytest.raises(Forbidden, match="the role supervisor at site north does not allow manage"):
        register(table, caller=Caller("sam", roles={"north": Role.supervisor}))
    with pytest.raises(InvalidInput, match="^site_id: there is no site 'west'"):
        register(table, site_id="west", caller=ADMIN)
    with pytest.raises(InvalidInput, match=r"^attributes\.serial: must be one line"):
        register_equipment(table, ADMIN, "FL-2", name="F", kind="forklift", site_id="north",
                           attributes={"serial": "a\nb"}, now=NOW)
    with pytest.raises(InvalidInput, match="^equipment_id: 'FL 2' is not a valid equipment id"):
        register_equipment(table, ADMIN, "FL 2", name="F", kind="forklift", site_id="north", now=NOW)
    assert not table.registry


def test_another_sites_equipment_is_not_found_as_unregistered_equipment(table: InMemoryTable) -> None:
    register(table)
    south = Caller("sue", roles={"south": Role.site_manager})
    for equipment_id in ("FL-1", "FL-404"):
        with pytest.raises(NotFound, match=f"^equipment '{equipment_id}' does not exist$"):
            get_equipment(table, south, equipment_id)
    with pytest.raises(NotFound):
        edit_equipment(table, south, "FL-1", name="mine", now=LATER)


def test_an_edit_over_the_revision_read(table: InMemoryTable) -> None:
    register(table)
    edited = edit_equipment(table, NORTH, "FL-1", 1, name="Forklift one", attributes={}, now=LATER).equipment
    assert (edited.name, dict(edited.attributes), edited.kind, edited.revision) == ("Forklift one", {}, "forklift", 2)
    with pytest.raises(PreconditionFailed) as stale:
        edit_equipment(table, NORTH, "FL-1", 1, kind="truck", now=LATER)
    assert stale.value.current_etag == '"2"'
    with pytest.raises(InvalidInput, match="^body: nothing to change"):
        edit_equipment(table, NORTH, "FL-1", 2, now=LATER)


def test_a_move_ends_the_old_sites_open_assignments_at_its_instant(table: InMemoryTable) -> None:
    register(table, caller=BOTH)
    table.add_checklist(Checklist("north-daily", RULE, site_id="north"))
    table.add_checklist(Checklist("legacy", RULE))  # made before sites: not the old site's
    table.assign("north-daily", ["FL-1"], NOW)
    table.assign("legacy", ["FL-1"], NOW)
    with pytest.raises(NotFound, match="^site 'south' does not exist$"):
        move_equipment(table, NORTH, "FL-1", 1, site_id="south", now=LATER)
    change = move_equipment(table, BOTH, "FL-1", 1, site_id="south", at=LATER, now=LATER)
    assert change.ended == ("north-daily",)
    moved = change.equipment
    assert moved.site_id == "south" and moved.revision == 2
    assert moved.moves == (SiteMove("north", NOW), SiteMove("south", LATER))
    assert (moved.site_at(NOW - timedelta(days=1)), moved.site_at(LATER - timedelta(seconds=1)),
            moved.site_at(LATER)) == ("north", "north", "south")
    [north] = table.assigned["north-daily"]
    assert (north.assigned_at, north.unassigned_at) == (NOW, LATER)  # counted until the move, not rewritten before
    assert table.assigned["legacy"][0].unassigned_at is None
    assert [s.site_id for s in list_equipment(table, BOTH, "south").items] == ["south"]
    assert list(list_equipment(table, BOTH, "north").items) == []
    with pytest.raises(InvalidInput, match="^at: 2026-03-04T09:00:00Z is before it came to site south"):
        move_equipment(table, BOTH, "FL-1", 2, site_id="north", at=LATER - timedelta(days=1), now=LATER)
    with pytest.raises(InvalidInput, match="^site_id: equipment 'FL-1' is at site south already$"):
        move_equipment(table, BOTH, "FL-1", 2, site_id="south", now=LATER)


def test_retiring_ends_every_open_assignment_and_keeps_the_record(table: InMemoryTable) -> None:
    register(table)
    table.add_checklist(Checklist("north-daily", RULE, site_id="north"))
    table.add_checklist(Checklist("legacy", RULE))
    table.assign("north-daily", ["FL-1"], NOW)
    table.assign("legacy", ["FL-1"], NOW)
    change = retire_equipment(table, NORTH, "FL-1", 1, now=LATER)
    assert change.ended == ("legacy", "north-daily") and change.equipment.retired_at == LATER
    assert get_equipment(table, NORTH, "FL-1").retired_at == LATER
    with pytest.raises(Conflict, match="was retired at 2026-03-05T09:00:00Z"):
        retire_equipment(table, NORTH, "FL-1", None, now=LATER)
    with pytest.raises(Conflict, match="was retired"):
        edit_equipment(table, NORTH, "FL-1", None, name="again", now=LATER)


def test_lists_page_over_the_callers_sites(table: InMemoryTable) -> None:
    create_site(table, ADMIN, "east", name="east", timezone="UTC", now=NOW)
    for equipment_id, site_id in (("A", "north"), ("B", "north"), ("C", "south"), ("D", "east")):
        register(table, equipment_id, site_id, ADMIN)
    pages, position = [], None
    while True:
        page = list_equipment(table, ADMIN, None, position, 2)
        pages.append([e.equipment_id for e in page.items])
        position = page.next_position
        if position is None:
            break
    assert pages == [["D", "A"], ["B", "C"]]
    assert [e.equipment_id for e in list_equipment(table, BOTH).items] == ["A", "B", "C"]
    with pytest.raises(NotFound, match="^site 'east' does not exist$"):
        list_equipment(table, BOTH, "east")
    with pytest.raises(InvalidInput, match="^cursor: "):
        list_equipment(table, ADMIN, None, "nonsense")


def test_attributes_are_a_small_map_of_one_line_texts() -> None:
    from missed_checks.equipment.registration import MAX_ATTRIBUTES, validate_attributes

    assert validate_attributes({" serial ": " A-1 "}) == {"serial": "A-1"}
    with pytest.raises(InvalidInput, match=r"^attributes: is a list \(\['a'\]\): give a map of attribute names"):
        validate_attributes(["a"])
    with pytest.raises(InvalidInput, match=f"^attributes: has {MAX_ATTRIBUTES + 1} entries; give at most "
                                           f"{MAX_ATTRIBUTES} attribute names to texts"):
        validate_attributes({f"a{n}": "x" for n in range(MAX_ATTRIBUTES + 1)})
