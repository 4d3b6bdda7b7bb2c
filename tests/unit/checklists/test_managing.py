"""Managing checklists and assigning equipment for a caller at the checklist's site (#31): the use cases
the operator's commands and the management API both call (:mod:`missed_checks.checklists.managing`,
:mod:`missed_checks.equipment.assigning`).

Each runs on the table adapter on moto (its writes conditional as DynamoDB's are, so a stale revision is
refused by the write itself), in process: own site allowed, another site NotFound (exactly as a
missing checklist), a role without the action Forbidden, nothing written on any refusal, a stale
If-Match PreconditionFailed with the current ETag."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from missed_checks.aws.table import ManagementTable
from missed_checks.checklists import managing
from missed_checks.checklists.checklist import Checklist, Status
from missed_checks.equipment import assigning
from missed_checks.equipment.registering import retire_equipment
from missed_checks.errors import Conflict, Forbidden, InvalidInput, NotFound, PreconditionFailed
from missed_checks.permissions.caller import Caller
from tests.unit.two_sites import (  # noqa: F401  (dynamodb: a fixture)
    AUDITOR,
    DAILY,
    MANAGER,
    NOW,
    OPERATOR,
    SOUTH,
    SUPERVISOR,
    add_checklist,
    dynamodb,
    register,
    two_sites,
)

RULE = DAILY


@pytest.fixture
def table(dynamodb: Any) -> Iterator[ManagementTable]:  # noqa: F811
    """Sites north (Berlin) and south (Chicago), checklist ``daily`` at north with FL-1 assigned, ``legacy``
    with no site (made before sites existed)."""
    with two_sites(dynamodb) as store:
        register(store, ("FL-1", "north"), ("FL-2", "north"), ("FL-9", "south"))
        add_checklist(store, "daily", "north", ["FL-1"], timezone="Europe/Berlin")
        add_checklist(store, "legacy", None)
        yield store


def spec(**changes: Any) -> dict[str, Any]:
    return {"id": "daily", "recurrence": RULE, "site_id": "north", "timezone": "Europe/Berlin", **changes}


def test_a_checklist_is_read_at_its_own_site_and_is_missing_anywhere_else(table: ManagementTable) -> None:
    assert managing.get_checklist(table, MANAGER, "daily").site_id == "north"
    assert managing.get_checklist(table, AUDITOR, "daily").checklist_id == "daily"
    with pytest.raises(NotFound) as other:
        managing.get_checklist(table, SOUTH, "daily")
    with pytest.raises(NotFound) as missing:
        managing.get_checklist(table, SOUTH, "nothing-here")
    assert str(other.value) == "checklist 'daily' does not exist"  # never confirmed: said as a missing one
    assert str(missing.value) == "checklist 'nothing-here' does not exist"
    with pytest.raises(NotFound):  # no site: admins and the operator only
        managing.get_checklist(table, MANAGER, "legacy")
    assert managing.get_checklist(table, OPERATOR, "legacy").site_id is None


def test_lists_hold_only_the_callers_sites(table: ManagementTable) -> None:
    managing.put_checklist(table, OPERATOR, spec(id="south-daily", site_id="south"), NOW)
    assert [c.checklist_id for c in managing.list_checklists(table, MANAGER)] == ["daily"]
    assert [c.checklist_id for c in managing.list_checklists(table, SOUTH)] == ["south-daily"]
    assert [c.checklist_id for c in managing.list_checklists(table, OPERATOR)] == ["daily", "legacy", "south-daily"]
    assert [c.checklist_id for c in managing.list_checklists(table, OPERATOR, "south")] == ["south-daily"]
    with pytest.raises(NotFound, match="site 'south' does not exist"):  # another site named (was an empty list)
        managing.list_checklists(table, MANAGER, "south")
    first = managing.checklists_page(table, OPERATOR, None, None, 2)
    assert [c.checklist_id for c in first.items] == ["daily", "legacy"] and first.next_position == "legacy"
    rest = managing.checklists_page(table, OPERATOR, None, first.next_position, 2)
    assert [c.checklist_id for c in rest.items] == ["south-daily"] and rest.next_position is None


def _revision(table: ManagementTable, checklist_id: str = "daily") -> int:
    found = table.get_checklist(checklist_id)
    assert found is not None
    return found.revision


def test_a_site_manager_edits_at_their_site_and_nobody_else_does(table: ManagementTable) -> None:
    before = _revision(table)
    with pytest.raises(Forbidden, match="role supervisor at site north does not allow manage"):
        managing.put_checklist(table, SUPERVISOR, spec(name="renamed"), NOW, if_match=before)
    with pytest.raises(NotFound, match="checklist 'daily' does not exist"):
        managing.put_checklist(table, SOUTH, spec(name="renamed"), NOW, if_match=before)
    assert _revision(table) == before  # nothing written on a refusal
    written = managing.put_checklist(table, MANAGER, spec(name="renamed"), NOW, if_match=before, create=False)
    assert (written.name, written.revision, _revision(table)) == ("renamed", before + 1, before + 1)
    assert table.get_checklist_item("daily")["changed_by"] == "manager-north"  # type: ignore[index]


def test_a_stale_if_match_is_refused_with_the_current_etag_and_writes_nothing(table: ManagementTable) -> None:
    current = _revision(table)
    with pytest.raises(PreconditionFailed) as stale:
        managing.put_checklist(table, MANAGER, spec(name="late"), NOW, if_match=current - 1)
    assert stale.value.current_etag == f'"{current}"'
    for change in (managing.pause_checklist, managing.resume_checklist):
        with pytest.raises(PreconditionFailed):
            change(table, MANAGER, "daily", NOW, if_match=current + 7)
    with pytest.raises(PreconditionFailed):
        managing.delete_checklist(table, MANAGER, "daily", if_match=current - 1)
    found = table.get_checklist("daily")
    assert found is not None and (found.revision, found.name, found.status) == (current, "", Status.ACTIVE)
    assert [a.unassigned_at for a in table.assignments("daily")] == [None]  # the refused delete ended nothing


class _ReadsBeforeAnotherEdit(ManagementTable):
    """The table as a manager sees it when another edit lands between their read and their write: the
    first read of the checklist answers it as it was, the write then meets the newer revision."""

    def __init__(self, name: str, stale: Checklist) -> None:
        super().__init__(name)
        self.stale: Checklist | None = stale

    def get_checklist(self, checklist_id: str) -> Checklist | None:
        if self.stale is not None:
            stale, self.stale = self.stale, None
            return stale
        return super().get_checklist(checklist_id)


def test_an_edit_landing_between_the_read_and_the_write_is_refused_by_the_write(table: ManagementTable) -> None:
    read = table.get_checklist("daily")
    assert read is not None
    managing.put_checklist(table, MANAGER, spec(name="first"), NOW, if_match=read.revision)
    racing = _ReadsBeforeAnotherEdit(table.name, read)
    with pytest.raises(PreconditionFailed) as stale:
        managing.put_checklist(racing, MANAGER, spec(name="second"), NOW, if_match=read.revision)
    assert stale.value.current_etag == f'"{read.revision + 1}"'
    assert table.get_checklist("daily").name == "first"  # type: ignore[union-attr]


def test_pause_resume_and_delete_need_manage_at_the_site(table: ManagementTable) -> None:
    with pytest.raises(Forbidden):
        managing.pause_checklist(table, AUDITOR, "daily", NOW)
    with pytest.raises(NotFound):
        managing.pause_checklist(table, SOUTH, "daily", NOW)
    with pytest.raises(Forbidden):
        managing.delete_checklist(table, SUPERVISOR, "daily")
    assert table.get_checklist("daily").status is Status.ACTIVE  # type: ignore[union-attr]
    revision = _revision(table)
    paused = managing.pause_checklist(table, MANAGER, "daily", NOW, if_match=revision)
    assert (paused.status, paused.revision) == (Status.PAUSED, revision + 1)
    resumed = managing.resume_checklist(table, MANAGER, "daily", NOW + timedelta(hours=1), if_match=revision + 1)
    assert (resumed.status, resumed.effective_from) == (Status.ACTIVE, NOW + timedelta(hours=1))
    managing.delete_checklist(table, MANAGER, "daily", if_match=revision + 2)
    assert table.get_checklist("daily") is None
    with pytest.raises(NotFound):
        managing.delete_checklist(table, MANAGER, "daily")


def test_creating_needs_manage_at_the_site_named(table: ManagementTable) -> None:
    with pytest.raises(NotFound, match="site 'north' does not exist"):
        managing.put_checklist(table, SOUTH, spec(id="new"), NOW, create=True)
    with pytest.raises(Forbidden):
        managing.put_checklist(table, SUPERVISOR, spec(id="new"), NOW, create=True)
    assert table.get_checklist("new") is None
    with pytest.raises(Conflict):
        managing.put_checklist(table, MANAGER, spec(), NOW, create=True)
    with pytest.raises(NotFound):
        managing.put_checklist(table, MANAGER, spec(id="new"), NOW, create=False)
    created = managing.put_checklist(table, MANAGER, spec(id="new"), NOW, create=True)
    assert (created.site_id, created.revision) == ("north", 1)


def test_a_checklist_at_a_site_takes_its_time_zone_unless_the_rule_names_one(table: ManagementTable) -> None:
    assert managing.with_site_defaults(table, spec(timezone=None))["timezone"] == "Europe/Berlin"
    assert managing.with_site_defaults(table, spec(timezone=None, site_id="south"))["timezone"] == "America/Chicago"
    named = spec(timezone=None, recurrence="DTSTART;TZID=Asia/Tokyo:20260302T060000\nRRULE:FREQ=DAILY")
    assert managing.with_site_defaults(table, named).get("timezone") is None
    assert managing.with_site_defaults(table, spec(timezone="UTC"))["timezone"] == "UTC"
    with pytest.raises(InvalidInput) as unknown:
        managing.with_site_defaults(table, spec(site_id="west"))
    assert unknown.value.field == "site_id"


# -- assigning ------------------------------------------------------------------------------------------
def _assigned(table: ManagementTable, checklist_id: str = "daily") -> list[str]:
    return sorted(a.equipment_id for a in table.assignments(checklist_id) if a.unassigned_at is None)


def test_a_site_manager_assigns_their_sites_equipment(table: ManagementTable) -> None:
    assert assigning.change_assignments(table, table, MANAGER, "daily", ["FL-2"], NOW, assign=True) == 1
    assert _assigned(table) == ["FL-1", "FL-2"]
    assert assigning.change_assignments(table, table, MANAGER, "daily", ["FL-2"], NOW + timedelta(hours=1),
                                        assign=False) == 1
    assert _assigned(table) == ["FL-1"]


@pytest.mark.parametrize(("equipment", "field", "message"), [
    # another site's equipment is answered as equipment that does not exist: never where it is
    (["FL-2", "FL-9"], "equipment[1]", "FL-9 is not registered at site north"),
    (["FL-404"], "equipment[0]", "FL-404 is not registered at site north"),
])
def test_assigning_another_sites_or_unregistered_equipment_is_refused_whole(
        table: ManagementTable, equipment: list[str], field: str, message: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        assigning.change_assignments(table, table, MANAGER, "daily", equipment, NOW, assign=True)
    assert refused.value.field == field and message in refused.value.message
    assert _assigned(table) == ["FL-1"]  # FL-2 neither: nothing written


def test_an_admin_is_told_where_another_sites_equipment_is(table: ManagementTable) -> None:
    with pytest.raises(InvalidInput, match=r"equipment\[0\]: FL-9 is at site south, not north"):
        assigning.change_assignments(table, table, Caller("root", admin=True), "daily", ["FL-9"], NOW, assign=True)


def test_retired_equipment_is_not_assigned(table: ManagementTable) -> None:
    retire_equipment(table, OPERATOR, "FL-2", at=NOW - timedelta(days=1), now=NOW)
    with pytest.raises(InvalidInput, match=r"equipment\[0\]: FL-2 was retired"):
        assigning.change_assignments(table, table, MANAGER, "daily", ["FL-2"], NOW, assign=True)
    assert _assigned(table) == ["FL-1"]


def test_a_checklist_without_a_site_takes_any_id_as_before(table: ManagementTable) -> None:
    assert assigning.change_assignments(table, table, OPERATOR, "legacy", ["FL-9", "X-1"], NOW, assign=True) == 2


def test_assigning_needs_manage_and_reading_read(table: ManagementTable) -> None:
    with pytest.raises(Forbidden):
        assigning.change_assignments(table, table, SUPERVISOR, "daily", ["FL-2"], NOW, assign=True)
    with pytest.raises(NotFound):
        assigning.change_assignments(table, table, SOUTH, "daily", ["FL-1"], NOW, assign=False)
    assert _assigned(table) == ["FL-1"]
    checklist, assignments = assigning.equipment_of(table, AUDITOR, "daily")
    assert (checklist.checklist_id, [a.equipment_id for a in assignments]) == ("daily", ["FL-1"])
    with pytest.raises(NotFound):
        assigning.equipment_of(table, SOUTH, "daily")
    page = assigning.assignments_page(table, MANAGER, "daily", None, 1)
    assert ([a.equipment_id for a in page.items], page.next_position) == (["FL-1"], None)


def test_a_caller_with_roles_names_the_site_of_a_new_checklist(table: ManagementTable) -> None:
    with pytest.raises(InvalidInput) as refused:
        managing.put_checklist(table, MANAGER, spec(id="new", site_id=None), NOW)
    assert refused.value.field == "site_id" and table.get_checklist("new") is None
