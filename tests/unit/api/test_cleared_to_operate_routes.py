"""The routes of #33 ("cleared to operate") through the functions' resolvers with API Gateway's payload 2.0
events and the stack's table adapter on moto: a checklist's items put through ``POST``/``PUT
/checklists`` and read by revision (``GET /checklists/{id}/items``); a check answering them
(``POST /checks``): a bad answer refused naming ``answers.<item>`` (``checks[0].answers.<item>`` in a
batch) with nothing written, a failed critical item answered with its findings and the defect it
opened; the defects listed, read and resolved (``If-Match``: 428 without, 412 stale, 409 resolved
already; an operator or auditor 403, another site 404); a site's readiness listed."""

from __future__ import annotations

from typing import Any

from missed_checks.api.routes.context import ManagementTable
from tests.unit.api import test_scoped_routes
from tests.unit.api.test_scoped_routes import (
    AUDITOR,
    MANAGER,
    OPERATOR_NORTH,
    SOUTH,
    SUPERVISOR,
    SUPERVISOR_SOUTH,
    call,
    manage,
    person,
)
from tests.unit.two_sites import NOW, dynamodb  # noqa: F401

table = test_scoped_routes.table  # the fixture: sites north and south, FL-1 on daily, FL-9 on south-daily

BRAKES = {"id": "brakes", "label": "Brakes work", "kind": "pass_fail", "critical": True}
TYRES = {"id": "tyres", "label": "Tyre pressure", "kind": "number", "unit": "bar", "minimum": 6, "maximum": 8.5}
FLUID = {"id": "fluid", "label": "Hydraulic fluid", "kind": "choice", "choices": ["dry", "ok", "leaking"],
         "failing_choices": ["leaking"]}


def _items_of(checklist_id: str, who: dict[str, Any], revision: str | None = None) -> tuple[int, Any]:
    status, body, _ = call(manage(), "GET", f"/checklists/{checklist_id}/items", who,
                           query={"revision": revision} if revision else None)
    return status, body


def test_a_checklists_items_are_put_and_read_by_revision(table: ManagementTable) -> None:
    assert _items_of("daily", AUDITOR) == (200, {"checklist_id": "daily", "revision": 0, "effective_from": None,
                                                 "items": []})
    read = call(manage(), "GET", "/checklists/daily", MANAGER)
    edit = {"recurrence": read[1]["recurrence"], "window": "PT8H", "items": [BRAKES, TYRES], "pre_use": True}
    status, edited, _ = call(manage(), "PUT", "/checklists/daily", MANAGER, edit, headers={"If-Match": read[2]["ETag"]})
    assert status == 200, edited
    assert (edited["items_revision"], edited["pre_use"], edited["items"]) == (1, True, [BRAKES, TYRES])
    status, first = _items_of("daily", OPERATOR_NORTH)
    assert (status, first["revision"], first["items"]) == (200, 1, [BRAKES, TYRES])

    status, edited, _ = call(manage(), "PUT", "/checklists/daily", MANAGER,
                             {**edit, "items": [BRAKES, FLUID]}, headers={"If-Match": "*"})
    assert (status, edited["items_revision"]) == (200, 2), edited
    assert _items_of("daily", AUDITOR)[1]["items"] == [BRAKES, FLUID]
    assert _items_of("daily", AUDITOR, "1")[1]["items"] == [BRAKES, TYRES]  # an earlier revision reads as it was
    status, problem = _items_of("daily", AUDITOR, "3")
    assert (status, problem["detail"]) == (404, "checklist 'daily' has no revision 3 of its items (its current one "
                                                "is 2)")
    status, problem = _items_of("daily", AUDITOR, "two")
    assert (status, problem["field"]) == (400, "revision")
    assert _items_of("daily", SOUTH)[0] == 404  # another site's checklist: as a missing one
    assert _items_of("south-daily", MANAGER)[0] == 404


def test_a_bad_item_is_400_naming_it_and_nothing_is_written(table: ManagementTable) -> None:
    read = call(manage(), "GET", "/checklists/daily", MANAGER)
    bad = {**TYRES, "minimum": "six"}
    status, problem, _ = call(manage(), "PUT", "/checklists/daily", MANAGER,
                              {"recurrence": read[1]["recurrence"], "items": [BRAKES, bad]}, headers={"If-Match": "*"})
    assert (status, problem["field"]) == (400, "items[1].minimum"), problem
    assert table.get_checklist("daily").items_revision == 0  # type: ignore[union-attr]


def checks() -> Any:
    from functions.api_checks import app
    return app


def _pre_use(table: ManagementTable, *items: dict[str, Any]) -> None:
    """``daily`` (north, FL-1) asks ``items`` (the brakes, critical, when none are given) before use."""
    read = call(manage(), "GET", "/checklists/daily", MANAGER)
    status, body, _ = call(manage(), "PUT", "/checklists/daily", MANAGER,
                           {"recurrence": read[1]["recurrence"], "window": "PT8H", "items": list(items or [BRAKES]),
                            "pre_use": True}, headers={"If-Match": "*"})
    assert status == 200, body


def _fail_brakes(who: dict[str, Any] = OPERATOR_NORTH) -> str:
    """A check of FL-1 at NOW whose brakes fail: the defect it opened."""
    status, recorded, _ = call(checks(), "POST", "/checks", who, {
        "checklist_id": "daily", "equipment_id": "FL-1", "performed_at": "2026-03-02T12:00:00Z",
        "answers": {"brakes": "fail"}})
    assert status == 201, recorded
    check = recorded["checks"][0]
    assert check["findings"]["result"] == "failed"
    assert [item["item_id"] for item in check["findings"]["failed_items"]] == ["brakes"]
    assert len(check["defects_opened"]) == 1
    return str(check["defects_opened"][0])


def test_a_bad_answer_is_refused_naming_the_item_and_nothing_is_written(table: ManagementTable) -> None:
    _pre_use(table, BRAKES, TYRES)
    check = {"checklist_id": "daily", "equipment_id": "FL-1", "performed_at": "2026-03-02T12:00:00Z",
             "answers": {"brakes": "ok", "tyres": 7}}
    status, problem, _ = call(checks(), "POST", "/checks", OPERATOR_NORTH, check)
    assert (status, problem["field"], problem["errors"][0]["kind"]) == (422, "answers.brakes", "bad_answer"), problem
    assert "Brakes work" in problem["detail"] and "revision 1" in problem["detail"]
    status, problem, _ = call(checks(), "POST", "/checks/batch", OPERATOR_NORTH, {"checks": [check]})
    assert (status, problem["field"]) == (422, "checks[0].answers.brakes"), problem
    assert call(manage(), "GET", "/defects", OPERATOR_NORTH)[1]["items"] == []
    assert table.checks_seen("FL-1", NOW.replace(hour=0), NOW) == []  # nothing written


def test_a_failed_critical_item_opens_a_defect_every_role_reads_and_a_supervisor_resolves(
        table: ManagementTable) -> None:
    _pre_use(table)
    defect_id = _fail_brakes()
    status, page, _ = call(manage(), "GET", "/defects", AUDITOR, query={"site": "north", "status": "open"})
    assert (status, [d["defect_id"] for d in page["items"]], page["next_cursor"]) == (200, [defect_id], None)
    assert call(manage(), "GET", "/defects", AUDITOR, query={"status": "resolved"})[1]["items"] == []
    assert call(manage(), "GET", "/defects", AUDITOR, query={"equipment": "FL-1"})[1]["items"][0]["status"] == "open"
    status, problem, _ = call(manage(), "GET", "/defects", AUDITOR, query={"status": "closed"})
    assert (status, problem["field"]) == (400, "status")
    assert call(manage(), "GET", "/defects", SOUTH, query={"site": "north"})[0] == 404
    assert call(manage(), "GET", "/defects", SOUTH)[1]["items"] == []  # the caller's sites only
    status, defect, headers = call(manage(), "GET", f"/defects/{defect_id}", OPERATOR_NORTH)
    assert (status, defect["status"], headers["ETag"]) == (200, "open", '"1"')
    assert defect["found_by"].endswith("#operator-north")  # the check's recorded_by: the token's iss#sub
    assert defect["failed_items"] == [{"item_id": "brakes", "label": "Brakes work", "critical": True,
                                       "answer": "fail", "expected": "pass"}]
    assert call(manage(), "GET", f"/defects/{defect_id}", SOUTH)[0] == 404
    assert call(manage(), "GET", "/defects/D-0000000000000000", AUDITOR)[0] == 404

    note = {"note": "brake line replaced, tested on the yard"}
    path = f"/defects/{defect_id}/resolve"
    assert call(manage(), "POST", path, SUPERVISOR, note)[0] == 428
    assert call(manage(), "POST", path, OPERATOR_NORTH, note, headers={"If-Match": '"1"'})[0] == 403
    assert call(manage(), "POST", path, AUDITOR, note, headers={"If-Match": '"1"'})[0] == 403
    assert call(manage(), "POST", path, SUPERVISOR_SOUTH, note, headers={"If-Match": '"1"'})[0] == 404
    status, problem, _ = call(manage(), "POST", path, SUPERVISOR, {"note": " "}, headers={"If-Match": '"1"'})
    assert (status, problem["field"]) == (400, "note")
    status, problem, _ = call(manage(), "POST", path, SUPERVISOR, {**note, "by": "x"}, headers={"If-Match": '"1"'})
    assert (status, problem["field"]) == (400, "by")
    assert call(manage(), "GET", f"/defects/{defect_id}", AUDITOR)[1]["status"] == "open"  # refusals wrote nothing

    status, resolved, headers = call(manage(), "POST", path, SUPERVISOR, note, headers={"If-Match": '"1"'})
    assert (status, resolved["status"], resolved["resolved_by"], resolved["resolution"], resolved["resolved_how"],
            headers["ETag"]) == (200, "resolved", "supervisor-north", note["note"], "supervisor", '"2"'), resolved
    status, stale, headers = call(manage(), "POST", path, MANAGER, note, headers={"If-Match": '"1"'})
    assert (status, stale["current_etag"]) == (412, '"2"'), stale
    assert call(manage(), "POST", path, MANAGER, note, headers={"If-Match": "*"})[0] == 409
    assert call(manage(), "GET", "/defects", AUDITOR, query={"status": "resolved"})[1]["items"][0]["defect_id"] \
        == defect_id


def test_a_sites_readiness_is_listed_for_who_may_read_there(table: ManagementTable) -> None:
    status, page, _ = call(manage(), "GET", "/sites/north/readiness", OPERATOR_NORTH)
    assert (status, page) == (200, {"items": [], "next_cursor": None})
    assert call(manage(), "GET", "/sites/north/readiness", SOUTH)[0] == 404
    assert call(manage(), "GET", "/sites/nowhere/readiness", person("root", "admin"))[0] == 404
    status, problem, _ = call(manage(), "GET", "/sites/north/readiness", AUDITOR, query={"limit": "0"})
    assert (status, problem["field"]) == (400, "limit")
