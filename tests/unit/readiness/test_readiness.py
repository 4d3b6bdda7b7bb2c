"""Readiness (missed_checks.readiness.readiness): the four states and their precedence, the current
window of a pre-use checklist (the latest window started, still open or not), since, the reason in
words on the checklist's clock, and the next instant it may change by time alone."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from missed_checks.checklists.checklist import Checklist, Status
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.readiness.readiness import CheckSeen, Readiness, State, current_window, readiness_of

# Europe/Berlin: a daily pre-use window 06:00-14:00 local (05:00-13:00 UTC in March, CET).
BERLIN_DAILY = "DTSTART;TZID=Europe/Berlin:20260301T060000\nRRULE:FREQ=DAILY"
WEEKLY_MONDAY = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO"
CREATED = datetime(2026, 2, 1, tzinfo=UTC)
DAILY = Checklist("forklift-daily", BERLIN_DAILY, window="PT8H", created_at=CREATED)
WEEKLY = Checklist("weekly", WEEKLY_MONDAY, window="PT4H", created_at=CREATED)


@dataclass(frozen=True)
class Item:
    label: str


@dataclass(frozen=True)
class Defect:
    defect_id: str
    checklist_id: str
    found_at: datetime
    failed_items: tuple[Item, ...]


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def period(start: str, end: str | None, reason: str = "gearbox replaced") -> OutOfServicePeriod:
    return OutOfServicePeriod.create(equipment_id="FL-1", start=at(start), end=at(end) if end else None,
                                     reason=reason, recorded_by="ops", recorded_at=at(start))


BRAKES = Defect("D-0123456789abcdef", "forklift-daily", at("2026-03-04T05:42:00Z"), (Item("Brakes work"),))


def test_no_pre_use_checklist_no_defect_is_cleared() -> None:
    found = readiness_of("FL-1", "north", at("2026-03-04T10:00:00Z"))
    assert found == Readiness("FL-1", "north", State.CLEARED, None,
                              "cleared to operate: no open defect and no pre-use check due")


def test_a_pre_use_window_without_a_passing_check_is_unchecked_since_it_opened() -> None:
    found = readiness_of("FL-1", "north", at("2026-03-04T06:00:00Z"), pre_use=[DAILY])
    assert found.state is State.UNCHECKED
    assert found.since == at("2026-03-04T05:00:00Z")
    assert found.unchecked_checklists == ("forklift-daily",)
    assert found.reason == ("no passing pre-use check yet in the current window of forklift-daily "
                            "(window opened Wed 4 Mar 2026 06:00 CET)")
    assert found.next_change_at == at("2026-03-05T05:00:00Z")  # the next window's start


def test_a_passing_check_in_the_current_window_clears_it() -> None:
    checks = [CheckSeen("forklift-daily", at("2026-03-04T05:10:00Z"), passed=True)]
    found = readiness_of("FL-1", "north", at("2026-03-04T06:00:00Z"), pre_use=[DAILY], checks=checks)
    assert (found.state, found.since) == (State.CLEARED, at("2026-03-04T05:10:00Z"))
    assert found.reason == "cleared to operate: pre-use check passed (forklift-daily at Wed 4 Mar 2026 06:10 CET)"


def test_the_current_window_stays_current_after_it_closes_until_the_next_starts() -> None:
    """After 14:00 the window is closed, but it is still the latest started: yesterday's pass clears
    the evening; the next morning's window needs a pass of its own."""
    checks = [CheckSeen("forklift-daily", at("2026-03-04T05:10:00Z"), passed=True)]
    evening = readiness_of("FL-1", None, at("2026-03-04T20:00:00Z"), pre_use=[DAILY], checks=checks)
    assert evening.state is State.CLEARED
    morning = readiness_of("FL-1", None, at("2026-03-05T05:00:00Z"), pre_use=[DAILY], checks=checks)
    assert (morning.state, morning.since) == (State.UNCHECKED, at("2026-03-05T05:00:00Z"))


def test_a_check_that_failed_a_critical_item_does_not_pass_and_other_checklists_do_not_count() -> None:
    checks = [CheckSeen("forklift-daily", at("2026-03-04T05:10:00Z"), passed=False),
              CheckSeen("weekly", at("2026-03-04T05:20:00Z"), passed=True)]
    found = readiness_of("FL-1", None, at("2026-03-04T06:00:00Z"), pre_use=[DAILY], checks=checks)
    assert found.state is State.UNCHECKED


def test_a_check_before_the_window_or_after_now_does_not_count() -> None:
    checks = [CheckSeen("forklift-daily", at("2026-03-04T04:59:59Z"), passed=True),
              CheckSeen("forklift-daily", at("2026-03-04T06:00:01Z"), passed=True)]
    found = readiness_of("FL-1", None, at("2026-03-04T06:00:00Z"), pre_use=[DAILY], checks=checks)
    assert found.state is State.UNCHECKED


def test_a_weekly_window_is_current_all_week() -> None:
    checks = [CheckSeen("weekly", at("2026-03-02T05:30:00Z"), passed=True)]
    found = readiness_of("FL-1", None, at("2026-03-07T12:00:00Z"), pre_use=[WEEKLY], checks=checks)
    assert found.state is State.CLEARED
    assert found.next_change_at == at("2026-03-09T05:00:00Z")
    assert current_window(WEEKLY.parsed(), at("2026-03-07T12:00:00Z")) is not None


def test_paused_or_not_yet_started_or_ended_checklists_ask_nothing() -> None:
    paused = DAILY.with_changes(status=Status.PAUSED)
    ended = Checklist("ended", "DTSTART;TZID=Europe/Berlin:20260301T060000\nRRULE:FREQ=DAILY;COUNT=2",
                      window="PT8H", created_at=CREATED)
    later = Checklist("later", "DTSTART;TZID=Europe/Berlin:20260401T060000\nRRULE:FREQ=DAILY",
                      window="PT8H", created_at=CREATED)
    found = readiness_of("FL-1", None, at("2026-03-04T06:00:00Z"), pre_use=[paused, ended, later])
    assert found.state is State.CLEARED
    assert found.next_change_at == at("2026-04-01T04:00:00Z")  # CEST: the later checklist's first window


def test_an_open_defect_is_not_cleared_whatever_the_checks() -> None:
    checks = [CheckSeen("forklift-daily", at("2026-03-04T05:50:00Z"), passed=True)]
    found = readiness_of("FL-1", "north", at("2026-03-04T06:00:00Z"), pre_use=[DAILY], checks=checks,
                         open_defects=[BRAKES])
    assert (found.state, found.since, found.open_defects) == (
        State.NOT_CLEARED, BRAKES.found_at, ("D-0123456789abcdef",))
    assert found.reason == ("not cleared to operate: open defect D-0123456789abcdef (Brakes work failed on "
                            "forklift-daily at Wed 4 Mar 2026 06:42 CET)")


def test_out_of_service_comes_first_and_back_to_back_periods_are_one() -> None:
    periods = [period("2026-03-04T00:00:00Z", "2026-03-05T00:00:00Z"),
               period("2026-03-05T00:00:00Z", "2026-03-06T12:00:00Z", "tyres"),
               period("2026-03-10T00:00:00Z", None)]
    found = readiness_of("FL-1", None, at("2026-03-04T06:00:00Z"), pre_use=[DAILY], open_defects=[BRAKES],
                         periods=periods)
    assert (found.state, found.since, found.out_of_service_until) == (
        State.OUT_OF_SERVICE, at("2026-03-04T00:00:00Z"), at("2026-03-06T12:00:00Z"))
    assert found.reason == ("out of service since Wed 4 Mar 2026 01:00 CET until Fri 6 Mar 2026 13:00 CET: "
                            "gearbox replaced")
    assert found.next_change_at == at("2026-03-05T00:00:00Z")  # a boundary: the first period's end
    open_ended = readiness_of("FL-1", None, at("2026-03-11T06:00:00Z"), periods=periods)
    assert open_ended.reason.endswith("until further notice: gearbox replaced")
    assert open_ended.out_of_service_until is None


def test_another_equipments_period_is_ignored() -> None:
    other = OutOfServicePeriod.create(equipment_id="FL-2", start=at("2026-03-04T00:00:00Z"), end=None,
                                      reason="x", recorded_by="ops", recorded_at=at("2026-03-04T00:00:00Z"))
    assert readiness_of("FL-1", None, at("2026-03-04T06:00:00Z"), periods=[other]).state is State.CLEARED


def test_the_reason_uses_the_zone_given() -> None:
    from zoneinfo import ZoneInfo
    found = readiness_of("FL-1", None, at("2026-03-04T06:00:00Z"), open_defects=[BRAKES],
                         zone=ZoneInfo("America/New_York"))
    assert "Wed 4 Mar 2026 00:42 EST" in found.reason


def test_the_dict_form() -> None:
    found = readiness_of("FL-1", "north", at("2026-03-04T06:00:00Z"), pre_use=[DAILY])
    assert found.to_dict() == {
        "equipment_id": "FL-1", "site_id": "north", "state": "unchecked", "since": "2026-03-04T05:00:00Z",
        "reason": found.reason, "open_defects": [], "unchecked_checklists": ["forklift-daily"],
        "out_of_service_until": None, "next_change_at": "2026-03-05T05:00:00Z"}


# -- properties ---------------------------------------------------------------------------------------
START = datetime(2026, 3, 1, tzinfo=UTC)
instants = st.integers(min_value=0, max_value=40 * 24 * 60).map(lambda m: START + timedelta(minutes=m))


@st.composite
def situations(draw: st.DrawFn) -> dict[str, object]:
    now = draw(instants)
    periods = []
    for _ in range(draw(st.integers(0, 2))):
        start = draw(instants)
        minutes = draw(st.one_of(st.none(), st.integers(1, 5 * 24 * 60)))
        end = None if minutes is None else start + timedelta(minutes=minutes)
        periods.append(OutOfServicePeriod.create(equipment_id="FL-1", start=start, end=end, reason="r",
                                                 recorded_by="ops", recorded_at=start))
    defects = [Defect(f"D-{n:016x}", "forklift-daily", draw(instants.filter(lambda t: t <= now)), (Item("Brakes"),))
               for n in range(draw(st.integers(0, 2)))]
    checks = [CheckSeen(draw(st.sampled_from(["forklift-daily", "weekly"])), draw(instants), draw(st.booleans()))
              for _ in range(draw(st.integers(0, 6)))]
    pre_use = draw(st.lists(st.sampled_from([DAILY, WEEKLY]), unique_by=lambda c: c.checklist_id))
    return {"now": now, "periods": periods, "open_defects": defects, "checks": checks, "pre_use": pre_use}


@settings(max_examples=150, deadline=None)
@given(situations())
def test_precedence_always_holds(situation: dict[str, object]) -> None:
    now = situation.pop("now")
    assert isinstance(now, datetime)
    found = readiness_of("FL-1", None, now, **situation)  # type: ignore[arg-type]
    periods = situation["periods"]
    assert isinstance(periods, list)
    if any(p.in_effect_at(now) for p in periods):
        assert found.state is State.OUT_OF_SERVICE
    elif situation["open_defects"]:
        assert found.state is State.NOT_CLEARED
    elif found.unchecked_checklists:
        assert found.state is State.UNCHECKED
    else:
        assert found.state is State.CLEARED
    assert found.next_change_at is None or found.next_change_at > now  # never in the past
    assert found.since is None or found.since <= now


@settings(max_examples=100, deadline=None)
@given(instants, st.sampled_from([DAILY, WEEKLY]), st.integers(0, 10 ** 6))
def test_a_passing_check_in_the_current_window_satisfies_a_pre_use_checklist(
        now: datetime, checklist: Checklist, offset: int) -> None:
    window = current_window(checklist.parsed(), now)
    if window is None:
        return
    span = int((now - window.start).total_seconds())
    performed = window.start + timedelta(seconds=offset % (span + 1))
    found = readiness_of("FL-1", None, now, pre_use=[checklist],
                         checks=[CheckSeen(checklist.checklist_id, performed, passed=True)])
    assert found.state is State.CLEARED and found.unchecked_checklists == ()
    failing = readiness_of("FL-1", None, now, pre_use=[checklist],
                           checks=[CheckSeen(checklist.checklist_id, performed, passed=False)])
    assert failing.state is State.UNCHECKED


@pytest.mark.parametrize("now", ["2026-03-29T00:30:00Z", "2026-03-29T04:30:00Z"])
def test_across_the_spring_change_the_window_starts_at_six_local(now: str) -> None:
    found = readiness_of("FL-1", None, at(now), pre_use=[DAILY])
    assert found.state is State.UNCHECKED
    assert found.since is not None and found.since.astimezone(DAILY.parsed().zone).hour == 6
