"""A checklist's whole life through the people's API alone (#31 "Must show"), as ``manager-north``
signed in to the stack's user pool, against the server ``local serve`` runs:

created (201, ETag ``"1"``), edited with its ETag (200, ``"2"``), edited again with the stale ETag
(412, nothing written, the current ETag in the answer), previewed (next windows in local time, the
DST shift marked), paused, resumed and deleted, each with the ETag it read. After every step the
stream settles (schedule-sync and the audit function have run) and the checklist's schedule is read
back through the AWS CLI against the local endpoint: created with the rule's cron and zone, replaced
by the edit, DISABLED by the pause, ENABLED again, gone with the delete. Then the checklist's audit
trail, read through the API by ``auditor-north``: every change, in order, by ``manager-north``, with
the object before and after, and nothing for the refused edit.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from missed_checks_local.serve import LocalServer
from tests.aws_cli import aws

pytestmark = [pytest.mark.e2e, pytest.mark.duration(40)]

CHECKLIST = "lifecycle-daily"
DAILY_0600 = "DTSTART:20260301T060000\nRRULE:FREQ=DAILY"  # no zone: the site's
WORKDAYS_0700 = "DTSTART;TZID=Europe/Berlin:20260301T070000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"


@pytest.fixture(scope="module")
def server(people_server: LocalServer) -> LocalServer:
    return people_server


def request(server: LocalServer, user: str, method: str, path: str, body: Any = None,
            headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], Any]:
    """(status, headers by lower-case name, JSON body) of one request to the people's API as ``user``."""
    data = json.dumps(body).encode() if body is not None else None
    sent = urllib.request.Request(f"{server.people_api_url}{path}", data=data, method=method, headers={
        "Authorization": f"Bearer {server.access_token(user)}", "Content-Type": "application/json",
        **(headers or {})})
    try:
        with urllib.request.urlopen(sent, timeout=60) as answer:
            return answer.status, _lower(answer.headers.items()), json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as refused:
        return refused.code, _lower(refused.headers.items()), json.loads(refused.read() or b"null")


def _lower(headers: Any) -> dict[str, str]:
    return {name.lower(): value for name, value in headers}


def schedule(server: LocalServer) -> dict[str, Any] | None:
    """The checklist's schedule as the AWS CLI reads it (None when there is none)."""
    assert server.stack is not None
    group = server.stack.outputs["ScheduleGroupName"]
    names = [s["Name"] for s in aws(server.endpoint, "scheduler", "list-schedules", "--group-name", group)["Schedules"]]
    if CHECKLIST not in names:
        return None
    found: dict[str, Any] = aws(server.endpoint, "scheduler", "get-schedule", "--group-name", group,
                                "--name", CHECKLIST)
    return found


def test_a_checklist_created_edited_previewed_paused_and_deleted_through_the_api(server: LocalServer) -> None:
    manager = "manager-north"
    # created at north: 201, its ETag, its zone the site's
    status, headers, created = request(server, manager, "POST", "/checklists", {
        "id": CHECKLIST, "site_id": "north", "name": "Forklift pre-use", "recurrence": DAILY_0600, "window": "PT2H"})
    assert status == 201, created
    assert headers["etag"] == '"1"' and created["site_id"] == "north" and created["timezone"] == "Europe/Berlin"
    server.tick()
    first = schedule(server)
    assert first is not None, "schedule-sync made no schedule for the new checklist"
    assert first["State"] == "ENABLED" and first["ScheduleExpressionTimezone"] == "Europe/Berlin"
    assert first["ScheduleExpression"].startswith("cron(0 8 ")  # closes 08:00 Berlin, every day

    # edited with the ETag it read: the rule changes, the schedule follows
    status, headers, edited = request(server, manager, "PUT", f"/checklists/{CHECKLIST}",
                                      {"name": "Forklift pre-use", "recurrence": WORKDAYS_0700, "window": "PT2H",
                                       "timezone": "Europe/Berlin"},
                                      {"If-Match": '"1"'})
    assert status == 200, edited
    assert headers["etag"] == '"2"' and edited["recurrence"] == WORKDAYS_0700
    # a second manager's edit made from the first read is refused: nothing written
    status, headers, stale = request(server, manager, "PUT", f"/checklists/{CHECKLIST}",
                                     {"recurrence": DAILY_0600}, {"If-Match": '"1"'})
    assert status == 412, stale
    assert stale["current_etag"] == '"2"'
    status, headers, read = request(server, manager, "GET", f"/checklists/{CHECKLIST}")
    assert status == 200 and headers["etag"] == '"2"' and read["recurrence"] == WORKDAYS_0700
    server.tick()
    second = schedule(server)
    assert second is not None and second["State"] == "ENABLED"
    assert second["ScheduleExpression"].startswith("cron(0 9 ") and "MON-FRI" in second["ScheduleExpression"]

    # previewed: local times, the spring change marked (29 March 2026 in Berlin)
    status, _, preview = request(server, manager, "POST", "/checklists/preview", {
        "site_id": "north", "recurrence": DAILY_0600, "window": "PT2H", "windows": 40})
    assert status == 200, preview
    assert preview["timezone"] == "Europe/Berlin"
    shown = json.dumps(preview)
    assert "+01:00" in shown and "+02:00" in shown, "the preview spans the spring change"
    assert any(window.get("dst_shift") for window in preview["next_windows"]), preview["next_windows"][:3]

    # paused, resumed, each with the ETag it read; the schedule follows
    status, headers, paused = request(server, manager, "POST", f"/checklists/{CHECKLIST}/pause",
                                      headers={"If-Match": '"2"'})
    assert status == 200 and paused["status"] == "PAUSED" and headers["etag"] == '"3"', paused
    server.tick()
    assert (schedule(server) or {}).get("State") == "DISABLED"
    status, headers, resumed = request(server, manager, "POST", f"/checklists/{CHECKLIST}/resume",
                                       headers={"If-Match": '"3"'})
    assert status == 200 and resumed["status"] == "ACTIVE" and headers["etag"] == '"4"', resumed
    server.tick()
    assert (schedule(server) or {}).get("State") == "ENABLED"

    # deleted with the ETag it read: the schedule is gone, the checklist is a 404
    status, _, refused = request(server, manager, "DELETE", f"/checklists/{CHECKLIST}", headers={"If-Match": '"3"'})
    assert status == 412, refused
    status, _, _ = request(server, manager, "DELETE", f"/checklists/{CHECKLIST}", headers={"If-Match": '"4"'})
    assert status == 204
    server.tick()
    assert schedule(server) is None
    status, _, _ = request(server, manager, "GET", f"/checklists/{CHECKLIST}")
    assert status == 404

    # the audit trail, complete: every change in order, by the manager, before and after
    server.tick()
    status, _, trail = request(server, "auditor-north", "GET", f"/audit?kind=checklist&id={CHECKLIST}")
    assert status == 200, trail
    entries = trail["items"]
    assert [e["action"] for e in entries] == ["created", "changed", "changed", "changed", "deleted"], entries
    assert {e["changed_by"] for e in entries} == {manager}
    assert {e["site_id"] for e in entries} == {"north"}
    created_entry, edit, pause, resume, deletion = entries
    assert created_entry["before"] is None and created_entry["after"]["recurrence"] == DAILY_0600
    assert edit["before"]["recurrence"] == DAILY_0600 and edit["after"]["recurrence"] == WORKDAYS_0700
    assert pause["before"]["status"] == "ACTIVE" and pause["after"]["status"] == "PAUSED"
    assert resume["after"]["status"] == "ACTIVE"
    assert deletion["before"]["revision"] == 4 and deletion["after"] is None
    # in the order the table committed them (the stream's sequence), each entry once
    assert len({e["event_id"] for e in entries}) == 5
    # an operator may not read the trail (403 at its own site), another site's auditor sees no such object
    assert request(server, "operator-north", "GET", f"/audit?kind=checklist&id={CHECKLIST}")[0] == 403
    assert request(server, "auditor-south", "GET", f"/audit?kind=checklist&id={CHECKLIST}")[0] == 404
