"""The fleet manager's web app in a real browser (#32 "Must show"): headless Chromium (Debian's
/usr/bin/chromium, driven with Playwright as the report's browser test does) against the web app of
the server ``local serve`` runs (in this process, on a simulated clock the fleet's seed moves: an
hourly checklist at ``north`` whose first hour was missed by two forklifts, the next hour due now,
a third forklift out of service; ``tools/webapp_fleet.py``).

- Every role signs in through the sign-in form and sees only what its role allows: the navigation
  holds exactly the pages of the role's actions (``missed_checks.permissions.role.ALLOWED``), and a
  page beyond them answers 403 with a page saying so.
- A supervisor dismisses a missed check with a reason; a site manager creates a checklist, previews
  its windows, pauses it and deletes it after the confirmation; an operator records a check at
  375 px wide, with one tap and the answer in words; signing out ends the session (the old cookie
  leads to the sign-in page).
- Cleared to operate (#33): at 375 px, an operator records a pre-use check by keyboard (its items as
  radio buttons and fields), its brakes failing: the answer says the forklift is NOT cleared to
  operate and names the defect, the equipment's page shows it not cleared, and a supervisor resolves
  the defect with a note.
- On every page: no console error, no failed request, no request leaving the app's origin, and
  axe-core (tools/package.json, installed by ``make browser``) injected into the page finds no
  serious or critical violation.
- Each page's screenshot (desktop, and 375 px for Today and Record) is written to ``docs/app/`` when
  it differs from the one there: docs/app.md shows them.

Chromium or axe-core missing is a failure, never a skip; the message says how to install them.
"""

from __future__ import annotations

import os
import re
import tempfile
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from missed_checks.permissions.role import ALLOWED, Action, Role
from missed_checks_local.product.people import LOCAL_PASSWORD, USER_ROLES
from missed_checks_local.serve import LocalServer
from tools.report_browser import FLAGS, FONTS, BrowserUnavailable, chromium_path
from tools.webapp_fleet import (
    CHECKLIST,
    EQUIPMENT,
    HOURLY,
    SOUTH_EQUIPMENT,
    Fleet,
    WebClient,
    _made,
    api,
    seed,
    start_server,
)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.duration(15),  # each of its 9 tests: the file took 122 s on 2 cores (2026-11-28, load 8)
    pytest.mark.filterwarnings("ignore:No application metrics to publish:UserWarning"),
]

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "tools" / "node_modules" / "axe-core" / "axe.min.js"
SHOTS = ROOT / "docs" / "app"
PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 900}
HOST = "missed-checks.test"
"""The web app's host name in the browser (``--host-resolver-rules`` maps it to the server's port)."""
AXE_PATH = "/__axe-core/axe.min.js"
"""Where the page loads axe-core from: the app's own origin, answered by the browser (a Playwright
route) and never by the app, so the page's Content-Security-Policy (``script-src 'self'``) stays on."""

NEW_CHECKLIST = "yard-daily"
ID_LABEL = re.compile(r"^(checklist )?id$", re.I)
DAILY_0600 = "DTSTART:20260302T060000\nRRULE:FREQ=DAILY"  # no zone: the site's (Europe/Berlin)
USERS = ["admin", *(f"{prefix}-{site}" for site in ("north", "south") for prefix in USER_ROLES)]

NAV: dict[str, Action] = {
    "/": Action.read,
    "/missed": Action.read_records,
    "/equipment": Action.read,
    "/checklists": Action.read,
    "/calendars": Action.read,
    "/report": Action.read_records,
    "/subscriptions": Action.read_management,
}
"""Each page of the navigation and the action a person needs (at some site) to be shown it."""

FORBIDDEN: dict[Role, str] = {
    Role.operator: "/report?site={site}",
    Role.supervisor: "/subscriptions",
    Role.auditor: "/checklists/new",
}
"""Per role, a page beyond it at the person's own site: 403 (a site manager may see every page there)."""
ELSEWHERE = f"/equipment/{EQUIPMENT[0]}"
"""North's forklift: a person of south (any role) is answered 404, as if it did not exist."""


def role_of(user: str) -> Role:
    return Role.admin if user == "admin" else Role(USER_ROLES[user.split("-")[0]])


def expected_nav(user: str) -> set[str]:
    return {path for path, action in NAV.items() if action in ALLOWED[role_of(user)]}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalServer, Fleet]]:
    server = start_server(tmp_path_factory.mktemp("webapp") / "serve.log")
    try:
        yield server, seed(server)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def chromium(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Chromium, resolving :data:`HOST` to the web app's port (so that the pages, the Record page's
    address and its QR code among them, look the same in every run's screenshots)."""
    try:
        executable = chromium_path()
    except BrowserUnavailable as error:
        pytest.fail(f"the browser test needs Chromium: {error}")
    if not AXE.is_file():
        pytest.fail(f"the browser test needs axe-core at {AXE.relative_to(ROOT)}: run `make browser` "
                    "(it runs `npm ci` in tools/, which installs tools/package.json's axe-core)")
    from playwright.sync_api import sync_playwright

    server, _ = request.getfixturevalue("fleet")
    port = urllib.parse.urlsplit(str(server.web_url)).port
    with tempfile.TemporaryDirectory(prefix="missed-checks-webapp-") as cache, sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable, headless=True,
            args=[*FLAGS, f"--host-resolver-rules=MAP {HOST}:80 127.0.0.1:{port}"],
            env={**os.environ, "FONTCONFIG_FILE": str(FONTS), "XDG_CACHE_HOME": cache})
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class Visitor:
    """One person's browser window at the web app: what it logged, what it asked for."""

    page: Any
    base: str
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    foreign_requests: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    pending: set[Any] = field(default_factory=set)

    def open(self, path: str, status: int = 200) -> Any:
        answer = self.page.goto(self.base + path, wait_until="load")
        assert answer is not None and answer.status == status, (path, answer and answer.status, self.text()[:600])
        if status >= 400:  # the browser logs the page's own status, which is the one expected here
            logged = f"error: Failed to load resource: the server responded with a status of {status} "
            self.console_errors[:] = [e for e in self.console_errors
                                      if not (e.startswith(logged) and e.endswith(f"at {answer.url}"))]
        return answer

    def started(self, request: Any) -> None:
        self.pending.add(request)

    def ended(self, request: Any) -> None:
        self.pending.discard(request)

    def settle(self) -> None:
        """Until no request of the page's is on its way, twice half a second apart (a script's fetch)."""
        quiet = 0
        while quiet < 2:
            self.page.wait_for_timeout(500)
            quiet = quiet + 1 if not self.pending else 0

    def text(self) -> str:
        return str(self.page.inner_text("body"))

    def path(self) -> str:
        return str(self.page.url).removeprefix(self.base)

    def sign_in(self, user: str, password: str = LOCAL_PASSWORD) -> None:
        self.open("/sign-in")
        self.page.get_by_label("User name").fill(user)  # the fields found by their labels, as a screen reader does
        self.page.get_by_label("Password").fill(password)
        with self.page.expect_navigation():
            self.page.get_by_role("button", name="Sign in").click()
        assert not self.path().startswith("/sign-in"), (user, self.path(), self.text()[:600])

    def check(self, name: str, *, shot: str | None = None, full_page: bool = True) -> None:
        """The page as it is: no console error so far, axe-core's serious and critical violations none;
        ``shot``: its screenshot into docs/app/<shot>.png (written when it differs)."""
        assert self.console_errors == [] and self.page_errors == [], (name, self.console_errors, self.page_errors)
        assert self.failed_requests == [] and self.foreign_requests == [], (
            name, self.failed_requests, self.foreign_requests)
        violations = axe(self.page)
        assert violations == [], f"{name} ({self.path()}): axe-core finds {violations}"
        # the page never scrolls sideways at its window's width
        width = self.page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], (name, width)
        if shot is not None:
            screenshot(self.page, shot, full_page=full_page)
        self.checked.append(name)


def axe(page: Any) -> list[str]:
    """axe-core run in ``page``: its serious and critical violations, each with the elements it names."""
    page.add_script_tag(url=page.url.split("/", 3)[0] + "//" + page.url.split("/", 3)[2] + AXE_PATH)
    found: list[dict[str, Any]] = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(' '))}))")
    return [f"{v['impact']} {v['id']} ({v['help']}): {', '.join(v['nodes'][:5])}" for v in found
            if v["impact"] in ("serious", "critical")]


def screenshot(page: Any, name: str, *, full_page: bool = True) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    target = SHOTS / f"{name}.png"
    taken = page.screenshot(full_page=full_page, animations="disabled", caret="hide")
    assert taken[:8] == b"\x89PNG\r\n\x1a\n"
    if not target.is_file() or target.read_bytes() != taken:
        target.write_bytes(taken)
        print(f"{target.relative_to(ROOT)}: written (the page as it is now: commit it with the change)")


@pytest.fixture
def window(chromium: Any, fleet: tuple[LocalServer, Fleet]) -> Iterator[Any]:
    """``window(viewport)``: a fresh browser context (no cookies) at the web app, as a :class:`Visitor`."""
    del fleet  # started first
    base = f"http://{HOST}"
    contexts: list[Any] = []

    def opened(viewport: dict[str, int] = DESKTOP) -> Visitor:
        context = chromium.new_context(viewport=viewport, device_scale_factor=1, locale="en-GB",
                                       timezone_id="UTC", reduced_motion="reduce")
        contexts.append(context)
        context.route(f"{base}{AXE_PATH}", lambda route: route.fulfill(path=str(AXE),
                                                                      content_type="text/javascript"))
        page = context.new_page()
        page.set_default_timeout(60_000)
        visitor = Visitor(page, base)
        page.on("console", lambda m: visitor.console_errors.append(
            f"{m.type}: {m.text} at {m.location.get('url')}") if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: visitor.page_errors.append(str(e)))
        page.on("requestfailed", lambda r: visitor.failed_requests.append(f"{r.url}: {r.failure}"))
        page.on("request", visitor.started)
        page.on("requestfinished", visitor.ended)
        page.on("requestfailed", visitor.ended)
        page.on("request", lambda r: visitor.foreign_requests.append(r.url) if not (
            r.url.startswith(base + "/") or r.url == base or r.url.startswith("data:")) else None)
        return visitor

    yield opened
    for context in contexts:
        context.close()


def nav_links(visitor: Visitor) -> set[str]:
    hrefs = visitor.page.eval_on_selector_all("nav a[href]", "links => links.map(a => a.getAttribute('href'))")
    return {href.split("?")[0] for href in hrefs if not href.startswith("#")}


# -- sign-in, roles, sign-out ------------------------------------------------------------------------

def test_each_role_signs_in_and_sees_only_what_it_may(window: Any) -> None:
    first = window()
    first.open("/")
    assert first.path().startswith("/sign-in"), "a page without a session leads to the sign-in page"
    first.check("sign-in", shot="sign-in")
    for user in USERS:
        visitor = window()
        visitor.sign_in(user)
        assert nav_links(visitor) == expected_nav(user), user
        role = role_of(user)
        if role in FORBIDDEN:
            answer = visitor.open(FORBIDDEN[role].format(site=user.rsplit("-", 1)[1]), status=403)
            assert answer.headers["content-type"].startswith("text/html")
            assert re.search(r"not allowed|forbidden|may not", visitor.text(), re.I), visitor.text()[:400]
            visitor.check(f"403 for {user}", shot="forbidden" if user == "operator-north" else None)
        if user.endswith("-south"):
            visitor.open(ELSEWHERE, status=404)
            visitor.check(f"404 for {user}", shot="not-found" if user == "manager-south" else None)
        else:
            visitor.open(ELSEWHERE)
        visitor.page.context.close()


def test_signing_out_ends_the_session(window: Any, fleet: tuple[LocalServer, Fleet]) -> None:
    server, _ = fleet
    visitor = window()
    visitor.sign_in("supervisor-north")
    cookies = visitor.page.context.cookies()
    (session,) = [c for c in cookies if c["name"] == "mc_session"]
    assert session["httpOnly"] and session["sameSite"] == "Lax" and session["path"] == "/"
    assert not session["secure"], "served over plain HTTP locally: Secure would lose the cookie"
    with visitor.page.expect_navigation():
        visitor.page.locator("form[action='/sign-out'] [type=submit]").click()
    assert visitor.path().startswith("/sign-in"), visitor.path()
    assert "mc_session" not in {c["name"] for c in visitor.page.context.cookies() if c["value"]}
    visitor.open("/")
    assert visitor.path().startswith("/sign-in"), "signed out: the app leads to the sign-in page"
    # the cookie the browser had, sent again: the session is gone from the table
    replay = WebClient(str(server.web_url).rstrip("/"))
    answer = replay.request("GET", "/", headers={"Cookie": f"mc_session={session['value']}"})
    assert answer.status == 303 and answer.headers["location"].startswith("/sign-in"), answer


# -- Today and Record at phone width -------------------------------------------------------------

def test_today_and_a_check_recorded_at_phone_width(window: Any) -> None:
    desktop = window()
    desktop.sign_in("supervisor-north")
    desktop.open("/?site=north")
    today = desktop.text()
    for shown in ("FL-N1", "FL-N3", "gearbox in the workshop"):  # missed since yesterday; out of service
        assert shown in today, shown
    desktop.check("today", shot="today")

    phone = window(PHONE)
    phone.sign_in("operator-north")
    phone.open("/?site=north")
    phone.check("today at 375 px", shot="today-375")
    phone.open(f"/record/{EQUIPMENT[1]}")
    assert "Forklift walk-round" in phone.text() or CHECKLIST in phone.text()
    phone.check("record at 375 px", shot="record-375")
    with phone.page.expect_navigation():  # one tap
        phone.page.get_by_role("button", name="Record Forklift walk-round done now").click()
    answer = phone.text()
    assert re.search(r"recorded", answer, re.I), answer[:600]
    phone.check("record at 375 px, recorded", shot="record-375-recorded")

    desktop.open(f"/record/{EQUIPMENT[0]}")
    desktop.check("record", shot="record")


# -- missed checks and equipment ---------------------------------------------------------------------

def test_a_missed_check_dismissed_with_a_reason(window: Any) -> None:
    visitor = window()
    visitor.sign_in("supervisor-north")
    visitor.open(f"/missed?site=north&checklist={CHECKLIST}")
    listed = visitor.text()
    assert EQUIPMENT[0] in listed and EQUIPMENT[1] in listed and SOUTH_EQUIPMENT not in listed
    visitor.check("missed", shot="missed")
    card = visitor.page.locator("li.card").filter(has=visitor.page.get_by_role("link", name=EQUIPMENT[0], exact=True))
    assert re.search(r"Outcome: missed", card.inner_text(), re.I), card.inner_text()
    card.get_by_label("Reason to dismiss it").fill("in the workshop all shift")
    with visitor.page.expect_navigation():
        card.get_by_role("button", name="Dismiss").click()
    card = visitor.page.locator("li.card").filter(has=visitor.page.get_by_role("link", name=EQUIPMENT[0], exact=True))
    shown = card.inner_text()
    assert re.search(r"dismissed", shown, re.I) and "in the workshop all shift" in shown, shown
    assert "supervisor-north" in shown, shown
    other = visitor.page.locator("li.card").filter(has=visitor.page.get_by_role("link", name=EQUIPMENT[1], exact=True))
    assert other.get_by_role("button", name="Dismiss").count() == 1, "the other miss is still open"
    visitor.check("missed, one dismissed")


def test_equipment_list_and_one_piece(window: Any) -> None:
    visitor = window()
    visitor.sign_in("manager-north")
    visitor.open("/equipment")
    assert all(e in visitor.text() for e in EQUIPMENT) and SOUTH_EQUIPMENT not in visitor.text()
    visitor.check("equipment", shot="equipment")
    visitor.open(f"/equipment/{EQUIPMENT[2]}")
    assert "gearbox in the workshop" in visitor.text()
    visitor.check("one piece of equipment", shot="equipment-one")
    visitor.open(f"/equipment/{SOUTH_EQUIPMENT}", status=404)
    visitor.check("another site's equipment: 404")


# -- checklists --------------------------------------------------------------------------------------

def test_a_checklist_created_previewed_paused_and_deleted(window: Any) -> None:
    visitor = window()
    visitor.sign_in("manager-north")
    visitor.open("/checklists")
    assert CHECKLIST in visitor.text()
    visitor.check("checklists", shot="checklists")
    visitor.open(f"/checklists/{CHECKLIST}")
    visitor.check("a checklist", shot="checklist")
    visitor.open("/checklists/new")
    visitor.check("a new checklist's form")
    page = visitor.page
    form = page.locator("#checklist-form")
    form.get_by_label(ID_LABEL).fill(NEW_CHECKLIST)
    form.get_by_label("Site", exact=True).select_option("north")
    form.get_by_label("Name", exact=True).fill("Yard gate, every morning")
    form.get_by_label("As RFC 5545 text").check()
    form.get_by_label(re.compile(r"^RFC 5545 text")).fill(DAILY_0600)
    form.get_by_label(re.compile(r"^Window")).fill("PT2H")
    # as the person types, static/preview.js fetches the preview into the page (no navigation)
    page.locator("#preview tbody tr").first.wait_for()
    visitor.settle()
    assert visitor.path() == "/checklists/new"
    live = page.locator("#preview").inner_text()
    with page.expect_navigation():  # and the button: the same preview as a whole page (no script needed)
        page.get_by_role("button", name="Preview the next windows").click()
    preview = page.locator("#preview").inner_text()
    assert preview == live, (live, preview)
    assert "Europe/Berlin" in preview, preview[:600]
    rows = page.locator("#preview tbody tr")
    assert rows.count() >= 5
    first = rows.first.inner_text()  # 06:00 in Berlin, before the spring change
    assert "06:00" in first and "+01:00" in first, first
    assert form.get_by_label(ID_LABEL).input_value() == NEW_CHECKLIST, "the form keeps what was typed"
    visitor.check("a checklist's preview", shot="checklist-preview")
    with page.expect_navigation():
        page.get_by_role("button", name="Create checklist").click()
    assert visitor.path().startswith(f"/checklists/{NEW_CHECKLIST}"), visitor.path()
    assert "Yard gate, every morning" in visitor.text() and "Active" in visitor.text()
    with page.expect_navigation():
        page.get_by_role("button", name="Pause").click()
    assert "Paused" in visitor.text(), visitor.text()[:600]
    assert page.get_by_role("button", name="Resume").count() == 1
    visitor.check("a paused checklist")
    with page.expect_navigation():
        page.get_by_role("link", name=re.compile("^Delete")).click()
    visitor.check("delete a checklist: the confirmation", shot="checklist-delete")
    with page.expect_navigation():
        page.get_by_role("button", name=f"Delete checklist {NEW_CHECKLIST}").click()
    assert NEW_CHECKLIST not in visitor.text(), visitor.text()[:600]
    visitor.open(f"/checklists/{NEW_CHECKLIST}", status=404)
    visitor.check("a deleted checklist: 404")


def test_closure_calendars(window: Any) -> None:
    visitor = window()
    visitor.sign_in("manager-north")
    visitor.open("/calendars")
    visitor.check("closure calendars", shot="calendars")


# -- the report, subscriptions and the audit trail ---------------------------------------------------

def test_the_report_subscriptions_and_an_audit_trail(window: Any) -> None:
    visitor = window()
    visitor.sign_in("manager-north")
    visitor.open("/report?site=north")
    assert CHECKLIST in visitor.text()
    visitor.check("report", shot="report")
    visitor.open("/subscriptions")
    visitor.check("subscriptions", shot="subscriptions")
    visitor.open(f"/audit?kind=checklist&id={CHECKLIST}")
    assert "manager-north" in visitor.text()
    visitor.check("audit trail", shot="audit")


# -- cleared to operate (#33) ------------------------------------------------------------------------

PRE_USE = "south-pre-use"
PRE_USE_EQUIPMENT = "FL-S2"
"""South's (so that north's pages, screenshotted by the other tests in any order, never show it)."""
PRE_USE_ITEMS = [
    {"id": "brakes", "label": "Brakes work", "kind": "pass_fail", "critical": True},
    {"id": "tyres", "label": "Tyre pressure", "kind": "number", "unit": "bar", "minimum": 6, "maximum": 8.5},
    {"id": "fluid", "label": "Hydraulic fluid", "kind": "choice", "choices": ["dry", "ok", "leaking"],
     "failing_choices": ["leaking"]},
    {"id": "notes", "label": "Anything else", "kind": "text", "required": False},
]


def test_a_failing_pre_use_check_at_phone_width_until_a_supervisor_resolves_the_defect(
        window: Any, fleet: tuple[LocalServer, Fleet]) -> None:
    """An operator records FL-S2's pre-use check at 375 px by keyboard, its brakes failing: the answer
    says it is NOT cleared to operate and names the defect; the equipment's page shows it not cleared;
    a supervisor resolves the defect with a note."""
    server, _ = fleet
    manager = "manager-south"
    _made(api(server, manager, "POST", "/equipment", {"equipment_id": PRE_USE_EQUIPMENT, "name": "Forklift S2",
                                                      "kind": "forklift", "site_id": "south"}), "register FL-S2")
    _made(api(server, manager, "POST", "/checklists", {
        "id": PRE_USE, "site_id": "south", "name": "South pre-use", "recurrence": HOURLY, "window": "PT50M",
        "grace": "PT10M", "pre_use": True, "items": PRE_USE_ITEMS, "notify": {"to": ["south-lead@example.com"]}}),
        "the pre-use checklist")
    _made(api(server, manager, "POST", f"/checklists/{PRE_USE}/equipment", {"equipment": [PRE_USE_EQUIPMENT]}),
          "assign FL-S2")

    phone = window(PHONE)
    phone.sign_in("operator-south")
    phone.open(f"/record/{PRE_USE_EQUIPMENT}")
    assert "not cleared to operate yet" in phone.text(), phone.text()[:800]
    phone.check("record a pre-use check at 375 px", shot="record-items-375")
    page = phone.page
    page.get_by_role("radio", name="Fail").focus()  # by keyboard: the radio buttons, the fields, the button
    page.keyboard.press("Space")
    page.get_by_label("Tyre pressure (bar)").focus()
    page.keyboard.type("7.2")
    page.get_by_role("radio", name="ok", exact=True).focus()
    page.keyboard.press("Space")
    assert page.get_by_role("radio", name="Fail").is_checked() and page.get_by_role("radio", name="ok").is_checked()
    with page.expect_navigation():
        page.get_by_role("button", name="Record South pre-use done now").press("Enter")
    answer = phone.text()
    found = re.search(r"Recorded\. Brakes work failed: FL-S2 is NOT cleared to operate; defect (D-[0-9a-f]{16}) "
                      r"opened, supervisors told\.", answer)
    assert found is not None, answer[:800]
    defect_id = found.group(1)
    phone.check("a failed pre-use check at 375 px", shot="record-failed-375")
    phone.open(f"/equipment/{PRE_USE_EQUIPMENT}")
    shown = phone.text()
    assert "FL-S2 is NOT cleared to operate" in shown and defect_id in shown, shown[:800]
    assert "Brakes work (critical): fail, expected pass" in shown
    assert page.get_by_role("button", name=f"Resolve {defect_id}").count() == 0, "an operator may not resolve"
    phone.check("equipment not cleared at 375 px")

    supervisor = window()
    supervisor.sign_in("supervisor-south")
    supervisor.open(f"/equipment/{PRE_USE_EQUIPMENT}")
    supervisor.check("a defect to resolve", shot="equipment-defect")
    supervisor.page.get_by_label("What was done (kept with the defect)").fill("brake line replaced, tested")
    with supervisor.page.expect_navigation():
        supervisor.page.get_by_role("button", name=f"Resolve {defect_id}").click()
    resolved = supervisor.text()
    assert "by supervisor-south" in resolved and "brake line replaced, tested" in resolved, resolved[:800]
    assert "FL-S2 is NOT cleared to operate" not in resolved  # no defect open: its pre-use check is what is left
    supervisor.check("a defect resolved")
