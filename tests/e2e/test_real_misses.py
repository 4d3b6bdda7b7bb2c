"""#23's must-show run, end to end on the local runtime: only real misses.

The bundled scenario ``src/missed_checks_local/scenarios/real-misses.json`` (played once by the
``real_misses`` fixture): three checklists in two zones share the closure calendar
``site-holidays`` (27 March and 3 April at first; edited on 30 March 12:00 UTC to 25 March, 27
March and 2 April: 25 March added after its windows were judged, 3 April reopened, 2 April
closed); FL-1 is out of service from Thursday 26 March 10:00 UTC to Wednesday 1 April 07:00 UTC,
across Berlin's change to summer time on Sunday 29 March; two checks are synced six hours after
their windows were judged; FL-4 is unassigned and FL-3 sold (out of service, open-ended) after
four misses in a row; a missed check is dismissed; ny-daily's last firing fails (pending).

Every expectation below is written out by hand from the scenario's events (docs/report-outcomes.md
works them out), never computed by the code under test: each window's start in UTC (Berlin is
UTC+1 until 29 March, UTC+2 from then; New York UTC-4 all period), its outcome, and the facts
behind the recorded-late and excused ones.
"""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.filterwarnings("ignore:No application metrics to publish:UserWarning"),
]

ON, L, M, R, D, X, P = "on_time", "late", "missed", "recorded_late", "dismissed", "excused", "pending"

# berlin-daily: 06:00-14:00 Berlin (05:00-13:00Z, from 29 March 04:00-12:00Z), grace 1 h.
# berlin-workdays: 07:00-11:00 Berlin, Mon-Fri (06:00-10:00Z, from 30 March 05:00-09:00Z), grace 30 min.
# ny-daily: 08:00-14:00 New York (12:00-18:00Z), grace 1 h.
# No window on 27 March (closed in both revisions) or 2 April (closed by the edit, before it came);
# 25 March stays judged (closed only after it was); 3 April was reopened by the edit.
EXPECTED = {
    ("berlin-daily", "FL-1"): [
        ("2026-03-23T05:00:00Z", ON), ("2026-03-24T05:00:00Z", L), ("2026-03-25T05:00:00Z", ON),
        ("2026-03-26T05:00:00Z", X),  # out of service from 10:00Z, inside the window
        ("2026-03-28T05:00:00Z", ON),  # done anyway while out of service: it counts
        ("2026-03-29T04:00:00Z", X), ("2026-03-30T04:00:00Z", X), ("2026-03-31T04:00:00Z", X),
        ("2026-04-01T04:00:00Z", X),  # back in service at 07:00Z, inside the window
        ("2026-04-03T04:00:00Z", ON)],
    ("berlin-daily", "FL-2"): [
        ("2026-03-23T05:00:00Z", ON), ("2026-03-24T05:00:00Z", R), ("2026-03-25T05:00:00Z", M),
        ("2026-03-26T05:00:00Z", ON), ("2026-03-28T05:00:00Z", D), ("2026-03-29T04:00:00Z", ON),
        ("2026-03-30T04:00:00Z", L), ("2026-03-31T04:00:00Z", M), ("2026-04-01T04:00:00Z", M),
        ("2026-04-03T04:00:00Z", M)],
    ("berlin-daily", "FL-4"): [  # unassigned at 27 March 00:00Z: nothing after
        ("2026-03-23T05:00:00Z", M), ("2026-03-24T05:00:00Z", M), ("2026-03-25T05:00:00Z", M),
        ("2026-03-26T05:00:00Z", M)],
    ("berlin-workdays", "FL-1"): [
        ("2026-03-23T06:00:00Z", ON), ("2026-03-24T06:00:00Z", ON), ("2026-03-25T06:00:00Z", M),
        ("2026-03-26T06:00:00Z", M),  # ends 10:00Z, as the period begins: no instant shared, not excused
        ("2026-03-30T05:00:00Z", X), ("2026-03-31T05:00:00Z", X), ("2026-04-01T05:00:00Z", X),
        ("2026-04-03T05:00:00Z", L)],
    ("berlin-workdays", "FL-3"): [  # sold from 27 March 00:00Z, open-ended
        ("2026-03-23T06:00:00Z", M), ("2026-03-24T06:00:00Z", M), ("2026-03-25T06:00:00Z", M),
        ("2026-03-26T06:00:00Z", M), ("2026-03-30T05:00:00Z", X), ("2026-03-31T05:00:00Z", X),
        ("2026-04-01T05:00:00Z", X), ("2026-04-03T05:00:00Z", X)],
    ("ny-daily", "NY-1"): [
        ("2026-03-23T12:00:00Z", ON), ("2026-03-24T12:00:00Z", M), ("2026-03-25T12:00:00Z", R),
        ("2026-03-26T12:00:00Z", ON), ("2026-03-28T12:00:00Z", ON), ("2026-03-29T12:00:00Z", ON),
        ("2026-03-30T12:00:00Z", ON), ("2026-03-31T12:00:00Z", ON), ("2026-04-01T12:00:00Z", ON),
        ("2026-04-03T12:00:00Z", P)],  # its firing failed: closed, not judged yet
}
# expected, on time, late, missed, recorded late, dismissed, excused, pending, compliance %
ROWS = {
    ("berlin-daily", "FL-1"): (5, 4, 1, 0, 0, 0, 5, 0, 100.0),
    ("berlin-daily", "FL-2"): (10, 3, 1, 4, 1, 1, 0, 0, 44.44),  # 4 done of 9 (dismissed left out)
    ("berlin-daily", "FL-4"): (4, 0, 0, 4, 0, 0, 0, 0, 0.0),
    ("berlin-workdays", "FL-1"): (5, 2, 1, 2, 0, 0, 3, 0, 60.0),
    ("berlin-workdays", "FL-3"): (4, 0, 0, 4, 0, 0, 4, 0, 0.0),
    ("ny-daily", "NY-1"): (9, 7, 0, 1, 1, 0, 0, 1, 77.78),  # 7 done of 9
}
TOTAL = (37, 16, 3, 15, 2, 1, 12, 1, 52.78)  # 19 done of 36
COLUMNS = ("expected", "on_time", "late", "missed", "recorded_late", "dismissed", "excused", "pending",
           "compliance_pct")
EDIT_AT = "2026-03-30T12:00:00Z"


@pytest.fixture(scope="module")
def document(real_misses: dict[str, Any]) -> dict[str, Any]:
    """The report as the ``report`` command's JSON (with its windows)."""
    return real_misses["report"].to_dict()


def test_every_window_has_the_outcome_a_reader_computes_by_hand(document: dict[str, Any]) -> None:
    got: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for window in document["windows"]:
        got.setdefault((window["checklist_id"], window["equipment_id"]), []).append(
            (window["window_start"], window["outcome"]))
    assert got == EXPECTED


def test_the_rows_and_the_fleet_total(document: dict[str, Any]) -> None:
    rows = {(r["checklist_id"], r["equipment_id"]): tuple(r[c] for c in COLUMNS) for r in document["rows"]}
    assert rows == ROWS
    assert tuple(document["total"][c] for c in COLUMNS) == TOTAL
    assert document["warnings"] == []


def test_checks_synced_after_judging_attach_to_the_missed_record(real_misses: dict[str, Any],
                                                                 document: dict[str, Any]) -> None:
    late = {(w["checklist_id"], w["equipment_id"]): w for w in document["windows"] if w["outcome"] == R}
    fl2, ny1 = late[("berlin-daily", "FL-2")], late[("ny-daily", "NY-1")]
    # done 07:00Z in the 05:00-13:00Z window, judged missed at the 14:00Z close, recorded 20:00Z
    assert (fl2["performed_at"], fl2["recorded_at"], fl2["recorded_after_close_s"]) == (
        "2026-03-24T07:00:00Z", "2026-03-24T20:00:00Z", 6 * 3600)
    assert "2026-03-24T14:00:00Z" <= fl2["judged_at"] < "2026-03-24T20:00:00Z"
    # done 18:30Z, in the grace period (18:00-19:00Z), recorded 01:00Z the next day
    assert (ny1["performed_at"], ny1["recorded_at"], ny1["recorded_after_close_s"]) == (
        "2026-03-25T18:30:00Z", "2026-03-26T01:00:00Z", 6 * 3600)
    # the missed records stay as written (history never changes)
    records = {(m["checklist"], m["equipment"], m["window_start"]) for m in real_misses["missed"]}
    assert {("berlin-daily", "FL-2", "2026-03-24T05:00:00Z"), ("ny-daily", "NY-1", "2026-03-25T12:00:00Z")} <= records
    assert len(records) == 15 + 2 + 1  # every missed, recorded-late and dismissed window has its record


def test_excused_windows_carry_their_period_and_write_no_missed_check(real_misses: dict[str, Any],
                                                                      document: dict[str, Any]) -> None:
    workshop = {"from": "2026-03-26T10:00:00Z", "to": "2026-04-01T07:00:00Z", "reason": "gearbox in the workshop"}
    sold = {"from": "2026-03-27T00:00:00Z", "to": None, "reason": "sold, awaiting pickup"}
    excused = [w for w in document["windows"] if w["outcome"] == X]
    assert {w["equipment_id"]: w["out_of_service"] for w in excused} == {"FL-1": workshop, "FL-3": sold}
    missed = {(m["checklist"], m["equipment"], m["window_start"]) for m in real_misses["missed"]}
    assert not missed & {(w["checklist_id"], w["equipment_id"], w["window_start"]) for w in excused}
    assert document["out_of_service"] == {"FL-1": [workshop], "FL-3": [sold]}


def test_the_calendar_edit_changes_no_judged_window(real_misses: dict[str, Any]) -> None:
    judged = real_misses["judged"]
    for checklist, records in judged.items():
        for record in records:
            closed_before_edit = record["evaluate_at"] <= EDIT_AT
            revision = record["judged_by"]["closed_on"]["site-holidays"]
            assert revision == (1 if closed_before_edit else 2), (checklist, record["window_start"])
            if closed_before_edit:  # judged once, before the edit, and never again
                assert record["judged_at"] < EDIT_AT, (checklist, record["window_start"])
    starts = {checklist: {r["window_start"][:10] for r in records} for checklist, records in judged.items()}
    for checklist in ("berlin-daily", "ny-daily"):
        assert "2026-03-25" in starts[checklist]  # closed only after it was judged: it stays judged
        assert not {"2026-03-27", "2026-04-02"} & starts[checklist]
    assert "2026-04-03" in starts["berlin-daily"]  # reopened by the edit before it came
    assert "2026-04-03" not in starts["ny-daily"]  # its firing failed: pending
