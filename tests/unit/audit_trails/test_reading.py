"""Reading the audit trail (#31): per object and per site, oldest first, in pages, only for a caller
who may read_management at the entries' site (another site's object is NotFound, a role without the
action Forbidden)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from missed_checks.audit_trails.audit_entry import AuditEntry, ChangeAction
from missed_checks.audit_trails.reading import site_trail, trail_of
from missed_checks.errors import Forbidden, InvalidInput, NotFound
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Role
from tests.fakes import InMemoryAuditTrail

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
MANAGER = Caller("manager-north", {"north": Role.site_manager})
AUDITOR = Caller("auditor-north", {"north": Role.auditor})
SUPERVISOR = Caller("supervisor-north", {"north": Role.supervisor})
SOUTH = Caller("manager-south", {"south": Role.site_manager})
BOTH = Caller("auditor-both", {"north": Role.auditor, "south": Role.auditor})
ADMIN = Caller("admin", admin=True)


def entry(n, kind="checklist", object_id="forklift", site="north", action=ChangeAction.changed):
    return AuditEntry(kind=kind, object_id=object_id, site_id=site, changed_at=T0 + timedelta(minutes=n),
                      changed_by=f"user-{n}", action=action, before={"n": n - 1}, after={"n": n},
                      event_id=f"e{n}", sequence=f"{n:040d}")


@pytest.fixture
def trail():
    store = InMemoryAuditTrail()
    for n in (3, 1, 2, 4):  # written in any order, read in the order they were made
        store.put_audit_entry(entry(n))
    store.put_audit_entry(entry(5, kind="calendar", object_id="holidays"))
    store.put_audit_entry(entry(6, kind="checklist", object_id="south-daily", site="south"))
    store.put_audit_entry(entry(7, kind="grant", object_id="alice", site=None))
    return store


def test_an_objects_trail_is_oldest_first_in_pages(trail):
    first = trail_of(trail, MANAGER, "checklist", "forklift", limit=3)
    assert [e.event_id for e in first.items] == ["e1", "e2", "e3"] and first.next_position is not None
    rest = trail_of(trail, AUDITOR, "checklist", "forklift", first.next_position, limit=3)
    assert [e.event_id for e in rest.items] == ["e4"] and rest.next_position is None


def test_another_sites_object_is_not_found_and_a_role_without_read_management_is_forbidden(trail):
    with pytest.raises(NotFound, match="checklist forklift does not exist"):
        trail_of(trail, SOUTH, "checklist", "forklift")
    with pytest.raises(Forbidden, match="supervisor"):
        trail_of(trail, SUPERVISOR, "checklist", "forklift")
    with pytest.raises(NotFound):  # nothing recorded: a scoped caller learns nothing
        trail_of(trail, MANAGER, "checklist", "nothing-here")
    assert trail_of(trail, ADMIN, "checklist", "nothing-here").items == []


def test_objects_with_no_site_are_the_admins(trail):
    with pytest.raises(NotFound):
        trail_of(trail, BOTH, "grant", "alice")
    assert [e.event_id for e in trail_of(trail, ADMIN, "grant", "alice").items] == ["e7"]
    assert [e.event_id for e in site_trail(trail, ADMIN, None).items] == ["e7"]
    with pytest.raises(NotFound):
        site_trail(trail, MANAGER, None)


def test_a_moved_objects_entries_at_another_site_are_shown_only_to_who_may_read_that_site():
    store = InMemoryAuditTrail()
    store.put_audit_entry(entry(1, kind="equipment", object_id="FL-1", site="south", action=ChangeAction.created))
    store.put_audit_entry(entry(2, kind="equipment", object_id="FL-1", site="north"))  # moved north
    assert [e.event_id for e in trail_of(store, AUDITOR, "equipment", "FL-1").items] == ["e2"]
    assert [e.event_id for e in trail_of(store, BOTH, "equipment", "FL-1").items] == ["e1", "e2"]
    with pytest.raises(NotFound):  # where it is now decides
        trail_of(store, SOUTH, "equipment", "FL-1")


def test_a_sites_trail_holds_every_object_there(trail):
    assert [e.event_id for e in site_trail(trail, AUDITOR, "north").items] == ["e1", "e2", "e3", "e4", "e5"]
    assert [e.event_id for e in site_trail(trail, SOUTH, "south").items] == ["e6"]
    with pytest.raises(NotFound, match="site south does not exist"):
        site_trail(trail, MANAGER, "south")
    with pytest.raises(Forbidden):
        site_trail(trail, SUPERVISOR, "north")


def test_bad_input_names_its_field(trail):
    with pytest.raises(InvalidInput) as kind:
        trail_of(trail, ADMIN, "widget", "x")
    assert kind.value.field == "kind"
    with pytest.raises(InvalidInput) as object_id:
        trail_of(trail, ADMIN, "checklist", "")
    assert object_id.value.field == "id"
    with pytest.raises(InvalidInput) as limit:
        trail_of(trail, ADMIN, "checklist", "forklift", limit=0)
    assert limit.value.field == "limit"
    with pytest.raises(InvalidInput) as position:
        site_trail(trail, ADMIN, "north", "\n")
    assert position.value.field == "cursor"
