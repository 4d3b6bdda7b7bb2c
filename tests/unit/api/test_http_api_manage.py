"""The management API's sites, equipment registry, grants and ``GET /me`` routes (#31) through
``functions/api_manage/app.py``'s resolver, with API Gateway's payload 2.0 events (people's JWT
claims, IAM callers) and the in-memory table (tests/fakes.py) in place of the stack's: created with
an ETag, edited with ``If-Match`` (stale 412 with the current ETag, missing 428), lists paged with
a cursor, another site's object 404 as a missing one, and a role lacking the action 403 with
nothing written."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote, urlencode

import pytest

from missed_checks import clock
from missed_checks.audit_trails.audit_entry import AuditEntry, ChangeAction
from missed_checks.paging import Page
from tests.fakes import InMemoryAuditTrail, InMemoryTable

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ADMIN = {"username": "admin", "cognito:groups": "[admin]"}
MANAGER_NORTH = {"username": "manager-north", "cognito:groups": "[site_manager@north]"}
SUPERVISOR_NORTH = {"username": "supervisor-north", "cognito:groups": "[supervisor@north]"}
AUDITOR_NORTH = {"username": "auditor-north", "cognito:groups": "[auditor@north]"}
OPERATOR_SOUTH = {"username": "operator-south", "cognito:groups": "[operator@south]"}
APP_ARN = "arn:aws:iam::123456789012:role/yard-app"


@dataclass
class ManagedTable(InMemoryTable):
    """Every kind of item the management routes read, as the stack's one table serves them: the
    in-memory table and its audit trail (both fakes page with a ``_page`` of their own, so the
    trail is held, not inherited)."""

    audit: InMemoryAuditTrail = field(default_factory=InMemoryAuditTrail)

    def put_audit_entry(self, entry: AuditEntry) -> bool:
        return self.audit.put_audit_entry(entry)

    def object_trail(self, kind: str, object_id: str, after: str | None, limit: int) -> Page[AuditEntry]:
        return self.audit.object_trail(kind, object_id, after, limit)

    def latest_audit_entry(self, kind: str, object_id: str) -> AuditEntry | None:
        return self.audit.latest_audit_entry(kind, object_id)

    def site_trail(self, site_id: str | None, after: str | None, limit: int) -> Page[AuditEntry]:
        return self.audit.site_trail(site_id, after, limit)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[ManagedTable]:
    """The management function's routes reading and writing the in-memory table."""
    monkeypatch.setenv("TABLE_NAME", "manage-test")
    from functions.api_manage import app  # imported first: a route module binds context's table when imported
    from missed_checks.api.routes import context

    table = ManagedTable()
    modules = {sys.modules[function.__module__] for router in app.ROUTERS for function in router._routes.values()}
    for module in modules | {context}:
        if hasattr(module, "table"):  # me.py reads no table but the caller's grant (context's)
            monkeypatch.setattr(module, "table", lambda: table)
    clock.set_source(lambda: NOW)
    yield table
    clock.set_source(None)


def call(method: str, path: str, who: dict[str, Any] | str, body: Any = None, *,
         query: dict[str, str] | None = None, headers: dict[str, str] | None = None) -> tuple[int, Any, dict[str, str]]:
    """One request as API Gateway hands it to the function: (status, JSON body or None, headers)."""
    from functions.api_manage import app

    authorizer = ({"iam": {"userArn": who}} if isinstance(who, str)
                  else {"jwt": {"claims": {"iss": "https://cognito-idp.example", "sub": who["username"], **who},
                                "scopes": None}})
    event = {"version": "2.0", "routeKey": f"{method} {path}", "rawPath": path,
             "rawQueryString": urlencode(query or {}), "queryStringParameters": query or None,
             "headers": {"content-type": "application/json", **(headers or {})},
             "requestContext": {"http": {"method": method, "path": path}, "stage": "$default",
                                "authorizer": authorizer},
             "body": None if body is None else json.dumps(body), "isBase64Encoded": False}
    answer = app.app.resolve(event, None)
    text = answer.get("body")
    return answer["statusCode"], json.loads(text) if text else None, answer.get("headers") or {}


def seed_sites(fake: ManagedTable) -> None:
    for site_id, zone in (("north", "Europe/Berlin"), ("south", "America/Chicago")):
        status, _, _ = call("POST", "/sites", ADMIN, {"site_id": site_id, "name": site_id.title(), "timezone": zone})
        assert status == 201


def test_a_site_is_created_with_its_etag_and_edited_only_with_the_current_one(fake: ManagedTable) -> None:
    status, site, headers = call("POST", "/sites", ADMIN, {"site_id": "north", "name": "North yard",
                                                          "timezone": "Europe/Berlin"})
    assert (status, headers["ETag"], headers["Location"], site["revision"]) == (201, '"1"', "/sites/north", 1)
    status, _, headers = call("GET", "/sites/north", ADMIN)
    assert (status, headers["ETag"]) == (200, '"1"')
    status, edited, headers = call("PUT", "/sites/north", ADMIN, {"name": "North yard and workshop"},
                                   headers={"If-Match": '"1"'})
    assert (status, edited["name"], headers["ETag"]) == (200, "North yard and workshop", '"2"')
    stamps = list(fake.stamped)

    status, stale, headers = call("PUT", "/sites/north", ADMIN, {"name": "Lost update"}, headers={"If-Match": '"1"'})
    assert (status, stale["current_etag"], stale["field"], headers["ETag"]) == (412, '"2"', "If-Match", '"2"')
    status, missing, _ = call("PUT", "/sites/north", ADMIN, {"name": "Blind write"})
    assert (status, missing["field"]) == (428, "If-Match")
    status, _, _ = call("PUT", "/sites/north", ADMIN, {"name": "Weak"}, headers={"If-Match": 'W/"2"'})
    assert status == 400
    assert fake.stamped == stamps and fake.sites["north"].name == "North yard and workshop"
    status, anyway, headers = call("PUT", "/sites/north", ADMIN, {"timezone": "Europe/Riga"}, headers={"If-Match": "*"})
    assert (status, anyway["timezone"], headers["ETag"]) == (200, "Europe/Riga", '"3"')
    status, taken, _ = call("POST", "/sites", ADMIN, {"site_id": "north", "name": "Again", "timezone": "UTC"})
    assert status == 409 and "already exists" in taken["detail"]


def test_sites_page_with_a_cursor_and_list_only_the_callers(fake: ManagedTable) -> None:
    for n in range(5):
        call("POST", "/sites", ADMIN, {"site_id": f"site-{n}", "name": f"Site {n}", "timezone": "UTC"})
    seen, cursor, pages = [], None, 0
    while True:
        status, page, _ = call("GET", "/sites", ADMIN, query={"limit": "2", **({"cursor": cursor} if cursor else {})})
        assert status == 200 and len(page["items"]) <= 2
        seen += [site["site_id"] for site in page["items"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert (seen, pages) == ([f"site-{n}" for n in range(5)], 3)
    status, mine, _ = call("GET", "/sites", {"username": "m", "cognito:groups": "[site_manager@site-3]"})
    assert (status, [s["site_id"] for s in mine["items"]], mine["next_cursor"]) == (200, ["site-3"], None)
    status, refused, _ = call("GET", "/sites", ADMIN, query={"cursor": "not-ours"})
    assert (status, refused["field"]) == (400, "cursor")


def test_another_sites_objects_are_404_as_missing_ones(fake: ManagedTable) -> None:
    seed_sites(fake)
    status, _, _ = call("POST", "/equipment", ADMIN, {"equipment_id": "FL-S1", "name": "Forklift", "kind": "forklift",
                                                      "site_id": "south"})
    assert status == 201
    other = {path: call("GET", path, MANAGER_NORTH) for path in ("/sites/south", "/equipment/FL-S1")}
    missing = {path: call("GET", path, MANAGER_NORTH) for path in ("/sites/east", "/equipment/FL-NONE")}
    assert {path: answer[0] for path, answer in {**other, **missing}.items()} == dict.fromkeys([*other, *missing], 404)
    assert other["/sites/south"][1]["detail"] == "site 'south' does not exist"
    assert other["/equipment/FL-S1"][1]["detail"] == "equipment 'FL-S1' does not exist"
    status, listed, _ = call("GET", "/equipment", MANAGER_NORTH)
    assert (status, listed["items"]) == (200, [])
    status, _, _ = call("GET", "/equipment", MANAGER_NORTH, query={"site_id": "south"})
    assert status == 404


def test_a_role_lacking_the_action_is_403_and_nothing_is_written(fake: ManagedTable) -> None:
    seed_sites(fake)
    call("POST", "/equipment", MANAGER_NORTH, {"equipment_id": "FL-1", "name": "Forklift 1", "kind": "forklift",
                                               "site_id": "north"})
    stamps, registry, sites = list(fake.stamped), dict(fake.registry), dict(fake.sites)
    refusals = {
        "supervisor registers": call("POST", "/equipment", SUPERVISOR_NORTH, {
            "equipment_id": "FL-2", "name": "Forklift 2", "kind": "forklift", "site_id": "north"}),
        "auditor edits": call("PUT", "/equipment/FL-1", AUDITOR_NORTH, {"name": "Renamed"},
                              headers={"If-Match": '"1"'}),
        "supervisor retires": call("DELETE", "/equipment/FL-1", SUPERVISOR_NORTH, headers={"If-Match": "*"}),
        "manager edits the site": call("PUT", "/sites/north", MANAGER_NORTH, {"name": "Mine"},
                                       headers={"If-Match": "*"}),
        "manager creates a site": call("POST", "/sites", MANAGER_NORTH, {"site_id": "east", "name": "East",
                                                                         "timezone": "UTC"}),
        "manager grants": call("PUT", "/grants/someone", MANAGER_NORTH, {"roles": {"north": "operator"}}),
        "auditor lists grants": call("GET", "/grants", AUDITOR_NORTH),
    }
    assert {name: answer[0] for name, answer in refusals.items()} == dict.fromkeys(refusals, 403)
    assert "supervisor" in refusals["supervisor registers"][1]["detail"]
    assert "north" in refusals["supervisor registers"][1]["detail"]
    assert (fake.stamped, fake.registry, fake.sites, fake.grants) == (stamps, registry, sites, {})
    status, _, _ = call("PUT", "/equipment/FL-1", OPERATOR_SOUTH, {"name": "x"}, headers={"If-Match": "*"})
    assert status == 404  # no role at north: not even told it exists


def test_equipment_is_registered_edited_moved_and_retired_with_its_etag(fake: ManagedTable) -> None:
    seed_sites(fake)
    both = {"username": "fleet", "cognito:groups": "[site_manager@north site_manager@south]"}
    status, registered, headers = call("POST", "/equipment", both, {
        "equipment_id": "FL/7", "name": "Forklift 7", "kind": "forklift", "site_id": "north",
        "attributes": {"make": "Linde"}})
    assert (status, headers["ETag"], headers["Location"]) == (201, '"1"', "/equipment/FL%2F7")
    path = f"/equipment/{quote('FL/7', safe='')}"
    status, edited, headers = call("PUT", path, both, {"name": "Forklift seven"}, headers={"If-Match": '"1"'})
    assert (status, edited["name"], headers["ETag"], edited["ended_assignments"]) == (200, "Forklift seven", '"2"', [])
    status, stale, _ = call("PUT", path, both, {"kind": "tug"}, headers={"If-Match": '"1"'})
    assert (status, stale["current_etag"]) == (412, '"2"')
    status, moved, headers = call("PUT", path, both, {"site_id": "south", "at": "2026-03-10T00:00:00Z"},
                                  headers={"If-Match": '"2"'})
    assert (status, moved["site_id"], headers["ETag"]) == (200, "south", '"3"')
    assert [m["site_id"] for m in moved["moves"]] == ["north", "south"]
    status, _, _ = call("DELETE", path, both)
    assert status == 428
    status, retired, _ = call("DELETE", path, both, query={"at": "2026-03-20T00:00:00Z"}, headers={"If-Match": '"3"'})
    assert (status, retired["retired_at"]) == (200, "2026-03-20T00:00:00Z")
    status, page, _ = call("GET", "/equipment", both, query={"site_id": "south"})
    assert (status, [e["equipment_id"] for e in page["items"]]) == (200, ["FL/7"])
    status, refused, _ = call("POST", "/equipment", both, {"equipment_id": "FL-8", "name": "x", "kind": "y",
                                                           "site_id": "north", "colour": "red"})
    assert (status, refused["field"]) == (400, "colour")


def test_a_grant_is_created_replaced_only_with_its_etag_and_deleted(fake: ManagedTable) -> None:
    seed_sites(fake)
    principal = quote(APP_ARN, safe="")
    status, grant, headers = call("PUT", f"/grants/{principal}", ADMIN, {"roles": {"north": "operator"}})
    assert (status, grant["principal"], grant["roles"], headers["ETag"]) == (201, APP_ARN, {"north": "operator"}, '"1"')
    status, again, _ = call("PUT", f"/grants/{principal}", ADMIN, {"roles": {"north": "supervisor"}})
    assert (status, again["field"]) == (428, "If-Match")
    status, replaced, headers = call("PUT", f"/grants/{principal}", ADMIN, {"roles": {"north": "supervisor"}},
                                     headers={"If-Match": '"1"'})
    assert (status, replaced["roles"], headers["ETag"]) == (200, {"north": "supervisor"}, '"2"')
    status, stale, _ = call("DELETE", f"/grants/{principal}", ADMIN, headers={"If-Match": '"1"'})
    assert (status, stale["current_etag"]) == (412, '"2"')
    status, me, _ = call("GET", "/me", APP_ARN)
    assert (status, me["roles"], me["unscoped"]) == (200, {"north": "supervisor"}, False)
    status, listed, _ = call("GET", "/grants", ADMIN)
    assert (status, [g["principal"] for g in listed["items"]]) == (200, [APP_ARN])
    status, _, _ = call("DELETE", f"/grants/{principal}", ADMIN, headers={"If-Match": '"2"'})
    assert status == 204 and fake.grants == {}
    status, me, _ = call("GET", "/me", APP_ARN)
    assert (status, me["unscoped"]) == (200, True)
    status, _, _ = call("GET", f"/grants/{principal}", ADMIN)
    assert status == 404


def test_me_names_the_person_their_roles_and_what_each_allows(fake: ManagedTable) -> None:
    status, me, _ = call("GET", "/me", {"username": "pat", "cognito:groups": "[auditor@north operator@south]"})
    assert status == 200
    assert me == {"principal": "pat", "admin": False, "unscoped": False,
                  "roles": {"north": "auditor", "south": "operator"},
                  "actions": {"north": ["read", "read_records", "read_management"], "south": ["read", "record"]}}


def audited(kind: str, object_id: str, site_id: str, n: int, by: str = "manager-north") -> AuditEntry:
    return AuditEntry(kind=kind, object_id=object_id, site_id=site_id, changed_at=NOW + timedelta(minutes=n),
                      changed_by=by, action=ChangeAction.changed if n else ChangeAction.created,
                      before=None if n == 0 else {"name": f"v{n - 1}"}, after={"name": f"v{n}"},
                      event_id=f"event-{kind}-{object_id}-{n}")


def test_an_objects_trail_and_a_sites_trail_page_oldest_first_for_who_may_read_them(fake: ManagedTable) -> None:
    operator_north = {"username": "operator-north", "cognito:groups": "[operator@north]"}
    for n in range(5):
        fake.put_audit_entry(audited("equipment", "FL-1", "north", n))
    fake.put_audit_entry(audited("site", "south", "south", 0, by="admin"))
    seen, cursor = [], None
    while True:
        status, page, _ = call("GET", "/audit", MANAGER_NORTH, query={
            "kind": "equipment", "id": "FL-1", "limit": "2", **({"cursor": cursor} if cursor else {})})
        assert status == 200, page
        seen += [(entry["action"], entry["after"]["name"], entry["changed_fields"]) for entry in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [("created", "v0", ["name"])] + [("changed", f"v{n}", ["name"]) for n in range(1, 5)]
    status, site, _ = call("GET", "/sites/north/audit", AUDITOR_NORTH)
    assert (status, [e["object_id"] for e in site["items"]], site["next_cursor"]) == (200, ["FL-1"] * 5, None)
    answers = {"another site's object": call("GET", "/audit", MANAGER_NORTH, query={"kind": "site", "id": "south"}),
               "another site's trail": call("GET", "/sites/south/audit", MANAGER_NORTH),
               "an operator": call("GET", "/sites/north/audit", operator_north),
               "no kind": call("GET", "/audit", MANAGER_NORTH, query={"id": "FL-1"}),
               "a kind that is none": call("GET", "/audit", MANAGER_NORTH, query={"kind": "truck", "id": "FL-1"}),
               "a cursor of another object": call("GET", "/audit", MANAGER_NORTH, query={
                   "kind": "equipment", "id": "FL-2", "cursor": call("GET", "/audit", MANAGER_NORTH, query={
                       "kind": "equipment", "id": "FL-1", "limit": "1"})[1]["next_cursor"]})}
    assert {name: (status, body.get("field")) for name, (status, body, _) in answers.items()} == {
        "another site's object": (404, None), "another site's trail": (404, None), "an operator": (403, None),
        "no kind": (400, "kind"), "a kind that is none": (400, "kind"), "a cursor of another object": (400, "cursor")}
