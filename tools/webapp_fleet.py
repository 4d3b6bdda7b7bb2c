"""The fleet the web app is looked at with (#32), on the server ``local serve`` runs in this process,
shared by its browser test (``tests/e2e/test_webapp_browser.py``) and ``tools/bench_webapp.py``.

:func:`start_server` starts :class:`~missed_checks_local.serve.LocalServer` on a simulated clock with
the web app on a port of its own; :func:`seed` makes, through the people's API as ``manager-north``
and ``manager-south`` (the use cases the web app calls too), equipment registered at each site, an
hourly checklist at ``north`` with three forklifts (one out of service) and a daily one at
``south``, then moves the clock past the first hour's window and its grace so that the hour is
judged (two missed checks at north) while the next hour's window is open (due now).
:class:`WebClient` is a person at the web app without a browser: a cookie jar, the sign-in form
posted with its hidden fields, pages fetched and timed. :class:`TableRequests` counts the
DynamoDB requests the embedded AWS serves while it is active, by operation.
"""

from __future__ import annotations

import http.cookiejar
import json
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from missed_checks_local.clock import SimulatedClock
from missed_checks_local.product.application import install
from missed_checks_local.serve import LocalServer

START = datetime(2026, 3, 2, 5, 10, tzinfo=UTC)
"""The simulated clock's start (a Monday, 06:10 in Berlin)."""
CHECKLIST = "north-hourly"
SOUTH_CHECKLIST = "south-daily"
EQUIPMENT = ("FL-N1", "FL-N2", "FL-N3")
"""North's forklifts on :data:`CHECKLIST`: FL-N1 and FL-N2 miss the first hour, FL-N3 is out of service."""
SOUTH_EQUIPMENT = "FL-S1"
HOURLY = "DTSTART:20260302T000000\nRRULE:FREQ=HOURLY"  # no zone: the site's (Europe/Berlin)
BOUND_S = 240  # generous bounds on conditions, never a verdict on speed


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(log_path: Path) -> LocalServer:
    """``local serve``'s server on ports of its own, its clock simulated and standing at :data:`START`."""
    install()  # the product registered with the local runtime, as the CLI does (its sites and people)
    server = LocalServer(port=free_port(), api_port=0, people_api_port=0, web_port=0,
                         clock=SimulatedClock(START), log_path=log_path)
    try:
        server.start()
    except BaseException:
        server.stop()
        raise
    if server.web_url is None:
        server.stop()
        raise RuntimeError("local serve serves no web app (the stack has no WebApp API)")
    return server


def api(server: LocalServer, user: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    """(status, JSON body) of one request to the people's API as ``user``."""
    data = json.dumps(body).encode() if body is not None else None
    sent = urllib.request.Request(f"{server.people_api_url}{path}", data=data, method=method, headers={
        "Authorization": f"Bearer {server.access_token(user)}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(sent, timeout=60) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read() or b"null")


def _made(answer: tuple[int, Any], what: str) -> Any:
    status, body = answer
    if status not in (200, 201):
        raise AssertionError(f"{what}: {status} {body}")
    return body


@dataclass(frozen=True)
class Fleet:
    """What :func:`seed` made."""

    missed_window: datetime
    """The judged hour's window start (UTC): FL-N1 and FL-N2 missed it."""
    open_window: datetime
    """The hour whose window is open now (due now)."""


def seed(server: LocalServer) -> Fleet:
    manager = "manager-north"
    for equipment_id in EQUIPMENT:
        _made(api(server, manager, "POST", "/equipment", {
            "equipment_id": equipment_id, "name": f"Forklift {equipment_id[-1]}", "kind": "forklift",
            "site_id": "north"}), f"register {equipment_id}")
    _made(api(server, "manager-south", "POST", "/equipment", {
        "equipment_id": SOUTH_EQUIPMENT, "name": "Reach truck 1", "kind": "reach truck", "site_id": "south"}),
        "register FL-S1")
    _made(api(server, manager, "POST", "/checklists", {
        "id": CHECKLIST, "site_id": "north", "name": "Forklift walk-round", "recurrence": HOURLY,
        "window": "PT50M", "grace": "PT10M"}), "the north checklist")
    _made(api(server, "manager-south", "POST", "/checklists", {
        "id": SOUTH_CHECKLIST, "site_id": "south", "name": "Reach truck daily",
        "recurrence": "DTSTART:20260302T060000\nRRULE:FREQ=DAILY", "window": "PT4H"}), "the south checklist")
    _made(api(server, manager, "POST", f"/checklists/{CHECKLIST}/equipment", {"equipment": list(EQUIPMENT)}),
          "assign north")
    _made(api(server, "manager-south", "POST", f"/checklists/{SOUTH_CHECKLIST}/equipment",
              {"equipment": [SOUTH_EQUIPMENT]}), "assign south")
    server.tick()  # schedule-sync writes the schedules
    now = server.clock.now()
    missed_window = (now + timedelta(hours=1)).replace(minute=0, second=0, microsecond=0)
    server.advance(missed_window + timedelta(minutes=1))
    _made(api(server, "supervisor-north", "POST", f"/equipment/{EQUIPMENT[2]}/out-of-service", {
        "reason": "gearbox in the workshop"}), "FL-N3 out of service")
    open_window = missed_window + timedelta(hours=1)
    server.advance(open_window + timedelta(minutes=5))  # the hour's window and grace are over: judged
    deadline = time.monotonic() + BOUND_S
    while True:  # judged once each forklift's status counts its open miss
        server.tick()
        answers = [api(server, "supervisor-north", "GET", f"/equipment/{e}/status") for e in EQUIPMENT[:2]]
        if all(status == 200 and [c["open_misses"]["count"] for c in body["checklists"]] == [1]
               for status, body in answers):
            break
        if time.monotonic() > deadline:
            raise AssertionError(f"the hour from {missed_window} was not judged within {BOUND_S} s: {answers}")
        time.sleep(0.2)
    return Fleet(missed_window=missed_window, open_window=open_window)


@dataclass
class Form:
    action: str
    method: str
    fields: list[tuple[str, str, str]] = field(default_factory=list)
    """(name, type, value) of each input, select and textarea."""


class _Forms(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[Form] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = {key: value or "" for key, value in attrs}
        if tag == "form":
            self.forms.append(Form(named.get("action", ""), named.get("method", "get").lower()))
        elif tag in ("input", "select", "textarea") and self.forms and "name" in named:
            kind = named.get("type", "text" if tag == "input" else tag)  # an input without a type is a text field
            self.forms[-1].fields.append((named["name"], kind, named.get("value", "")))


def forms(html: str) -> list[Form]:
    parser = _Forms()
    parser.feed(html)
    return parser.forms


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


@dataclass
class Answer:
    status: int
    milliseconds: float
    headers: dict[str, str]
    text: str


class WebClient:
    """A person at the web app without a browser: cookies kept, redirects not followed."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.cookies = http.cookiejar.CookieJar()
        self._opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies), _NoRedirect)

    def request(self, method: str, path: str, form: dict[str, str] | None = None,
                headers: dict[str, str] | None = None) -> Answer:
        data = urllib.parse.urlencode(form).encode() if form is not None else None
        sent = urllib.request.Request(self.base + path, data=data, method=method, headers={
            **({"Content-Type": "application/x-www-form-urlencoded"} if data is not None else {}), **(headers or {})})
        started = time.perf_counter()
        try:
            with self._opener.open(sent, timeout=60) as answer:
                status, headers, body = answer.status, dict(answer.headers), answer.read()
        except urllib.error.HTTPError as refused:
            status, headers, body = refused.code, dict(refused.headers), refused.read()
        return Answer(status, (time.perf_counter() - started) * 1000, {k.lower(): v for k, v in headers.items()},
                      body.decode("utf-8", "replace"))

    def sign_in(self, user: str, password: str) -> Answer:
        """The sign-in form fetched and posted with its hidden fields, the user name in its text field
        and the password in its password field; the answer must be a redirect into the app."""
        page = self.request("GET", "/sign-in")
        (form,) = [f for f in forms(page.text) if any(kind == "password" for _, kind, _ in f.fields)]
        filled: dict[str, str] = {}
        for name, kind, value in form.fields:
            filled[name] = {"password": password, "text": user, "email": user}.get(kind, value)
        answer = self.request("POST", urllib.parse.urlparse(form.action).path or "/sign-in", filled)
        if answer.status != 303 or "/sign-in" in answer.headers.get("location", ""):
            raise AssertionError(f"{user} could not sign in: {answer.status} {answer.headers.get('location')}")
        return answer


class TableRequests:
    """Counts the DynamoDB requests the embedded AWS serves while active (``with TableRequests() as
    counted:``), by operation (``GetItem``, ``Query``, ``UpdateItem`` ...), whoever sends them (the
    web app's function in its worker process sends them to the loopback endpoint in this process)."""

    def __init__(self) -> None:
        self.counted: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._original: Any = None

    def __enter__(self) -> Counter[str]:
        from moto.dynamodb.responses import DynamoHandler  # deferred: moto is slow to import

        self._original = original = DynamoHandler.call_action
        lock, counted = self._lock, self.counted

        def call_action(handler: Any) -> Any:
            with lock:
                counted[handler._get_action()] += 1  # moto's own name for the operation
            return original(handler)

        DynamoHandler.call_action = call_action  # type: ignore[method-assign]
        return self.counted

    def __exit__(self, *exc: object) -> None:
        from moto.dynamodb.responses import DynamoHandler

        DynamoHandler.call_action = self._original  # type: ignore[method-assign]


READS = frozenset({"GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems"})


def reads(counted: Counter[str]) -> int:
    """The table reads among the requests counted."""
    return sum(n for operation, n in counted.items() if operation in READS)
