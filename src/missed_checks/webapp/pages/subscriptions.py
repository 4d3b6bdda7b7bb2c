"""The Digests page (#32): ``GET /subscriptions?site=&cursor=`` lists the digest subscriptions of the
person's sites (one site, when chosen; a page at a time) and, where they may ``manage``, offers a form
to subscribe; ``POST /subscriptions`` subscribes (or replaces a subscription of the same id at the same
site) and ``POST /subscriptions/{id}/delete`` ends one.

Thin, as ``GET/POST /subscriptions`` and ``DELETE /subscriptions/{id}`` of the API: the use cases are
:mod:`missed_checks.notifications.subscribing`'s scoped ones (``subscriptions_page``: ``read_management``;
``subscribe_at_site`` and ``end_subscription``: ``manage`` at the subscription's site, another site's
a 404 page), the item then its EventBridge Scheduler schedule pointed at the digest function
(:func:`missed_checks.api.routes.subscriptions.schedules` and ``digest_target``). A subscription that
cannot be made comes back as the form with the message next to its field, what was typed kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import quote, unquote, urlencode

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks import clock
from missed_checks.api.routes import subscriptions  # the API's schedule group and digest target
from missed_checks.errors import InvalidInput, NotFound, shorten
from missed_checks.notifications import subscribing
from missed_checks.notifications.digest import Subscription
from missed_checks.permissions.role import Action
from missed_checks.sites.site import validate_site_id
from missed_checks.webapp.context import resolver, table
from missed_checks.webapp.rendering import errors_of, page
from missed_checks.webapp.sessions import Person, form, redirect, signed_in

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated

PAGE_SIZE = 25
QUERY = ("site", "cursor")
FIELDS = ("site_id", "id", "to", "period", "day", "time", "timezone", "checklists")
DAYS = (("MO", "Monday"), ("TU", "Tuesday"), ("WE", "Wednesday"), ("TH", "Thursday"), ("FR", "Friday"),
        ("SA", "Saturday"), ("SU", "Sunday"))
_LIST = re.compile(r"[\s,;]+")


def _items(text: str) -> list[str]:
    """Addresses or checklist ids as typed: separated by commas, semicolons, spaces or lines."""
    return [part for part in _LIST.split(text.strip()) if part]


def subscription_href(subscription_id: str) -> str:
    return f"/subscriptions/{quote(subscription_id, safe='')}/delete"


def _site_of(given: Mapping[str, str], errors: dict[str, str]) -> str | None:
    text = (given.get("site") or "").strip()
    if not text:
        return None
    try:
        return validate_site_id(text, "site")
    except InvalidInput as error:
        errors["site"] = error.message
        return None


def subscriptions_page(person: Person, given: Mapping[str, str], *, status: int = 200,
                       errors: dict[str, str] | None = None, typed: Mapping[str, str] | None = None) -> Response[str]:
    """The list (and the form, where the person may manage), ``typed`` shown back in the form."""
    errors = dict(errors or {})
    unknown = sorted(set(given) - set(QUERY))
    if unknown:
        errors["_form"] = f"{shorten(unknown[0])} is not a parameter of this page: use the form's fields"
    site = _site_of(given, errors)
    listed: list[Subscription] = []
    next_cursor = None
    if "site" not in errors:
        try:
            found = subscribing.subscriptions_page(table(), person.caller, site, given.get("cursor") or None,
                                                   PAGE_SIZE)
            listed, next_cursor = list(found.items), found.next_position
        except InvalidInput as error:
            errors.update(errors_of(error, ("cursor",)))
    caller = person.caller
    manageable = [s for s in person.sites if caller.may(Action.manage, s.site_id)]
    zones = {s.site_id: s.timezone for s in person.sites}
    chosen_site = (typed or {}).get("site_id") or site or (manageable[0].site_id if manageable else "")
    values = {"site_id": chosen_site, "id": "", "to": "", "period": "daily", "day": "MO", "time": "07:00",
              "timezone": zones.get(chosen_site, "UTC"), "checklists": "", **(typed or {})}
    return page(router, "subscriptions.html.j2", title="Digest subscriptions",
                status=400 if errors and status == 200 else status, errors=errors, subscriptions=listed,
                may_manage={s.subscription_id: caller.may(Action.manage, s.site_id) for s in listed},
                manageable=manageable, values=values, days=DAYS, site=site or "", csrf=person.csrf,
                delete_href=subscription_href, next_cursor=next_cursor, query={"site": site or ""})


def _query() -> dict[str, str]:
    return dict(resolver(router).current_event.query_string_parameters or {})


@router.get("/subscriptions")
def show_subscriptions() -> Response[str]:
    return subscriptions_page(signed_in(router), _query())


@router.post("/subscriptions")
def subscribe() -> Response[str]:
    """Subscribe (or replace the subscription of that id), then back to the list of its site."""
    person = signed_in(router)
    typed = form(router, FIELDS)
    site_id = typed["site_id"].strip()
    try:
        if not site_id:
            raise InvalidInput("site_id", "choose the site whose checklists the digest covers")
        now = clock.now()
        subscription = Subscription.create(
            typed["id"].strip(), address=_items(typed["to"]), period=typed["period"], at=typed["time"].strip(),
            timezone=typed["timezone"].strip(), day=typed["day"] if typed["period"] == "weekly" else None,
            checklists=_items(typed["checklists"]), now=now, site_id=site_id)
        subscribing.subscribe_at_site(table(), subscriptions.schedules(), subscriptions.digest_target(),
                                      person.caller, subscription, now)
    except InvalidInput as error:
        field = error.field.split("[", 1)[0]  # to[1], checklists[0]: next to the field they were typed in
        return subscriptions_page(person, {"site": site_id} if site_id else {}, status=400,
                                  errors=errors_of(InvalidInput(field, error.message), FIELDS), typed=typed)
    return redirect(f"/subscriptions?{urlencode({'site': site_id})}#subscription-{quote(subscription.subscription_id)}")


@router.post("/subscriptions/<subscription_id>/delete")
def unsubscribe(subscription_id: str) -> Response[str]:
    """End the subscription (its item, then its schedule), then back to the list of its site."""
    person = signed_in(router)
    back = form(router, ("site",))
    subscription_id = unquote(subscription_id)
    if subscribing.end_subscription(table(), subscriptions.schedules(), person.caller, subscription_id) is None:
        raise NotFound(f"{subscribing.what(subscription_id)} does not exist")
    site = back["site"].strip()
    return redirect("/subscriptions" + (f"?{urlencode({'site': site})}" if site else ""))
