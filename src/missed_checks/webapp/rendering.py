"""Pages as HTML: the Jinja environment (templates in ``webapp/templates/*.html.j2``, autoescaped), the
``local_time`` filter, the security headers every answer carries, and the app's error pages.

A page handler returns :func:`page`; the base template shows the signed-in person's name and roles,
the pages their roles allow at any of their sites (:data:`NAV`), a site selector and the sign-out form.
:func:`install_errors` answers the domain's refusals as pages: NotFound 404, Forbidden 403, a form
without its CSRF token 403, no session a redirect to the sign-in page; an InvalidInput a page did not
show next to its field 400, a PreconditionFailed 412.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from missed_checks.errors import Conflict, Forbidden, InvalidInput, NotFound, PreconditionFailed
from missed_checks.permissions.role import ALLOWED, Action
from missed_checks.timefmt import parse_instant
from missed_checks.webapp import sessions
from missed_checks.webapp.context import resolver
from missed_checks.webapp.sessions import FormRefused, Person, SignInRequired

__all__ = ["CONTENT_SECURITY_POLICY", "HTML", "NAV", "SECURITY_HEADERS", "NavItem", "environment", "error_page",
           "errors_of", "install_errors", "local_time", "nav_for", "page", "render"]

HTML = "text/html; charset=utf-8"
CONTENT_SECURITY_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                           "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
SECURITY_HEADERS: Mapping[str, str] = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
"""On every page (static files get their own ``Cache-Control``)."""


@dataclass(frozen=True)
class NavItem:
    path: str
    label: str
    action: Action


NAV: tuple[NavItem, ...] = (
    NavItem("/", "Today", Action.read),
    NavItem("/missed", "Missed checks", Action.read_records),
    NavItem("/equipment", "Equipment", Action.read),
    NavItem("/checklists", "Checklists", Action.read),
    NavItem("/calendars", "Closure calendars", Action.read),
    NavItem("/report", "Report", Action.read_records),
    NavItem("/subscriptions", "Digests", Action.read_management),
)
"""The pages of the navigation, each shown to a person whose roles allow its action at any site."""


def nav_for(person: Person | None) -> list[NavItem]:
    if person is None:
        return []
    caller = person.caller
    if caller.everywhere:
        return list(NAV)
    actions = {action for role in caller.roles.values() for action in ALLOWED[role]}
    return [item for item in NAV if item.action in actions]


def _zone(zone: object) -> ZoneInfo:
    if isinstance(zone, ZoneInfo):
        return zone
    if not zone:
        return ZoneInfo("UTC")
    try:
        return ZoneInfo(str(zone))
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


_STYLES = {"datetime": "%a %-d %b %Y, %H:%M %Z", "date": "%a %-d %b %Y", "time": "%H:%M %Z",
           "short": "%a %-d %b, %H:%M"}


def local_time(instant: datetime | str | None, zone: object = None, style: str = "datetime") -> str:
    """``instant`` (aware, or an ISO string) in ``zone`` (a site's or checklist's IANA name; UTC when
    none), as ``Mon 2 Mar 2026, 07:00 CET`` (``style``: ``datetime``, ``date``, ``time``, ``short``);
    ``""`` for None."""
    if instant is None or instant == "":
        return ""
    when = parse_instant(instant, "instant") if isinstance(instant, str) else instant
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(_zone(zone)).strftime(_STYLES.get(style, _STYLES["datetime"]))


def _environment() -> Environment:
    env = Environment(loader=PackageLoader("missed_checks.webapp", "templates"),
                      autoescape=select_autoescape(enabled_extensions=("html", "j2"), default=True),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["local_time"] = local_time
    return env


environment = _environment()


def render(template: str, **context: Any) -> str:
    """``template`` rendered with ``context`` (no request: for tests and fragments)."""
    return environment.get_or_select_template(template).render(**context)


def _html(status: int, body: str) -> Response[str]:
    return Response(status_code=status, content_type=HTML, body=body, headers=dict(SECURITY_HEADERS))


def _page(app: APIGatewayHttpResolver, template: str, title: str, status: int,
          context: dict[str, Any]) -> Response[str]:
    known = app.context.get("person")
    person = known if isinstance(known, Person) else None
    event = app.current_event
    query = event.query_string_parameters or {}
    base: dict[str, Any] = {"title": title, "person": person, "nav": nav_for(person), "path": event.path,
            "site_param": query.get("site", ""), "errors": {}}
    return _html(status, render(template, **{**base, **context}))


def page(router: Router, template: str, *, title: str, status: int = 200, **context: Any) -> Response[str]:
    """``template`` as an HTML page with the security headers; ``title`` names it (``<title>``, ``<h1>``).
    Every template gets ``person`` (None before sign-in), ``nav``, ``path``, ``site_param`` (the query's
    ``site``) and ``errors`` (field -> message, ``{}`` unless given)."""
    return _page(resolver(router), template, title, status, context)


_TITLES = {400: "That request cannot be used", 403: "Not allowed", 404: "Not found",
           409: "Not done", 412: "Changed since you opened it"}


def _error(app: APIGatewayHttpResolver, status: int, message: str, title: str | None = None) -> Response[str]:
    return _page(app, "error.html.j2", title or _TITLES.get(status, "Something went wrong"), status,
                 {"message": message})


def error_page(router: Router, status: int, message: str, *, title: str | None = None) -> Response[str]:
    """The error page: ``status`` and ``message`` in words."""
    return _error(resolver(router), status, message, title)


def errors_of(error: InvalidInput, fields: tuple[str, ...]) -> dict[str, str]:
    """A use case's InvalidInput as a form's errors: next to its field when the form has it, else at
    the top of the form (``_form``) with the field named."""
    if error.field in fields:
        return {error.field: error.message}
    return {"_form": f"{error.field}: {error.message}"}


def install_errors(app: APIGatewayHttpResolver) -> None:
    """Answer the domain's refusals with pages (and no session with a redirect to the sign-in page)."""

    def sign_in(_: SignInRequired) -> Response[str]:
        return sessions.sign_in_redirect(app.current_event.raw_event)

    def refused(error: FormRefused) -> Response[str]:
        return _error(app, 403, str(error), "Form refused")

    def forbidden(error: Forbidden) -> Response[str]:
        return _error(app, 403, str(error))

    def not_found(error: NotFound) -> Response[str]:
        return _error(app, 404, str(error))

    def invalid(error: InvalidInput) -> Response[str]:
        return _error(app, 400, str(error))

    def conflict(error: Conflict) -> Response[str]:
        return _error(app, 409, str(error))

    def changed(error: PreconditionFailed) -> Response[str]:
        return _error(app, 412, f"{error} Open the page again to see it as it is now.")

    def no_page(_: Exception) -> Response[str]:
        return _error(app, 404, f"This app has no page {app.current_event.path}.")

    app.exception_handler(SignInRequired)(sign_in)
    app.exception_handler(FormRefused)(refused)
    app.exception_handler(Forbidden)(forbidden)
    app.exception_handler(NotFound)(not_found)
    app.exception_handler(InvalidInput)(invalid)
    app.exception_handler(Conflict)(conflict)
    app.exception_handler(PreconditionFailed)(changed)
    app.not_found(no_page)
