"""Creating at a site the caller holds no role at (#31, review): a checklist, a closure calendar,
registered equipment and a digest subscription are each refused as 404 naming the site, the same
answer whether that site exists (another site's) or not, so a create never tells a caller which
sites exist; and nothing is written."""

from __future__ import annotations

from typing import Any

import pytest

from missed_checks.api.routes.context import ManagementTable
from tests.unit.api.test_scoped_routes import MANAGER, OPERATOR_NORTH, call, manage, person, table  # noqa: F401
from tests.unit.two_sites import NOW, dynamodb  # noqa: F401

RULE = "DTSTART:20260302T060000\nRRULE:FREQ=DAILY"


def _creates(site_id: str) -> dict[str, tuple[str, str, dict[str, Any]]]:
    return {
        "checklist": ("POST", "/checklists", {"id": "new-one", "site_id": site_id, "recurrence": RULE}),
        "calendar": ("PUT", "/calendars/new-one", {"site_id": site_id, "dates": ["2026-12-25"]}),
        "equipment": ("POST", "/equipment", {"equipment_id": "NEW-1", "site_id": site_id, "name": "n", "kind": "k"}),
    }


@pytest.mark.parametrize("what", ["checklist", "calendar", "equipment"])
@pytest.mark.parametrize("who", [MANAGER, OPERATOR_NORTH], ids=["manager-north", "operator-north"])
def test_another_sites_and_a_missing_site_are_one_answer(table: ManagementTable, what: str,  # noqa: F811
                                                         who: dict[str, Any]) -> None:
    answers = {}
    for site_id in ("south", "nowhere"):
        method, path, body = _creates(site_id)[what]
        status, problem, _ = call(manage(), method, path, who, body)
        answers[site_id] = (status, problem["detail"].replace(site_id, "<site>"))
    assert answers["south"] == answers["nowhere"] == (404, "site '<site>' does not exist")
    assert table.get_checklist("new-one") is None and table.get_calendar("new-one") is None
    assert table.get_registered("NEW-1") is None


def test_a_weak_role_at_its_own_site_is_403_before_the_rule_is_read(table: ManagementTable) -> None:  # noqa: F811
    status, problem, _ = call(manage(), "POST", "/checklists", OPERATOR_NORTH,
                              {"id": "new-one", "site_id": "north", "recurrence": "not a rule"})
    assert status == 403 and "operator at site north does not allow manage" in problem["detail"]
    assert table.get_checklist("new-one") is None


def test_a_manager_still_gets_400_naming_the_field_for_a_bad_site_id(table: ManagementTable) -> None:  # noqa: F811
    status, problem, _ = call(manage(), "POST", "/checklists", MANAGER,
                              {"id": "new-one", "site_id": "no such/site", "recurrence": RULE})
    assert (status, problem["field"]) == (400, "site_id")
    status, problem, _ = call(manage(), "PUT", "/calendars/new-one", MANAGER,
                              {"site_id": ["north"], "dates": []})
    assert (status, problem["field"]) == (400, "site_id")


def test_another_sites_calendar_named_by_a_checklist_is_answered_as_a_missing_one(
        table: ManagementTable) -> None:  # noqa: F811
    """A checklist put naming another site's closure calendar is refused exactly as one naming no
    calendar at all (as the preview already does): the answer never says that calendar exists, nor
    at which site; nothing is written."""
    table.put_calendar("south-holidays", [], now=NOW, by="cli:ops", site_id="south")
    table.put_calendar("shared", [], now=NOW, by="cli:ops")  # made before sites: any checklist's
    problems = {}
    for calendar_id in ("south-holidays", "no-such-calendar"):
        status, problem, _ = call(manage(), "POST", "/checklists", MANAGER,
                                  {"id": "new-one", "site_id": "north", "recurrence": RULE,
                                   "closed_on": ["shared", calendar_id]})
        problems[calendar_id] = (status, problem["field"], problem["detail"].replace(calendar_id, "<id>"))
    assert problems["south-holidays"] == problems["no-such-calendar"]
    assert problems["south-holidays"][:2] == (400, "closed_on[1]")
    assert "south" not in problems["south-holidays"][2], problems
    assert table.get_checklist("new-one") is None
    edit = {"recurrence": RULE, "closed_on": ["south-holidays"]}
    status, problem, _ = call(manage(), "PUT", "/checklists/daily", MANAGER, edit, headers={"If-Match": "*"})
    assert (status, problem["field"]) == (400, "closed_on[0]") and "south" not in problem["detail"].replace(
        "south-holidays", "<id>")
    status, created, _ = call(manage(), "POST", "/checklists", MANAGER,
                              {"id": "new-one", "site_id": "north", "recurrence": RULE, "closed_on": ["shared"]})
    assert (status, created["closed_on"]) == (201, ["shared"])


@pytest.mark.parametrize("path", ["/checklists", "/calendars", "/equipment"])
def test_a_list_filtered_by_a_site_the_caller_holds_no_role_at_is_404(table: ManagementTable,  # noqa: F811
                                                                      path: str) -> None:
    """``site_id=`` narrows a list to one of the caller's sites; another site, or one that does not
    exist, is 404 naming it, on every list (docs/http-api.md "Lists come in pages")."""
    table.put_calendar("north-holidays", [], now=NOW, by="cli:ops", site_id="north")
    table.put_calendar("south-holidays", [], now=NOW, by="cli:ops", site_id="south")
    for site_id in ("south", "nowhere"):
        status, problem, _ = call(manage(), "GET", path, MANAGER, query={"site_id": site_id})
        assert (status, problem["detail"]) == (404, f"site {site_id!r} does not exist")
    status, page, _ = call(manage(), "GET", path, MANAGER, query={"site_id": "north"})
    assert status == 200 and page["items"] and all(item["site_id"] == "north" for item in page["items"])
    status, page, _ = call(manage(), "GET", path, person("root", "admin"), query={"site_id": "south"})
    assert status == 200 and page["items"] and all(item["site_id"] == "south" for item in page["items"])
