"""The storage contract: what the evaluation and recording rely on from the table, asserted alike on
the in-memory fake (``tests/fakes.py``, the fast lane's) and on the DynamoDB adapter
(:class:`missed_checks.aws.table.ChecklistTable` on moto, the table as ``template.yaml`` declares it).

Every port method the fakes implement is here: :mod:`missed_checks.evaluation.ports`' ``EvaluationStore``
(ChecklistReader, EquipmentReader, WindowRecords, OutOfServiceReader), ``RecordingStore`` and
``NotificationRecords``, saving's ``ChecklistStore`` (:mod:`missed_checks.checklists.ports`),
schedule-sync's ``Table`` (:mod:`missed_checks.checklists.schedule_sync`), the sites', the
registry's and the grants' stores (#31: :mod:`missed_checks.sites.ports`, :mod:`missed_checks.equipment.ports`,
:mod:`missed_checks.permissions.ports`), and
the claim's hand-over a dead-letter replay uses. Each test says what a user
relies on: nothing written twice, nothing lost, nothing rewritten, the order the port promises. Where
the two disagree, the adapter is the truth and the fake is fixed.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from typing import TypeVar
from zoneinfo import ZoneInfo

import pytest

from missed_checks.aws.table.checklists import checklist_item
from missed_checks.checklists.checklist import Checklist, JudgedBy
from missed_checks.checklists.recurrence import OccurrenceWindow, parse_recurrence
from missed_checks.checklists.saving import save_checklist
from missed_checks.checklists.schedule_sync import ScheduleNote, SyncError
from missed_checks.equipment.assignments import SHARD_COUNT, shard_of
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.equipment.registration import RegisteredEquipment, SiteMove
from missed_checks.errors import Conflict, InvalidInput, NotFound, PreconditionFailed
from missed_checks.evaluation.missed_check import MissedCheck
from missed_checks.evaluation.ports import (
    CheckRecord,
    ClaimHolder,
    ClientRequest,
    JudgedWindow,
    NotificationClaim,
    NotificationRecords,
)
from missed_checks.notifications.notification import Kind, Notification
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks.permissions.grant import Grant
from missed_checks.permissions.role import Role
from missed_checks.sites.site import Site
from missed_checks.timefmt import to_utc_iso
from tests.contract.stores import RULE, WINDOW, DynamoDBStore, InMemoryStore

Given = InMemoryStore | DynamoDBStore
T = TypeVar("T")

BERLIN = ZoneInfo("Europe/Berlin")
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
MONDAY, TUESDAY = parse_recurrence(RULE, window=WINDOW).windows(T0, T0 + timedelta(days=3))[:2]
"""Monday 2 March 05:00-13:00 UTC and Tuesday 3 March, the checklist's first two windows."""
JUDGED_BY = JudgedBy(RULE, window=WINDOW)
FIRST, SECOND = "arn:execution:first", "arn:execution:second"

MANY = 120
"""More items than a page holds (``given.small_pages()``), and more than one BatchGetItem's 100 keys."""


def missed(equipment_id: str, window: OccurrenceWindow = MONDAY, execution: str = FIRST,
           checklist_id: str = "forklift", judged_at: datetime = T0) -> MissedCheck:
    return MissedCheck(checklist_id=checklist_id, equipment_id=equipment_id, window=window, judged_at=judged_at,
                       execution=execution)


def summary(missed_count: int, newly: int, window: OccurrenceWindow = MONDAY) -> JudgedWindow:
    """What a window's judgement totals (the claim records them)."""
    return JudgedWindow(window=window, equipment_counted=3, performed=3 - missed_count, missed=missed_count,
                        newly_recorded=newly, excused=0, judged_at=datetime(2026, 3, 2, 13, 30, tzinfo=UTC))


def fleet(count: int) -> list[str]:
    return [f"fl-{n:03d}" for n in range(count)]


def at_once(write: Callable[[int], T], writers: int = 8) -> list[T]:
    """``write(n)`` for ``n`` in ``range(writers)``, each in its own thread, released together, the
    interpreter switching threads as often as it can (as concurrent Lambda invocations interleave)."""
    barrier = threading.Barrier(writers)
    results: dict[int, T] = {}

    def run(n: int) -> None:
        barrier.wait()
        results[n] = write(n)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=run, args=(n,)) for n in range(writers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert len(results) == writers, "a writer failed"
    return [results[n] for n in range(writers)]


# -- ChecklistReader and the watermark -------------------------------------------------------------
def test_a_checklist_never_written_reads_as_none(given: Given) -> None:
    assert given.store.get_checklist("forklift") is None


def test_a_checklist_reads_back_with_its_rule_and_the_watermark_the_evaluation_advanced(given: Given) -> None:
    given.add_checklist("forklift", T0)
    before = given.store.get_checklist("forklift")
    assert before is not None
    assert (before.checklist_id, before.recurrence, before.window, before.evaluated_until) == (
        "forklift", RULE, WINDOW, None)
    assert given.store.advance_watermark("forklift", MONDAY.evaluate_at)
    after = given.store.get_checklist("forklift")
    assert after is not None and after.evaluated_until == MONDAY.evaluate_at
    assert after.watermark == MONDAY.evaluate_at


def test_the_watermark_only_moves_forward(given: Given) -> None:
    given.add_checklist("forklift", T0)
    mark = MONDAY.evaluate_at
    assert given.store.advance_watermark("forklift", mark) is True
    assert given.store.advance_watermark("forklift", mark) is False  # a retry: already there
    assert given.store.advance_watermark("forklift", mark - timedelta(hours=1)) is False  # a late, older run
    checklist = given.store.get_checklist("forklift")
    assert checklist is not None and checklist.evaluated_until == mark
    assert given.store.advance_watermark("forklift", TUESDAY.evaluate_at) is True
    checklist = given.store.get_checklist("forklift")
    assert checklist is not None and checklist.evaluated_until == TUESDAY.evaluate_at


def test_the_watermark_compares_instants_whatever_the_zone_they_are_given_in(given: Given) -> None:
    given.add_checklist("forklift", T0)
    mark = MONDAY.evaluate_at.astimezone(UTC)
    assert given.store.advance_watermark("forklift", mark)
    assert given.store.advance_watermark("forklift", mark.astimezone(BERLIN)) is False  # the same instant
    # 14:30 Berlin is later than 13:30 UTC's clock reading, but the same instant: no move
    assert given.store.advance_watermark("forklift", (mark + timedelta(seconds=1)).astimezone(BERLIN)) is True
    checklist = given.store.get_checklist("forklift")
    assert checklist is not None and checklist.evaluated_until == mark + timedelta(seconds=1)


def test_each_checklist_has_its_own_watermark(given: Given) -> None:
    given.add_checklist("forklift", T0)
    given.add_checklist("crane", T0)
    assert given.store.advance_watermark("forklift", TUESDAY.evaluate_at)
    assert given.store.advance_watermark("crane", MONDAY.evaluate_at)  # behind another's: still forward for it
    forklift, crane = given.store.get_checklist("forklift"), given.store.get_checklist("crane")
    assert forklift is not None and crane is not None
    assert (forklift.evaluated_until, crane.evaluated_until) == (TUESDAY.evaluate_at, MONDAY.evaluate_at)


# -- missed checks ---------------------------------------------------------------------------------
def test_a_missed_check_is_written_once_whoever_writes_it_again(given: Given) -> None:
    assert given.store.put_missed_check(missed("fl-1")) is True
    assert given.store.put_missed_check(missed("fl-1")) is False  # a retry
    assert given.store.put_missed_check(missed("fl-1", execution=SECOND, judged_at=T0 + timedelta(hours=5))) is False
    assert given.store.missed_equipment_of_window("forklift", MONDAY.start) == ["fl-1"]


def test_concurrent_writes_of_one_missed_check_write_it_once(given: Given) -> None:
    written = at_once(lambda n: given.store.put_missed_check(missed("fl-1", execution=f"arn:execution:{n}")))
    assert written.count(True) == 1  # counted once in the window's newly recorded
    assert given.store.missed_equipment_of_window("forklift", MONDAY.start) == ["fl-1"]


def test_the_missed_equipment_of_a_window_is_that_window_and_checklist_alone_sorted(given: Given) -> None:
    for equipment_id in ("fl-3", "fl-1", "fl-2"):
        given.store.put_missed_check(missed(equipment_id))
    given.store.put_missed_check(missed("fl-9", window=TUESDAY))
    given.store.put_missed_check(missed("cr-1", checklist_id="crane"))
    assert given.store.missed_equipment_of_window("forklift", MONDAY.start) == ["fl-1", "fl-2", "fl-3"]
    assert given.store.missed_equipment_of_window("forklift", MONDAY.start.astimezone(UTC)) == ["fl-1", "fl-2", "fl-3"]
    assert given.store.missed_equipment_of_window("forklift", TUESDAY.start) == ["fl-9"]
    assert given.store.missed_equipment_of_window("crane", MONDAY.start) == ["cr-1"]
    assert given.store.missed_equipment_of_window("crane", TUESDAY.start) == []


def test_the_missed_equipment_of_a_window_larger_than_a_page_is_read_whole_once(given: Given) -> None:
    equipment = fleet(MANY)
    assert sum(given.store.put_missed_check(missed(e)) for e in reversed(equipment)) == MANY
    with given.small_pages():
        assert given.store.missed_equipment_of_window("forklift", MONDAY.start) == equipment


# -- the window's claim ----------------------------------------------------------------------------
def test_an_opened_window_is_claimed_by_nobody_until_an_execution_claims_it(given: Given) -> None:
    assert given.store.claim_holder("forklift", MONDAY.start) is None
    given.store.open_window("forklift", MONDAY, JUDGED_BY)
    given.store.open_window("forklift", MONDAY, JUDGED_BY)  # a retry opens it again: no error
    assert given.store.claim_holder("forklift", MONDAY.start) is None
    assert given.store.claim_window("forklift", summary(1, 1), FIRST).won
    assert given.store.claim_holder("forklift", MONDAY.start) == ClaimHolder(FIRST, announced=False)


def test_one_execution_wins_a_window_and_another_loses_without_rewriting_its_totals(given: Given) -> None:
    given.store.open_window("forklift", MONDAY, JUDGED_BY)
    first = given.store.claim_window("forklift", summary(2, 2), FIRST)
    assert (first.won, first.announced, first.holder, first.must_announce) == (True, False, FIRST, True)
    second = given.store.claim_window("forklift", summary(0, 0), SECOND)  # a duplicate delivery, a re-run
    assert (second.won, second.announced, second.holder, second.must_announce) == (False, False, FIRST, False)
    record = given.store.judged_window("forklift", MONDAY.start)
    assert record is not None
    assert (record["execution"], record["missed"], record["newly_recorded"]) == (FIRST, 2, 2)
    assert given.store.claim_holder("forklift", MONDAY.start) == ClaimHolder(FIRST, announced=False)


def test_a_retry_of_the_winner_wins_again_and_keeps_what_it_first_recorded_new(given: Given) -> None:
    given.store.claim_window("forklift", summary(2, 2), FIRST)
    again = given.store.claim_window("forklift", summary(2, 0), FIRST)  # its re-run found both written already
    assert (again.won, again.must_announce) == (True, True)
    record = given.store.judged_window("forklift", MONDAY.start)
    assert record is not None and (record["missed"], record["newly_recorded"]) == (2, 2)


def test_a_window_is_announced_once_even_by_a_retry_of_its_winner(given: Given) -> None:
    given.store.claim_window("forklift", summary(1, 1), FIRST)
    given.store.mark_window_announced("forklift", to_utc_iso(MONDAY.start))
    retry = given.store.claim_window("forklift", summary(1, 0), FIRST)
    assert (retry.won, retry.announced, retry.must_announce) == (True, True, False)
    other = given.store.claim_window("forklift", summary(1, 0), SECOND)
    assert (other.won, other.announced, other.holder) == (False, True, FIRST)
    assert given.store.claim_holder("forklift", MONDAY.start) == ClaimHolder(FIRST, announced=True)


def test_concurrent_claims_of_a_window_have_exactly_one_winner(given: Given) -> None:
    claims = at_once(lambda n: given.store.claim_window("forklift", summary(1, 1), f"arn:execution:{n}"))
    winners = [claim.holder for claim in claims if claim.won]
    assert len(winners) == 1
    assert {claim.holder for claim in claims} == set(winners)
    assert given.store.claim_holder("forklift", MONDAY.start) == ClaimHolder(winners[0], announced=False)


def test_the_first_rule_a_window_is_judged_by_stays(given: Given) -> None:
    given.store.open_window("forklift", MONDAY, JUDGED_BY)
    given.store.open_window("forklift", MONDAY, JudgedBy(RULE, window="PT4H"))  # after an edit
    given.store.claim_window("forklift", summary(0, 0), FIRST)
    record = given.store.judged_window("forklift", MONDAY.start)
    assert record is not None and record["judged_by"] == {"recurrence": RULE, "window": WINDOW}


def test_each_window_has_its_own_claim(given: Given) -> None:
    assert given.store.claim_window("forklift", summary(0, 0, MONDAY), FIRST).won
    assert given.store.claim_window("forklift", summary(0, 0, TUESDAY), SECOND).won
    assert given.store.claim_window("crane", summary(0, 0, MONDAY), SECOND).won
    assert given.store.claim_holder("forklift", TUESDAY.start) == ClaimHolder(SECOND, announced=False)


def test_a_claim_is_handed_over_once_by_its_holder_and_only_before_the_announcement(given: Given) -> None:
    replay = "arn:execution:replay"
    assert given.store.hand_over_window_claim("forklift", MONDAY.start, FIRST, replay) is False  # nobody holds it
    given.store.claim_window("forklift", summary(1, 1), FIRST)
    assert given.store.hand_over_window_claim("forklift", MONDAY.start, SECOND, replay) is False  # not the holder
    assert given.store.hand_over_window_claim("forklift", MONDAY.start, FIRST, replay) is True
    assert given.store.hand_over_window_claim("forklift", MONDAY.start, FIRST, replay) is False  # handed over already
    assert given.store.claim_holder("forklift", MONDAY.start) == ClaimHolder(replay, announced=False)
    assert not given.store.claim_window("forklift", summary(1, 0), FIRST).won  # the failed holder lost it
    taken = given.store.claim_window("forklift", summary(1, 0), replay)
    assert (taken.won, taken.must_announce) == (True, True)
    given.store.mark_window_announced("forklift", to_utc_iso(MONDAY.start))
    assert given.store.hand_over_window_claim("forklift", MONDAY.start, replay, FIRST) is False  # announced


# -- EquipmentReader -------------------------------------------------------------------------------
def assigned_fleets(given: Given) -> list[str]:
    """:data:`MANY` pieces assigned to the forklift checklist (returned), one to the crane checklist."""
    given.add_checklist("forklift", T0)
    given.add_checklist("crane", T0)
    equipment = fleet(MANY)
    given.assign("forklift", equipment, T0)
    given.assign("crane", ["cr-1"], T0)
    return equipment


def test_assignments_are_read_once_each_by_shard_and_counted_over_many_pages(given: Given) -> None:
    equipment = assigned_fleets(given)
    with given.small_pages():
        assert given.store.count_assignments("forklift") == MANY
        everything = given.store.assignments("forklift")
        by_shard = [given.store.assignments("forklift", shard) for shard in range(SHARD_COUNT)]
    assert sorted(a.equipment_id for a in everything) == equipment
    assert {(a.checklist_id, a.assigned_at) for a in everything} == {("forklift", T0)}
    for shard, assignments in enumerate(by_shard):
        assert all(shard_of(a.equipment_id) == shard for a in assignments)
    assert sorted(a.equipment_id for shard in by_shard for a in shard) == equipment
    assert given.store.count_assignments("trolley") == 0 and given.store.assignments("trolley") == []


def test_assigning_again_keeps_one_assignment_with_its_first_date(given: Given) -> None:
    given.add_checklist("forklift", T0)
    given.assign("forklift", ["fl-1", "fl-2"], T0)
    given.assign("forklift", ["fl-2", "fl-3"], T0 + timedelta(days=1))
    assert given.store.count_assignments("forklift") == 3
    dates = {a.equipment_id: a.assigned_at for a in given.store.assignments("forklift")}
    assert dates == {"fl-1": T0, "fl-2": T0, "fl-3": T0 + timedelta(days=1)}


def test_equipment_assigned_again_after_its_unassignment_keeps_its_earlier_period(given: Given) -> None:
    given.add_checklist("forklift", T0)
    given.assign("forklift", ["fl-1"], T0)
    given.unassign("forklift", "fl-1", T0 + timedelta(days=2))
    given.assign("forklift", ["fl-1"], T0 + timedelta(days=5))
    assert given.store.count_assignments("forklift") == 1
    (assignment,) = given.store.assignments("forklift")
    assert (assignment.assigned_at, assignment.unassigned_at) == (T0 + timedelta(days=5), None)
    assert assignment.earlier_periods == ((T0, T0 + timedelta(days=2)),)


def test_performed_checks_are_those_of_the_shard_and_the_half_open_range(given: Given) -> None:
    start, end = MONDAY.start, MONDAY.end
    checks = [PerformedCheck("forklift", "fl-1", start), PerformedCheck("forklift", "fl-1", end - timedelta(seconds=1)),
              PerformedCheck("forklift", "fl-1", end), PerformedCheck("forklift", "fl-1", start - timedelta(seconds=1)),
              PerformedCheck("crane", "fl-1", start + timedelta(hours=1))]
    given.store.record_performed_checks(checks, T0, "alice")
    shard = shard_of("fl-1")
    found = given.store.performed_checks("forklift", shard, start, end)
    assert sorted(c.performed_at for c in found) == [start, end - timedelta(seconds=1)]
    assert {c.checklist_id for c in found} == {"forklift"}
    other = (shard + 1) % SHARD_COUNT
    assert given.store.performed_checks("forklift", other, start, end) == []


def test_performed_checks_over_many_pages_are_read_whole_once(given: Given) -> None:
    at = MONDAY.start + timedelta(hours=1)
    checks = [PerformedCheck("forklift", e, at + timedelta(seconds=n)) for n, e in enumerate(fleet(MANY))]
    assert given.store.record_performed_checks(checks, T0).written == MANY
    with given.small_pages():
        found = [c for shard in range(SHARD_COUNT)
                 for c in given.store.performed_checks("forklift", shard, MONDAY.start, MONDAY.end)]
    assert sorted(found, key=lambda c: c.equipment_id) == checks


# -- OutOfServiceReader ----------------------------------------------------------------------------
def period(equipment_id: str, start: datetime, end: datetime | None) -> OutOfServicePeriod:
    return OutOfServicePeriod.create(equipment_id=equipment_id, start=start, end=end, reason="in the workshop",
                                     recorded_by="ops", recorded_at=T0)


def test_out_of_service_periods_are_those_sharing_an_instant_with_the_range_by_from(given: Given) -> None:
    start, end = MONDAY.start, MONDAY.end
    given.out_of_service(period("fl-2", start - timedelta(days=1), None))  # open-ended, began before
    given.out_of_service(period("fl-1", start - timedelta(days=1), start + timedelta(seconds=1)))  # ends inside
    given.out_of_service(period("fl-3", start + timedelta(hours=2), end + timedelta(days=1)))  # begins inside
    given.out_of_service(period("fl-4", start - timedelta(days=1), start))  # ended as it began: no shared instant
    given.out_of_service(period("fl-5", end, None))  # begins as it ends: none
    found = given.store.out_of_service_periods(start, end)
    assert [(p.equipment_id, p.start) for p in found] == [
        ("fl-1", start - timedelta(days=1)), ("fl-2", start - timedelta(days=1)), ("fl-3", start + timedelta(hours=2))]
    assert [p.equipment_id for p in given.store.out_of_service_periods(start, end, ["fl-3", "fl-2", "fl-9"])] == [
        "fl-2", "fl-3"]
    assert given.store.out_of_service_periods(start, end, []) == []
    # no end: every period not ended by start
    assert [p.equipment_id for p in given.store.out_of_service_periods(start)] == ["fl-1", "fl-2", "fl-3", "fl-5"]


def test_out_of_service_periods_of_a_large_fleet_are_read_whole_once(given: Given) -> None:
    equipment = fleet(60)  # more ids than the adapter filters in its Query (50)
    for n, equipment_id in enumerate(equipment):
        given.out_of_service(period(equipment_id, MONDAY.start - timedelta(minutes=n), None))
    given.out_of_service(period("other", MONDAY.start, None))
    with given.small_pages():
        everything = given.store.out_of_service_periods(MONDAY.start, MONDAY.end)
        of_fleet = given.store.out_of_service_periods(MONDAY.start, MONDAY.end, equipment)
        of_some = given.store.out_of_service_periods(MONDAY.start, MONDAY.end, equipment[:3])
    assert [p.equipment_id for p in everything] == [*reversed(equipment), "other"]
    assert [p.equipment_id for p in of_fleet] == list(reversed(equipment))
    assert [p.equipment_id for p in of_some] == list(reversed(equipment[:3]))


# -- RecordingStore --------------------------------------------------------------------------------
def test_the_assignments_of_pairs_are_those_that_exist(given: Given) -> None:
    equipment = assigned_fleets(given)
    pairs = {("forklift", e) for e in equipment} | {("crane", "cr-1"), ("crane", "fl-001"), ("trolley", "fl-001")}
    found = given.store.assignments_of_pairs(pairs)
    assert set(found) == {("forklift", e) for e in equipment} | {("crane", "cr-1")}
    assert all((a.checklist_id, a.equipment_id) == pair for pair, a in found.items())
    assert given.store.assignments_of_pairs(set()) == {}


def test_a_performed_check_is_written_once_and_keeps_who_recorded_it_first(given: Given) -> None:
    at = MONDAY.start + timedelta(minutes=12)
    check, other = PerformedCheck("forklift", "fl-1", at), PerformedCheck("forklift", "fl-2", at)
    first = given.store.record_performed_checks([check, check], T0, "alice")  # the same check twice in one call
    assert (first.written, dict(first.kept)) == (1, {})
    again = given.store.record_performed_checks([other, check], T0 + timedelta(hours=1), "bob")
    key = ("forklift", "fl-1", "2026-03-02T05:12:00Z")
    assert (again.written, dict(again.kept)) == (1, {key: CheckRecord("2026-03-01T09:00:00Z", "alice")})
    assert given.store.performed_check_records([check, other, PerformedCheck("forklift", "fl-3", at)]) == {
        key: CheckRecord("2026-03-01T09:00:00Z", "alice"),
        ("forklift", "fl-2", "2026-03-02T05:12:00Z"): CheckRecord("2026-03-01T10:00:00Z", "bob")}
    shard_checks = given.store.performed_checks("forklift", shard_of("fl-1"), MONDAY.start, MONDAY.end)
    assert [c for c in shard_checks if c.equipment_id == "fl-1"] == [check]


def test_the_same_instant_in_another_zone_is_the_same_performed_check(given: Given) -> None:
    at = MONDAY.start + timedelta(minutes=12)
    given.store.record_performed_checks([PerformedCheck("forklift", "fl-1", at)], T0, "alice")
    again = given.store.record_performed_checks([PerformedCheck("forklift", "fl-1", at.astimezone(BERLIN))],
                                                T0 + timedelta(hours=1), "bob")
    assert (again.written, list(again.kept.values())) == (0, [CheckRecord("2026-03-01T09:00:00Z", "alice")])


def test_concurrent_recordings_of_one_check_write_it_once_and_all_answer_the_first_record(given: Given) -> None:
    check = PerformedCheck("forklift", "fl-1", MONDAY.start)
    answers = at_once(lambda n: given.store.record_performed_checks([check], T0 + timedelta(minutes=n), f"user-{n}"))
    assert sum(answer.written for answer in answers) == 1
    (record,) = given.store.performed_check_records([check]).values()
    assert all(list(answer.kept.values()) == [record] for answer in answers if not answer.written)


def test_a_check_recorded_without_its_author_reads_back_without_one(given: Given) -> None:
    check = PerformedCheck("forklift", "fl-1", MONDAY.start)
    given.store.record_performed_checks([check], T0)
    assert list(given.store.performed_check_records([check]).values()) == [CheckRecord("2026-03-01T09:00:00Z", None)]


def test_many_performed_checks_are_recorded_and_their_records_read_whole(given: Given) -> None:
    at = MONDAY.start + timedelta(hours=1)
    checks = [PerformedCheck("forklift", e, at) for e in fleet(MANY)]
    assert given.store.record_performed_checks(checks[: MANY // 2], T0, "alice").written == MANY // 2
    mixed = given.store.record_performed_checks(checks, T0 + timedelta(hours=1), "bob")
    assert (mixed.written, len(mixed.kept)) == (MANY - MANY // 2, MANY // 2)
    records = given.store.performed_check_records(checks)
    assert len(records) == MANY
    assert {r.recorded_by for r in records.values()} == {"alice", "bob"}


def test_a_client_request_is_claimed_once_and_finished(given: Given) -> None:
    caller = "arn:aws:iam::123456789012:user/alice"
    assert given.store.client_request(caller, "key-1") is None
    claimed = given.store.claim_client_request(caller, "key-1", "fingerprint-a", T0)
    assert claimed == ClientRequest("fingerprint-a", "2026-03-01T09:00:00Z", None)
    # a retry, or the same key with other checks: the first claim answers, unchanged
    assert given.store.claim_client_request(caller, "key-1", "fingerprint-b", T0 + timedelta(minutes=1)) == claimed
    assert given.store.client_request(caller, "key-1") == claimed
    given.store.finish_client_request(caller, "key-1", 3)
    assert given.store.client_request(caller, "key-1") == ClientRequest("fingerprint-a", "2026-03-01T09:00:00Z", 3)
    # another caller's same key is another request
    assert given.store.client_request("arn:aws:iam::123456789012:user/bob", "key-1") is None


def test_concurrent_claims_of_a_client_request_all_answer_the_one_that_won(given: Given) -> None:
    claims = at_once(lambda n: given.store.claim_client_request("alice", "key-1", f"fingerprint-{n}",
                                                                T0 + timedelta(minutes=n)))
    assert len(set(claims)) == 1
    assert given.store.client_request("alice", "key-1") == claims[0]


def test_concurrent_watermark_advances_leave_the_latest(given: Given) -> None:
    given.add_checklist("forklift", T0)
    marks = [MONDAY.evaluate_at + timedelta(minutes=n) for n in range(8)]
    at_once(lambda n: given.store.advance_watermark("forklift", marks[n]))
    checklist = given.store.get_checklist("forklift")
    assert checklist is not None and checklist.evaluated_until == max(marks)


# -- ChecklistStore: saving a checklist -------------------------------------------------------------
def test_a_saved_checklist_reads_back_with_its_closure_calendars_which_know_it(given: Given) -> None:
    given.calendar("holidays", [date(2026, 3, 3)], T0)
    given.add_checklist("forklift", T0, closed_on=["holidays"])
    checklist = given.store.get_checklist("forklift")
    assert checklist is not None and checklist.closures is not None
    assert checklist.closures["holidays"] is not None and checklist.closures["holidays"].dates == (date(2026, 3, 3),)
    # its windows leave the closed Tuesday out
    assert [w.start.date() for w in checklist.parsed().windows(T0, T0 + timedelta(days=3))] == [
        date(2026, 3, 2), date(2026, 3, 4)]
    assert given.store.get_calendars(["holidays"])["holidays"].used_by == {"forklift"}  # type: ignore[union-attr]
    given.calendar("holidays", [date(2026, 3, 3), date(2026, 3, 4)], T0 + timedelta(minutes=5))  # a later revision
    checklist = given.store.get_checklist("forklift")
    assert checklist is not None and checklist.closures is not None and checklist.closures["holidays"] is not None
    assert (checklist.closures["holidays"].dates, checklist.closures["holidays"].revision) == (
        (date(2026, 3, 3), date(2026, 3, 4)), 2)  # read with the checklist: the calendar as it is now
    given.add_checklist("forklift", T0 + timedelta(hours=1), closed_on=[])  # no longer closed on it
    assert given.store.get_calendars(["holidays"])["holidays"].used_by == frozenset()  # type: ignore[union-attr]
    assert given.store.get_calendars(["holidays", "nope"])["nope"] is None


def test_a_checklist_closed_on_a_calendar_that_does_not_exist_is_refused_and_nothing_is_written(
        given: Given) -> None:
    with pytest.raises(InvalidInput) as refused:
        given.add_checklist("forklift", T0, closed_on=["nope"])
    assert refused.value.field == "closed_on[0]"
    assert given.store.get_checklist("forklift") is None


def test_a_write_from_a_stale_read_is_a_conflict_not_a_lost_update(given: Given) -> None:
    given.add_checklist("forklift", T0)
    stale = given.store.get_checklist("forklift")
    assert stale is not None
    save_checklist(given.store, "forklift", recurrence=RULE, window=WINDOW, name="Renamed", now=T0, by="tests")
    with pytest.raises(Conflict):
        given.store.write_checklist(stale.with_changes(name="Other", revision=stale.revision + 1), stale, {},
                                    by="tests")
    with pytest.raises(Conflict):  # created meanwhile: the second creation does not replace the first
        given.store.write_checklist(Checklist("forklift", RULE, name="Twin", revision=1, created_at=T0), None, {},
                                    by="tests")
    checklist = given.store.get_checklist("forklift")
    assert checklist is not None and (checklist.name, checklist.revision) == ("Renamed", 2)


def test_an_edit_never_moves_the_watermark_back(given: Given) -> None:
    given.add_checklist("forklift", T0)
    given.store.advance_watermark("forklift", TUESDAY.evaluate_at)
    save_checklist(given.store, "forklift", recurrence=RULE, window=WINDOW, name="Renamed", now=T0, by="tests")
    checklist = given.store.get_checklist("forklift")
    assert checklist is not None and checklist.evaluated_until == TUESDAY.evaluate_at


# -- schedule-sync's Table: its notes apply to the revision it read -------------------------------
def hand_written(revision: int | None = 3, **fields: object) -> dict[str, object]:
    """A checklist item as the adapter writes one (``checklist_item``), then edited by hand."""
    item = checklist_item(Checklist("forklift", RULE, window=WINDOW, revision=revision or 0, created_at=T0))
    if revision is None:
        del item["revision"]
    return {**item, **fields}


def test_a_checklist_record_reads_what_the_item_holds(given: Given) -> None:
    assert given.store.get_checklist_record("forklift") is None
    given.hand_written(hand_written(3, schedule={"fingerprint": "f1"}))
    record = given.store.get_checklist_record("forklift")
    assert record is not None and (record.has_revision, record.revision, record.schedule) == (
        True, 3, {"fingerprint": "f1"})
    assert record.checklist is not None and record.checklist.recurrence == RULE
    given.hand_written(hand_written(checklist_id="broken", pk="CHECKLIST#broken", revision="three"))
    broken = given.store.get_checklist_record("broken")
    assert broken is not None and (broken.revision, broken.checklist) == (0, None)  # unreadable: why is said
    assert broken.problem is not None and broken.problem.field == "revision"


def test_the_sync_notes_its_result_on_the_revision_it_read_and_on_no_other(given: Given) -> None:
    given.hand_written(hand_written(3, schedule={"fingerprint": "old"}))
    new = ScheduleNote("ENABLED", T0, "cron(0 6 ? * MON-FRI *)", "Europe/Berlin", True, fingerprint="new")
    assert given.store.record_schedule_sync("forklift", 3, schedule=new, error=None) is True
    record = given.store.get_checklist_record("forklift")
    assert record is not None and (record.schedule, record.sync_error) == (
        {"expression": "cron(0 6 ? * MON-FRI *)", "timezone": "Europe/Berlin", "exact": True, "state": "ENABLED",
         "fingerprint": "new", "synced_at": "2026-03-01T09:00:00Z"}, None)
    # an edit came in between (revision 4): the note of revision 3 must not land on it
    assert given.store.record_schedule_sync("forklift", 2, schedule=None, error=SyncError("x", "", T0, 2)) is False
    error = SyncError("window", "bad", T0, 3)
    assert given.store.record_schedule_sync("forklift", 3, schedule=None, error=error) is True
    record = given.store.get_checklist_record("forklift")
    assert record is not None and (record.schedule, record.sync_error) == (
        None, {"field": "window", "message": "bad", "at": "2026-03-01T09:00:00Z", "revision": 3})
    assert given.store.record_schedule_sync("deleted", 3, schedule=ScheduleNote("FINISHED", T0), error=None) is False
    assert given.store.get_checklist_record("deleted") is None  # a note never creates a checklist


def test_a_hand_written_checklist_is_adopted_once_with_the_revision_a_new_one_has(given: Given) -> None:
    given.hand_written(hand_written(None))
    assert given.store.adopt_checklist("forklift") is True
    record = given.store.get_checklist_record("forklift")
    assert record is not None and (record.has_revision, record.revision) == (True, 0)
    assert given.store.adopt_checklist("forklift") is False  # it has one now
    assert given.store.record_schedule_sync("forklift", 0, schedule=ScheduleNote("FINISHED", T0), error=None) is True
    assert given.store.adopt_checklist("deleted") is False


def test_a_checklist_with_its_closures_names_a_calendar_that_does_not_exist_as_none(given: Given) -> None:
    checklist = Checklist("forklift", RULE, window=WINDOW, closed_on=("holidays",))
    assert given.store.with_closures(checklist).closures == {"holidays": None}
    plain = Checklist("forklift", RULE, window=WINDOW)
    assert given.store.with_closures(plain) == plain


# -- NotificationRecords: a notification is sent once --------------------------------------------
NOTE = Notification(Kind.MISSED, "forklift", "2026-03-02T05:00:00Z", "crew@example.com", ("fl-1",), "subject", "body")
NOW = datetime(2026, 3, 2, 13, 30, tzinfo=UTC)
LEASE = timedelta(minutes=15)


def test_the_first_claim_of_a_notification_wins_and_a_second_waits_for_it(records: NotificationRecords) -> None:
    assert records.claim_notification(NOTE, NOW, LEASE) == NotificationClaim(won=True, sent=False)
    assert records.claim_notification(NOTE, NOW + timedelta(minutes=1), LEASE) == NotificationClaim(
        won=False, sent=False)  # in flight: the first sender is still at it
    records.mark_notification_sent(NOTE.notification_id, NOW + timedelta(minutes=2))
    assert records.claim_notification(NOTE, NOW + timedelta(hours=1), LEASE) == NotificationClaim(
        won=False, sent=True)  # sent: nothing to do, however late the retry


def test_an_abandoned_claim_is_taken_over_once_after_its_lease_and_not_before(records: NotificationRecords) -> None:
    records.claim_notification(NOTE, NOW, LEASE)  # a sender that died after claiming
    assert not records.claim_notification(NOTE, NOW + LEASE, LEASE).won  # exactly the lease: not stale yet
    taken = records.claim_notification(NOTE, NOW + LEASE + timedelta(seconds=1), LEASE)
    assert (taken.won, taken.sent) == (True, False)
    # the take-over is a claim of its own: a second late sender waits for it
    assert not records.claim_notification(NOTE, NOW + LEASE + timedelta(seconds=2), LEASE).won


def test_a_failed_notification_is_taken_over_at_once_without_the_channels_that_delivered_it(
        records: NotificationRecords) -> None:
    other = Notification(Kind.MISSED, "forklift", "2026-03-02T05:00:00Z", "lead@example.com", ("fl-1",), "s", "b")
    records.claim_notification(NOTE, NOW, LEASE)
    records.claim_notification(other, NOW, LEASE)
    records.mark_channel_sent(NOTE.notification_id, "eventbridge", NOW, "event-1")
    records.mark_channel_sent(NOTE.notification_id, "email", NOW, "message-1")
    records.mark_notification_failed(NOTE.notification_id, NOW, "the bus refused it")
    retry = records.claim_notification(NOTE, NOW + timedelta(seconds=1), LEASE)
    assert retry == NotificationClaim(won=True, sent=False, channels_done=("email", "eventbridge"))
    assert records.claim_notification(other, NOW + timedelta(seconds=1), LEASE) == NotificationClaim(
        won=False, sent=False)  # another notification's record is its own


def test_concurrent_claims_of_a_notification_have_exactly_one_winner(records: NotificationRecords) -> None:
    claims = at_once(lambda n: records.claim_notification(NOTE, NOW + timedelta(seconds=n), LEASE))
    assert [claim.won for claim in claims].count(True) == 1


def test_concurrent_take_overs_of_a_failed_notification_have_exactly_one_winner(records: NotificationRecords) -> None:
    records.claim_notification(NOTE, NOW, LEASE)
    records.mark_notification_failed(NOTE.notification_id, NOW, "throttled for good")
    claims = at_once(lambda n: records.claim_notification(NOTE, NOW + timedelta(seconds=1), LEASE))
    assert [claim.won for claim in claims].count(True) == 1


# -- sites, the equipment registry and grants (#31): written by revision --------------------------
def _site(site_id: str, revision: int = 1, name: str = "North yard") -> Site:
    return Site(site_id, name, "Europe/Berlin", revision=revision, created_at=T0, updated_at=T0)


def test_a_site_is_created_once_and_edited_only_over_the_revision_read(given: Given) -> None:
    store = given.store
    assert store.get_site("north") is None
    store.write_site(_site("north"), expected=None, by="root")
    assert store.get_site("north") == _site("north")
    with pytest.raises(Conflict, match="site 'north' already exists"):
        store.write_site(_site("north"), expected=None, by="root")
    store.write_site(_site("north", 2, "North"), expected=1, by="root")
    with pytest.raises(PreconditionFailed) as stale:
        store.write_site(_site("north", 2, "Stale"), expected=1, by="root")
    assert stale.value.current_etag == '"2"'
    with pytest.raises(NotFound, match="site 'south' does not exist"):
        store.write_site(_site("south", 2), expected=1, by="root")
    assert store.get_site("north") == _site("north", 2, "North")


def test_sites_and_grants_list_in_key_order_a_page_at_a_time(given: Given) -> None:
    store = given.store
    for site_id in ("e", "a", "c", "b", "d"):
        store.write_site(_site(site_id), expected=None, by="root")
        store.write_grant(Grant(f"user-{site_id}", {site_id: Role.operator}, revision=1), expected=None, by="root")
    first = store.list_sites(None, 2)
    assert ([s.site_id for s in first.items], first.next_position) == (["a", "b"], "b")
    rest = store.list_sites("b", 5)
    assert ([s.site_id for s in rest.items], rest.next_position) == (["c", "d", "e"], None)
    exact = store.list_sites(None, 5)
    assert exact.next_position is None and len(exact.items) == 5
    grants = store.list_grants("user-c", 1)
    assert ([g.principal for g in grants.items], grants.next_position) == (["user-d"], "user-d")
    assert dict(grants.items[0].roles) == {"d": Role.operator}


def test_a_grant_is_removed_only_at_the_revision_read(given: Given) -> None:
    store = given.store
    arn = "arn:aws:iam::123456789012:role/yard-app"
    grant = Grant(arn, {"north": Role.auditor}, admin=True, revision=1, updated_at=T0, updated_by="root")
    store.write_grant(grant, expected=None, by="root")
    assert store.get_grant(arn) == grant
    with pytest.raises(PreconditionFailed):
        store.remove_grant(arn, expected=2, by="root")
    store.remove_grant(arn, expected=1, by="root")
    assert store.get_grant(arn) is None
    with pytest.raises(NotFound, match=f"grant of '{arn}' does not exist"):
        store.remove_grant(arn, expected=None, by="root")


def test_registered_equipment_is_listed_at_the_site_it_is_at_now(given: Given) -> None:
    store = given.store
    registered = RegisteredEquipment("FL-1", "Forklift 1", "forklift", "north", {"serial": "A-1"},
                                     (SiteMove("north", T0),), revision=1, created_at=T0, updated_at=T0)
    store.write_registered(registered, expected=None, by="mia")
    store.write_registered(replace(registered, equipment_id="FL-2", moves=(SiteMove("north", T0),)), expected=None,
                           by="mia")
    assert store.get_registered("FL-1") == registered
    assert [e.equipment_id for e in store.list_registered("north", None, 10).items] == ["FL-1", "FL-2"]
    later = T0 + timedelta(days=1)
    moved = replace(registered, site_id="south", moves=(*registered.moves, SiteMove("south", later)), revision=2)
    store.write_registered(moved, expected=1, by="max")
    assert [e.equipment_id for e in store.list_registered("north", None, 10).items] == ["FL-2"]
    assert list(store.list_registered("south", None, 10).items) == [moved]
    assert store.registered_equipment(["FL-1", "FL-404", "FL-2"]).keys() == {"FL-1", "FL-2"}
    assert store.registered_equipment(["FL-1"])["FL-1"].site_at(T0) == "north"
    with pytest.raises(PreconditionFailed):
        store.write_registered(replace(moved, revision=3), expected=1, by="max")


def test_a_checklist_keeps_its_site(given: Given) -> None:
    store = given.store
    store.write_site(_site("north"), expected=None, by="root")
    save_checklist(store, "north-daily", recurrence=RULE, window=WINDOW, now=T0, by="tests", site_id="north")
    read = store.get_checklist("north-daily")
    assert read is not None and read.site_id == "north"
    save_checklist(store, "north-daily", recurrence=RULE, window="PT9H", now=T0, by="tests")
    read = store.get_checklist("north-daily")
    assert read is not None and (read.site_id, read.window) == ("north", "PT9H")


def test_the_tables_writes_of_sites_equipment_and_grants_carry_who_and_when(dynamodb: object) -> None:
    """The audit trail's stamp (docs/audit.md) on every write of the three kinds, by the adapter alone."""
    from missed_checks.aws.table import ChecklistTable, keys
    from tests.contract.stores import dynamodb_table

    with dynamodb_table(dynamodb) as name:
        table = ChecklistTable(name)
        table.write_site(_site("north"), expected=None, by="root")
        table.write_grant(Grant("ann", {"north": Role.operator}, revision=1), expected=None, by="admin-2")
        table.write_registered(RegisteredEquipment("FL-1", "F", "forklift", "north", moves=(SiteMove("north", T0),),
                                                   revision=1), expected=None, by="mia")
        for key, by in ((keys.site_key("north"), "root"), (keys.grant_key("ann"), "admin-2"),
                        (keys.registered_key("FL-1"), "mia")):
            item = table._get(key)
            assert item is not None and item["changed_by"] == by and item["changed_at"].endswith("Z")


def test_a_calendar_keeps_the_site_it_was_made_at(dynamodb: object) -> None:
    """The adapter's calendar put (#31): a new calendar at a site; one without a site may be given
    one once; a calendar's site never changes; the site reads back from the item."""
    from missed_checks.aws.table import ChecklistTable
    from tests.contract.stores import dynamodb_table

    with dynamodb_table(dynamodb) as name:
        table = ChecklistTable(name)
        assert table.put_calendar("north-holidays", [date(2026, 4, 3)], now=T0, by="mia", site_id="north").site_id \
            == "north"
        kept = table.put_calendar("north-holidays", [date(2026, 4, 6)], now=T0, by="mia")
        assert kept.site_id == "north" and kept.revision == 2
        read = table.get_calendar("north-holidays")
        assert read is not None and read.site_id == "north" and read.to_dict()["site_id"] == "north"
        with pytest.raises(InvalidInput, match="^site_id: calendar 'north-holidays' belongs to site north"):
            table.put_calendar("north-holidays", [date(2026, 4, 6)], now=T0, by="mia", site_id="south")
        table.put_calendar("legacy", [date(2026, 12, 25)], now=T0, by="ops")
        assert table.put_calendar("legacy", [date(2026, 12, 25)], now=T0, by="root", site_id="south").site_id == "south"


def test_ending_an_equipments_assignments_at_an_instant(given: Given) -> None:
    """What a move or a retirement of registered equipment does (#31): its assignments read across
    checklists, ended at an instant, never before they began."""
    given.add_checklist("north-daily", T0)
    given.add_checklist("legacy", T0)
    later = T0 + timedelta(days=2)
    given.assign("north-daily", ["FL-1", "FL-2"], T0)
    given.assign("legacy", ["FL-1"], later)
    store = given.store
    assert sorted(a.checklist_id for a in store.assignments_of_equipment("FL-1")) == ["legacy", "north-daily"]
    with pytest.raises(InvalidInput, match="^at: .* is before FL-1's assignment to legacy began"):
        store.unassign_equipment("legacy", ["FL-1"], T0 + timedelta(days=1), by="mia")
    assert store.unassign_equipment("north-daily", ["FL-1"], later, by="mia") == 1
    assert store.unassign_equipment("north-daily", ["FL-1"], later, by="mia") == 0  # ended already
    ended = {a.checklist_id: a.unassigned_at for a in store.assignments_of_equipment("FL-1")}
    assert ended == {"north-daily": later, "legacy": None}
    assert [a.unassigned_at for a in store.assignments_of_equipment("FL-2")] == [None]
