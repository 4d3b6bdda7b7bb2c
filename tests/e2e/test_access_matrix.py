"""Who may do what, where (issue #31's first must-show): every route of the HTTP API, asked over HTTP of
the server ``local serve`` runs, by every role granted at site ``north`` (and by an admin, and by an IAM
machine caller without a grant), about an object at ``north`` (the caller's own site) and at ``south``
(another site), each cell's status written out below; and no refusal writes anything.

The people sign in to the stack's user pool (``local serve`` creates ``operator-north``,
``supervisor-north``, ``manager-north``, ``auditor-north`` and ``admin``) and send their access token
to the people's API (``Authorization: Bearer``); the machine signs with SigV4 for the IAM API and,
holding no grant record, is unscoped (its IAM policy is its scope). Each row's statuses are derived
from the roles' actions (docs/access.md):

====================  ===============================================================================
action                roles
====================  ===============================================================================
read                  operator, supervisor, site_manager, auditor, admin
record                operator, supervisor, site_manager, admin
read_records          supervisor, site_manager, auditor, admin
supervise             supervisor, site_manager, admin
manage                site_manager, admin
read_management       site_manager, auditor, admin
administer            admin
====================  ===============================================================================

A role lacking the route's action is 403 at its own site; another site's object is answered as a
missing one for every role but admin (404; 422 where the route answers a missing checklist so:
recording a check); a list filtered by another site is 404, and an unfiltered one holds only the
caller's sites. A write that is allowed gets an object of its own, made through the IAM caller before
the request (a DELETE by one role must not make the next cell 404). Every refusal runs first, once the
stream has settled, each between two snapshots of the table (a scan) and of the schedules
(ListSchedules) that must be equal.
"""

from __future__ import annotations

import itertools
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from missed_checks_local.clock import SimulatedClock
from missed_checks_local.serve import LocalServer
from tests.e2e.test_local_clock import BOUND_S, START, _free_port

ROOT = Path(__file__).resolve().parents[2]
OPENAPI = ROOT / "openapi" / "missed-checks.yaml"

COLUMNS = ("operator", "supervisor", "site_manager", "auditor", "admin", "iam")
"""The callers, in the order of each row's statuses: four roles granted at north, the admin, and an IAM
machine caller with no grant record (unscoped)."""
PEOPLE = {"operator": "operator-north", "supervisor": "supervisor-north", "site_manager": "manager-north",
          "auditor": "auditor-north", "admin": "admin"}
"""The user each column signs in as (``local serve`` creates them, each in the group ``<role>@<site>``)."""

# route, the object's site (north: the callers' own; south: another; -: a route of no site),
# the statuses of operator supervisor site_manager auditor admin iam
MATRIX: tuple[tuple[str, str, str], ...] = (
    # the apps' six routes (issue #19), now scoped. Recording names a checklist in its body, and a checklist
    # that does not exist is 422 there (docs/http-api.md): another site's is answered the same, never 404
    ("POST /checks",                                      "north", "201 201 201 403 201 201"),
    ("POST /checks",                                      "south", "422 422 422 422 201 201"),
    ("POST /checks/batch",                                "north", "201 201 201 403 201 201"),
    ("POST /checks/batch",                                "south", "422 422 422 422 201 201"),
    ("GET /missed",                                       "north", "403 200 200 200 200 200"),
    ("GET /missed",                                       "south", "404 404 404 404 200 200"),
    ("POST /missed/dismissals",                           "north", "403 200 200 403 200 200"),
    ("POST /missed/dismissals",                           "south", "404 404 404 404 200 200"),
    ("GET /equipment/{equipment_id}/status",              "north", "200 200 200 200 200 200"),
    ("GET /equipment/{equipment_id}/status",              "south", "404 404 404 404 200 200"),
    ("GET /report",                                       "north", "403 200 200 200 200 200"),
    ("GET /report",                                       "south", "404 404 404 404 200 200"),
    # who am I
    ("GET /me",                                           "-",     "200 200 200 200 200 200"),
    # sites
    ("GET /sites",                                        "-",     "200 200 200 200 200 200"),
    ("POST /sites",                                       "-",     "403 403 403 403 201 201"),
    ("GET /sites/{site_id}",                              "north", "200 200 200 200 200 200"),
    ("GET /sites/{site_id}",                              "south", "404 404 404 404 200 200"),
    ("PUT /sites/{site_id}",                              "north", "403 403 403 403 200 200"),
    ("PUT /sites/{site_id}",                              "south", "404 404 404 404 200 200"),
    ("GET /sites/{site_id}/audit",                        "north", "403 403 200 200 200 200"),
    ("GET /sites/{site_id}/audit",                        "south", "404 404 404 404 200 200"),
    ("GET /sites/{site_id}/readiness",                    "north", "200 200 200 200 200 200"),
    ("GET /sites/{site_id}/readiness",                    "south", "404 404 404 404 200 200"),
    # the equipment registry
    ("GET /equipment",                                    "north", "200 200 200 200 200 200"),
    ("GET /equipment",                                    "south", "404 404 404 404 200 200"),
    ("POST /equipment",                                   "north", "403 403 201 403 201 201"),
    ("POST /equipment",                                   "south", "404 404 404 404 201 201"),
    ("GET /equipment/{equipment_id}",                     "north", "200 200 200 200 200 200"),
    ("GET /equipment/{equipment_id}",                     "south", "404 404 404 404 200 200"),
    ("PUT /equipment/{equipment_id}",                     "north", "403 403 200 403 200 200"),
    ("PUT /equipment/{equipment_id}",                     "south", "404 404 404 404 200 200"),
    ("DELETE /equipment/{equipment_id}",                  "north", "403 403 200 403 200 200"),
    ("DELETE /equipment/{equipment_id}",                  "south", "404 404 404 404 200 200"),
    ("GET /equipment/{equipment_id}/out-of-service",      "north", "403 200 200 200 200 200"),
    ("GET /equipment/{equipment_id}/out-of-service",      "south", "404 404 404 404 200 200"),
    ("POST /equipment/{equipment_id}/out-of-service",     "north", "403 201 201 403 201 201"),
    ("POST /equipment/{equipment_id}/out-of-service",     "south", "404 404 404 404 201 201"),
    ("POST /equipment/{equipment_id}/back-in-service",    "north", "403 200 200 403 200 200"),
    ("POST /equipment/{equipment_id}/back-in-service",    "south", "404 404 404 404 200 200"),
    # checklists and their assignments
    ("GET /checklists",                                   "north", "200 200 200 200 200 200"),
    ("GET /checklists",                                   "south", "404 404 404 404 200 200"),
    ("POST /checklists",                                  "north", "403 403 201 403 201 201"),
    ("POST /checklists",                                  "south", "404 404 404 404 201 201"),
    ("POST /checklists/preview",                          "north", "200 200 200 200 200 200"),
    ("POST /checklists/preview",                          "south", "404 404 404 404 200 200"),
    ("GET /checklists/{checklist_id}",                    "north", "200 200 200 200 200 200"),
    ("GET /checklists/{checklist_id}",                    "south", "404 404 404 404 200 200"),
    ("PUT /checklists/{checklist_id}",                    "north", "403 403 200 403 200 200"),
    ("PUT /checklists/{checklist_id}",                    "south", "404 404 404 404 200 200"),
    ("DELETE /checklists/{checklist_id}",                 "north", "403 403 204 403 204 204"),
    ("DELETE /checklists/{checklist_id}",                 "south", "404 404 404 404 204 204"),
    ("POST /checklists/{checklist_id}/pause",             "north", "403 403 200 403 200 200"),
    ("POST /checklists/{checklist_id}/pause",             "south", "404 404 404 404 200 200"),
    ("POST /checklists/{checklist_id}/resume",            "north", "403 403 200 403 200 200"),
    ("POST /checklists/{checklist_id}/resume",            "south", "404 404 404 404 200 200"),
    ("GET /checklists/{checklist_id}/equipment",          "north", "200 200 200 200 200 200"),
    ("GET /checklists/{checklist_id}/equipment",          "south", "404 404 404 404 200 200"),
    ("POST /checklists/{checklist_id}/equipment",         "north", "403 403 200 403 200 200"),
    ("POST /checklists/{checklist_id}/equipment",         "south", "404 404 404 404 200 200"),
    ("DELETE /checklists/{checklist_id}/equipment/{equipment_id}", "north", "403 403 200 403 200 200"),
    ("DELETE /checklists/{checklist_id}/equipment/{equipment_id}", "south", "404 404 404 404 200 200"),
    ("GET /checklists/{checklist_id}/items",              "north", "200 200 200 200 200 200"),
    ("GET /checklists/{checklist_id}/items",              "south", "404 404 404 404 200 200"),
    # defects (#33): every role reads them; a supervisor, a site manager or an admin resolves one
    ("GET /defects",                                      "north", "200 200 200 200 200 200"),
    ("GET /defects",                                      "south", "404 404 404 404 200 200"),
    ("GET /defects/{defect_id}",                          "north", "200 200 200 200 200 200"),
    ("GET /defects/{defect_id}",                          "south", "404 404 404 404 200 200"),
    ("POST /defects/{defect_id}/resolve",                 "north", "403 200 200 403 200 200"),
    ("POST /defects/{defect_id}/resolve",                 "south", "404 404 404 404 200 200"),
    # closure calendars
    ("GET /calendars",                                    "north", "200 200 200 200 200 200"),
    ("GET /calendars",                                    "south", "404 404 404 404 200 200"),
    ("GET /calendars/{calendar_id}",                      "north", "200 200 200 200 200 200"),
    ("GET /calendars/{calendar_id}",                      "south", "404 404 404 404 200 200"),
    ("PUT /calendars/{calendar_id}",                      "north", "403 403 200 403 200 200"),
    ("PUT /calendars/{calendar_id}",                      "south", "404 404 404 404 200 200"),
    ("DELETE /calendars/{calendar_id}",                   "north", "403 403 204 403 204 204"),
    ("DELETE /calendars/{calendar_id}",                   "south", "404 404 404 404 204 204"),
    # digest subscriptions
    ("GET /subscriptions",                                "north", "403 403 200 200 200 200"),
    ("GET /subscriptions",                                "south", "404 404 404 404 200 200"),
    ("POST /subscriptions",                               "north", "403 403 201 403 201 201"),
    ("POST /subscriptions",                               "south", "404 404 404 404 201 201"),
    ("DELETE /subscriptions/{subscription_id}",           "north", "403 403 204 403 204 204"),
    ("DELETE /subscriptions/{subscription_id}",           "south", "404 404 404 404 204 204"),
    # the notification log and the audit trail
    ("GET /notifications",                                "north", "403 200 200 200 200 200"),
    ("GET /notifications",                                "south", "404 404 404 404 200 200"),
    ("GET /audit",                                        "north", "403 403 200 200 200 200"),
    ("GET /audit",                                        "south", "404 404 404 404 200 200"),
    # grants (an admin's, of no site)
    ("GET /grants",                                       "-",     "403 403 403 403 200 200"),
    ("GET /grants/{principal}",                           "-",     "403 403 403 403 200 200"),
    ("PUT /grants/{principal}",                           "-",     "403 403 403 403 201 201"),
    ("DELETE /grants/{principal}",                        "-",     "403 403 403 403 204 204"),
)

# duration: the module (one local serve, 546 cells; 486 before #33) took 108 s at a load of 6 and 170-300 s at 13-15
# on the 2 cores, about 150 s in make unit: spread over its tests (each test's marker counts, tests/conftest.py)
pytestmark = [pytest.mark.e2e, pytest.mark.duration(round(150 / (len(MATRIX) + 3), 1))]

SITES = {"north": "Europe/Berlin", "south": "America/Chicago"}
HOURLY = {"recurrence": "DTSTART;TZID=UTC:20260302T000000\nRRULE:FREQ=HOURLY", "window": "PT50M", "grace": "PT10M"}
"""Every checklist made here: hourly windows of 50 minutes and 10 of grace."""
BRAKES = {"id": "brakes", "label": "Brakes work", "kind": "pass_fail", "critical": True}
"""The one item of the matrix's pre-use checklists (#33): failing it opens a defect."""
JUDGED_AT = START.replace(minute=0) + timedelta(hours=2, seconds=1)
"""The clock is moved here once the judged checklists exist: their 06:00 window is judged, every
equipment of theirs missed it (the dismissals' missed checks)."""


# -- calling the two APIs ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Request:
    method: str
    path: str
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any


class SetupFailed(Exception):
    """The IAM caller could not make a cell's object: the cell's status shows ``ERR`` and this message."""


def _send(url: str, request: Request, headers: dict[str, str], *, sign: bool) -> Answer:
    data = json.dumps(request.body).encode() if request.body is not None else b""
    headers = {"Content-Type": "application/json", **headers, **request.headers}
    aws = AWSRequest(method=request.method, url=url + request.path, data=data, headers=headers)
    if sign:
        SigV4Auth(Credentials("testing", "testing"), "execute-api", "us-east-1").add_auth(aws)
    prepared = urllib.request.Request(str(aws.url), data=data or None, method=request.method, headers=dict(aws.headers))
    try:
        with urllib.request.urlopen(prepared, timeout=BOUND_S) as response:
            status, kind, raw = response.status, response.headers["Content-Type"] or "", response.read()
    except urllib.error.HTTPError as error:
        status, kind, raw = error.code, error.headers["Content-Type"] or "", error.read()
    text = raw.decode()
    return Answer(status, json.loads(text) if "json" in kind and text else text)


@dataclass
class World:
    """The served stack, its two APIs, the people's tokens and the objects the matrix asks about."""

    server: LocalServer
    iam_url: str
    people_url: str
    tokens: dict[str, str] = field(default_factory=dict)
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    shared: dict[tuple[str, str], Request] = field(default_factory=dict)
    missed: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    missed_failure: str = ""
    judged: dict[str, str] = field(default_factory=dict)
    assigned_to: dict[str, str] = field(default_factory=dict)

    def ask(self, column: str, request: Request) -> Answer:
        """One request as ``column``'s caller: the IAM one signs for the IAM API, a person sends a token."""
        if column == "iam":
            return _send(self.iam_url, request, {}, sign=True)
        if column not in self.tokens:  # signed in when first asked (after the clock has moved)
            self.tokens[column] = access_token(self.server, PEOPLE[column])
        return _send(self.people_url, request, {"Authorization": f"Bearer {self.tokens[column]}"}, sign=False)

    def make(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> Any:
        """What the IAM caller (unscoped) makes for a cell; a refusal is the cell's setup failure."""
        answer = _send(self.iam_url, Request(method, path, body, headers or {}), {}, sign=True)
        if answer.status not in (200, 201, 204):
            raise SetupFailed(f"{method} {path}: {answer.status} {answer.body}")
        return answer.body

    def unique(self, prefix: str) -> str:
        return f"{prefix}-{next(self.ids)}"

    def now(self) -> datetime:
        now: datetime = self.server.clock.now()
        return now.astimezone(UTC)

    # -- the objects a cell asks about, made by the IAM caller -----------------------------------------
    def equipment(self, site: str) -> str:
        equipment_id = self.unique(f"fl-{site}")
        self.make("POST", "/equipment", {"equipment_id": equipment_id, "name": f"forklift {equipment_id}",
                                         "kind": "forklift", "site_id": site, "attributes": {"make": "Linde"}})
        return equipment_id

    def checklist(self, site: str, *, equipment: tuple[str, ...] = (), paused: bool = False) -> str:
        checklist_id = self.unique(f"hourly-{site}")
        self.make("POST", "/checklists", {"id": checklist_id, "site_id": site,
                                          "name": f"checklist {checklist_id}", **HOURLY})
        if equipment:
            self.make("POST", f"/checklists/{checklist_id}/equipment",
                      {"equipment": list(equipment), "at": _instant(self.now() - timedelta(hours=1))})
        if paused:
            self.make("POST", f"/checklists/{checklist_id}/pause", headers={"If-Match": "*"})
        return checklist_id

    def assigned(self, site: str) -> tuple[str, str]:
        """A checklist at ``site`` and an equipment of the site assigned to it (an hour ago)."""
        equipment_id = self.equipment(site)
        return self.checklist(site, equipment=(equipment_id,)), equipment_id

    def calendar(self, site: str) -> str:
        calendar_id = self.unique(f"holidays-{site}")
        self.make("PUT", f"/calendars/{calendar_id}", {"site_id": site, "dates": ["2026-12-25"],
                                                      "description": "closed"})
        return calendar_id

    def subscription(self, site: str) -> str:
        subscription_id = self.unique(f"digest-{site}")
        self.make("POST", "/subscriptions", _subscription(subscription_id, site))
        return subscription_id

    def out_of_service(self, site: str) -> str:
        """An equipment of ``site`` (assigned to a checklist) with an open out-of-service period."""
        equipment_id = self.assigned(site)[1]
        self.make("POST", f"/equipment/{equipment_id}/out-of-service",
                  {"from": _instant(self.now() - timedelta(hours=1)), "reason": "brakes"})
        return equipment_id

    def checked(self, site: str) -> str:
        """A pre-use checklist of ``site`` asking one critical item (its items' revision 1), with an
        equipment of the site assigned an hour ago."""
        equipment_id = self.equipment(site)
        checklist_id = self.unique(f"pre-use-{site}")
        self.make("POST", "/checklists", {"id": checklist_id, "site_id": site, "name": f"pre-use {checklist_id}",
                                          **HOURLY, "pre_use": True, "items": [BRAKES]})
        self.make("POST", f"/checklists/{checklist_id}/equipment",
                  {"equipment": [equipment_id], "at": _instant(self.now() - timedelta(hours=1))})
        self.assigned_to[checklist_id] = equipment_id
        return checklist_id

    def defect(self, site: str) -> str:
        """An open defect of ``site``: a check of a pre-use checklist whose brakes failed."""
        checklist_id = self.checked(site)
        recorded = self.make("POST", "/checks", {"checklist_id": checklist_id,
                                                 "equipment_id": self.assigned_to[checklist_id],
                                                 "performed_at": _instant(self.now()), "answers": {"brakes": "fail"}})
        opened = recorded["checks"][0].get("defects_opened") or []
        if len(opened) != 1:
            raise SetupFailed(f"a failed critical item opened {opened}, not one defect: {recorded}")
        return str(opened[0])

    def grant(self) -> str:
        principal = self.unique("contractor")
        self.make("PUT", f"/grants/{principal}", {"roles": {"north": "operator"}, "admin": False})
        return principal

    def judged_checklist(self, site: str) -> str:
        """The checklist of ``site`` whose 06:00 window was judged (see JUDGED_AT)."""
        if site not in self.judged:
            raise SetupFailed(self.missed_failure or f"site {site} has no judged checklist")
        return self.judged[site]

    def missed_check(self, site: str) -> dict[str, Any]:
        """One missed check of ``site`` not yet dismissed (made before the clock moved, see JUDGED_AT)."""
        if not self.missed.get(site):
            raise SetupFailed(self.missed_failure or f"no missed check of site {site} left to dismiss")
        return self.missed[site].pop()


def _instant(instant: datetime) -> str:
    return f"{instant.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}"


def _subscription(subscription_id: str, site: str) -> dict[str, Any]:
    return {"id": subscription_id, "site_id": site, "to": [f"{site}-manager@example.com"],
            "period": "daily", "time": "07:00", "timezone": SITES[site]}


# -- each route's request about an object at a site ----------------------------------------------------
Builder = Callable[[World, str], Request]
BUILDERS: dict[str, Builder] = {}


def builds(route: str) -> Callable[[Builder], Builder]:
    def register(builder: Builder) -> Builder:
        BUILDERS[route] = builder
        return builder
    return register


def _check(world: World, site: str) -> dict[str, Any]:
    checklist_id, equipment_id = world.assigned(site)
    return {"checklist_id": checklist_id, "equipment_id": equipment_id, "performed_at": _instant(world.now())}


@builds("POST /checks")
def _record(world: World, site: str) -> Request:
    return Request("POST", "/checks", _check(world, site))


@builds("POST /checks/batch")
def _record_batch(world: World, site: str) -> Request:
    return Request("POST", "/checks/batch", {"checks": [_check(world, site)]})


RANGE = f"from={_instant(JUDGED_AT - timedelta(hours=1, seconds=1))}&to={_instant(JUDGED_AT)}"
"""The hour of the judged window (the query of the routes that read records over a range)."""


@builds("GET /missed")
def _missed(world: World, site: str) -> Request:
    return Request("GET", f"/missed?{RANGE}&site_id={site}")


@builds("POST /missed/dismissals")
def _dismiss(world: World, site: str) -> Request:
    missed = world.missed_check(site)
    return Request("POST", "/missed/dismissals", {
        "checklist_id": missed["checklist_id"], "equipment_id": missed["equipment_id"],
        "window_start": missed["window_start"], "reason": "in the workshop"})


@builds("GET /equipment/{equipment_id}/status")
def _status(world: World, site: str) -> Request:
    return Request("GET", f"/equipment/{world.assigned(site)[1]}/status")


@builds("GET /report")
def _report(world: World, site: str) -> Request:
    # the report of the site's judged checklist (of every checklist at north, it outgrows the 20 s the API
    # gives a report on a busy machine)
    return Request("GET", f"/report?{RANGE}&site_id={site}&checklist={world.judged_checklist(site)}")


@builds("GET /me")
def _me(world: World, site: str) -> Request:
    return Request("GET", "/me")


@builds("GET /sites")
def _sites(world: World, site: str) -> Request:
    return Request("GET", "/sites")


@builds("POST /sites")
def _new_site(world: World, site: str) -> Request:
    site_id = world.unique("east")
    return Request("POST", "/sites", {"site_id": site_id, "name": f"Depot {site_id}", "timezone": "Europe/Riga"})


@builds("GET /sites/{site_id}")
def _site(world: World, site: str) -> Request:
    return Request("GET", f"/sites/{site}")


@builds("PUT /sites/{site_id}")
def _edit_site(world: World, site: str) -> Request:
    # the site itself (a role is held at a site): the edit keeps its zone, renames it
    return Request("PUT", f"/sites/{site}", {"name": f"Depot {site} ({world.unique('renamed')})",
                                             "timezone": SITES[site]}, {"If-Match": "*"})


@builds("GET /sites/{site_id}/audit")
def _site_audit(world: World, site: str) -> Request:
    return Request("GET", f"/sites/{site}/audit")


@builds("GET /sites/{site_id}/readiness")
def _site_readiness(world: World, site: str) -> Request:
    return Request("GET", f"/sites/{site}/readiness")


@builds("GET /equipment")
def _equipment_list(world: World, site: str) -> Request:
    return Request("GET", f"/equipment?site_id={site}")


@builds("POST /equipment")
def _register(world: World, site: str) -> Request:
    equipment_id = world.unique(f"new-{site}")
    return Request("POST", "/equipment", {"equipment_id": equipment_id, "name": "pallet truck",
                                          "kind": "pallet_truck", "site_id": site, "attributes": {}})


@builds("GET /equipment/{equipment_id}")
def _registered(world: World, site: str) -> Request:
    return Request("GET", f"/equipment/{world.equipment(site)}")


@builds("PUT /equipment/{equipment_id}")
def _edit_equipment(world: World, site: str) -> Request:
    return Request("PUT", f"/equipment/{world.equipment(site)}",
                   {"name": "forklift, new forks", "kind": "forklift", "attributes": {"make": "Linde"}},
                   {"If-Match": "*"})


@builds("DELETE /equipment/{equipment_id}")
def _retire(world: World, site: str) -> Request:
    return Request("DELETE", f"/equipment/{world.equipment(site)}", headers={"If-Match": "*"})


@builds("GET /equipment/{equipment_id}/out-of-service")
def _periods(world: World, site: str) -> Request:
    return Request("GET", f"/equipment/{world.out_of_service(site)}/out-of-service")


@builds("POST /equipment/{equipment_id}/out-of-service")
def _take_out(world: World, site: str) -> Request:
    return Request("POST", f"/equipment/{world.assigned(site)[1]}/out-of-service",
                   {"from": _instant(world.now() - timedelta(minutes=30)), "reason": "a flat tyre"})


@builds("POST /equipment/{equipment_id}/back-in-service")
def _back(world: World, site: str) -> Request:
    return Request("POST", f"/equipment/{world.out_of_service(site)}/back-in-service", {"at": _instant(world.now())})


@builds("GET /checklists")
def _checklists(world: World, site: str) -> Request:
    return Request("GET", f"/checklists?site_id={site}")


@builds("POST /checklists")
def _create_checklist(world: World, site: str) -> Request:
    checklist_id = world.unique(f"new-{site}")
    return Request("POST", "/checklists", {"id": checklist_id, "site_id": site, "name": "weekly brakes",
                                           **HOURLY})


@builds("POST /checklists/preview")
def _preview(world: World, site: str) -> Request:
    return Request("POST", "/checklists/preview", {"site_id": site, **HOURLY})


@builds("GET /checklists/{checklist_id}")
def _checklist(world: World, site: str) -> Request:
    return Request("GET", f"/checklists/{world.checklist(site)}")


@builds("PUT /checklists/{checklist_id}")
def _edit_checklist(world: World, site: str) -> Request:
    return Request("PUT", f"/checklists/{world.checklist(site)}", {"name": "hourly, edited", **HOURLY,
                                                                    "grace": "PT5M"}, {"If-Match": "*"})


@builds("DELETE /checklists/{checklist_id}")
def _delete_checklist(world: World, site: str) -> Request:
    return Request("DELETE", f"/checklists/{world.checklist(site)}", headers={"If-Match": "*"})


@builds("POST /checklists/{checklist_id}/pause")
def _pause(world: World, site: str) -> Request:
    return Request("POST", f"/checklists/{world.checklist(site)}/pause", headers={"If-Match": "*"})


@builds("POST /checklists/{checklist_id}/resume")
def _resume(world: World, site: str) -> Request:
    return Request("POST", f"/checklists/{world.checklist(site, paused=True)}/resume", headers={"If-Match": "*"})


@builds("GET /checklists/{checklist_id}/equipment")
def _assignments(world: World, site: str) -> Request:
    return Request("GET", f"/checklists/{world.assigned(site)[0]}/equipment")


@builds("POST /checklists/{checklist_id}/equipment")
def _assign(world: World, site: str) -> Request:
    return Request("POST", f"/checklists/{world.checklist(site)}/equipment",
                   {"equipment": [world.equipment(site)], "at": _instant(world.now())})


@builds("DELETE /checklists/{checklist_id}/equipment/{equipment_id}")
def _unassign(world: World, site: str) -> Request:
    checklist_id, equipment_id = world.assigned(site)
    return Request("DELETE", f"/checklists/{checklist_id}/equipment/{equipment_id}?at={_instant(world.now())}")


@builds("GET /checklists/{checklist_id}/items")
def _items(world: World, site: str) -> Request:
    return Request("GET", f"/checklists/{world.checked(site)}/items?revision=1")


@builds("GET /defects")
def _defects(world: World, site: str) -> Request:
    return Request("GET", f"/defects?site={site}&status=open")


@builds("GET /defects/{defect_id}")
def _defect(world: World, site: str) -> Request:
    return Request("GET", f"/defects/{world.defect(site)}")


@builds("POST /defects/{defect_id}/resolve")
def _resolve(world: World, site: str) -> Request:
    return Request("POST", f"/defects/{world.defect(site)}/resolve", {"note": "brake line replaced"},
                   {"If-Match": '"1"'})


@builds("GET /calendars")
def _calendars(world: World, site: str) -> Request:
    return Request("GET", f"/calendars?site_id={site}")


@builds("GET /calendars/{calendar_id}")
def _calendar(world: World, site: str) -> Request:
    return Request("GET", f"/calendars/{world.calendar(site)}")


@builds("PUT /calendars/{calendar_id}")
def _replace_calendar(world: World, site: str) -> Request:
    return Request("PUT", f"/calendars/{world.calendar(site)}",
                   {"site_id": site, "dates": ["2026-12-25", "2026-12-26"], "description": "closed"},
                   {"If-Match": "*"})


@builds("DELETE /calendars/{calendar_id}")
def _delete_calendar(world: World, site: str) -> Request:
    return Request("DELETE", f"/calendars/{world.calendar(site)}", headers={"If-Match": "*"})


@builds("GET /subscriptions")
def _subscriptions(world: World, site: str) -> Request:
    return Request("GET", f"/subscriptions?site_id={site}")


@builds("POST /subscriptions")
def _subscribe(world: World, site: str) -> Request:
    return Request("POST", "/subscriptions", _subscription(world.unique(f"new-digest-{site}"), site))


@builds("DELETE /subscriptions/{subscription_id}")
def _unsubscribe(world: World, site: str) -> Request:
    return Request("DELETE", f"/subscriptions/{world.subscription(site)}")


@builds("GET /notifications")
def _notifications(world: World, site: str) -> Request:
    return Request("GET", f"/notifications?{RANGE}&site_id={site}")


@builds("GET /audit")
def _audit(world: World, site: str) -> Request:
    return Request("GET", f"/audit?kind=checklist&id={world.checklist(site)}")


@builds("GET /grants")
def _grants(world: World, site: str) -> Request:
    return Request("GET", "/grants")


@builds("GET /grants/{principal}")
def _grant(world: World, site: str) -> Request:
    return Request("GET", f"/grants/{world.grant()}")


@builds("PUT /grants/{principal}")
def _put_grant(world: World, site: str) -> Request:
    return Request("PUT", f"/grants/{world.unique('new-contractor')}",
                   {"roles": {"north": "auditor"}, "admin": False})


@builds("DELETE /grants/{principal}")
def _revoke(world: World, site: str) -> Request:
    return Request("DELETE", f"/grants/{world.grant()}", headers={"If-Match": "*"})


# -- the run -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cell:
    route: str
    site: str
    column: str
    expected: int

    @property
    def refusal(self) -> bool:
        return self.expected >= 400

    @property
    def writes(self) -> bool:
        """Whether an allowed request changes its object (so that each such cell needs one of its own)."""
        method = self.route.split(" ", 1)[0]
        return method != "GET" and self.route != "POST /checklists/preview"

    def __str__(self) -> str:
        return f"{self.route} @ {self.site} as {self.column}"


def cells() -> list[Cell]:
    return [Cell(route, site, column, int(status))
            for route, site, statuses in MATRIX for column, status in zip(COLUMNS, statuses.split(), strict=True)]


@dataclass
class Outcome:
    status: int | str  # "ERR" when the cell's object could not be made
    detail: Any
    written: list[str] = field(default_factory=list)  # what changed across a refusal


def _client(world: World, service: str) -> Any:
    session = boto3.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-1")
    return session.client(service, endpoint_url=world.server.endpoint)


def table_items(world: World) -> frozenset[str]:
    """Every item of the table (a scan through the local endpoint), as JSON text."""
    assert world.server.stack is not None
    pages = _client(world, "dynamodb").get_paginator("scan").paginate(TableName=world.server.stack.table_name)
    return frozenset(json.dumps(item, sort_keys=True) for page in pages for item in page["Items"])


def schedules(world: World) -> frozenset[str]:
    """Every schedule of every group (ListSchedules: name, state, expression, zone, dates), as JSON text."""
    scheduler = _client(world, "scheduler")
    found: set[str] = set()
    token: str | None = None
    while True:
        page = scheduler.list_schedules(**({"NextToken": token} if token else {}))
        found.update(json.dumps(s, sort_keys=True, default=str) for s in page["Schedules"])
        token = page.get("NextToken")
        if not token:
            return frozenset(found)


class TableWrites:
    """The table's stream, read from its end on: each write to the table (put, update, delete, of any
    item, by anyone) since the last look. A scan of the whole table before and after each of the 232
    refusals took 0.2 s to 0.6 s a scan; this takes a few milliseconds."""

    def __init__(self, world: World) -> None:
        assert world.server.stack is not None
        self.streams = _client(world, "dynamodbstreams")
        arn = _client(world, "dynamodb").describe_table(TableName=world.server.stack.table_name)["Table"][
            "LatestStreamArn"]
        shards = self.streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
        self.iterators = [self.streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                                          ShardIteratorType="LATEST")["ShardIterator"]
                          for shard in shards]

    def since(self) -> list[str]:
        written: list[str] = []
        for index, iterator in enumerate(self.iterators):
            page = self.streams.get_records(ShardIterator=iterator)
            written += [f"{record['eventName']} {json.dumps(record['dynamodb'].get('Keys'), sort_keys=True)}"
                        for record in page["Records"]]
            self.iterators[index] = page["NextShardIterator"]
        return written


def difference(what: str, before: frozenset[str], after: frozenset[str]) -> list[str]:
    return ([f"{what} gone: {text[:300]}" for text in sorted(before - after)]
            + [f"{what} written: {text[:300]}" for text in sorted(after - before)])


def request_for(world: World, cell: Cell) -> Request:
    """The cell's request: an allowed write gets an object of its own; every other cell of the route and
    site shares one."""
    if cell.writes and not cell.refusal:
        return BUILDERS[cell.route](world, cell.site)
    key = (cell.route, cell.site)
    if key not in world.shared:
        world.shared[key] = BUILDERS[cell.route](world, cell.site)
    return world.shared[key]


@dataclass
class Run:
    outcomes: dict[Cell, Outcome]
    """Each cell's answer (and, for a refusal, what it wrote)."""
    table_changed: list[str]
    """The scan of the whole table after the refusals compared with the one before (nothing, when none wrote)."""
    allowed_wrote: tuple[list[str], list[str]]
    """What the same two watchers (the stream, the schedules) saw of the allowed writes that followed: they
    notice a write."""


def run_matrix(world: World) -> Run:
    """Every cell: the objects made first (settled), then the refusals, then the rest. Around each refusal,
    the table's writes (its stream) and the schedules; around all of them, every item of the table."""
    prepared: dict[Cell, Request | SetupFailed] = {}
    for cell in cells():
        try:
            prepared[cell] = request_for(world, cell)
        except SetupFailed as failure:
            prepared[cell] = failure
    world.server.tick()  # the stream settles: schedules synced, audit entries written
    outcomes: dict[Cell, Outcome] = {}
    items, writes, before = table_items(world), TableWrites(world), schedules(world)
    table_changed: list[str] | None = None
    for cell in sorted(prepared, key=lambda c: not c.refusal):
        if not cell.refusal and table_changed is None:
            table_changed = difference("item", items, table_items(world))
        request = prepared[cell]
        if isinstance(request, SetupFailed):
            outcomes[cell] = Outcome("ERR", str(request))
            continue
        answer = world.ask(cell.column, request)
        outcome = outcomes[cell] = Outcome(answer.status, answer.body)
        if cell.refusal:
            after = schedules(world)
            outcome.written = writes.since() + difference("schedule", before, after)
            before = after
    if table_changed is None:
        table_changed = difference("item", items, table_items(world))
    return Run(outcomes, table_changed, (writes.since(), difference("schedule", before, schedules(world))))


# -- the server ----------------------------------------------------------------------------------------
def access_token(server: LocalServer, user: str) -> str:
    """``user``'s access token from the stack's user pool (as ``local serve`` prints how to get one)."""
    return server.access_token(user)


def people_api_url(server: LocalServer) -> str:
    assert server.people_api_url is not None, "local serve answers no people's API"
    return server.people_api_url


def judged_missed_checks(world: World) -> None:
    """Per site, a checklist of eight forklifts none of which is checked in its 06:00 window: the clock
    moves past the window's grace and the evaluation records eight missed checks a site to dismiss (a
    failure to make them is the dismissal cells' setup failure)."""
    made = world.judged
    try:
        for site in SITES:
            made[site] = world.checklist(site, equipment=tuple(world.equipment(site) for _ in range(8)))
    except SetupFailed as failure:
        world.missed_failure = str(failure)
    world.server.tick()
    world.server.advance(JUDGED_AT)
    for site, checklist_id in made.items():
        try:
            world.missed[site] = world.make("GET", f"/missed?checklist_id={checklist_id}&{RANGE}")["missed"]
        except SetupFailed as failure:
            world.missed_failure = str(failure)
        else:
            if len(world.missed[site]) != 8:
                world.missed_failure = f"the {site} window was not judged: {world.missed[site]}"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """One ``local serve`` for the module, on a simulated clock standing at START until moved."""
    log = tmp_path_factory.mktemp("access-matrix") / "serve.log"
    server = LocalServer(port=_free_port(), api_port=0, people_api_port=0, clock=SimulatedClock(START),
                         log_path=log)
    try:
        server.start()
        assert server.api_url is not None
        yield World(server, server.api_url, people_api_url(server))
    finally:
        server.stop()


@pytest.fixture(scope="module")
def matrix(world: World) -> Run:
    started = time.monotonic()
    judged_missed_checks(world)
    run = run_matrix(world)
    print(f"access matrix: {len(run.outcomes)} cells in {time.monotonic() - started:.1f} s")
    return run


# -- the tests -----------------------------------------------------------------------------------------
def _routes_of_the_document() -> set[str]:
    document = yaml.safe_load(OPENAPI.read_text(encoding="utf-8"))
    methods = {"get", "put", "post", "delete", "patch", "head", "options"}
    return {f"{method.upper()} {path}" for path, item in document["paths"].items() for method in item
            if method in methods}


def test_every_route_of_the_openapi_document_is_in_the_matrix() -> None:
    in_matrix = {route for route, _, _ in MATRIX}
    assert _routes_of_the_document() - in_matrix == set(), "a route the matrix does not ask about"
    assert in_matrix - _routes_of_the_document() == set(), "a route of the matrix the API does not have"
    assert set(BUILDERS) == in_matrix
    rows = [(route, site) for route, site, _ in MATRIX]
    assert len(rows) == len(set(rows)), "a row written twice"
    for route, site, statuses in MATRIX:
        assert re.fullmatch(r"\d{3}( \d{3}){5}", statuses), (route, site, statuses)
        assert site in ("-", "north", "south") and (site == "-") == (route in _SITELESS), (route, site)
        assert site == "-" or (route, "south" if site == "north" else "north") in rows, f"{route}: one site only"


_SITELESS = frozenset({"GET /me", "GET /sites", "POST /sites", "GET /grants", "GET /grants/{principal}",
                       "PUT /grants/{principal}", "DELETE /grants/{principal}"})


@pytest.mark.parametrize(("route", "site", "statuses"), MATRIX, ids=[f"{r} @ {s}" for r, s, _ in MATRIX])
def test_each_caller_gets_the_status_of_its_cell(matrix: Run, route: str, site: str, statuses: str) -> None:
    assert_row(matrix, route, site, statuses)


def assert_row(matrix: Run, route: str, site: str, statuses: str) -> None:
    """The row's answers, in the columns' order, are its statuses (else each differing cell, and what it said)."""
    row = sorted(((cell, outcome) for cell, outcome in matrix.outcomes.items()
                  if (cell.route, cell.site) == (route, site)),
                 key=lambda pair: COLUMNS.index(pair[0].column))
    answered = " ".join(str(outcome.status) for _, outcome in row)
    details = [f"{cell.column}: {outcome.status} {_said(outcome.detail)}" for cell, outcome in row
               if str(outcome.status) != str(cell.expected)]
    assert answered == statuses, "\n".join(details)


def _said(body: Any) -> str:
    """What an answer said, short: a problem document's field and detail, else its beginning."""
    if isinstance(body, dict) and ("detail" in body or "message" in body):
        return " ".join(f"{key}={body[key]}" for key in ("field", "detail", "message") if body.get(key))[:300]
    return str(body)[:300]


def test_nothing_is_written_on_a_refusal(matrix: Run) -> None:
    written = {str(cell): outcome.written for cell, outcome in matrix.outcomes.items() if outcome.written}
    assert written == {}
    assert matrix.table_changed == []
    table_writes, schedule_writes = matrix.allowed_wrote
    assert table_writes and schedule_writes, "the watchers see the allowed cells' writes (and digest schedules)"
    asked = [cell for cell, outcome in matrix.outcomes.items() if cell.refusal and outcome.status != "ERR"]
    assert len(asked) > 200  # the refusals were asked, each between its snapshots (232 in the table)


def test_a_north_operator_lists_only_north(world: World, matrix: Run) -> None:
    """Unfiltered lists hold the caller's sites only: every object the matrix made at south is left out."""
    for path, key in (("/checklists", "site_id"), ("/equipment", "site_id"), ("/sites", "site_id")):
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            query = f"?cursor={urllib.parse.quote(cursor)}" if cursor else ""
            page = world.ask("operator", Request("GET", path + query))
            assert page.status == 200, page.body
            items += page.body["items"]
            cursor = page.body["next_cursor"]
            if cursor is None:
                break
        assert items, f"{path}: north's objects are listed"
        assert {item[key] for item in items} == {"north"}, path
        everything = world.make("GET", path + "?limit=1000")["items"]
        assert {item[key] for item in everything} >= {"north", "south"}, f"{path}: the IAM caller sees both"
