"""A checklist's site (#31): it must exist; a new checklist takes the site's time zone when it gives
none; the site never changes (one made before sites may be given one); calendars only of its site."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from missed_checks.checklists.closure_calendar import ClosureCalendar
from missed_checks.checklists.saving import save_checklist
from missed_checks.errors import InvalidInput
from missed_checks.permissions.caller import Caller
from missed_checks.sites.saving import create_site
from tests.fakes import InMemoryTable

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
FLOATING = "DTSTART:20260302T060000\nRRULE:FREQ=DAILY"
"""No TZID: the zone comes from the checklist's timezone."""
BERLIN_RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY"


@pytest.fixture
def table() -> InMemoryTable:
    table = InMemoryTable()
    create_site(table, Caller("root", admin=True), "north", name="North", timezone="America/Chicago", now=NOW)
    create_site(table, Caller("root", admin=True), "south", name="South", timezone="UTC", now=NOW)
    return table


def test_a_new_checklist_at_a_site_takes_its_time_zone(table: InMemoryTable) -> None:
    saved = save_checklist(table, "daily", recurrence=FLOATING, window="PT8H", now=NOW, by="t", site_id="north")
    assert (saved.site_id, saved.timezone) == ("north", "America/Chicago")
    assert saved.to_dict()["site_id"] == "north"
    own = save_checklist(table, "own", recurrence=FLOATING, window="PT8H", now=NOW, by="t", site_id="north",
                         timezone="Europe/Berlin")
    assert own.timezone == "Europe/Berlin"
    tzid = save_checklist(table, "tzid", recurrence=BERLIN_RULE, window="PT8H", now=NOW, by="t", site_id="north")
    assert tzid.timezone is None  # DTSTART names its zone: no default is added to conflict with it
    assert tzid.parsed().zone.key == "Europe/Berlin"
    edited = save_checklist(table, "daily", recurrence=FLOATING, window="PT9H", now=NOW, by="t")
    assert (edited.site_id, edited.timezone) == ("north", "America/Chicago")


def test_the_site_must_exist_and_never_changes(table: InMemoryTable) -> None:
    with pytest.raises(InvalidInput, match="^site_id: there is no site 'west'"):
        save_checklist(table, "daily", recurrence=FLOATING, window="PT8H", now=NOW, by="t", site_id="west")
    with pytest.raises(InvalidInput, match="^site_id: 'no site' is not a valid site id"):
        save_checklist(table, "daily", recurrence=FLOATING, window="PT8H", now=NOW, by="t", site_id="no site")
    legacy = save_checklist(table, "legacy", recurrence=BERLIN_RULE, window="PT8H", now=NOW, by="t")
    assert legacy.site_id is None
    given = save_checklist(table, "legacy", recurrence=BERLIN_RULE, window="PT8H", now=NOW, by="t", site_id="south")
    assert given.site_id == "south"
    with pytest.raises(InvalidInput, match="^site_id: checklist 'legacy' belongs to site south: a checklist's site "
                                           "never changes"):
        save_checklist(table, "legacy", recurrence=BERLIN_RULE, window="PT8H", now=NOW, by="t", site_id="north")
    assert table.checklists["legacy"].site_id == "south"


def test_calendars_only_of_its_own_site(table: InMemoryTable) -> None:
    table.calendars["north-holidays"] = ClosureCalendar("north-holidays", (date(2026, 4, 3),), revision=1,
                                                        site_id="north")
    table.calendars["everywhere"] = ClosureCalendar("everywhere", (date(2026, 12, 25),), revision=1)
    saved = save_checklist(table, "daily", recurrence=BERLIN_RULE, window="PT8H", now=NOW, by="t", site_id="north",
                           closed_on=["everywhere", "north-holidays"])
    assert saved.closed_on == ("everywhere", "north-holidays")
    with pytest.raises(InvalidInput, match=r"^closed_on\[1\]: calendar 'north-holidays' belongs to site north, "
                                           "not south"):
        save_checklist(table, "other", recurrence=BERLIN_RULE, window="PT8H", now=NOW, by="t", site_id="south",
                       closed_on=["everywhere", "north-holidays"])
    with pytest.raises(InvalidInput, match=r"^closed_on\[0\]: calendar 'north-holidays' belongs to site north, "
                                           "not this checklist \\(which has no site\\)"):
        save_checklist(table, "legacy", recurrence=BERLIN_RULE, window="PT8H", now=NOW, by="t",
                       closed_on=["north-holidays"])
    assert set(table.checklists) == {"daily"}
