"""The routes of a caller with roles at sites (#31), through the functions' resolvers with API Gateway's
payload 2.0 events (a person's JWT claims) and the stack's table adapter on moto: the checklist routes
of the management function (``/checklists``: create, read, edit with ``If-Match``, preview, pause,
resume, delete, assign) and the six routes that existed before roles (``POST /checks``,
``/checks/batch``, ``GET /missed``, ``POST /missed/dismissals``, ``GET /equipment/{id}/status``,
``GET /report``). Own site allowed, another site 404 as a missing object, a role without the action
403, nothing written on a refusal."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from types import ModuleType
from typing import Any
from urllib.parse import urlencode

import pytest

from missed_checks import clock
from missed_checks.api.routes.context import ManagementTable
from tests.unit.two_sites import NOW, add_checklist, dynamodb, register, two_sites, with_missed_checks  # noqa: F401

RULE = "DTSTART;TZID=Europe/Berlin:20260223T060000\nRRULE:FREQ=DAILY"


def person(name: str, *groups: str) -> dict[str, Any]:
    return {"username": name, "cognito:groups": "[" + " ".join(groups) + "]"}


MANAGER = person("manager-north", "site_manager@north")
SUPERVISOR = person("supervisor-north", "supervisor@north")
AUDITOR = person("auditor-north", "auditor@north")
OPERATOR_NORTH = person("operator-north", "operator@north")
SOUTH = person("manager-south", "site_manager@south")
SUPERVISOR_SOUTH = person("supervisor-south", "supervisor@south")


@pytest.fixture
def table(dynamodb: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[ManagementTable]:  # noqa: F811
    """Sites north and south; FL-1, FL-2 registered at north, FL-9 at south; checklist ``daily`` at
    north (FL-1) and ``south-daily`` at south (FL-9), each with a missed check on 1 March."""
    with two_sites(dynamodb) as store:
        monkeypatch.setenv("TABLE_NAME", store.name)
        with_missed_checks(store)
        clock.set_source(lambda: NOW)
        yield store
        clock.set_source(None)


def call(module: ModuleType, method: str, path: str, who: dict[str, Any], body: Any = None, *,
         query: dict[str, str] | None = None, headers: dict[str, str] | None = None) -> tuple[int, Any, dict[str, str]]:
    """One request as API Gateway hands it to the function: (status, JSON body or None, headers)."""
    event = {"version": "2.0", "routeKey": f"{method} {path}", "rawPath": path,
             "rawQueryString": urlencode(query or {}), "queryStringParameters": query or None,
             "headers": {"content-type": "application/json", **(headers or {})},
             "requestContext": {"http": {"method": method, "path": path}, "stage": "$default",
                                "authorizer": {"jwt": {"claims": {"sub": who["username"], **who}, "scopes": None}}},
             "body": None if body is None else json.dumps(body), "isBase64Encoded": False}
    answer = module.app.resolve(event, None)
    text = answer.get("body")
    kind = (answer.get("headers") or {}).get("Content-Type", "")
    return answer["statusCode"], json.loads(text) if text and "json" in kind else text, answer.get("headers") or {}


def manage() -> ModuleType:
    from functions.api_manage import app
    return app


def _revision(table: ManagementTable, checklist_id: str = "daily") -> int:
    found = table.get_checklist(checklist_id)
    assert found is not None
    return found.revision


# -- /checklists -----------------------------------------------------------------------------------
def test_a_checklist_is_created_read_edited_paused_resumed_and_deleted_by_its_sites_manager(
        table: ManagementTable) -> None:
    body = {"id": "weekly", "site_id": "north", "name": "Weekly", "window": "PT8H",
            "recurrence": "DTSTART:20260302T060000\nRRULE:FREQ=WEEKLY"}
    status, created, headers = call(manage(), "POST", "/checklists", MANAGER, body)
    assert (status, headers["ETag"], headers["Location"]) == (201, '"1"', "/checklists/weekly"), created
    assert (created["site_id"], created["timezone"]) == ("north", "Europe/Berlin")  # the site's zone
    status, read, headers = call(manage(), "GET", "/checklists/weekly", AUDITOR)
    assert (status, read["name"], headers["ETag"]) == (200, "Weekly", '"1"')
    assert call(manage(), "GET", "/checklists/weekly", SOUTH)[0] == 404
    status, _, _ = call(manage(), "POST", "/checklists", SOUTH, {**body, "id": "other"})
    assert status == 404 and table.get_checklist("other") is None

    edit = {"name": "Weekly, Mondays", "window": "PT8H", "recurrence": body["recurrence"]}
    assert call(manage(), "PUT", "/checklists/weekly", MANAGER, edit)[0] == 428
    assert call(manage(), "PUT", "/checklists/weekly", SUPERVISOR, edit, headers={"If-Match": '"1"'})[0] == 403
    status, edited, headers = call(manage(), "PUT", "/checklists/weekly", MANAGER, edit, headers={"If-Match": '"1"'})
    assert (status, edited["name"], headers["ETag"]) == (200, "Weekly, Mondays", '"2"')
    status, stale, headers = call(manage(), "PUT", "/checklists/weekly", MANAGER, {**edit, "name": "lost"},
                                  headers={"If-Match": '"1"'})
    assert (status, stale["current_etag"], headers["ETag"]) == (412, '"2"', '"2"')
    assert table.get_checklist("weekly").name == "Weekly, Mondays"  # type: ignore[union-attr]

    status, paused, headers = call(manage(), "POST", "/checklists/weekly/pause", MANAGER, headers={"If-Match": '"2"'})
    assert (status, paused["status"], headers["ETag"]) == (200, "PAUSED", '"3"')
    status, resumed, _ = call(manage(), "POST", "/checklists/weekly/resume", MANAGER, headers={"If-Match": "*"})
    assert (status, resumed["status"]) == (200, "ACTIVE")
    assert call(manage(), "DELETE", "/checklists/weekly", MANAGER, headers={"If-Match": '"3"'})[0] == 412
    assert call(manage(), "DELETE", "/checklists/weekly", AUDITOR, headers={"If-Match": '"4"'})[0] == 403
    assert call(manage(), "DELETE", "/checklists/weekly", MANAGER, headers={"If-Match": '"4"'})[0] == 204
    assert table.get_checklist("weekly") is None


def test_a_list_holds_the_callers_sites_checklists_a_page_at_a_time(table: ManagementTable) -> None:
    status, page, _ = call(manage(), "GET", "/checklists", AUDITOR)
    assert (status, [c["checklist_id"] for c in page["items"]], page["next_cursor"]) == (200, ["daily"], None)
    status, page, _ = call(manage(), "GET", "/checklists", person("two", "auditor@north", "operator@south"),
                           query={"limit": "1"})
    assert [c["checklist_id"] for c in page["items"]] == ["daily"] and page["next_cursor"]
    status, rest, _ = call(manage(), "GET", "/checklists", person("two", "auditor@north", "operator@south"),
                           query={"limit": "1", "cursor": page["next_cursor"]})
    assert ([c["checklist_id"] for c in rest["items"]], rest["next_cursor"]) == (["south-daily"], None)
    # another site named: 404 as for a site that does not exist (docs/http-api.md; was 200 with no items)
    assert call(manage(), "GET", "/checklists", AUDITOR, query={"site_id": "south"})[0] == 404


def test_the_preview_shows_local_windows_dst_shifts_closed_dates_and_writes_nothing(table: ManagementTable) -> None:
    table.put_calendar("north-holidays", [datetime(2026, 3, 31).date()], now=NOW, by="cli:ops", site_id="north")
    body = {"site_id": "north", "recurrence": "DTSTART:20260327T023000\nRRULE:FREQ=DAILY", "window": "PT2H",
            "closed_on": ["north-holidays"], "windows": 5}
    status, shown, _ = call(manage(), "POST", "/checklists/preview", OPERATOR_NORTH, body)
    assert status == 200, shown
    assert [w["start"] for w in shown["next_windows"]] == [
        "2026-03-27T02:30:00+01:00", "2026-03-28T02:30:00+01:00", "2026-03-29T03:30:00+02:00",
        "2026-03-30T02:30:00+02:00", "2026-04-01T02:30:00+02:00"]
    marks = [w["dst_shift"] for w in shown["next_windows"]]
    assert marks[:2] == [None, None] and marks[3:] == [None, None]
    assert "starts at 03:30 local instead of 02:30" in marks[2] and "from +01:00 to +02:00" in marks[2]
    assert (shown["closed_dates"], shown["dst_shifts"], shown["schedule"]["kind"]) == (["2026-03-31"], 1, "superset")
    assert call(manage(), "POST", "/checklists/preview", SOUTH, body)[0] == 404  # north's: not theirs
    status, problem, _ = call(manage(), "POST", "/checklists/preview", SOUTH, {**body, "site_id": "south"})
    assert (status, problem["field"]) == (400, "closed_on[0]")  # another site's calendar: as a missing one
    assert table.get_checklist("preview") is None


def test_assigning_takes_the_sites_registered_equipment_only(table: ManagementTable) -> None:
    status, problem, _ = call(manage(), "POST", "/checklists/daily/equipment", MANAGER,
                              {"equipment": ["FL-2", "FL-9"]})
    assert (status, problem["field"]) == (400, "equipment[1]")
    assert "FL-9 is not registered at site north" in problem["detail"]
    assert call(manage(), "POST", "/checklists/daily/equipment", SUPERVISOR, {"equipment": ["FL-2"]})[0] == 403
    assert call(manage(), "POST", "/checklists/daily/equipment", SOUTH, {"equipment": ["FL-2"]})[0] == 404
    assert sorted(a.equipment_id for a in table.assignments("daily")) == ["FL-1"]
    status, done, _ = call(manage(), "POST", "/checklists/daily/equipment", MANAGER, {"equipment": ["FL-2"]})
    assert (status, done["changed"]) == (200, 1)
    status, page, _ = call(manage(), "GET", "/checklists/daily/equipment", AUDITOR)
    assert [a["equipment_id"] for a in page["items"]] == ["FL-1", "FL-2"]
    status, undone, _ = call(manage(), "DELETE", "/checklists/daily/equipment/FL-2", MANAGER)
    assert (status, undone["changed"]) == (200, 1)


# -- the routes that existed before roles ---------------------------------------------------------
def functions() -> dict[str, ModuleType]:
    from functions.api_checks import app as checks
    from functions.api_missed import app as missed
    from functions.api_report import app as report
    from functions.api_status import app as status
    return {"checks": checks, "missed": missed, "report": report, "status": status}


def test_a_check_is_recorded_at_the_checklists_site_only(table: ManagementTable) -> None:
    check = {"checklist_id": "daily", "equipment_id": "FL-1", "performed_at": "2026-03-02T07:00:00+01:00"}
    operator_south = person("operator-south", "operator@south")
    status, refused, _ = call(functions()["checks"], "POST", "/checks", operator_south, check)
    status_missing, missing, _ = call(functions()["checks"], "POST", "/checks", operator_south,
                                      {**check, "checklist_id": "nothing-here"})
    # another site's checklist is refused exactly as a missing one: never confirmed to exist
    assert (status, refused["errors"][0]["detail"]) == (
        status_missing, missing["errors"][0]["detail"].replace("nothing-here", "daily"))
    assert call(functions()["checks"], "POST", "/checks", AUDITOR, check)[0] == 403
    assert table.performed_checks_of_equipment("FL-1", "2026-03-01T00:00:00Z", "2026-03-03T00:00:00Z") == []
    status, recorded, _ = call(functions()["checks"], "POST", "/checks", OPERATOR_NORTH, check)
    assert status == 201, recorded
    assert table.performed_checks_of_equipment("FL-1", "2026-03-01T00:00:00Z", "2026-03-03T00:00:00Z") == [
        ("daily", "2026-03-02T06:00:00Z")]


def test_missed_checks_are_listed_and_dismissed_at_the_callers_sites(table: ManagementTable) -> None:
    query = {"from": "2026-03-01T00:00:00Z", "to": "2026-03-02T00:00:00Z"}
    status, page, _ = call(functions()["missed"], "GET", "/missed", SUPERVISOR, query=query)
    assert (status, [m["checklist_id"] for m in page["missed"]]) == (200, ["daily"])
    assert call(functions()["missed"], "GET", "/missed", OPERATOR_NORTH, query=query)[0] == 403
    assert call(functions()["missed"], "GET", "/missed", SUPERVISOR, query={**query, "site_id": "south"})[0] == 404
    assert call(functions()["missed"], "GET", "/missed", SUPERVISOR,
                query={**query, "checklist_id": "south-daily"})[0] == 404
    dismissal = {"checklist_id": "daily", "equipment_id": "FL-1", "window_start": "2026-03-01T05:00:00Z",
                 "reason": "broken"}
    assert call(functions()["missed"], "POST", "/missed/dismissals", SUPERVISOR_SOUTH, dismissal)[0] == 404
    assert call(functions()["missed"], "POST", "/missed/dismissals", AUDITOR, dismissal)[0] == 403
    status, page, _ = call(functions()["missed"], "GET", "/missed", SUPERVISOR, query=query)
    assert page["missed"][0]["dismissal"] is None  # nothing written by the refusals
    status, dismissed, _ = call(functions()["missed"], "POST", "/missed/dismissals", SUPERVISOR, dismissal)
    assert (status, dismissed["dismissal"]["reason"]) == (200, "broken")


def test_the_status_and_the_report_hold_the_callers_sites_only(table: ManagementTable) -> None:
    status, answer, _ = call(functions()["status"], "GET", "/equipment/FL-1/status", OPERATOR_NORTH)
    assert (status, [c["checklist_id"] for c in answer["checklists"]]) == (200, ["daily"])
    assert call(functions()["status"], "GET", "/equipment/FL-1/status", SUPERVISOR_SOUTH)[0] == 404
    query = {"from": "2026-03-01", "to": "2026-03-02", "tz": "UTC"}
    assert call(functions()["report"], "GET", "/report", OPERATOR_NORTH, query=query)[0] == 403
    assert call(functions()["report"], "GET", "/report", AUDITOR, query={**query, "site_id": "south"})[0] == 404
    assert call(functions()["report"], "GET", "/report", AUDITOR, query={**query, "checklist": "south-daily"})[0] == 404
    status, report, _ = call(functions()["report"], "GET", "/report", AUDITOR, query=query)
    assert status == 200 and {row["checklist_id"] for row in report["rows"]} <= {"daily"}


# -- calendars, out of service, subscriptions, the notification log ------------------------------
def test_a_calendar_is_created_replaced_and_deleted_by_its_sites_manager(table: ManagementTable) -> None:
    body = {"site_id": "north", "dates": ["2026-04-03"], "description": "Easter"}
    assert call(manage(), "PUT", "/calendars/easter", SUPERVISOR, body)[0] == 403
    assert call(manage(), "PUT", "/calendars/easter", SOUTH, body)[0] == 404
    assert table.get_calendar("easter") is None
    status, created, headers = call(manage(), "PUT", "/calendars/easter", MANAGER, body)
    assert (status, created["site_id"], headers["ETag"]) == (201, "north", '"1"')
    assert headers["Location"] == "/calendars/easter"
    assert call(manage(), "PUT", "/calendars/easter", MANAGER, body)[0] == 428
    status, read, headers = call(manage(), "GET", "/calendars/easter", AUDITOR)
    assert (status, read["dates"], headers["ETag"]) == (200, ["2026-04-03"], '"1"')
    assert call(manage(), "GET", "/calendars/easter", SOUTH)[0] == 404
    assert [c["id"] for c in call(manage(), "GET", "/calendars", AUDITOR)[1]["items"]] == ["easter"]
    assert call(manage(), "GET", "/calendars", SOUTH)[1]["items"] == []
    status, replaced, headers = call(manage(), "PUT", "/calendars/easter", MANAGER,
                                     {"dates": ["2026-04-03", "2026-04-06"]}, headers={"If-Match": '"1"'})
    assert (status, replaced["dates"], headers["ETag"]) == (200, ["2026-04-03", "2026-04-06"], '"2"')
    status, stale, _ = call(manage(), "PUT", "/calendars/easter", MANAGER, {"dates": []}, headers={"If-Match": '"1"'})
    assert (status, stale["current_etag"]) == (412, '"2"')
    assert call(manage(), "DELETE", "/calendars/easter", MANAGER)[0] == 428
    assert call(manage(), "DELETE", "/calendars/easter", MANAGER, headers={"If-Match": '"2"'})[0] == 204
    assert table.get_calendar("easter") is None


def test_out_of_service_periods_are_recorded_by_a_supervisor_of_the_equipments_site(table: ManagementTable) -> None:
    period = {"from": "2026-03-03T06:00:00Z", "to": "2026-03-04T06:00:00Z", "reason": "annual service"}
    assert call(manage(), "POST", "/equipment/FL-1/out-of-service", OPERATOR_NORTH, period)[0] == 403
    assert call(manage(), "POST", "/equipment/FL-1/out-of-service", SUPERVISOR_SOUTH, period)[0] == 404
    assert table.out_of_service_of_equipment("FL-1") == []
    status, recorded, _ = call(manage(), "POST", "/equipment/FL-1/out-of-service", SUPERVISOR, period)
    assert (status, recorded["recorded_by"], recorded["action"]) == (201, "supervisor-north", "recorded")
    assert call(manage(), "POST", "/equipment/FL-1/out-of-service", SUPERVISOR, period)[0] == 200  # on record
    status, page, _ = call(manage(), "GET", "/equipment/FL-1/out-of-service", AUDITOR)
    assert (status, [p["from"] for p in page["items"]]) == (200, ["2026-03-03T06:00:00Z"])
    assert call(manage(), "GET", "/equipment/FL-1/out-of-service", OPERATOR_NORTH)[0] == 403
    now_out = {"from": "2026-03-02T06:00:00Z", "to": "2026-03-02T20:00:00Z", "reason": "flat tyre"}
    assert call(manage(), "POST", "/equipment/FL-1/out-of-service", SUPERVISOR, now_out)[0] == 201
    assert call(manage(), "POST", "/equipment/FL-1/back-in-service", AUDITOR)[0] == 403
    status, ended, _ = call(manage(), "POST", "/equipment/FL-1/back-in-service", SUPERVISOR)
    assert (status, ended["to"], ended["ended_by"]) == (200, "2026-03-02T12:00:00Z", "supervisor-north"), ended


def test_digest_subscriptions_are_a_sites_managers(table: ManagementTable, monkeypatch: pytest.MonkeyPatch) -> None:
    from missed_checks.api.routes import subscriptions
    from tests.unit.notifications.test_subscribing_scoped import GroupSchedules

    group = GroupSchedules()
    monkeypatch.setattr(subscriptions, "schedules", lambda: group)
    for name, value in (("DIGEST_FUNCTION_ARN", "arn:aws:lambda:eu-west-1:123456789012:function:digest"),
                        ("DIGEST_SCHEDULER_ROLE_ARN", "arn:aws:iam::123456789012:role/digest-scheduler"),
                        ("DIGEST_DLQ_ARN", "arn:aws:sqs:eu-west-1:123456789012:notification-dlq"),
                        ("SCHEDULER_MAX_RETRY_ATTEMPTS", "3")):
        monkeypatch.setenv(name, value)
    body = {"id": "north-daily", "site_id": "north", "to": ["lead@example.com"], "period": "daily", "time": "07:00",
            "timezone": "Europe/Berlin"}
    assert call(manage(), "POST", "/subscriptions", SUPERVISOR, body)[0] == 403
    assert call(manage(), "POST", "/subscriptions", SOUTH, body)[0] == 404
    assert table.get_subscription("north-daily") is None and group.upserted == []
    status, created, _ = call(manage(), "POST", "/subscriptions", MANAGER, body)
    assert (status, created["site_id"], created["action"]) == (201, "north", "created")
    assert [s["subscription_id"] for s in call(manage(), "GET", "/subscriptions", AUDITOR)[1]["items"]] == [
        "north-daily"]
    assert call(manage(), "GET", "/subscriptions", OPERATOR_NORTH)[0] == 403
    assert call(manage(), "GET", "/subscriptions", SOUTH)[1]["items"] == []
    assert call(manage(), "DELETE", "/subscriptions/north-daily", SOUTH)[0] == 404
    assert call(manage(), "DELETE", "/subscriptions/north-daily", MANAGER)[0] == 204
    assert table.get_subscription("north-daily") is None


def test_the_notification_log_is_the_callers_sites(table: ManagementTable) -> None:
    from missed_checks.notifications.notification import Kind, Notification

    for checklist_id in ("daily", "south-daily"):
        table.claim_notification(Notification(kind=Kind.MISSED, checklist_id=checklist_id,
                                              window_start="2026-03-01T05:00:00Z", recipient="crew@example.com",
                                              equipment=("FL-1",), subject="missed", body="missed"),
                                 NOW, timedelta(minutes=5))
    query = {"from": "2026-03-02T00:00:00Z", "to": "2026-03-03T00:00:00Z"}
    status, page, _ = call(manage(), "GET", "/notifications", SUPERVISOR, query=query)
    assert (status, [r["checklist_id"] for r in page["items"]]) == (200, ["daily"])
    assert call(manage(), "GET", "/notifications", OPERATOR_NORTH, query=query)[0] == 403
    assert call(manage(), "GET", "/notifications", SUPERVISOR, query={**query, "site_id": "south"})[0] == 404
