"""The checklists pages (#32): the list (the person's sites'), one checklist (its rule, its next
windows, its equipment), the form that creates or edits one with the recurrence as RFC 5545 text or
a few fields (:class:`~missed_checks.checklists.simple_rule.SimpleRule`), the preview of a rule's next
windows (``POST /checklists/preview``: the same form, shown again with the preview; ``preview.js``
refreshes it as the person types), pause, resume, delete (after a confirmation page), and assigning
and unassigning equipment.

Thin, as :mod:`missed_checks.api.routes.checklists`: the rules are the same use cases
(:mod:`~missed_checks.checklists.managing`, :mod:`~missed_checks.checklists.previewing`,
:mod:`~missed_checks.equipment.assigning`) called with the signed-in person's Caller. The revision a
form was opened at travels in its hidden ``revision`` field as the API's ``If-Match``: an edit of a
checklist that moved on since is refused by the conditional write and the form comes back with the
current values and "changed since you opened it". A refused input comes back as the form with the
message next to its field (the problem's ``field``).

What a check finds (#33): the form's "Items" fieldset has a row per item and a few empty ones (its
"Add more item rows" button shows the form again, as typed, with more), each row's controls named
``items[<row>].<field>``; the rows not left empty nor marked "remove" are the spec's ``items`` (the
API's documents), and a refused item's ``items[2].minimum`` is said next to the control of the row
it came from. The form's ``pre_use`` and ``clear_on_pass`` checkboxes are the checklist's flags.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import quote, unquote
from zoneinfo import ZoneInfo

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks import clock
from missed_checks.checklists import managing, previewing
from missed_checks.checklists.check_item import MAX_ITEMS, CheckItem, ItemsRefused, to_decimal
from missed_checks.checklists.checklist import Checklist, validate_checklist_id
from missed_checks.checklists.closure_calendar import validate_closed_on
from missed_checks.checklists.recurrence import Recurrence
from missed_checks.checklists.simple_rule import WEEKDAYS, SimpleRule
from missed_checks.equipment import assigning
from missed_checks.equipment.assignments import Assignment
from missed_checks.errors import Conflict, InvalidInput, PreconditionFailed, shorten
from missed_checks.permissions.authorizing import authorize, authorize_listing
from missed_checks.permissions.role import Action
from missed_checks.sites.site import Site, validate_site_id
from missed_checks.webapp.context import table
from missed_checks.webapp.rendering import page
from missed_checks.webapp.sessions import Person, form, form_with, redirect, signed_in

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated

PAGE_SIZE = 50
PREVIEW_WINDOWS = 10
DAY_FIELDS = tuple(f"day_{day}" for day in WEEKDAYS)
RULE_FIELDS = ("rule_as", "recurrence", "frequency", "time", "starting", "month_day", *DAY_FIELDS,
               "timezone", "window", "grace", "closed_on")
FORM_FIELDS = ("id", "site_id", "name", "revision", "editing", *RULE_FIELDS, "pre_use", "clear_on_pass", "rows",
               "more_rows")
ROW_FIELDS = ("id", "label", "kind", "critical", "optional", "unit", "minimum", "maximum", "choices",
              "failing_choices", "remove")
"""The controls of one item row: the item document's fields (``optional`` is ``required``'s opposite)
and ``remove``."""
EMPTY_ROWS = 3
"""Empty item rows the form shows below the items (and the "Add more item rows" button adds)."""
MAX_ROWS = MAX_ITEMS + 10
_ROW_CONTROL = re.compile(r"items\[(\d{1,3})\]\.(\w+)")
_ITEM_FIELD = re.compile(r"items\[(\d+)\](?:\.(\w+))?")
REVISION_FIELDS = ("revision",)
ASSIGN_FIELDS = ("equipment",)
STALE = "changed since you opened it: below are its current values; make your change again on them"
_IDS = re.compile(r"[\s,]+")
WEEKDAY_NAMES = dict(zip(WEEKDAYS, ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
                         strict=True))


def _path_id(checklist_id: str) -> str:
    return unquote(checklist_id)


def _link(checklist_id: str) -> str:
    return f"/checklists/{quote(checklist_id, safe='')}"


def opened_revision(values: Mapping[str, str]) -> int:
    """The revision the form was opened at (its hidden ``revision`` field): the edit's If-Match."""
    text = values.get("revision", "").strip()
    if not text.isdigit():
        raise InvalidInput("revision", f"{shorten(text)} is not the revision the page was opened at: open it again")
    return int(text)


def typed_list(text: str) -> list[str]:
    """Values (ids, dates) typed one a line, or separated by commas or spaces."""
    return [part for part in _IDS.split(text) if part]


def managed_sites(person: Person) -> list[Site]:
    """The person's sites where they may make a checklist (every site for an admin), by id."""
    return [site for site in person.sites if person.caller.may(Action.manage, site.site_id)]


# -- the item rows (#33) --------------------------------------------------------------------------
def row_control(row: int, name: str) -> str:
    """The name (and id) of an item row's control: ``items[2].minimum``."""
    return f"items[{row}].{name}"


def checklist_form() -> dict[str, str]:
    """The checklist form's fields: the fixed ones, and its item rows' by their control names (those
    sent empty left out); a row control the form does not have is InvalidInput naming it."""
    values, controls = form_with(router, FORM_FIELDS, "items[")
    for name, value in controls.items():
        control = f"items[{name}"
        matched = _ROW_CONTROL.fullmatch(control)
        if matched is None or int(matched[1]) >= MAX_ROWS or matched[2] not in ROW_FIELDS:
            raise InvalidInput(control, "is not a field of this form")
        values[control] = value
    return values


def _text_list(text: str) -> list[str] | None:
    return [part.strip() for part in text.split(",") if part.strip()] or None


def _bound(text: str) -> object:
    """A bound as typed: its number, else the text (which the item's parsing refuses in its words)."""
    if not text:
        return None
    number = to_decimal(text)
    return text if number is None else number


def item_documents(values: Mapping[str, str]) -> tuple[list[dict[str, Any]], list[int]]:
    """The item rows as item documents (what the API takes) and the row each came from: a row left
    empty (its kind aside), or marked "remove", is no item."""
    shown = sorted({int(found[1]) for name in values if (found := _ROW_CONTROL.fullmatch(name))})
    documents: list[dict[str, Any]] = []
    rows: list[int] = []
    for row in shown:
        given = {name: values.get(row_control(row, name), "").strip() for name in ROW_FIELDS}
        if given["remove"] or not any(given[name] for name in ROW_FIELDS if name != "kind"):
            continue
        document: dict[str, Any] = {"id": given["id"], "label": given["label"], "kind": given["kind"] or None,
                                    "critical": bool(given["critical"]), "unit": given["unit"] or None,
                                    "minimum": _bound(given["minimum"]), "maximum": _bound(given["maximum"]),
                                    "choices": _text_list(given["choices"]),
                                    "failing_choices": _text_list(given["failing_choices"])}
        if given["optional"]:
            document["required"] = False
        documents.append({name: value for name, value in document.items() if value is not None})
        rows.append(row)
    return documents, rows


def item_spec(values: Mapping[str, str]) -> dict[str, Any]:
    """The items and flags of the spec :func:`managing.put_checklist` takes; none when the form had no
    item rows (``rows`` not sent: the checklist's are kept)."""
    if not values.get("rows"):
        return {}
    return {"items": item_documents(values)[0], "pre_use": bool(values.get("pre_use")),
            "clear_on_pass": bool(values.get("clear_on_pass"))}


def item_values(items: tuple[CheckItem, ...]) -> dict[str, str]:
    """A checklist's items as the form's rows' values, one row each, and the count of rows to show."""
    values = {"rows": str(len(items) + EMPTY_ROWS)}
    for row, item in enumerate(items):
        document = item.to_dict()
        values.update({row_control(row, "id"): item.item_id, row_control(row, "label"): item.label,
                       row_control(row, "kind"): item.kind.value, row_control(row, "unit"): item.unit or "",
                       row_control(row, "choices"): ", ".join(item.choices),
                       row_control(row, "failing_choices"): ", ".join(item.failing_choices)})
        values.update({row_control(row, name): str(document[name]) for name in ("minimum", "maximum")
                       if name in document})
        values.update({row_control(row, name): "on" for name, on in (("critical", item.critical),
                                                                     ("optional", not item.required)) if on})
    return values


def rows_shown(values: Mapping[str, str]) -> int:
    """How many item rows the form shows: as it was sent (more after "Add more item rows"), at least
    one past the last row given, at most :data:`MAX_ROWS`."""
    asked = [int(text) for text in (values.get("rows", ""), values.get("more_rows", "")) if text.isdigit()]
    given = [int(found[1]) + 1 for name in values if (found := _ROW_CONTROL.fullmatch(name))]
    return min(MAX_ROWS, max([EMPTY_ROWS, *asked, *given]))


def item_errors(problem: InvalidInput, values: Mapping[str, str]) -> dict[str, str] | None:
    """Refused items as the form's errors: each next to the control of the row it came from
    (``items[1].failing_choices[0]`` of the second item given is that row's ``failing_choices``), a
    refusal of the list as a whole (``items``) atop the rows; None when ``problem`` is not the items'."""
    problems = problem.problems if isinstance(problem, ItemsRefused) else [problem]
    rows = item_documents(values)[1]
    errors: dict[str, str] = {}
    for each in problems:
        matched = _ITEM_FIELD.match(each.field)
        if each.field == "items":
            errors["items"] = each.message
        elif matched is not None and int(matched[1]) < len(rows):
            errors.setdefault(row_control(rows[int(matched[1])], matched[2] or "id"), each.message)
        else:
            return None
    return errors


# -- the form's values ----------------------------------------------------------------------------
@dataclass(frozen=True)
class FormState:
    """What the checklist form shows: its values, the errors by control, whether it edits."""

    values: Mapping[str, str]
    errors: Mapping[str, str]
    editing: str | None = None
    notice: str | None = None


def values_of(checklist: Checklist) -> dict[str, str]:
    """A checklist as the form's values (the few fields filled when its text says no more than they)."""
    values = {"id": checklist.checklist_id, "site_id": checklist.site_id or "", "name": checklist.name,
              "revision": str(checklist.revision), "editing": checklist.checklist_id,
              "recurrence": checklist.recurrence, "timezone": checklist.timezone or "",
              "window": checklist.window or "", "grace": checklist.grace or "",
              "closed_on": ", ".join(checklist.closed_on), "rule_as": "text",
              "pre_use": "on" if checklist.pre_use else "", "clear_on_pass": "on" if checklist.clear_on_pass else "",
              **item_values(checklist.items)}
    simple = SimpleRule.of_text(checklist.recurrence)
    if simple is not None:
        values.update(rule_as="fields", frequency=simple.frequency.value, time=f"{simple.at:%H:%M}",
                      starting=simple.starting.isoformat(), month_day=str(simple.month_day or ""),
                      **{f"day_{day}": "on" for day in simple.days})
    return values


def recurrence_of(values: Mapping[str, str]) -> str:
    """The rule's RFC 5545 text: as typed, or made of the few fields (``rule_as=fields``)."""
    if values.get("rule_as") == "fields":
        return SimpleRule.parse(values.get("frequency", ""), values.get("time", ""), values.get("starting", ""),
                                [day for day in WEEKDAYS if values.get(f"day_{day}")],
                                values.get("month_day", "")).to_text()
    recurrence = values.get("recurrence", "").replace("\r\n", "\n").strip()
    if not recurrence:
        raise InvalidInput("recurrence", "give the rule as RFC 5545 text (DTSTART and RRULE lines), or choose "
                                         "'a few fields'")
    return recurrence


def rule_spec(values: Mapping[str, str], checklist_id: str, site_id: str | None) -> tuple[dict[str, Any], Recurrence]:
    """The spec :func:`managing.put_checklist` takes and its rule, validated at the site (whose zone is
    the default)."""
    spec: dict[str, Any] = {"id": checklist_id, "site_id": site_id, "recurrence": recurrence_of(values),
                            "closed_on": validate_closed_on(typed_list(values.get("closed_on", ""))),
                            **{name: values.get(name, "").strip() or None for name in ("name", "timezone", "window",
                                                                                       "grace")}}
    spec = managing.with_site_defaults(table(), spec)
    return spec, previewing.validate_rule(spec["recurrence"], spec.get("timezone"), spec.get("window"),
                                          spec.get("grace"))


def control_errors(problem: InvalidInput, controls: Collection[str]) -> dict[str, str]:
    """A refusal as a form's errors: the message next to the control it names (``closed_on[1]`` is the
    ``closed_on`` control), else atop the form (``_form``) with the field named."""
    control = problem.field.split("[", 1)[0]
    return {control: problem.message} if control in controls else {"_form": str(problem)}


def error_of(problem: InvalidInput, values: Mapping[str, str]) -> dict[str, str]:
    """:func:`control_errors` of the checklist form, where a rule made of the few fields is wrong as a
    whole next to them."""
    if problem.field == "recurrence" and values.get("rule_as") == "fields":
        return {"rule_fields": problem.message}
    if problem.field.startswith("items"):
        errors = item_errors(problem, values)
        if errors is not None:
            return errors
    return control_errors(problem, {*FORM_FIELDS, "days"})


def _form_page(person: Person, state: FormState, *, status: int = HTTPStatus.OK,
               shown: previewing.Preview | None = None, preview_error: str | None = None) -> Response[str]:
    editing = state.editing
    title = f"Edit checklist {editing}" if editing else "New checklist"
    action = _link(editing) if editing else "/checklists"
    return page(router, "checklist_form.html.j2", title=title, status=status, person=person, values=state.values,
                errors=state.errors, editing=editing, action=action, notice=state.notice,
                sites=[] if editing else managed_sites(person), weekdays=WEEKDAY_NAMES, preview=shown,
                preview_error=preview_error, rows=rows_shown(state.values), more_rows=EMPTY_ROWS, max_rows=MAX_ROWS)


# -- the list and one checklist -------------------------------------------------------------------
@router.get("/checklists")
def list_checklists() -> Response[str]:
    person = signed_in(router)
    event = router.current_event
    site_id = event.get_query_string_value("site") or None
    cursor = event.get_query_string_value("cursor") or None
    listed = managing.checklists_page(table(), person.caller, site_id, cursor, PAGE_SIZE)
    may_create = person.caller.everywhere or any(person.caller.may(Action.manage, s) for s in person.caller.roles)
    return page(router, "checklists.html.j2", title="Checklists", person=person, checklists=listed.items,
                site=site_id, next_cursor=listed.next_position, may_create=may_create)


@router.get("/checklists/new")
def new_checklist() -> Response[str]:
    person = signed_in(router)
    authorize_listing(person.caller, Action.manage, None, what="a new checklist")
    # the site chosen in the page's site selector, else the first the person manages; its today
    asked, managed = router.current_event.get_query_string_value("site") or "", managed_sites(person)
    site = next((s for s in managed if s.site_id == asked), managed[0] if managed else None)
    today = clock.now().astimezone(ZoneInfo(site.timezone)) if site else clock.now()
    values = {"rule_as": "fields", "frequency": "daily", "time": "06:00", "window": "PT8H",
              "starting": today.date().isoformat(), "site_id": site.site_id if site else "", "rows": str(EMPTY_ROWS)}
    return _form_page(person, FormState(values, {}))


@router.post("/checklists")
def create_checklist() -> Response[str]:
    person = signed_in(router)
    values = checklist_form()
    who = person.caller
    try:
        checklist_id = validate_checklist_id(values.get("id", "").strip(), "id")
        site_id = validate_site_id(values.get("site_id", "").strip())
        # before the site is read for its time zone, as the API: another site is 404 whether it exists or not
        authorize(who, Action.manage, site_id, what=f"site {site_id!r}")
        spec, _ = rule_spec(values, checklist_id, site_id)
        managing.put_checklist(table(), who, {**spec, **item_spec(values)}, clock.now(), validated=True,
                               create=True)
    except InvalidInput as problem:
        return _form_page(person, FormState(values, error_of(problem, values)), status=HTTPStatus.BAD_REQUEST)
    except Conflict:
        taken = {"id": f"there is a checklist {checklist_id!r} already: choose another id, or edit that one"}
        return _form_page(person, FormState(values, taken), status=HTTPStatus.CONFLICT)
    return redirect(_link(checklist_id))


@router.post("/checklists/preview")
def preview_checklist() -> Response[str]:
    """The form again, with the next windows of its rule at its site (writes nothing)."""
    person = signed_in(router)
    values = checklist_form()
    who = person.caller
    editing = values.get("editing") or None
    shown, problem = None, None
    try:
        if editing:
            site_id = managing.get_checklist(table(), who, editing).site_id
        else:
            site_id = validate_site_id(values.get("site_id", "").strip())
            authorize(who, Action.read, site_id, what=f"site {site_id!r}")
        spec, rule = rule_spec(values, "preview", site_id)
        closed = previewing.closures_of(table(), spec["closed_on"], site_id)
        shown = previewing.preview_at_site(who, site_id, rule.with_closures(closed), clock.now(), PREVIEW_WINDOWS)
    except InvalidInput as refused:
        problem = refused
    # 200 either way: the preview answered (a rule it cannot preview yet is said next to its field);
    # preview.js asks as the person types, and a half-typed rule is no failed request
    errors = {} if problem is None else error_of(problem, values)
    return _form_page(person, FormState(values, errors, editing), shown=shown,
                      preview_error=None if problem is None else str(problem))


@router.get("/checklists/<checklist_id>")
def show_checklist(checklist_id: str) -> Response[str]:
    person = signed_in(router)
    checklist, assignments = assigning.equipment_of(table(), person.caller, _path_id(checklist_id))
    return _checklist_page(person, checklist, assignments)


def _checklist_page(person: Person, checklist: Checklist, assignments: list[Assignment], *,
                    errors: Mapping[str, str] | None = None, notice: str | None = None,
                    status: int = HTTPStatus.OK) -> Response[str]:
    now = clock.now()
    try:
        shown: previewing.Preview | None = previewing.preview(checklist.parsed(), now, 5)
        rule_error = None
    except InvalidInput as problem:  # a hand-edited item, a calendar deleted around the tools
        shown, rule_error = None, str(problem)
    active = [a for a in assignments if a.unassigned_at is None or a.unassigned_at > now]
    ended = [a for a in assignments if a not in active]
    return page(router, "checklist.html.j2", title=f"Checklist {checklist.checklist_id}", status=status,
                person=person, checklist=checklist, link=_link(checklist.checklist_id), preview=shown,
                rule_error=rule_error, assigned=active, unassigned=ended, errors=errors or {}, notice=notice,
                may_manage=person.caller.may(Action.manage, checklist.site_id))


@router.get("/checklists/<checklist_id>/edit")
def edit_form(checklist_id: str) -> Response[str]:
    person = signed_in(router)
    checklist = managing.get_checklist(table(), person.caller, _path_id(checklist_id), action=Action.manage)
    return _form_page(person, FormState(values_of(checklist), {}, checklist.checklist_id))


@router.post("/checklists/<checklist_id>")
def edit_checklist(checklist_id: str) -> Response[str]:
    person = signed_in(router)
    values = checklist_form()
    who = person.caller
    current = managing.get_checklist(table(), who, _path_id(checklist_id), action=Action.manage)
    editing = current.checklist_id
    try:
        revision = opened_revision(values)
        spec, _ = rule_spec(values, current.checklist_id, current.site_id)
        managing.put_checklist(table(), who, {**spec, **item_spec(values)}, clock.now(), validated=True,
                               if_match=revision, create=False)
    except InvalidInput as problem:
        return _form_page(person, FormState(values, error_of(problem, values), editing),
                          status=HTTPStatus.BAD_REQUEST)
    except PreconditionFailed:
        now = managing.get_checklist(table(), who, editing, action=Action.manage)
        return _form_page(person, FormState(values_of(now), {}, editing, notice=f"Checklist {editing} {STALE}."),
                          status=HTTPStatus.CONFLICT)
    return redirect(_link(editing))


# -- pause, resume, delete --------------------------------------------------------------------------
@router.post("/checklists/<checklist_id>/pause")
def pause_checklist(checklist_id: str) -> Response[str]:
    return _change_status(managing.pause_checklist, checklist_id)


@router.post("/checklists/<checklist_id>/resume")
def resume_checklist(checklist_id: str) -> Response[str]:
    return _change_status(managing.resume_checklist, checklist_id)


def _change_status(change: Callable[..., Checklist], checklist_id: str) -> Response[str]:
    person = signed_in(router)
    values = form(router, REVISION_FIELDS)
    checklist_id = _path_id(checklist_id)
    try:
        change(table(), person.caller, checklist_id, clock.now(), if_match=opened_revision(values))
    except (InvalidInput, PreconditionFailed) as problem:
        return _refused(person, checklist_id, problem)
    return redirect(_link(checklist_id))


def _refused(person: Person, checklist_id: str, problem: InvalidInput | PreconditionFailed) -> Response[str]:
    """The checklist's page again, as it is now, saying why the change was not made."""
    checklist, assignments = assigning.equipment_of(table(), person.caller, checklist_id)
    if isinstance(problem, PreconditionFailed):
        return _checklist_page(person, checklist, assignments, status=HTTPStatus.CONFLICT,
                               notice=f"Nothing was changed: checklist {checklist.checklist_id} {STALE}.")
    return _checklist_page(person, checklist, assignments, status=HTTPStatus.BAD_REQUEST,
                           errors=control_errors(problem, ASSIGN_FIELDS))


@router.get("/checklists/<checklist_id>/delete")
def confirm_delete(checklist_id: str) -> Response[str]:
    person = signed_in(router)
    checklist = managing.get_checklist(table(), person.caller, _path_id(checklist_id), action=Action.manage)
    return page(router, "checklist_delete.html.j2", title=f"Delete checklist {checklist.checklist_id}",
                person=person, checklist=checklist, link=_link(checklist.checklist_id))


@router.post("/checklists/<checklist_id>/delete")
def delete_checklist(checklist_id: str) -> Response[str]:
    person = signed_in(router)
    values = form(router, REVISION_FIELDS)
    checklist_id = _path_id(checklist_id)
    try:
        managing.delete_checklist(table(), person.caller, checklist_id, if_match=opened_revision(values))
    except (InvalidInput, PreconditionFailed) as problem:
        return _refused(person, checklist_id, problem)
    return redirect("/checklists")


# -- assignments ------------------------------------------------------------------------------------
@router.post("/checklists/<checklist_id>/equipment")
def assign_equipment(checklist_id: str) -> Response[str]:
    person = signed_in(router)
    values = form(router, ASSIGN_FIELDS)
    checklist_id = _path_id(checklist_id)
    ids = typed_list(values.get("equipment", ""))
    try:
        if not ids:
            raise InvalidInput("equipment", "give one or more equipment ids, one a line or separated by commas")
        assigning.change_assignments(table(), table(), person.caller, checklist_id, ids, clock.now(), assign=True)
    except InvalidInput as problem:
        return _refused(person, checklist_id, problem)
    return redirect(_link(checklist_id))


@router.post("/checklists/<checklist_id>/equipment/<equipment_id>/unassign")
def unassign_equipment(checklist_id: str, equipment_id: str) -> Response[str]:
    person = signed_in(router)
    form(router, ())
    checklist_id = _path_id(checklist_id)
    try:
        assigning.change_assignments(table(), table(), person.caller, checklist_id, [unquote(equipment_id)],
                                     clock.now(), assign=False)
    except InvalidInput as problem:
        return _refused(person, checklist_id, problem)
    return redirect(_link(checklist_id))
