"""The record-a-check use case (missed_checks.performed_checks.recording) over the in-memory fake: validation of every
row before anything is written, the assignment at performed_at, the future skew and the client
idempotency key (a retry never records twice; the same key for other checks is a conflict)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from missed_checks.checklists.checklist import Checklist
from missed_checks.equipment.assignments import Assignment
from missed_checks.errors import InvalidInput
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks.performed_checks.recording import (
    MAX_FUTURE_SKEW,
    ChecksRefused,
    IdempotencyConflict,
    Refusal,
    Row,
    check_from,
    record_checks,
    rows_from,
)
from tests.fakes import InMemoryTable

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ASSIGNED = datetime(2026, 3, 1, tzinfo=UTC)
RIGA = ZoneInfo("Europe/Riga")
RULE = "DTSTART;TZID=Europe/Riga:20260301T060000\nRRULE:FREQ=DAILY"


@pytest.fixture
def table() -> InMemoryTable:
    table = InMemoryTable()
    table.add_checklist(Checklist("forklift-daily", RULE, window="PT8H", grace="PT30M", created_at=ASSIGNED))
    table.assign("forklift-daily", ["FL-1", "FL-2"], ASSIGNED)
    return table


def one(equipment: str = "FL-1", at: datetime = NOW - timedelta(hours=1), checklist: str = "forklift-daily") -> Row:
    return Row(PerformedCheck(checklist, equipment, at))


def test_a_check_is_recorded_with_who_and_when(table: InMemoryTable) -> None:
    recorded = record_checks(table, [one()], now=NOW, recorded_by="arn:aws:iam::123456789012:user/tablet")
    assert (recorded.written, recorded.replayed) == (1, False)
    assert table.recorded[("forklift-daily", "FL-1", "2026-03-02T08:00:00Z")] == (
        "2026-03-02T09:00:00Z", "arn:aws:iam::123456789012:user/tablet")


def test_equipment_not_assigned_at_performed_at_is_refused_and_nothing_is_written(table: InMemoryTable) -> None:
    table.assigned["forklift-daily"].append(
        Assignment("forklift-daily", "FL-9", ASSIGNED, unassigned_at=NOW - timedelta(hours=3)))
    rows = [one("FL-1"), Row(PerformedCheck("forklift-daily", "FL-X", NOW), "line 3"),
            Row(PerformedCheck("forklift-daily", "FL-9", NOW - timedelta(hours=2)), "line 4"),
            Row(PerformedCheck("forklift-daily", "FL-2", ASSIGNED - timedelta(seconds=1)), "line 5")]
    with pytest.raises(ChecksRefused) as refused:
        record_checks(table, rows, now=NOW, recorded_by="cli:ops")
    problems = refused.value.problems
    assert [(p.row, p.field, p.kind) for p in problems] == [
        ("line 3", "equipment_id", Refusal.NOT_ASSIGNED), ("line 4", "equipment_id", Refusal.NOT_ASSIGNED),
        ("line 5", "equipment_id", Refusal.NOT_ASSIGNED)]
    assert "was never assigned" in problems[0].detail and "was not assigned at" in problems[1].detail
    assert table.writes == [] and table.recorded == {}


def test_an_assignment_period_is_half_open_and_earlier_periods_count(table: InMemoryTable) -> None:
    back = NOW - timedelta(hours=5)
    table.assigned["forklift-daily"].append(Assignment(
        "forklift-daily", "FL-7", back, earlier_periods=((ASSIGNED, ASSIGNED + timedelta(hours=2)),)))
    ok = [one("FL-7", ASSIGNED), one("FL-7", back), one("FL-2", ASSIGNED)]
    assert record_checks(table, ok, now=NOW, recorded_by="x").written == 3
    for at in (ASSIGNED + timedelta(hours=2), back - timedelta(seconds=1)):
        with pytest.raises(ChecksRefused):
            record_checks(table, [one("FL-7", at)], now=NOW, recorded_by="x")


def test_future_beyond_the_skew_and_unknown_checklists_are_named(table: InMemoryTable) -> None:
    at_edge = NOW.astimezone(RIGA) + MAX_FUTURE_SKEW
    assert record_checks(table, [one(at=at_edge)], now=NOW, recorded_by="x").written == 1
    with pytest.raises(ChecksRefused) as refused:
        record_checks(table, [one(at=at_edge + timedelta(seconds=1)), one(checklist="nope")], now=NOW,
                      recorded_by="x")
    assert [(p.field, p.kind) for p in refused.value.problems] == [
        ("performed_at", Refusal.IN_FUTURE), ("checklist_id", Refusal.UNKNOWN_CHECKLIST)]
    assert "in the future" in refused.value.problems[0].detail


def test_documents_are_read_with_every_bad_field_named() -> None:
    assert check_from({"checklist_id": "c", "equipment_id": "FL-1", "performed_at": "2026-03-02T08:00:00+02:00"}
                      ).performed_at == datetime(2026, 3, 2, 6, tzinfo=UTC)
    with pytest.raises(ChecksRefused) as refused:
        rows_from([{"checklist_id": "c", "equipment_id": "FL-1", "performed_at": "2026-03-02T08:00:00"},
                   {"checklist_id": "bad id", "equipment_id": "FL 1", "colour": "red"}, 5])
    assert [(p.row, p.field) for p in refused.value.problems] == [
        ("checks[0]", "performed_at"), ("checks[1]", "colour"), ("checks[1]", "checklist_id"),
        ("checks[1]", "equipment_id"), ("checks[1]", "performed_at"), ("checks[2]", "check")]
    assert "no UTC offset" in refused.value.problems[0].detail
    for empty in ([], None, {"checks": []}):
        with pytest.raises(ChecksRefused):
            rows_from(empty)


def test_a_retry_with_the_same_key_records_once_and_answers_the_same(table: InMemoryTable) -> None:
    rows = [one("FL-1"), one("FL-2")]
    first = record_checks(table, rows, now=NOW, recorded_by="app", idempotency_key="k-1")
    later = NOW + timedelta(minutes=3)
    again = record_checks(table, [one("FL-1"), one("FL-2")], now=later, recorded_by="app", idempotency_key="k-1")
    assert (again.written, again.recorded_at, again.replayed) == (2, first.recorded_at, True)
    assert [w for w in table.writes if w[0] == "record_performed_check"] == [
        ("record_performed_check", "forklift-daily/FL-1@2026-03-02T08:00:00Z"),
        ("record_performed_check", "forklift-daily/FL-2@2026-03-02T08:00:00Z")]
    with pytest.raises(IdempotencyConflict):
        record_checks(table, [one("FL-1")], now=later, recorded_by="app", idempotency_key="k-1")
    # keys belong to a caller: another caller's k-1 is a request of its own (no conflict); its check
    # was on record already, so it writes nothing and answers app's record
    other = record_checks(table, [one("FL-1")], now=later, recorded_by="other", idempotency_key="k-1")
    assert (other.replayed, other.written, other.recorded_by, other.recorded_at) == (True, 0, "app", NOW)


def test_a_retry_after_an_unfinished_attempt_writes_the_same_recorded_at(table: InMemoryTable) -> None:
    table.fail_on["finish_client_request"] = TimeoutError("the first attempt died after writing")
    with pytest.raises(TimeoutError):
        record_checks(table, [one()], now=NOW, recorded_by="app", idempotency_key="k-2")
    retry = record_checks(table, [one()], now=NOW + timedelta(minutes=1), recorded_by="app", idempotency_key="k-2")
    assert (retry.replayed, retry.recorded_at) == (False, NOW)
    assert table.recorded[("forklift-daily", "FL-1", "2026-03-02T08:00:00Z")][0] == "2026-03-02T09:00:00Z"
    assert len(table.performed["forklift-daily"]) == 1


def test_a_refused_request_leaves_its_key_free_for_the_corrected_one(table: InMemoryTable) -> None:
    with pytest.raises(ChecksRefused):
        record_checks(table, [one("FL-TYPO")], now=NOW, recorded_by="app", idempotency_key="k-3")
    assert table.client_requests == {}
    assert record_checks(table, [one("FL-1")], now=NOW, recorded_by="app", idempotency_key="k-3").written == 1
    with pytest.raises(InvalidInput) as refused:
        record_checks(table, [one()], now=NOW, recorded_by="app", idempotency_key="not a key!")
    assert refused.value.field == "Idempotency-Key"


def test_a_check_that_will_count_in_no_report_is_written_with_a_warning_saying_why(table: InMemoryTable) -> None:
    """Issue #29: a check dated far outside what the stack judges was accepted without a word and
    counted nowhere. It is still written (it may be true), with a warning that says why it counts
    in no report; checks in a window, on time or late, get none."""
    in_window = one(at=datetime(2026, 3, 2, 7, 0, tzinfo=RIGA))
    late = one("FL-2", at=datetime(2026, 3, 2, 14, 10, tzinfo=RIGA))  # in the grace: late, counted
    assert record_checks(table, [in_window, late], now=datetime(2026, 3, 2, 16, 0, tzinfo=RIGA),
                         recorded_by="cli:ops").warnings == ()
    between = Row(PerformedCheck("forklift-daily", "FL-1", datetime(2026, 3, 2, 15, 0, tzinfo=RIGA)), "line 2")
    recorded = record_checks(table, [between], now=datetime(2026, 3, 2, 16, 0, tzinfo=RIGA), recorded_by="cli:ops")
    assert recorded.written == 1
    assert recorded.warnings == (
        "line 2: FL-1 at 2026-03-02T13:00:00Z: recorded, but it lies in no occurrence window of checklist "
        "'forklift-daily' (start to end + grace), so it counts in no report: is the date right?",)
    assert recorded.to_dict()["warnings"] == list(recorded.warnings)


def test_a_check_before_its_checklist_existed_is_written_with_a_warning(table: InMemoryTable) -> None:
    created = datetime(2026, 3, 3, 10, 0, tzinfo=RIGA)  # during the window of 3 March
    table.add_checklist(Checklist("yard-daily", RULE, window="PT8H", grace="PT30M", created_at=created))
    table.assign("yard-daily", ["FL-1"], ASSIGNED)
    now = datetime(2026, 3, 3, 12, 0, tzinfo=RIGA)
    before = Row(PerformedCheck("yard-daily", "FL-1", datetime(2026, 3, 2, 7, 0, tzinfo=RIGA)))
    recorded = record_checks(table, [before], now=now, recorded_by="cli:ops")
    assert recorded.warnings == (
        "FL-1 at 2026-03-02T05:00:00Z: recorded, but it was performed before checklist 'yard-daily' was created "
        "(2026-03-03T08:00:00Z), so no window of it judges this check and it counts in no report: is the date right?",)
    # the window it was created in is judged (it ends after the creation): a check early in it counts
    early_that_day = Row(PerformedCheck("yard-daily", "FL-1", datetime(2026, 3, 3, 7, 0, tzinfo=RIGA)))
    assert record_checks(table, [early_that_day], now=now, recorded_by="cli:ops").warnings == ()


def test_a_check_posted_again_keeps_its_first_record_and_answers_it_as_a_replay(table: InMemoryTable) -> None:
    """Found by an adversarial user: the same check posted again without an idempotency key rewrote
    its recorded_by and recorded_at, so one person's record became another's. The first record
    stays, whoever posts it later and with or without a key, and the answer is a replay giving it."""
    first = record_checks(table, [one()], now=NOW, recorded_by="arn:aws:iam::123456789012:user/alice")
    assert (first.written, first.replayed) == (1, False)
    key = ("forklift-daily", "FL-1", "2026-03-02T08:00:00Z")
    later = NOW + timedelta(hours=2)
    for idempotency_key in (None, "bob-1"):
        again = record_checks(table, [one()], now=later, recorded_by="arn:aws:iam::123456789012:user/bob",
                              idempotency_key=idempotency_key)
        assert table.recorded[key] == ("2026-03-02T09:00:00Z", "arn:aws:iam::123456789012:user/alice")
        assert (again.recorded_by, again.recorded_at, again.replayed) == (
            "arn:aws:iam::123456789012:user/alice", NOW, True)
        assert (again.written, again.already_recorded) == (0, 1)
        assert again.to_dict()["checks"][0]["recorded_by"] == "arn:aws:iam::123456789012:user/alice"
        assert table.recorded[key] == ("2026-03-02T09:00:00Z", "arn:aws:iam::123456789012:user/alice")
    # bob's key answers the same on a retry: nothing written, alice's record
    retry = record_checks(table, [one()], now=later + timedelta(minutes=1),
                          recorded_by="arn:aws:iam::123456789012:user/bob", idempotency_key="bob-1")
    assert (retry.replayed, retry.written, retry.recorded_by) == (True, 0, "arn:aws:iam::123456789012:user/alice")
    assert [w for w in table.writes if w[0] == "record_performed_check"] == [
        ("record_performed_check", "forklift-daily/FL-1@2026-03-02T08:00:00Z")]


def test_a_batch_writes_its_new_checks_and_leaves_those_on_record_as_they_were(table: InMemoryTable) -> None:
    record_checks(table, [one("FL-1")], now=NOW, recorded_by="alice")
    later = NOW + timedelta(minutes=30)
    batch = record_checks(table, [one("FL-1"), one("FL-2"), one("FL-2")], now=later, recorded_by="bob")
    assert (batch.replayed, batch.written, batch.already_recorded) == (False, 1, 1)
    assert (batch.recorded_by, batch.recorded_at) == ("bob", later)
    assert [(c["equipment_id"], c["recorded_by"]) for c in batch.to_dict()["checks"]] == [
        ("FL-1", "alice"), ("FL-2", "bob"), ("FL-2", "bob")]
    assert table.recorded[("forklift-daily", "FL-1", "2026-03-02T08:00:00Z")] == ("2026-03-02T09:00:00Z", "alice")
    assert table.recorded[("forklift-daily", "FL-2", "2026-03-02T08:00:00Z")] == ("2026-03-02T09:30:00Z", "bob")


def test_a_concurrent_attempt_of_the_same_request_counts_none_as_written_by_itself(table: InMemoryTable) -> None:
    """#34: the ChecksRecorded metric counted concurrent replays as new records. Attempt A of a keyed
    request has claimed its key and written its checks but not finished when attempt B (a client's
    retry) arrives: B answers what the request wrote, and wrote nothing itself (written_now)."""
    from missed_checks.performed_checks.recording import fingerprint

    rows = [one("FL-1"), one("FL-2")]
    checks = [row.check for row in rows]
    table.claim_client_request("arn:tablet", "k-1", fingerprint(checks), NOW)  # attempt A, still running
    table.record_performed_checks(checks, NOW, "arn:tablet")
    retry = record_checks(table, rows, now=NOW + timedelta(seconds=1), recorded_by="arn:tablet",
                          idempotency_key="k-1")
    assert (retry.written, retry.written_now, retry.already_recorded) == (2, 0, 0)
    fresh = record_checks(table, [one("FL-1", at=NOW - timedelta(hours=2))], now=NOW, recorded_by="arn:tablet",
                          idempotency_key="k-2")
    assert (fresh.written, fresh.written_now) == (1, 1)
