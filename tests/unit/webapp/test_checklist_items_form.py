"""The checklist form's items and flags (#33) through the web app's handler on moto, as a signed-in
person's browser sends them: a checklist made with two items from the form's rows is read back from
the table and shown on its page; an edit removing one and adding one raises ``items_revision`` (and
one that changes nothing does not); a refused row is said next to that row's control and nothing is
written; "Add more item rows" shows the form again as typed with more rows; an operator gets a 403."""

from __future__ import annotations

from decimal import Decimal
from html import unescape
from html.parser import HTMLParser

from missed_checks.checklists.check_item import CheckItem, ItemKind
from tests.unit import two_sites
from tests.unit.webapp import browser as browsers
from tests.unit.webapp.browser import Answer, Web

dynamodb, web = two_sites.dynamodb, browsers.web  # the fixtures (moto; the stack and its people)

NEW = {"id": "pre-use", "site_id": "north", "name": "Pre-use walk-round", "revision": "", "editing": "",
       "rule_as": "fields", "frequency": "daily", "time": "06:00", "starting": "2026-03-02", "window": "PT8H",
       "rows": "3", "pre_use": "on"}
TYRES = {"items[0].id": "tyres", "items[0].label": "Tyre pressure", "items[0].kind": "number",
         "items[0].unit": "bar", "items[0].minimum": "2", "items[0].maximum": "3.5", "items[0].critical": "on"}
FORKS = {"items[1].id": "forks", "items[1].label": "Forks", "items[1].kind": "choice",
         "items[1].choices": "ok, worn, cracked", "items[1].failing_choices": "cracked", "items[1].critical": "on",
         "items[2].kind": "pass_fail"}  # the third row left empty (a select always sends its kind)
TYRES_ITEM = CheckItem("tyres", "Tyre pressure", ItemKind.NUMBER, critical=True, unit="bar", minimum=Decimal(2),
                       maximum=Decimal("3.5"))
FORKS_ITEM = CheckItem("forks", "Forks", ItemKind.CHOICE, critical=True, choices=("ok", "worn", "cracked"),
                       failing_choices=("cracked",))


class FormFields(HTMLParser):
    """What a browser sends of the page's checklist form: its inputs with a name (checkboxes only when
    checked), each select's selected option, its text areas (not its buttons)."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: dict[str, str] = {}
        self._select: str | None = None
        self._textarea: str | None = None
        self._in_form = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        given = {name: value or "" for name, value in attrs}
        if tag == "form" and given.get("id") == "checklist-form":
            self._in_form = True
        if not self._in_form or "name" not in given and tag != "option":
            return
        if tag == "input" and (given.get("type") != "checkbox" or "checked" in given):
            self.fields[given["name"]] = given.get("value", "")
        elif tag == "select":
            self._select = given["name"]
            self.fields.setdefault(given["name"], "")
        elif tag == "option" and self._select and "selected" in given:
            self.fields[self._select] = given["value"]
        elif tag == "textarea":
            self._textarea = given["name"]
            self.fields[given["name"]] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._in_form = False
        self._select = None if tag == "select" else self._select
        self._textarea = None if tag == "textarea" else self._textarea

    def handle_data(self, data: str) -> None:
        if self._textarea:
            self.fields[self._textarea] += data


def fields_of(answer: Answer) -> dict[str, str]:
    parser = FormFields()
    parser.feed(answer.text)
    parser.fields.pop("csrf", None)  # the browser adds the session's
    return parser.fields


def test_a_checklist_made_with_two_items_from_the_form_is_read_back_and_shown(web: Web) -> None:
    browser = web.browser("manager-north")
    form = browser.get("/checklists/new")
    assert form.status == 200 and 'name="rows" value="3"' in form.text
    assert '<label for="items[2].label">Question</label>' in form.text and "items[3].label" not in form.text
    assert '<label for="pre_use">Pre-use check (equipment is not cleared until it passes)</label>' in form.text
    assert '<label for="clear_on_pass">A later passing check clears a defect</label>' in form.text
    created = browser.submit("/checklists", {**NEW, **TYRES, **FORKS})
    assert (created.status, created.location) == (303, "/checklists/pre-use"), created.text
    checklist = web.table.get_checklist("pre-use")
    assert checklist is not None
    assert checklist.items == (TYRES_ITEM, FORKS_ITEM)
    assert (checklist.items_revision, checklist.pre_use, checklist.clear_on_pass) == (1, True, False)
    assert [revision.items for revision in web.table.item_lists("pre-use")] == [(TYRES_ITEM, FORKS_ITEM)]
    shown = unescape(browser.get("/checklists/pre-use").text)
    assert "Items (revision 1)" in shown
    assert "<td>Tyre pressure</td>" in shown and "a number in bar" in shown and "between 2 and 3.5 bar" in shown
    assert "<td>Forks</td>" in shown and "a choice: ok, worn, cracked" in shown and "not one of: cracked" in shown
    assert "Yes: equipment is not cleared to operate until this check passes" in shown
    assert "No: a supervisor resolves each defect" in shown


def test_an_edit_removing_one_item_and_adding_one_raises_items_revision(web: Web) -> None:
    browser = web.browser("manager-north")
    browser.get("/checklists/new")
    browser.submit("/checklists", {**NEW, **TYRES, **FORKS})
    edit = browser.get("/checklists/pre-use/edit")
    fields = fields_of(edit)
    assert fields["rows"] == "5" and fields["pre_use"] == "on" and "clear_on_pass" not in fields
    assert {name: fields[name] for name in TYRES} == TYRES  # the items as the form's rows, one each
    assert fields["items[1].choices"] == "ok, worn, cracked" and fields["items[4].label"] == ""
    unchanged = browser.submit("/checklists/pre-use", fields)  # the form sent back as it came
    assert unchanged.status == 303, unchanged.text
    assert web.table.get_checklist("pre-use").items_revision == 1  # type: ignore[union-attr]

    fields = fields_of(browser.get("/checklists/pre-use/edit"))
    edited = browser.submit("/checklists/pre-use", {
        **fields, "items[0].remove": "on", "clear_on_pass": "on", "items[3].id": "horn",
        "items[3].label": "Horn works", "items[3].kind": "pass_fail", "items[3].optional": "on"})
    assert (edited.status, edited.location) == (303, "/checklists/pre-use"), edited.text
    checklist = web.table.get_checklist("pre-use")
    assert checklist is not None
    horn = CheckItem("horn", "Horn works", ItemKind.PASS_FAIL, required=False)
    assert checklist.items == (FORKS_ITEM, horn)
    assert (checklist.items_revision, checklist.pre_use, checklist.clear_on_pass) == (2, True, True)
    assert [revision.items for revision in web.table.item_lists("pre-use")] == [(TYRES_ITEM, FORKS_ITEM),
                                                                                (FORKS_ITEM, horn)]
    shown = unescape(browser.get("/checklists/pre-use").text)
    assert "Items (revision 2)" in shown and "Horn works (optional)" in shown and "Tyre pressure" not in shown


def test_a_form_without_item_rows_keeps_the_checklists_items(web: Web) -> None:
    browser = web.browser("manager-north")
    browser.get("/checklists/new")
    browser.submit("/checklists", {**NEW, **TYRES, **FORKS})
    fields = fields_of(browser.get("/checklists/pre-use/edit"))
    kept = {name: value for name, value in fields.items()
            if not name.startswith("items[") and name not in ("rows", "pre_use")}
    assert browser.submit("/checklists/pre-use", {**kept, "name": "Renamed"}).status == 303
    checklist = web.table.get_checklist("pre-use")
    assert checklist is not None and checklist.name == "Renamed"
    assert (checklist.items, checklist.items_revision, checklist.pre_use) == ((TYRES_ITEM, FORKS_ITEM), 1, True)


def test_a_refused_row_is_said_next_to_its_control_and_nothing_is_written(web: Web) -> None:
    browser = web.browser("manager-north")
    browser.get("/checklists/new")
    # the second row left empty: the bad row is the second item given, said next to the third row's control
    bounds = {"items[2].id": "oil", "items[2].label": "Oil level", "items[2].kind": "number",
              "items[2].minimum": "5", "items[2].maximum": "2"}
    refused = browser.submit("/checklists", {**NEW, **TYRES, **bounds})
    assert refused.status == 400
    assert '<p class="field-error" id="items[2].minimum-error"><strong>Error:</strong> 5 is above maximum 2</p>' \
        in refused.text
    assert 'aria-describedby="items[2].minimum-error" aria-invalid="true"' in refused.text
    assert 'value="Oil level"' in refused.text and 'value="Tyre pressure"' in refused.text  # as typed
    assert "items[1].minimum-error" not in refused.text
    choices = {"items[1].id": "forks", "items[1].label": "Forks", "items[1].kind": "choice",
               "items[1].choices": "ok, worn", "items[1].failing_choices": "worn, leaking",
               "items[2].id": "", "items[2].label": "Horn", "items[2].kind": "pass_fail"}
    both = browser.submit("/checklists", {**NEW, **TYRES, **choices})
    assert both.status == 400
    text = unescape(both.text)
    assert "id=\"items[1].failing_choices-error\"><strong>Error:</strong> 'leaking' is not one of choices" in text
    assert 'id="items[2].id-error"' in text  # every refused row at once
    assert web.table.get_checklist("pre-use") is None

    browser.submit("/checklists", {**NEW, **TYRES})
    fields = fields_of(browser.get("/checklists/pre-use/edit"))
    refused_edit = browser.submit("/checklists/pre-use", {**fields, "items[0].minimum": "4"})
    assert refused_edit.status == 400 and 'id="items[0].minimum-error"' in refused_edit.text
    checklist = web.table.get_checklist("pre-use")
    assert checklist is not None and (checklist.items, checklist.items_revision) == ((TYRES_ITEM,), 1)


def test_add_more_item_rows_shows_the_form_as_typed_with_more_rows(web: Web) -> None:
    browser = web.browser("manager-north")
    form = browser.get("/checklists/new")
    assert 'name="more_rows" value="6" formaction="/checklists/preview"' in form.text
    more = browser.submit("/checklists/preview", {**NEW, **TYRES, "more_rows": "6"})
    assert more.status == 200 and 'name="rows" value="6"' in more.text
    assert '<label for="items[5].label">' in more.text and 'value="Tyre pressure"' in more.text
    assert 'name="more_rows" value="9"' in more.text
    assert web.table.get_checklist("pre-use") is None
    bad = browser.submit("/checklists/preview", {**NEW, "items[999].id": "x"})
    assert bad.status == 400 and "items[999].id" in unescape(bad.text)


def test_an_operator_cannot_post_the_form(web: Web) -> None:
    browser = web.browser("operator-north")
    browser.get("/checklists")
    assert browser.submit("/checklists", {**NEW, **TYRES}).status == 403
    revision = str(web.table.get_checklist("daily").revision)  # type: ignore[union-attr]
    edit = {"id": "daily", "site_id": "north", "revision": revision, "editing": "daily", "rule_as": "text",
            "recurrence": browsers.RULE, "window": "PT8H", "rows": "3", **TYRES}
    assert browser.submit("/checklists/daily", edit).status == 403
    assert web.table.get_checklist("pre-use") is None
    daily = web.table.get_checklist("daily")
    assert daily is not None and (daily.items, daily.items_revision, daily.pre_use) == ((), 0, False)
