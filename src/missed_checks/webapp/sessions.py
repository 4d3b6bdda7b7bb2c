"""Who is signed in to the web app, and the forms they send.

* Sign-in (:func:`sign_in`): the person's user name and password go to the stack's user pool
  (InitiateAuth ``USER_PASSWORD_AUTH`` with the pool's app client, ``USER_POOL_CLIENT_ID``); on
  success a new session is written to the table (:mod:`.session`: the SHA-256 of a random id as its
  key, the person's principal, groups and name, a CSRF token; no token of the pool is kept) and the
  browser gets the id in the cookie :data:`COOKIE` (``HttpOnly; SameSite=Lax; Path=/``, ``Secure``
  when the page was asked for over HTTPS). A wrong user name and a wrong password get one answer,
  next to the password field. The sign-in form carries a token of its own, also set as the cookie
  :data:`SIGN_IN_COOKIE` (a page elsewhere cannot sign a browser in as someone else).
* Every other page (:func:`signed_in`): the cookie's session, if not over (30 minutes idle, 12 hours
  after sign-in), its last-seen instant refreshed; the person's :class:`~missed_checks.permissions.caller.Caller`
  is :func:`~missed_checks.permissions.grant.person_caller` of the session's groups and the grant
  record read now (the API's rule: a grant changed by an admin counts at the next page). Without a
  session: :class:`SignInRequired`, which the app answers with a redirect to ``/sign-in?next=...``.
* Forms (:func:`form`): a urlencoded body whose ``csrf`` field is the session's token (else
  :class:`FormRefused`, a 403 page) and whose other fields are the form's own (else InvalidInput).
* Sign-out (:func:`sign_out`): the session item deleted, the cookie expired.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.shared.cookies import Cookie, SameSite

from missed_checks.errors import Forbidden, InvalidInput
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.grant import person_caller, roles_from_groups
from missed_checks.permissions.role import SITE_ROLES
from missed_checks.sites.saving import list_sites
from missed_checks.sites.site import Site
from missed_checks.webapp import context
from missed_checks.webapp.session import ABSOLUTE, Session, hash_of, new_secret

__all__ = ["COOKIE", "CSRF_FIELD", "SIGN_IN_COOKIE", "FormRefused", "Person", "SignInRequired", "form",
           "is_secure", "redirect", "safe_next", "sign_in", "sign_in_form", "sign_in_token", "sign_out",
           "signed_in", "wall_clock"]

COOKIE = "mc_session"
SIGN_IN_COOKIE = "mc_signin"
CSRF_FIELD = "csrf"
MAX_FORM_BYTES = 64 * 1024
MAX_FIELD_CHARS = 256
_SECRET = re.compile(r"[A-Za-z0-9_-]{43}")
"""What :func:`~missed_checks.webapp.session.new_secret` makes: anything else in a cookie is not ours."""
_PRINCIPAL_CLAIMS = ("cognito:username", "username", "sub")

wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC)  # noqa: E731 - tests point it elsewhere
"""Sessions run on the wall clock (never the product's clock, which the local runtime may leap ahead)."""


class SignInRequired(Exception):
    """No session (none, over or unknown): the app redirects to the sign-in page, then back to ``next``."""

    def __init__(self, next_path: str) -> None:
        super().__init__(next_path)
        self.next_path = next_path


class FormRefused(Exception):
    """A form without the session's CSRF token (another site's page, or an old page): a 403 page."""


@dataclass(frozen=True)
class Person:
    """Who is signed in: their :class:`Caller` (roles by site, merged with the grant record), the name
    to show, the CSRF token every form of theirs carries, the sites they may choose (their own;
    every site for an admin) and their session's key."""

    caller: Caller
    name: str
    csrf: str
    sites: tuple[Site, ...]
    session_key: str

    @property
    def roles_in_words(self) -> str:
        """``admin``, or each role and its site: ``site manager at north, auditor at south``."""
        if self.caller.admin:
            return "admin at every site"
        if not self.caller.roles:
            return "no role at any site"
        return ", ".join(f"{role.value.replace('_', ' ')} at {site}"
                         for site, role in sorted(self.caller.roles.items(), key=lambda sr: (SITE_ROLES.index(sr[1]),
                                                                                               sr[0])))


def _event(router: Router) -> Mapping[str, Any]:
    return router.current_event.raw_event


def cookies_of(event: Mapping[str, Any]) -> dict[str, str]:
    """The request's cookies (payload 2.0's ``cookies``, else the ``Cookie`` header); the first of a name wins."""
    pairs: list[str] = list(event.get("cookies") or [])
    if not pairs:
        headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
        pairs = [part for part in str(headers.get("cookie", "")).split(";")]
    found: dict[str, str] = {}
    for pair in pairs:
        name, _, value = pair.strip().partition("=")
        if name and name not in found:
            found[name] = value
    return found


def is_secure(event: Mapping[str, Any]) -> bool:
    """Whether the browser asked over HTTPS (API Gateway's ``X-Forwarded-Proto``; a local HTTP server's
    request says ``http``)."""
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    return str(headers.get("x-forwarded-proto", "")).split(",")[0].strip().lower() == "https"


def _cookie(event: Mapping[str, Any], name: str, value: str, max_age: int | None,
            same_site: SameSite = SameSite.LAX_MODE) -> Cookie:
    return Cookie(name=name, value=value, path="/", secure=is_secure(event), http_only=True, max_age=max_age,
                  same_site=same_site)


def safe_next(value: str | None) -> str:
    """A path of this app to go to after sign-in: ``/`` unless ``value`` is a local path (never another host)."""
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return "/"
    parts = urlsplit(value)
    if parts.scheme or parts.netloc or any(ord(c) < 32 for c in value):
        return "/"
    return value


def _next_of(event: Mapping[str, Any]) -> str:
    http = (event.get("requestContext") or {}).get("http") or {}
    path = str(event.get("rawPath") or http.get("path") or "/")
    query = str(event.get("rawQueryString") or "")
    if str(http.get("method", "GET")).upper() == "GET" and query:
        return f"{path}?{query}"
    return path


def redirect(path: str, cookies: Iterable[Cookie] = ()) -> Response[str]:
    """303 See Other to ``path`` of this app (a form's answer: the browser GETs it)."""
    return Response(status_code=303, headers={"Location": path, "Cache-Control": "no-store"}, body="",
                    content_type="text/plain; charset=utf-8", cookies=list(cookies))


def sign_in_redirect(event: Mapping[str, Any]) -> Response[str]:
    """Off to the sign-in page, to come back here afterwards; a session cookie the request held is expired."""
    held = COOKIE in cookies_of(event)
    return redirect(f"/sign-in?next={quote(safe_next(_next_of(event)), safe='/')}",
                    [_cookie(event, COOKIE, "", 0)] if held else [])


def signed_in(router: Router) -> Person:
    """The person whose session the request's cookie names (read once per request); :class:`SignInRequired`
    when there is none or it is over (an over session's item is deleted)."""
    app = context.resolver(router)
    known = app.context.get("person")
    if isinstance(known, Person):
        return known
    event = _event(router)
    session_id = cookies_of(event).get(COOKIE, "")
    store = context.table()
    session = store.session_named(hash_of(session_id)) if _SECRET.fullmatch(session_id) else None
    now = wall_clock()
    if session is None or session.over(now):
        if session is not None:
            store.end_session(session.key)
        raise SignInRequired(_next_of(event))
    if session.needs_touch(now):
        session = session.seen(now)
        store.save_session(session)
    groups = roles_from_groups(list(session.groups))
    caller = person_caller(session.principal, groups, store.get_grant(session.principal))
    person = Person(caller=caller, name=session.name, csrf=session.csrf,
                    sites=tuple(list_sites(store, caller).items), session_key=session.key)
    app.context["person"] = person  # cleared by the resolver after each request
    return person


def _fields(router: Router) -> dict[str, list[str]]:
    event = router.current_event
    kind = str(event.headers.get("content-type") or event.headers.get("Content-Type") or "")
    if kind.split(";")[0].strip().lower() != "application/x-www-form-urlencoded":
        raise InvalidInput("Content-Type", "a form is sent as application/x-www-form-urlencoded")
    body = event.decoded_body or ""
    if len(body.encode()) > MAX_FORM_BYTES:
        raise InvalidInput("body", f"a form holds at most {MAX_FORM_BYTES // 1024} KB")
    try:
        return parse_qs(body, keep_blank_values=True, max_num_fields=200)
    except ValueError as error:
        raise InvalidInput("body", "holds too many fields for a form of this app") from error


def _checked(values: dict[str, list[str]], token: str, fields: tuple[str, ...]) -> dict[str, str]:
    sent = values.pop(CSRF_FIELD, [])
    if len(sent) != 1 or not token or not hmac.compare_digest(sent[0].encode(), token.encode()):
        raise FormRefused("This form did not come from your current session of this app (it may be from "
                          "another site, or from before you signed in again): open the page again and resend it.")
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise InvalidInput(unknown[0], "is not a field of this form")
    for name, given in values.items():
        if len(given) > 1:
            raise InvalidInput(name, "was sent more than once")
    return {name: values.get(name, [""])[0] for name in fields}


def form(router: Router, fields: tuple[str, ...]) -> dict[str, str]:
    """The signed-in person's form: each of ``fields`` (``""`` when not sent). Its ``csrf`` field is
    checked first (:class:`FormRefused` otherwise); a field the form does not have, or one sent twice,
    is InvalidInput naming it."""
    person = signed_in(router)
    return _checked(_fields(router), person.csrf, fields)


def form_with(router: Router, fields: tuple[str, ...], prefix: str) -> tuple[dict[str, str], dict[str, str]]:
    """A form with fixed ``fields`` and any number named ``<prefix><name>`` (the answers to a
    checklist's items, #33): the fixed ones as :func:`form` reads them, and the others by ``<name>``,
    those sent empty left out. Checked as :func:`form` checks (CSRF first, a field twice refused)."""
    person = signed_in(router)
    values = _fields(router)
    named = tuple(sorted(name for name in values if name.startswith(prefix) and len(name) > len(prefix)))
    checked = _checked(values, person.csrf, (*fields, *named))
    return ({name: checked[name] for name in fields},
            {name[len(prefix):]: checked[name] for name in named if checked[name].strip()})


def sign_in_token(router: Router) -> tuple[str, Cookie]:
    """A new sign-in form's token and the cookie carrying it (checked by :func:`sign_in_form`)."""
    token = new_secret()
    return token, _cookie(_event(router), SIGN_IN_COOKIE, token, int(ABSOLUTE.total_seconds()), SameSite.STRICT_MODE)


def sign_in_form(router: Router, fields: tuple[str, ...]) -> dict[str, str]:
    """The sign-in form's fields, its token checked against :data:`SIGN_IN_COOKIE` first."""
    return _checked(_fields(router), cookies_of(_event(router)).get(SIGN_IN_COOKIE, ""), fields)


def sign_in(router: Router, user: str, password: str) -> Cookie:
    """Sign ``user`` in with ``password`` at the user pool; the new session's cookie. InvalidInput naming
    ``user`` or ``password`` when one is empty, and naming ``password`` when the pool refuses them (the
    same words whichever was wrong). A session the browser held before is ended (a new id every sign-in)."""
    if not user.strip():
        raise InvalidInput("user", "give your user name")
    if not password:
        raise InvalidInput("password", "give your password")
    if len(user) > MAX_FIELD_CHARS or len(password) > MAX_FIELD_CHARS:
        raise InvalidInput("user" if len(user) > MAX_FIELD_CHARS else "password",
                           f"is longer than {MAX_FIELD_CHARS} characters")
    try:
        claims = context.user_pool().signed_in_claims(user.strip(), password)
    except Forbidden as refused:
        raise InvalidInput("password", str(refused)) from refused
    principal = next((str(claims[name]) for name in _PRINCIPAL_CLAIMS
                      if isinstance(claims.get(name), str) and str(claims[name]).strip()), None)
    if principal is None:
        raise InvalidInput("user", "the user pool names no user for these credentials")
    raw_groups = claims.get("cognito:groups") or []
    groups = tuple(str(g) for g in raw_groups) if isinstance(raw_groups, list) else ()
    name = next((str(claims[n]) for n in ("name", "email") if isinstance(claims.get(n), str) and claims[n]), principal)
    store = context.table()
    event = _event(router)
    earlier = cookies_of(event).get(COOKIE, "")
    if _SECRET.fullmatch(earlier):
        store.end_session(hash_of(earlier))
    session_id, now = new_secret(), wall_clock()
    store.save_session(Session(key=hash_of(session_id), principal=principal, name=name, groups=groups,
                               csrf=new_secret(), created_at=now, last_seen=now))
    return _cookie(event, COOKIE, session_id, int(ABSOLUTE.total_seconds()))


def sign_out(router: Router) -> Response[str]:
    """End the session (its item deleted, the cookie expired) and go to the sign-in page. The form's
    CSRF token is checked first (another site cannot sign a person out)."""
    person = signed_in(router)
    _checked(_fields(router), person.csrf, ())
    context.table().end_session(person.session_key)
    return redirect("/sign-in?signed_out=1", [_cookie(_event(router), COOKIE, "", 0)])
