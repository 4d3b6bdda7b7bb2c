"""The web app's doors to #33 ("cleared to operate") through its handler on moto, as a signed-in
person's browser sends them: Record a check asks each item of the revision in force as plain, labelled
form fields (pass/fail and a choice as radio buttons, a number with its unit, text); a refused answer
is said next to its field, from the refusal's own words, nothing written; a failed critical item is
answered in words with the defect it opened and the equipment NOT cleared to operate; the equipment's
page shows its readiness and its defects, and a supervisor resolves one with a note (an operator has no
form and is refused; a defect changed meanwhile is said, not overwritten); Today lists each piece of
equipment's announced readiness."""

from __future__ import annotations

import re
from datetime import timedelta
from html import unescape

from missed_checks.checklists import managing
from missed_checks.defects.defect import defect_id_of
from missed_checks.notifications.notification import NotifySettings
from missed_checks.readiness.readiness import ReadinessRecord, readiness_of
from tests.unit import two_sites
from tests.unit.two_sites import NOW, OPERATOR
from tests.unit.webapp import browser as browsers
from tests.unit.webapp.browser import Web

dynamodb, web = two_sites.dynamodb, browsers.web  # the fixtures (moto; the stack and its people)

BRAKES = {"id": "brakes", "label": "Brakes work", "kind": "pass_fail", "critical": True}
TYRES = {"id": "tyres", "label": "Tyre pressure", "kind": "number", "unit": "bar", "minimum": 6, "maximum": 8.5}
FLUID = {"id": "fluid", "label": "Hydraulic fluid", "kind": "choice", "choices": ["dry", "ok", "leaking"],
         "failing_choices": ["leaking"]}
NOTES = {"id": "notes", "label": "Anything else", "kind": "text", "required": False}


def main_of(text: str) -> str:
    return unescape(text[text.index('<main id="main"'):])


def with_items(web: Web, *, notify: bool = True) -> None:
    """``daily`` (north, FL-1, due now) asks the four items before use, and tells the fleet lead."""
    current = web.table.get_checklist("daily")
    assert current is not None
    spec = {"id": "daily", "recurrence": current.recurrence, "timezone": current.timezone, "window": "PT8H",
            "items": [BRAKES, TYRES, FLUID, NOTES], "pre_use": True,
            **({"notify": NotifySettings(to=("lead@example.com",))} if notify else {})}
    managing.put_checklist(web.table, OPERATOR, spec, NOW - timedelta(hours=1))


def test_the_items_are_plain_labelled_fields_of_the_form(web: Web) -> None:
    with_items(web)
    page = web.browser("operator-north").get("/record/FL-1")
    assert page.status == 200
    shown = page.text
    assert re.search(r'<legend>Brakes work \(critical\)</legend>', shown)
    for value, label in (("pass", "Pass"), ("fail", "Fail")):  # two radio buttons, each with its label
        assert f'<input type="radio" id="daily-brakes-{value}" name="answers.brakes" value="{value}"' in shown
        assert f'<label for="daily-brakes-{value}">{label}</label>' in shown
    assert '<label for="daily-tyres">Tyre pressure (bar)</label>' in shown
    assert 'id="daily-tyres" name="answers.tyres" type="text" inputmode="decimal"' in shown
    assert "Passes between 6 and 8.5 bar." in shown
    assert '<legend>Hydraulic fluid</legend>' in shown and 'value="leaking"' in shown
    assert '<textarea id="daily-notes" name="answers.notes"' in shown and "Optional." in shown
    assert "FL-1 is not cleared to operate yet (its pre-use check is not done)" in main_of(shown)


def test_a_bad_answer_is_said_next_to_its_field_and_nothing_is_written(web: Web) -> None:
    with_items(web)
    browser = web.browser("operator-north")
    browser.get("/record/FL-1")
    refused = browser.submit("/record/FL-1", {"checklist_id": "daily", "answers.brakes": "pass",
                                              "answers.tyres": "seven", "answers.fluid": "ok"})
    assert refused.status == 400
    shown = main_of(refused.text)
    error = re.search(r'<p class="field-error" id="daily-tyres-error"><strong>Error:</strong> ([^<]+)</p>', shown)
    assert error is not None and "Tyre pressure" in error.group(1), shown[:3000]
    assert 'aria-describedby="daily-tyres-hint daily-tyres-error" aria-invalid="true"' in refused.text
    assert 'value="seven"' in refused.text and 'id="daily-brakes-pass" name="answers.brakes" value="pass" checked' \
        in refused.text  # what was typed stays
    missing = browser.submit("/record/FL-1", {"checklist_id": "daily", "answers.tyres": "7"})
    assert missing.status == 400 and 'id="daily-brakes-error"' in missing.text  # a required item left out
    assert web.table.performed_checks_of_equipment("FL-1", "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z") == []


def test_a_failed_critical_item_is_answered_in_words_and_a_supervisor_resolves_the_defect(web: Web) -> None:
    with_items(web)
    operator = web.browser("operator-north")
    operator.get("/record/FL-1")
    answer = operator.submit("/record/FL-1", {"checklist_id": "daily", "answers.brakes": "fail",
                                              "answers.tyres": "7.2", "answers.fluid": "ok", "answers.notes": ""})
    assert (answer.status, answer.location) == (303, "/record/FL-1?recorded=daily&at=2026-03-02T12:00:00Z")
    defect_id = defect_id_of("daily", "FL-1", NOW)
    shown = main_of(operator.get(answer.location).text)
    assert (f'role="status">Recorded. Brakes work failed: FL-1 is NOT cleared to operate; defect {defect_id} '
            "opened, supervisors told.") in shown, shown[:2000]
    assert "<strong>FL-1 is NOT cleared to operate</strong>" in shown

    page = main_of(operator.get("/equipment/FL-1").text)
    assert (f"FL-1 is NOT cleared to operate</strong> since Mon 2 Mar 2026, 13:00 CET: open defect {defect_id} "
            "(Brakes work failed on daily at Mon 2 Mar 2026 13:00 CET)") in page  # the state said once
    assert f"{defect_id}: " in page and "Brakes work (critical): fail, expected pass." in page
    assert "Found by" in page and "A supervisor of site north resolves it." in page
    assert "/resolve" not in page  # an operator has no form
    refused = operator.submit(f"/equipment/FL-1/defects/{defect_id}/resolve", {"note": "fixed", "revision": "1"})
    assert refused.status == 403

    supervisor = web.browser("supervisor-north")
    page = supervisor.get("/equipment/FL-1")
    assert f'action="/equipment/FL-1/defects/{defect_id}/resolve"' in page.text
    assert f'<label for="note-{defect_id}">What was done (kept with the defect)</label>' in page.text
    blank = supervisor.submit(f"/equipment/FL-1/defects/{defect_id}/resolve", {"note": " ", "revision": "1"})
    assert blank.status == 400 and f'id="note-{defect_id}-error"' in blank.text
    stale = supervisor.submit(f"/equipment/FL-1/defects/{defect_id}/resolve", {"note": "fixed", "revision": "7"})
    assert stale.status == 412 and "it changed since you opened this page" in unescape(stale.text)
    assert web.table.get_defect(defect_id).is_open  # type: ignore[union-attr]
    done = supervisor.submit(f"/equipment/FL-1/defects/{defect_id}/resolve",
                             {"note": "brake line replaced", "revision": "1"})
    assert (done.status, done.location) == (303, "/equipment/FL-1#defects")
    page = main_of(supervisor.get("/equipment/FL-1").text)
    assert "resolved</span>" in page and "by supervisor-north on Mon 2 Mar 2026, 13:00 CET: brake line replaced" in page
    # the failed check does not satisfy the pre-use window: resolved, the equipment is still not cleared
    assert "FL-1 is not cleared to operate yet (its pre-use check is not done)" in page
    again = supervisor.submit(f"/equipment/FL-1/defects/{defect_id}/resolve", {"note": "twice", "revision": "2"})
    assert again.status == 409 and "was resolved already" in unescape(again.text)


def test_a_passing_check_is_answered_with_the_readiness_it_leaves(web: Web) -> None:
    with_items(web, notify=False)
    browser = web.browser("operator-north")
    browser.get("/record/FL-1")
    answer = browser.submit("/record/FL-1", {"checklist_id": "daily", "answers.brakes": "pass",
                                             "answers.tyres": "9", "answers.fluid": "ok"})
    shown = main_of(browser.get(answer.location).text)
    assert ('role="status">Recorded daily on FL-1 at 13:00: on time (due by 14:00). Every critical item passed: '
            "FL-1 is cleared to operate.") in shown, shown[:1500]


def test_today_lists_each_equipments_announced_readiness(web: Web) -> None:
    readiness = readiness_of("FL-1", "north", NOW - timedelta(hours=2), periods=(), open_defects=(), pre_use=(),
                             checks=(), zone=None)
    web.table.write_readiness(ReadinessRecord(readiness, 1, None, NOW - timedelta(hours=2), True),
                              expected_sequence=None)
    shown = main_of(web.browser("operator-north").get("/").text)
    table = shown[shown.index("Cleared to operate?"):shown.index("Still undone")]
    assert 'class="state-cleared">cleared to operate</td>' in table
    assert "Forklift" not in table or "FL-1" in table
    assert "FL-2" in table and "none announced yet" in table
