"""A browser for the web app's unit tests (#32): requests as API Gateway's ``WebApp`` HTTP API hands them
to ``functions/webapp/app.py`` (payload 2.0, no authorizer), cookies kept between them as a browser
keeps them, forms sent urlencoded with the page's CSRF token.

The ``web`` fixture is the stack on moto: the two sites of :mod:`tests.unit.two_sites` (FL-1 and FL-2
registered at north, FL-9 at south; checklist ``daily`` at north on FL-1 and ``south-daily`` at south
on FL-9, each with a missed check on 1 March, its window judged as the evaluation leaves it) and a
user pool whose people sign in with :data:`PASSWORD`: ``manager-north``, ``supervisor-north``,
``auditor-north``, ``operator-north``, ``manager-south`` (their role at their site) and ``admin``. A page test::

    def test_my_page(web: Web) -> None:
        browser = web.browser("manager-north")       # signed in
        answer = browser.get("/missed", site="north")
        assert answer.status == 200 and "FL-1" in answer.text
        answer = browser.submit("/missed/dismiss", {"checklist_id": "daily", ...})  # the csrf field added
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from html import unescape
from types import ModuleType
from typing import Any
from urllib.parse import urlencode, urlsplit

import boto3
import pytest

from missed_checks import clock
from missed_checks.evaluation.ports import JudgedWindow
from missed_checks.webapp import sessions
from missed_checks.webapp.context import WebAppTable
from tests.unit.two_sites import NOW, add_checklist, dynamodb, register, two_sites, with_missed_checks  # noqa: F401

PASSWORD = "Local-passw0rd!"
PEOPLE: Mapping[str, tuple[str, ...]] = {
    "manager-north": ("site_manager@north",),
    "supervisor-north": ("supervisor@north",),
    "auditor-north": ("auditor@north",),
    "operator-north": ("operator@north",),
    "manager-south": ("site_manager@south",),
    "admin": ("admin",),
}
RULE = "DTSTART;TZID=Europe/Berlin:20260223T060000\nRRULE:FREQ=DAILY"
"""``daily`` and ``south-daily``: every day 06:00-14:00 Berlin time."""


def webapp() -> ModuleType:
    from functions.webapp import app
    return app


@dataclass
class Answer:
    status: int
    text: str
    headers: dict[str, str]
    cookies: list[str]

    @property
    def location(self) -> str:
        return self.headers.get("Location", "")

    def field(self, name: str) -> str:
        """The value of the first ``<input name=name value=...>`` of the page (a hidden field's)."""
        match = re.search(rf'<input[^>]*name="{re.escape(name)}"[^>]*value="([^"]*)"', self.text)
        assert match, f"no input {name} with a value on the page"
        return unescape(match.group(1))


@dataclass
class Browser:
    """Cookies kept as a browser keeps them (by name; an expired one dropped)."""

    https: bool = False
    cookies: dict[str, str] = field(default_factory=dict)
    last: Answer | None = None

    def request(self, method: str, path: str, *, body: str | None = None, query: Mapping[str, str] | None = None,
                headers: Mapping[str, str] | None = None) -> Answer:
        parts = urlsplit(path)
        query_string = parts.query or urlencode(dict(query or {}))
        params = dict(pair.split("=", 1) if "=" in pair else (pair, "") for pair in query_string.split("&") if pair)
        from urllib.parse import unquote_plus
        params = {unquote_plus(k): unquote_plus(v) for k, v in params.items()}
        event = {"version": "2.0", "routeKey": "$default", "rawPath": parts.path, "rawQueryString": query_string,
                 "queryStringParameters": params or None,
                 "cookies": [f"{k}={v}" for k, v in self.cookies.items()] or None,
                 "headers": {"host": "app.example", "x-forwarded-proto": "https" if self.https else "http",
                             **({"content-type": "application/x-www-form-urlencoded"} if body is not None else {}),
                             **(headers or {})},
                 "requestContext": {"http": {"method": method, "path": parts.path, "protocol": "HTTP/1.1",
                                             "sourceIp": "127.0.0.1"}, "stage": "$default"},
                 "body": body, "isBase64Encoded": False}
        if event["cookies"] is None:
            del event["cookies"]
        raw = webapp().app.resolve(event, None)
        answer = Answer(raw["statusCode"], raw.get("body") or "", dict(raw.get("headers") or {}),
                        list(raw.get("cookies") or []))
        for cookie in answer.cookies:
            name, _, rest = cookie.partition("=")
            value = rest.split(";")[0]
            if "Max-Age=0" in cookie:
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = value
        self.last = answer
        return answer

    def get(self, path: str, **query: str) -> Answer:
        return self.request("GET", path, query=query)

    def post(self, path: str, fields: Mapping[str, str]) -> Answer:
        """``fields`` urlencoded, as they are (no CSRF token added)."""
        return self.request("POST", path, body=urlencode(dict(fields)))

    def submit(self, path: str, fields: Mapping[str, str], csrf: str | None = None) -> Answer:
        """A form of the last page (or ``csrf``): ``fields`` with the page's CSRF token."""
        token = csrf if csrf is not None else (self.last.field("csrf") if self.last else "")
        return self.post(path, {"csrf": token, **fields})

    def sign_in(self, user: str, password: str = PASSWORD, next_path: str = "/") -> Answer:
        self.get("/sign-in", next=next_path)
        return self.submit("/sign-in", {"user": user, "password": password, "next": next_path})


@dataclass
class Web:
    table: WebAppTable
    cognito: Any
    pool_id: str
    client_id: str

    def browser(self, user: str | None = None, *, https: bool = False) -> Browser:
        """A browser, signed in as ``user`` (one of :data:`PEOPLE`) when given."""
        browser = Browser(https=https)
        if user is not None:
            answer = browser.sign_in(user)
            assert answer.status == 303, answer.text
            browser.get("/sign-in")  # a page with the session's CSRF token comes next; any page will do
        return browser


def create_pool(cognito: Any) -> tuple[str, str]:
    pool_id = cognito.create_user_pool(PoolName="people")["UserPool"]["Id"]
    client_id = cognito.create_user_pool_client(UserPoolId=pool_id, ClientName="web",
                                                ExplicitAuthFlows=["ALLOW_USER_PASSWORD_AUTH",
                                                                   "ALLOW_REFRESH_TOKEN_AUTH"]
                                                )["UserPoolClient"]["ClientId"]
    for group in sorted({g for groups in PEOPLE.values() for g in groups}):
        cognito.create_group(UserPoolId=pool_id, GroupName=group)
    for user, groups in PEOPLE.items():
        cognito.admin_create_user(UserPoolId=pool_id, Username=user, MessageAction="SUPPRESS",
                                  UserAttributes=[{"Name": "name", "Value": user.replace("-", " ").title()}])
        cognito.admin_set_user_password(UserPoolId=pool_id, Username=user, Password=PASSWORD, Permanent=True)
        for group in groups:
            cognito.admin_add_user_to_group(UserPoolId=pool_id, Username=user, GroupName=group)
    return pool_id, client_id


@pytest.fixture
def web(dynamodb: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Web]:  # noqa: F811
    """The stack on moto (see the module's docstring); the product's clock at :data:`NOW`, sessions'
    wall clock at :data:`NOW` too (tests move it with ``monkeypatch.setattr(sessions, "wall_clock", ...)``)."""
    cognito = boto3.client("cognito-idp")
    pool_id, client_id = create_pool(cognito)
    with two_sites(dynamodb) as store:
        monkeypatch.setenv("TABLE_NAME", store.name)
        monkeypatch.setenv("USER_POOL_CLIENT_ID", client_id)
        for checklist_id, window in with_missed_checks(store):  # their windows judged, as the evaluation leaves them
            store.claim_window(checklist_id, JudgedWindow(window, 1, 0, 1, 1, 0, NOW - timedelta(days=1)), "run")
        clock.set_source(lambda: NOW)
        monkeypatch.setattr(sessions, "wall_clock", lambda: NOW)
        try:
            yield Web(WebAppTable(store.name), cognito, pool_id, client_id)
        finally:
            clock.set_source(None)
            cognito.delete_user_pool(UserPoolId=pool_id)
