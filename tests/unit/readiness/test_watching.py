"""Watching readiness (missed_checks.readiness.watching.recheck): each change stored once (sequence +1)
and announced once; a retry or a second recheck with nothing changed announces nothing; a crash
between the state write and the publish is published by the next recheck; the recheck schedule is
planned at the next instant it may change by time alone, and not asked again when the plan is the same."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

import pytest

from missed_checks.checklists.checklist import Checklist
from missed_checks.contracts import ReadinessChangedDetail
from missed_checks.defects.defect import Defect, DefectStatus
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.equipment.status import readiness_for
from missed_checks.errors import InvalidInput, NotFound
from missed_checks.paging import Page, page_after
from missed_checks.performed_checks.answers import FailedItem
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Role
from missed_checks.readiness.listing import site_readiness
from missed_checks.readiness.readiness import CheckSeen, ReadinessRecord, State
from missed_checks.readiness.watching import (
    INLINE_RECHECKS,
    TableChange,
    on_table_change,
    recheck,
    recheck_schedule_name,
)
from tests.fakes import InMemoryTable

DAILY = Checklist("forklift-daily", "DTSTART;TZID=Europe/Berlin:20260301T060000\nRRULE:FREQ=DAILY", window="PT8H",
                  created_at=datetime(2026, 2, 1, tzinfo=UTC), pre_use=True, site_id="north")
MORNING = datetime(2026, 3, 4, 5, 30, tzinfo=UTC)  # 06:30 CET, the window opened at 06:00


class Crash(Exception):
    pass


@dataclass
class Table(InMemoryTable):
    defects: dict[str, Defect] = field(default_factory=dict)
    seen: list[tuple[str, CheckSeen]] = field(default_factory=list)
    records: dict[str, ReadinessRecord] = field(default_factory=dict)
    lost_writes: int = 0
    """The next this many conditional writes of a record lose to a concurrent writer."""

    def out_of_service_of_equipment(self, equipment_id: str) -> list[OutOfServicePeriod]:
        return [p for p in self.out_of_service if p.equipment_id == equipment_id]

    def defects_of_equipment(self, equipment_id: str, status: DefectStatus | None = None) -> list[Defect]:
        return [d for d in self.defects.values() if d.equipment_id == equipment_id and status in (None, d.status)]

    def checks_seen(self, equipment_id: str, low: datetime, until: datetime) -> list[CheckSeen]:
        return [c for e, c in self.seen if e == equipment_id and low <= c.performed_at <= until]

    def readiness_record(self, equipment_id: str) -> ReadinessRecord | None:
        return self.records.get(equipment_id)

    def write_readiness(self, record: ReadinessRecord, *, expected_sequence: int | None) -> bool:
        current = self.records.get(record.readiness.equipment_id)
        if self.lost_writes:
            self.lost_writes -= 1
            return False
        if (current.sequence if current else None) != expected_sequence:
            return False
        self.records[record.readiness.equipment_id] = record
        return True

    def mark_announced(self, equipment_id: str, sequence: int) -> bool:
        current = self.records[equipment_id]
        if current.sequence != sequence:
            return False
        self.records[equipment_id] = replace(current, announced=True)
        return True

    def note_recheck(self, equipment_id: str, at: datetime | None) -> None:
        if equipment_id in self.records:  # as the table: only on a state item there is
            self.records[equipment_id] = replace(self.records[equipment_id], recheck_at=at)

    def readiness_of_site(self, site_id: str, position: str | None, limit: int) -> Page[ReadinessRecord]:
        mine = sorted((r for r in self.records.values() if r.readiness.site_id == site_id),
                      key=lambda r: r.readiness.equipment_id)
        return page_after(mine, lambda r: r.readiness.equipment_id, position, limit)


@dataclass
class Announcer:
    events: list[ReadinessChangedDetail] = field(default_factory=list)
    fail_next: bool = False

    def readiness_changed(self, detail: ReadinessChangedDetail) -> None:
        if self.fail_next:
            self.fail_next = False
            raise Crash("the process stopped before the event went out")
        self.events.append(detail)


@dataclass
class Scheduler:
    plans: list[tuple[str, datetime | None]] = field(default_factory=list)

    def plan_recheck(self, equipment_id: str, at: datetime | None) -> None:
        self.plans.append((equipment_id, at))


def fleet() -> tuple[Table, Announcer, Scheduler]:
    table = Table().with_sites("north")
    table.add_checklist(DAILY)
    table.assign("forklift-daily", ["FL-1"], datetime(2026, 3, 1, tzinfo=UTC))
    return table, Announcer(), Scheduler()


def brakes(found_at: datetime) -> Defect:
    item = FailedItem("brakes", "Brakes work", True, "fail", "pass")
    return Defect("D-0123456789abcdef", "forklift-daily", "FL-1", "north", (item,), "op@example.com", found_at,
                  found_at)


def test_the_first_readiness_is_announced_once_and_the_recheck_planned() -> None:
    table, announcer, scheduler = fleet()
    found = recheck(table, announcer, scheduler, "FL-1", MORNING)
    assert found.state is State.UNCHECKED
    [event] = announcer.events
    assert event == ReadinessChangedDetail(
        equipment_id="FL-1", site_id="north", readiness="unchecked", previous=None, since="2026-03-04T05:00:00Z",
        reason="no passing pre-use check yet in the current window of forklift-daily (window opened "
               "Wed 4 Mar 2026 06:00 CET)",
        sequence=1, change_id="FL-1#1", changed_at="2026-03-04T05:30:00Z", open_defects=[],
        unchecked_checklists=["forklift-daily"], out_of_service_until=None)
    assert scheduler.plans == [("FL-1", datetime(2026, 3, 5, 5, 0, tzinfo=UTC))]
    assert table.records["FL-1"].announced and table.records["FL-1"].recheck_at == datetime(2026, 3, 5, 5, tzinfo=UTC)
    # a retried stream record, a second recheck: nothing is announced, the schedule is not asked again
    recheck(table, announcer, scheduler, "FL-1", MORNING + timedelta(minutes=1))
    assert len(announcer.events) == 1 and len(scheduler.plans) == 1


def test_every_change_is_announced_once_in_order() -> None:
    table, announcer, scheduler = fleet()
    recheck(table, announcer, scheduler, "FL-1", MORNING)
    table.seen.append(("FL-1", CheckSeen("forklift-daily", MORNING + timedelta(minutes=5), passed=False)))
    failed = brakes(MORNING + timedelta(minutes=5))
    table.defects[failed.defect_id] = failed
    recheck(table, announcer, scheduler, "FL-1", MORNING + timedelta(minutes=6))
    recheck(table, announcer, scheduler, "FL-1", MORNING + timedelta(minutes=6))  # the same record again
    table.defects[failed.defect_id] = replace(failed, status=DefectStatus.RESOLVED)
    table.seen.append(("FL-1", CheckSeen("forklift-daily", MORNING + timedelta(minutes=20), passed=True)))
    recheck(table, announcer, scheduler, "FL-1", MORNING + timedelta(minutes=21))
    assert [(e.previous, e.readiness, e.sequence, e.change_id) for e in announcer.events] == [
        (None, "unchecked", 1, "FL-1#1"), ("unchecked", "not_cleared", 2, "FL-1#2"),
        ("not_cleared", "cleared", 3, "FL-1#3")]
    assert announcer.events[1].open_defects == ["D-0123456789abcdef"]
    assert announcer.events[1].since == "2026-03-04T05:35:00Z"
    assert announcer.events[2].since == "2026-03-04T05:50:00Z"  # the passing check


def test_the_time_driven_change_comes_with_the_recheck_at_the_next_window() -> None:
    table, announcer, scheduler = fleet()
    table.seen.append(("FL-1", CheckSeen("forklift-daily", MORNING, passed=True)))
    recheck(table, announcer, scheduler, "FL-1", MORNING)
    [(_, at)] = scheduler.plans
    assert at is not None
    recheck(table, announcer, scheduler, "FL-1", at)  # the schedule fires
    assert [e.readiness for e in announcer.events] == ["cleared", "unchecked"]
    assert scheduler.plans[-1] == ("FL-1", at + timedelta(days=1))


def test_a_crash_between_the_write_and_the_publish_is_published_by_the_next_recheck() -> None:
    table, announcer, scheduler = fleet()
    announcer.fail_next = True
    with pytest.raises(Crash):
        recheck(table, announcer, scheduler, "FL-1", MORNING)
    assert table.records["FL-1"].sequence == 1 and not table.records["FL-1"].announced
    recheck(table, announcer, scheduler, "FL-1", MORNING + timedelta(minutes=3))
    [event] = announcer.events
    assert (event.change_id, event.changed_at) == ("FL-1#1", "2026-03-04T05:30:00Z")  # the change as written
    recheck(table, announcer, scheduler, "FL-1", MORNING + timedelta(minutes=4))
    assert len(announcer.events) == 1


def test_a_lost_publish_goes_out_before_the_next_change() -> None:
    table, announcer, scheduler = fleet()
    announcer.fail_next = True
    with pytest.raises(Crash):
        recheck(table, announcer, scheduler, "FL-1", MORNING)
    table.seen.append(("FL-1", CheckSeen("forklift-daily", MORNING + timedelta(minutes=1), passed=True)))
    recheck(table, announcer, scheduler, "FL-1", MORNING + timedelta(minutes=2))
    assert [(e.readiness, e.sequence) for e in announcer.events] == [("unchecked", 1), ("cleared", 2)]


def test_a_concurrent_writer_wins_and_the_loser_reads_again() -> None:
    table, announcer, scheduler = fleet()
    table.lost_writes = 1
    recheck(table, announcer, scheduler, "FL-1", MORNING)
    assert [e.sequence for e in announcer.events] == [1]


def test_details_follow_under_the_same_state_without_an_event() -> None:
    table, announcer, scheduler = fleet()
    first = brakes(MORNING)
    table.defects[first.defect_id] = first
    recheck(table, announcer, scheduler, "FL-1", MORNING)
    second = replace(first, defect_id="D-fedcba9876543210", found_at=MORNING + timedelta(minutes=9))
    table.defects[second.defect_id] = second
    recheck(table, announcer, scheduler, "FL-1", MORNING + timedelta(minutes=10))
    assert len(announcer.events) == 1
    stored = table.records["FL-1"]
    assert stored.sequence == 1 and stored.readiness.open_defects == (first.defect_id, second.defect_id)
    assert stored.readiness.since == MORNING


def test_out_of_service_plans_its_end_and_no_schedule_when_nothing_can_change_by_time() -> None:
    table, announcer, scheduler = fleet()
    table.assigned.clear()
    table.out_of_service.append(OutOfServicePeriod.create(
        equipment_id="FL-1", start=MORNING - timedelta(hours=1), end=MORNING + timedelta(hours=5), reason="tyres",
        recorded_by="ops", recorded_at=MORNING))
    recheck(table, announcer, scheduler, "FL-1", MORNING)
    assert announcer.events[-1].readiness == "out_of_service"
    assert announcer.events[-1].out_of_service_until == "2026-03-04T10:30:00Z"
    assert scheduler.plans == [("FL-1", MORNING + timedelta(hours=5))]
    recheck(table, announcer, scheduler, "FL-1", MORNING + timedelta(hours=5))
    assert announcer.events[-1].readiness == "cleared"
    assert scheduler.plans[-1] == ("FL-1", None)  # nothing left to wait for


def test_the_schedule_name_is_a_valid_scheduler_name_whatever_the_id() -> None:
    name = recheck_schedule_name("FL-1/ä b")
    assert name.startswith("_q.") and len(name) == 43 and name == recheck_schedule_name("FL-1/ä b")


# -- a site's readiness (listing.site_readiness): what was last announced ----------------------------------
def test_a_sites_readiness_lists_its_equipment_for_a_caller_who_may_read_there() -> None:
    table, announcer, scheduler = fleet()
    table.with_sites("south")
    table.assign("forklift-daily", ["FL-2", "FL-3"], datetime(2026, 3, 1, tzinfo=UTC))
    for equipment_id in ("FL-1", "FL-2", "FL-3"):
        recheck(table, announcer, scheduler, equipment_id, MORNING)
    operator = Caller("op", roles={"north": Role.operator})
    first = site_readiness(table, "north", caller=operator, limit=2)
    assert [(r.readiness.equipment_id, r.readiness.state, r.sequence) for r in first.items] == [
        ("FL-1", State.UNCHECKED, 1), ("FL-2", State.UNCHECKED, 1)]
    rest = site_readiness(table, "north", caller=operator, limit=2, cursor=first.next_position)
    assert [r.readiness.equipment_id for r in rest.items] == ["FL-3"] and rest.next_position is None
    assert first.items[0].to_dict()["state"] == "unchecked" and first.items[0].to_dict()["announced"] is True
    with pytest.raises(NotFound, match="site south does not exist"):
        site_readiness(table, "south", caller=operator)  # another site: as if it did not exist
    with pytest.raises(NotFound, match="site west does not exist"):
        site_readiness(table, "west", caller=Caller.operator("ops"))
    with pytest.raises(InvalidInput) as refused:
        site_readiness(table, "north", caller=operator, limit=0)
    assert refused.value.field == "limit"
    with pytest.raises(InvalidInput) as refused:
        site_readiness(table, "north", caller=operator, cursor=5)
    assert refused.value.field == "cursor"


def test_the_status_route_shows_the_live_readiness_to_a_caller_who_may_read_at_its_site() -> None:
    table, _, _ = fleet()
    table.with_sites("south")
    north = readiness_for(table, Caller("op", roles={"north": Role.operator}), "FL-1", MORNING)
    assert north is not None and north.state is State.UNCHECKED and north.site_id == "north"
    assert readiness_for(table, Caller("op", roles={"south": Role.operator}), "FL-1", MORNING) is None
    assert table.records == {}  # live: computed, nothing stored or announced


def test_a_pre_use_checklists_edit_rechecks_part_of_its_fleet_at_once_and_the_rest_within_a_minute() -> None:
    table, announcer, scheduler = fleet()
    fleet_ids = [f"FL-{n:03d}" for n in range(INLINE_RECHECKS + 20)]
    table.assign("forklift-daily", fleet_ids, datetime(2026, 3, 1, tzinfo=UTC))
    recheck(table, announcer, scheduler, "FL-119", MORNING)  # one with a state item and a plan already
    scheduler.plans.clear()
    found = on_table_change(table, announcer, scheduler, TableChange(("FL-1",), checklist_id="forklift-daily"),
                            MORNING, lambda defect, checklist: None)
    rechecked = sorted(r.equipment_id for r in found)
    assert rechecked == sorted(["FL-1", *fleet_ids[:INLINE_RECHECKS]])
    soon = MORNING + timedelta(minutes=1)
    deferred = [(e, at) for e, at in scheduler.plans if at == soon]
    assert deferred == [(e, soon) for e in fleet_ids[INLINE_RECHECKS:]]
    assert table.records["FL-119"].recheck_at == soon  # its firing will plan the next window again
    recheck(table, announcer, scheduler, "FL-119", soon)  # the deferred recheck fires
    assert scheduler.plans[-1] == ("FL-119", datetime(2026, 3, 5, 5, 0, tzinfo=UTC))


def test_a_check_or_an_assignment_of_a_checklist_without_a_pre_use_check_rechecks_nothing() -> None:
    """A fleet of thousands assigned to a monthly inspection must not cost a recheck each (the local
    busy-run tests assign 6,000 at once); its failed critical item is a defect, a change of its own."""
    table, announcer, scheduler = fleet()
    table.add_checklist(replace(DAILY, checklist_id="monthly", pre_use=False))
    table.assign("monthly", ["FL-7"], datetime(2026, 3, 1, tzinfo=UTC))
    read: list[str] = []

    def checklist_of(checklist_id: str) -> Checklist | None:
        read.append(checklist_id)
        return table.get_checklist(checklist_id)

    def change(checklist_id: str, equipment_id: str) -> list[str]:
        found = on_table_change(table, announcer, scheduler,
                                TableChange((equipment_id,), through_checklist=checklist_id),
                                MORNING, lambda defect, checklist: None, checklist_of)
        return [r.equipment_id for r in found]

    assert change("monthly", "FL-7") == [] and announcer.events == [] and table.records == {}
    assert change("forklift-daily", "FL-1") == ["FL-1"]  # a pre-use checklist's: rechecked
    assert change("deleted-since", "FL-7") == ["FL-7"]  # gone: what it asked is no longer known, so rechecked
    assert read == ["monthly", "forklift-daily", "deleted-since"]
    defect = on_table_change(table, announcer, scheduler, TableChange(("FL-7",)), MORNING, lambda d, c: None)
    assert [r.equipment_id for r in defect] == ["FL-7"]  # a defect or a period of it: always
