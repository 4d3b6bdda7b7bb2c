"""Sites (#31): created and edited by admins only, every field validated naming it, edits only over
the revision read, read and listed only where the caller holds a role (elsewhere NotFound)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from missed_checks.errors import Conflict, Forbidden, InvalidInput, NotFound, PreconditionFailed
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Role
from missed_checks.sites.saving import create_site, edit_site, get_site, list_sites, require_site
from tests.fakes import InMemoryTable

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ADMIN = Caller("root", admin=True)
MANAGER = Caller("mia", roles={"north": Role.site_manager})


def table_with_sites(*site_ids: str) -> InMemoryTable:
    table = InMemoryTable()
    for site_id in site_ids:
        create_site(table, ADMIN, site_id, name=f"{site_id} yard", timezone="Europe/Berlin", now=NOW)
    return table


def test_an_admin_creates_a_site_stamped_with_who() -> None:
    table = InMemoryTable()
    site = create_site(table, ADMIN, "north", name=" North yard ", timezone="Europe/Berlin", now=NOW)
    assert (site.site_id, site.name, site.timezone, site.revision) == ("north", "North yard", "Europe/Berlin", 1)
    assert site.to_dict()["created_at"] == "2026-03-02T09:00:00Z"
    assert table.stamped == [("site", "north", "root")]
    with pytest.raises(Conflict, match="site 'north' already exists"):
        create_site(table, ADMIN, "north", name="again", timezone="UTC", now=NOW)


@pytest.mark.parametrize(("fields", "message"), [
    ({"site_id": "no site"}, r"^site_id: 'no site' is not a valid site id"),
    ({"site_id": "-north"}, r"^site_id: '-north' is not a valid site id"),
    ({"name": ""}, r"^name: is a string \(''\): give the site's name"),
    ({"name": "two\nlines"}, r"^name: must be one line"),
    ({"timezone": "Europe"}, r"^timezone: 'Europe' is not an IANA time zone"),
    ({"timezone": "Mars/Base"}, r"^timezone: 'Mars/Base' is not an IANA time zone"),
    ({"timezone": 5}, r"^timezone: a number \(5\) is not an IANA time zone"),
])
def test_every_field_is_validated_naming_it(fields: dict[str, object], message: str) -> None:
    given: dict[str, object] = {"site_id": "north", "name": "North", "timezone": "Europe/Berlin", **fields}
    with pytest.raises(InvalidInput, match=message):
        create_site(InMemoryTable(), ADMIN, given["site_id"], name=given["name"], timezone=given["timezone"], now=NOW)


def test_only_admins_and_unscoped_callers_create_and_edit() -> None:
    table = table_with_sites("north")
    with pytest.raises(Forbidden, match="only an admin may administer"):
        create_site(table, MANAGER, "south", name="South", timezone="UTC", now=NOW)
    with pytest.raises(Forbidden, match="the role site_manager at site north does not allow administer"):
        edit_site(table, MANAGER, "north", 1, name="Mine", now=NOW)
    with pytest.raises(NotFound, match="^site 'south' does not exist$"):
        edit_site(table, Caller("x", roles={"north": Role.operator}), "south", 1, name="S", now=NOW)
    create_site(table, Caller.operator("ops"), "south", name="South", timezone="UTC", now=NOW)
    assert set(table.sites) == {"north", "south"}


def test_an_edit_applies_only_over_the_revision_read() -> None:
    table = table_with_sites("north")
    later = NOW + timedelta(hours=1)
    edited = edit_site(table, ADMIN, "north", 1, name="North yard (new)", now=later)
    assert (edited.revision, edited.name, edited.timezone, edited.updated_at) == (2, "North yard (new)",
                                                                                   "Europe/Berlin", later)
    with pytest.raises(PreconditionFailed) as refused:
        edit_site(table, ADMIN, "north", 1, timezone="UTC", now=later)
    assert refused.value.current_etag == '"2"'
    assert table.sites["north"].timezone == "Europe/Berlin"
    assert edit_site(table, ADMIN, "north", None, timezone="UTC", now=later).revision == 3  # If-Match: *
    with pytest.raises(NotFound, match="site 'west' does not exist"):
        edit_site(table, ADMIN, "west", None, name="W", now=later)


def test_another_sites_read_is_not_found_as_a_missing_one() -> None:
    table = table_with_sites("north", "south")
    assert get_site(table, MANAGER, "north").site_id == "north"
    for site_id in ("south", "nowhere"):
        with pytest.raises(NotFound, match=f"^site '{site_id}' does not exist$"):
            get_site(table, MANAGER, site_id)
    with pytest.raises(NotFound, match="^site 'nowhere' does not exist$"):
        get_site(table, ADMIN, "nowhere")


def test_lists_hold_only_the_callers_sites_paged() -> None:
    table = table_with_sites("a", "b", "c", "d", "e")
    first = list_sites(table, ADMIN, None, 2)
    assert [s.site_id for s in first.items] == ["a", "b"] and first.next_position == "b"
    rest = list_sites(table, ADMIN, first.next_position, 10)
    assert [s.site_id for s in rest.items] == ["c", "d", "e"] and rest.next_position is None
    scoped = Caller("p", roles={"b": Role.operator, "d": Role.auditor, "zz": Role.operator})
    page = list_sites(table, scoped, None, 1)
    assert [s.site_id for s in page.items] == ["b"] and page.next_position == "b"
    page = list_sites(table, scoped, page.next_position, 1)
    assert [s.site_id for s in page.items] == ["d"] and page.next_position == "d"
    assert list(list_sites(table, scoped, "d", 5).items) == []  # zz: a role at a site that does not exist
    with pytest.raises(InvalidInput, match="^limit: is a number"):
        list_sites(table, ADMIN, None, 0)


def test_require_site_names_the_field() -> None:
    with pytest.raises(InvalidInput, match="^site_id: there is no site 'north'"):
        require_site(InMemoryTable(), "north")
