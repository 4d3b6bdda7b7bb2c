"""Signing in to the web app (#32) through its handler on moto with a user pool: the session cookie's
flags, the session kept server-side (the hash of its id, no token of the pool), CSRF refused on every
form (sign-in's too), idle and absolute expiry, sign-out deleting the session, and a wrong password
said next to the password field without saying which of user name and password was wrong."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from html import unescape

import pytest

from missed_checks.aws.user_pool import WRONG_PASSWORD
from missed_checks.webapp import sessions
from tests.unit import two_sites
from tests.unit.webapp import browser as browsers
from tests.unit.webapp.browser import NOW, PASSWORD, Browser, Web

dynamodb, web = two_sites.dynamodb, browsers.web  # the fixtures (moto; the stack and its people)


def session_cookie(browser: Browser) -> str:
    value = browser.cookies.get(sessions.COOKIE)
    assert value, browser.cookies
    return value


@pytest.mark.parametrize("https", [False, True])
def test_the_session_cookie_is_http_only_same_site_lax_and_secure_over_https(web: Web, https: bool) -> None:
    browser = Browser(https=https)
    signed_in = browser.sign_in("manager-north", next_path="/record/FL-1")
    assert (signed_in.status, signed_in.location) == (303, "/record/FL-1")
    cookie = next(c for c in signed_in.cookies if c.startswith(f"{sessions.COOKIE}="))
    flags = {part.strip() for part in cookie.split(";")[1:]}
    assert {"HttpOnly", "SameSite=Lax", "Path=/"} <= flags
    assert ("Secure" in flags) is https
    assert browser.get("/").status == 200


def test_the_session_is_held_server_side_by_the_hash_of_its_id_without_the_pools_tokens(web: Web) -> None:
    browser = web.browser("supervisor-north")
    session_id = session_cookie(browser)
    item = web.table._get({"pk": f"SESSION#{hashlib.sha256(session_id.encode()).hexdigest()}", "sk": "SESSION"})
    assert item is not None and item["principal"] == "supervisor-north"
    assert item["groups"] == ["supervisor@north"]
    assert item["expires_at"] == int((NOW + timedelta(minutes=30)).timestamp())
    assert session_id not in str(item) and not any("token" in name.lower() for name in item)
    assert web.table._get({"pk": f"SESSION#{session_id}", "sk": "SESSION"}) is None


def test_no_session_goes_to_the_sign_in_page_and_back(web: Web) -> None:
    browser = Browser()
    answer = browser.get("/record/FL-1")
    assert (answer.status, answer.location) == (303, "/sign-in?next=/record/FL-1")
    browser.cookies[sessions.COOKIE] = "x" * 43  # a well-formed id of no session
    assert browser.get("/").location == "/sign-in?next=/"


def test_a_wrong_password_and_an_unknown_user_get_the_same_words_next_to_the_password(web: Web) -> None:
    answers = [Browser().sign_in("manager-north", password="Wrong-passw0rd!"), Browser().sign_in("nobody-here")]
    for answer in answers:
        assert answer.status == 400 and sessions.COOKIE not in {c.split("=")[0] for c in answer.cookies}
        text = unescape(answer.text)
        assert f'id="password-error"><strong>Error:</strong> {WRONG_PASSWORD}' in text
        assert 'aria-describedby="password-error"' in text and 'id="user-error"' not in text
    assert answers[0].text.replace(answers[0].field("csrf"), "") == answers[1].text.replace(
        answers[1].field("csrf"), "").replace('value="nobody-here"', 'value="manager-north"')
    empty = Browser().sign_in("", password="")
    assert empty.status == 400 and "give your user name" in empty.text


def test_the_sign_in_form_needs_its_own_token(web: Web) -> None:
    browser = Browser()
    browser.get("/sign-in")
    del browser.cookies[sessions.SIGN_IN_COOKIE]  # a page of another site posting the form
    refused = browser.submit("/sign-in", {"user": "manager-north", "password": PASSWORD, "next": "/"})
    assert refused.status == 403 and sessions.COOKIE not in browser.cookies


def test_a_form_without_the_sessions_csrf_token_is_refused_and_does_nothing(web: Web) -> None:
    browser = web.browser("manager-north")
    browser.get("/record/FL-1")
    for token in ("", "not-the-token"):
        refused = browser.submit("/record/FL-1", {"checklist_id": "daily"}, csrf=token)
        assert refused.status == 403 and "did not come from your current session" in unescape(refused.text)
        assert browser.post("/sign-out", {}).status == 403
    assert web.table.performed_checks_of_equipment("FL-1", "2026-03-01T00:00:00Z", "2026-03-03T00:00:00Z") == []
    assert browser.get("/").status == 200  # still signed in


def test_an_unknown_field_is_refused_by_name(web: Web) -> None:
    browser = web.browser("manager-north")
    browser.get("/record/FL-1")
    refused = browser.submit("/record/FL-1", {"checklist_id": "daily", "performed_at": "2026-03-01T00:00:00Z"})
    assert refused.status == 400 and "performed_at: is not a field of this form" in refused.text


def test_a_session_ends_after_30_idle_minutes_and_its_item_is_deleted(web: Web,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    browser = web.browser("auditor-north")
    key = hashlib.sha256(session_cookie(browser).encode()).hexdigest()
    monkeypatch.setattr(sessions, "wall_clock", lambda: NOW + timedelta(minutes=29))
    assert browser.get("/").status == 200  # seen: idle again from here
    monkeypatch.setattr(sessions, "wall_clock", lambda: NOW + timedelta(minutes=58))
    assert browser.get("/").status == 200
    monkeypatch.setattr(sessions, "wall_clock", lambda: NOW + timedelta(minutes=88, seconds=1))
    answer = browser.get("/")
    assert answer.status == 303 and answer.location == "/sign-in?next=/"
    assert sessions.COOKIE not in browser.cookies  # expired by the answer
    assert web.table.session_named(key) is None


def test_a_session_ends_12_hours_after_sign_in_however_busy(web: Web, monkeypatch: pytest.MonkeyPatch) -> None:
    browser = web.browser("operator-north")
    for minutes in range(20, 12 * 60, 20):
        monkeypatch.setattr(sessions, "wall_clock", lambda m=minutes: NOW + timedelta(minutes=m))
        assert browser.get("/").status == 200, minutes
    monkeypatch.setattr(sessions, "wall_clock", lambda: NOW + timedelta(hours=12))
    assert browser.get("/").status == 303


def test_sign_out_deletes_the_session_and_expires_the_cookie(web: Web) -> None:
    browser = web.browser("manager-south")
    session_id = session_cookie(browser)
    page = browser.get("/")
    answer = browser.submit("/sign-out", {}, csrf=page.field("csrf"))
    assert (answer.status, answer.location) == (303, "/sign-in?signed_out=1")
    assert any(c.startswith(f"{sessions.COOKIE}=;") and "Max-Age=0" in c for c in answer.cookies)
    assert web.table.session_named(hashlib.sha256(session_id.encode()).hexdigest()) is None
    replayed = Browser(cookies={sessions.COOKIE: session_id})  # the old cookie, kept by someone
    assert replayed.get("/").status == 303
    assert "You are signed out" in browser.get("/sign-in?signed_out=1").text


def test_a_page_is_sent_with_the_security_headers(web: Web) -> None:
    answer = web.browser("manager-north").get("/")
    assert answer.headers["Content-Security-Policy"].startswith("default-src 'self'; script-src 'self'")
    assert "frame-ancestors 'none'" in answer.headers["Content-Security-Policy"]
    assert answer.headers["X-Content-Type-Options"] == "nosniff" and answer.headers["Cache-Control"] == "no-store"
    assert "style=" not in answer.text and "<script>" not in answer.text
