"""Recording checks with answers (#33) over the in-memory fake: validated against the items in force
at ``performed_at`` (read once per checklist), every bad answer named and nothing written on a
refusal; each check kept with what it found under its own revision, whatever is edited later; the
defects of failed critical items opened once, and cleared by a later passing check when the
checklist allows it; retries change nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from missed_checks.checklists.check_item import parse_items
from missed_checks.checklists.checklist import Checklist
from missed_checks.checklists.saving import save_checklist
from missed_checks.defects.defect import DefectStatus, ResolvedHow, defect_id_of
from missed_checks.performed_checks.answers import FailedItem, Findings
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks.performed_checks.recording import ChecksRefused, Refusal, Row, check_from, record_checks, rows_from
from tests.fakes import InMemoryTable

T0 = datetime(2026, 3, 1, tzinfo=UTC)
EDIT = datetime(2026, 3, 2, 12, tzinfo=UTC)
NOW = datetime(2026, 3, 2, 18, tzinfo=UTC)
RULE = "DTSTART;TZID=Europe/Berlin:20260301T060000\nRRULE:FREQ=DAILY"
BRAKES = {"id": "brakes", "label": "Brakes work", "kind": "pass_fail", "critical": True}
HORN = {"id": "horn", "label": "Horn sounds", "kind": "pass_fail"}
TYRES = {"id": "tyres", "label": "Tyre pressure", "kind": "number", "unit": "bar", "minimum": 2, "maximum": 3}


@pytest.fixture
def table() -> InMemoryTable:
    table = InMemoryTable()
    save_checklist(table, "forklift-daily", recurrence=RULE, window="PT8H", now=T0, by="setup",
                   items=parse_items([BRAKES, HORN]))
    table.add_checklist(Checklist("plain", RULE, window="PT8H", created_at=T0))  # no items, ever
    table.assign("forklift-daily", ["FL-1", "FL-2"], T0)
    table.assign("plain", ["FL-1"], T0)
    table.writes.clear()
    return table


def check(at: datetime, answers: dict[str, Any] | None, equipment: str = "FL-1",
          checklist: str = "forklift-daily", label: str | None = None) -> Row:
    return Row(PerformedCheck(checklist, equipment, at, answers), label)


def edit_items(table: InMemoryTable, *items: dict[str, Any], clear_on_pass: bool | None = None) -> None:
    save_checklist(table, "forklift-daily", recurrence=RULE, window="PT8H", now=EDIT, by="manager",
                   items=parse_items(list(items)), clear_on_pass=clear_on_pass)


def test_a_bad_answer_is_refused_naming_the_item_and_nothing_is_written(table: InMemoryTable) -> None:
    rows = [check(T0 + timedelta(hours=7), {"brakes": "pass", "horn": "pass"}, label="checks[0]"),
            check(T0 + timedelta(hours=8), {"brakes": "ok"}, "FL-2", label="checks[1]")]
    with pytest.raises(ChecksRefused) as refused:
        record_checks(table, rows, now=NOW, recorded_by="ann")
    assert [(p.row, p.field, p.kind) for p in refused.value.problems] == [
        ("checks[1]", "answers.brakes", Refusal.BAD_ANSWER), ("checks[1]", "answers.horn", Refusal.BAD_ANSWER)]
    assert refused.value.field == "checks[1].answers.brakes"
    assert refused.value.problems[0].detail == (
        "item 'brakes' (Brakes work) of checklist 'forklift-daily' revision 1 needs pass or fail, not 'ok'")
    assert table.writes == [] and table.recorded == {} and table.defects == {}


def test_a_check_keeps_what_it_found_under_its_revision_whatever_is_edited_later(table: InMemoryTable) -> None:
    first = record_checks(table, [check(T0 + timedelta(hours=7), {"brakes": "fail", "horn": "fail"})],
                          now=NOW - timedelta(days=1), recorded_by="ann")
    failed = (FailedItem("brakes", "Brakes work", True, "fail", "pass"),
              FailedItem("horn", "Horn sounds", False, "fail", "pass"))
    assert first.findings == (Findings(1, failed),)
    edit_items(table, {**BRAKES, "label": "Brakes hold on a ramp", "critical": False}, TYRES)
    key = ("forklift-daily", "FL-1", "2026-03-01T07:00:00Z")
    assert table.findings[key] == Findings(1, failed)  # the record: revision 1, its labels
    again = record_checks(table, [check(T0 + timedelta(hours=7), {"brakes": "fail", "horn": "fail"})],
                          now=NOW, recorded_by="bob")  # posted again after the edit: read as on record
    assert again.replayed and again.findings == (Findings(1, failed),)
    assert again.to_dict()["checks"][0]["findings"] == {
        "items_revision": 1, "result": "failed",
        "failed_items": [{"item_id": "brakes", "label": "Brakes work", "critical": True, "answer": "fail",
                          "expected": "pass"},
                         {"item_id": "horn", "label": "Horn sounds", "critical": False, "answer": "fail",
                          "expected": "pass"}]}


def test_a_late_upload_is_validated_against_the_revision_in_force_when_it_was_performed(
        table: InMemoryTable) -> None:
    edit_items(table, BRAKES, TYRES)  # revision 2 from EDIT: the horn is gone, the tyres are new
    before = EDIT - timedelta(hours=1)
    recorded = record_checks(table, [check(before, {"brakes": "pass", "horn": "fail"})], now=NOW, recorded_by="ann")
    assert recorded.findings[0].items_revision == 1
    assert [f.item_id for f in recorded.findings[0].failed] == ["horn"]
    with pytest.raises(ChecksRefused) as refused:  # revision 2's answers for a check under revision 1
        record_checks(table, [check(before - timedelta(hours=1), {"brakes": "pass", "tyres": 2.5})], now=NOW,
                      recorded_by="ann")
    assert {p.field for p in refused.value.problems} == {"answers.tyres", "answers.horn"}
    after = record_checks(table, [check(EDIT + timedelta(hours=1), {"brakes": "pass", "tyres": "1.5"})], now=NOW,
                          recorded_by="ann")
    assert after.findings[0] == Findings(2, (FailedItem("tyres", "Tyre pressure", False, Decimal("1.5"),
                                                        "between 2 and 3 bar"),))
    key = ("forklift-daily", "FL-1", "2026-03-02T13:00:00Z")
    assert table.findings[key].items_revision == 2


def test_apps_sending_no_answers_keep_working_for_checklists_without_items(table: InMemoryTable) -> None:
    recorded = record_checks(table, [check(T0 + timedelta(hours=7), None, checklist="plain")], now=NOW,
                             recorded_by="app")
    assert recorded.written == 1 and recorded.findings == (Findings(None),)
    assert recorded.to_dict()["checks"][0]["findings"] == {"items_revision": None, "result": "no_items",
                                                           "failed_items": []}
    assert "answers" not in recorded.to_dict()["checks"][0]
    assert record_checks(table, [check(T0 + timedelta(hours=8), {}, checklist="plain")], now=NOW,
                         recorded_by="app").written == 1  # an empty map is no answers
    with pytest.raises(ChecksRefused) as refused:
        record_checks(table, [check(T0 + timedelta(hours=9), {"brakes": "pass"}, checklist="plain")], now=NOW,
                      recorded_by="app")
    assert refused.value.problems[0].detail == ("checklist 'plain' has no items at 2026-03-01T09:00:00Z: send the "
                                                "check without answers")
    with pytest.raises(ChecksRefused) as missing:  # a checklist with items needs them answered
        record_checks(table, [check(T0 + timedelta(hours=9), None)], now=NOW, recorded_by="app")
    assert [p.field for p in missing.value.problems] == ["answers.brakes", "answers.horn"]


def test_before_its_first_items_a_checklist_takes_no_answers(table: InMemoryTable) -> None:
    table.assign("forklift-daily", ["FL-3"], T0 - timedelta(days=1))
    assert record_checks(table, [check(T0 - timedelta(hours=1), None, "FL-3")], now=NOW,
                         recorded_by="app").findings == (Findings(None),)


def test_answers_in_a_document() -> None:
    parsed = check_from({"checklist_id": "c", "equipment_id": "FL-1", "performed_at": "2026-03-02T08:00:00Z",
                         "answers": {"brakes": "pass", "tyres": 2.5}})
    assert parsed.answers == {"brakes": "pass", "tyres": 2.5}
    with pytest.raises(ChecksRefused) as refused:
        rows_from([{"checklist_id": "c", "equipment_id": "FL-1", "performed_at": "2026-03-02T08:00:00Z",
                    "answers": ["pass"]}])
    assert [(p.row, p.field, p.kind) for p in refused.value.problems] == [("checks[0]", "answers", Refusal.BAD_ANSWER)]


def test_an_idempotent_retry_with_answers_records_and_opens_once(table: InMemoryTable) -> None:
    rows = [check(T0 + timedelta(hours=7), {"brakes": "fail", "horn": "pass"}),
            check(T0 + timedelta(hours=7), {"brakes": "pass", "horn": "pass"}, "FL-2")]
    first = record_checks(table, rows, now=NOW, recorded_by="app", idempotency_key="k-1")
    defect = defect_id_of("forklift-daily", "FL-1", T0 + timedelta(hours=7))
    assert first.defects_opened == ((defect,), ())
    writes = list(table.writes)
    again = record_checks(table, rows, now=NOW + timedelta(minutes=2), recorded_by="app", idempotency_key="k-1")
    assert again.replayed and again.findings == first.findings and again.defects_opened == first.defects_opened
    assert table.writes == writes  # nothing written again: no check, no defect
    document = again.to_dict()["checks"][0]
    assert document["answers"] == {"brakes": "fail", "horn": "pass"} and document["defects_opened"] == [defect]


def test_a_critical_failure_opens_one_defect_whoever_retries(table: InMemoryTable) -> None:
    at = T0 + timedelta(hours=7)
    recorded = record_checks(table, [check(at, {"brakes": "fail", "horn": "fail"})], now=NOW, recorded_by="ann")
    [defect_id] = recorded.defects_opened[0]
    defect = table.defects[defect_id]
    assert (defect.status, defect.found_by, defect.found_at, defect.opened_at) == (DefectStatus.OPEN, "ann", at, NOW)
    assert defect.failed_items == (FailedItem("brakes", "Brakes work", True, "fail", "pass"),)  # critical ones
    again = record_checks(table, [check(at, {"brakes": "fail", "horn": "fail"})], now=NOW + timedelta(hours=1),
                          recorded_by="bob")
    assert again.defects_opened == ((defect_id,),) and table.defects[defect_id] == defect  # left as it was
    assert [w for w in table.writes if w[0] == "put_defect"] == [("put_defect", defect_id)]
    assert record_checks(table, [check(at + timedelta(hours=1), {"brakes": "pass", "horn": "fail"})], now=NOW,
                         recorded_by="ann").defects_opened == ((),)  # a non-critical failure opens none


def test_a_passing_check_clears_earlier_defects_only_when_the_checklist_says_so(table: InMemoryTable) -> None:
    failing = T0 + timedelta(hours=7)
    [opened] = record_checks(table, [check(failing, {"brakes": "fail", "horn": "pass"})], now=NOW,
                             recorded_by="ann").defects_opened[0]
    passing = {"brakes": "pass", "horn": "fail"}  # a non-critical failure still passes every critical item
    assert record_checks(table, [check(failing + timedelta(hours=1), passing)], now=NOW,
                         recorded_by="bob").defects_closed == ((),)
    assert table.defects[opened].is_open  # clear_on_pass is off
    edit_items(table, BRAKES, HORN, clear_on_pass=True)
    assert record_checks(table, [check(failing - timedelta(hours=1), passing)], now=NOW,
                         recorded_by="bob").defects_closed == ((),)  # performed before the defect was found
    later = EDIT + timedelta(hours=1)
    cleared = record_checks(table, [check(later, passing)], now=NOW, recorded_by="bob")
    assert cleared.defects_closed == ((opened,),)
    defect = table.defects[opened]
    assert (defect.status, defect.resolved_how, defect.resolved_by, defect.resolved_at) == (
        DefectStatus.RESOLVED, ResolvedHow.PASSING_CHECK, "bob", NOW)
    assert defect.resolution == "cleared by a passing check at 2026-03-02 14:00 CET"
    assert defect.cleared_by_check == {"checklist_id": "forklift-daily", "equipment_id": "FL-1",
                                       "performed_at": "2026-03-02T13:00:00Z"}
    writes = list(table.writes)
    again = record_checks(table, [check(later, passing)], now=NOW, recorded_by="bob")
    assert again.defects_closed == ((opened,),) and table.writes == writes  # a retry changes nothing


def test_in_one_batch_a_failure_then_a_pass_opens_then_clears(table: InMemoryTable) -> None:
    edit_items(table, BRAKES, HORN, clear_on_pass=True)
    at = EDIT + timedelta(hours=1)
    recorded = record_checks(table, [check(at + timedelta(hours=1), {"brakes": "pass", "horn": "pass"}),
                                     check(at, {"brakes": "fail", "horn": "pass"})], now=NOW, recorded_by="ann")
    opened = defect_id_of("forklift-daily", "FL-1", at)
    assert recorded.defects_opened == ((), (opened,)) and recorded.defects_closed == ((opened,), ())
    assert not table.defects[opened].is_open


ANSWER_VALUES = st.one_of(st.none(), st.sampled_from(["pass", "fail", "ok", "", "2.5"]), st.integers(-3, 5),
                          st.floats(allow_nan=True), st.booleans(), st.lists(st.integers(), max_size=1))


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(answers=st.one_of(st.none(), st.dictionaries(st.sampled_from(["brakes", "horn", "tyres", ""]), ANSWER_VALUES,
                                                     max_size=4)))
def test_any_answers_are_recorded_or_refused_naming_only_answers(table: InMemoryTable,
                                                                 answers: dict[str, Any] | None) -> None:
    before = (len(table.writes), dict(table.recorded), dict(table.defects))
    at = T0 + timedelta(hours=7, seconds=len(table.recorded))  # a new check each time
    try:
        recorded = record_checks(table, [check(at, answers)], now=NOW, recorded_by="ann")
    except ChecksRefused as refused:
        assert all(p.kind == Refusal.BAD_ANSWER and p.field.startswith("answers") for p in refused.problems)
        assert (len(table.writes), dict(table.recorded), dict(table.defects)) == before  # nothing written
        return
    assert answers is not None and answers.get("brakes") in ("pass", "fail") and answers.get("horn") in ("pass", "fail")
    [found] = recorded.findings
    assert found.items_revision == 1 and found.passed_critical == (answers["brakes"] == "pass")
    assert bool(recorded.defects_opened[0]) == (answers["brakes"] == "fail")
