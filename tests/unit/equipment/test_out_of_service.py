"""Out-of-service periods (issue #23 item 1): validation naming the field, what a period excuses,
ending one early, the stored form."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from missed_checks.aws.table.out_of_service import period_item, period_of
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.equipment.out_of_service import MAX_REASON_CHARS, OutOfServicePeriod, excused_equipment, overlapping
from missed_checks.errors import InvalidInput

BERLIN = ZoneInfo("Europe/Berlin")
FROM = datetime(2026, 3, 23, 8, 0, tzinfo=BERLIN)
TO = datetime(2026, 3, 30, 8, 0, tzinfo=BERLIN)  # a week across the change to summer time (29 March)
NOW = datetime(2026, 3, 23, 7, 0, tzinfo=UTC)


def period(**changes: object) -> OutOfServicePeriod:
    fields: dict[str, object] = {"equipment_id": "FL-001", "start": FROM, "end": TO, "reason": "gearbox",
                                 "recorded_by": "j.doe", "recorded_at": NOW}
    fields.update(changes)
    return OutOfServicePeriod.create(**fields)  # type: ignore[arg-type]


def window(start: datetime, hours: int = 8) -> OccurrenceWindow:
    return OccurrenceWindow(start, start + timedelta(hours=hours), start + timedelta(hours=hours, minutes=30))


@pytest.mark.parametrize(("changes", "field", "message"), [
    ({"end": FROM}, "to", "is not after from"),
    ({"end": FROM - timedelta(days=1)}, "to", "is not after from"),
    ({"equipment_id": "bad id"}, "equipment", "not a valid equipment id"),
    ({"equipment_id": ""}, "equipment", "not a valid equipment id"),
    ({"equipment_id": 7}, "equipment", "not a valid equipment id"),
    ({"start": datetime(2026, 3, 23, 8, 0)}, "from", "no UTC offset"),
    ({"end": datetime(2026, 3, 30, 8, 0)}, "to", "no UTC offset"),
    ({"start": "2026-03-23T08:00:00Z"}, "from", "not an instant"),
    ({"start": datetime(1960, 1, 1, tzinfo=UTC)}, "from", "outside the years"),
    ({"reason": "  "}, "reason", "give the reason"),
    ({"reason": None}, "reason", "give the reason"),
    ({"reason": "x" * (MAX_REASON_CHARS + 1)}, "reason", f"keep it to {MAX_REASON_CHARS}"),
    ({"reason": "two\nlines"}, "reason", "one line"),
    ({"recorded_by": ""}, "by", "who records it"),
])
def test_a_bad_field_is_refused_naming_it(changes: dict[str, object], field: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message) as refused:
        period(**changes)
    assert refused.value.field == field


def test_an_open_ended_period_is_valid_and_kept_as_given() -> None:
    open_ended = period(end=None, reason="  waiting for parts  ")
    assert open_ended.end is None and open_ended.reason == "waiting for parts"
    assert open_ended.start == FROM and open_ended.start.utcoffset() == timedelta(hours=1)


def test_a_window_is_excused_when_the_period_overlaps_any_part_of_it() -> None:
    week = period()
    before = window(FROM - timedelta(hours=8))  # ends exactly at from: shares no instant
    touching = window(FROM - timedelta(hours=7, minutes=59))  # its last minute is out of service
    after = window(TO)  # starts exactly at to: back in service
    inside = window(FROM + timedelta(days=2))
    assert (week.excuses(before), week.excuses(touching), week.excuses(inside), week.excuses(after)) == (
        False, True, True, False)
    assert period(end=None).excuses(window(FROM + timedelta(days=3650)))


def test_excused_equipment_and_overlapping_pick_the_periods_of_the_range() -> None:
    periods = [period(), period(equipment_id="FL-002", start=TO, end=None)]
    assert excused_equipment(window(FROM), periods) == {"FL-001"}
    assert excused_equipment(window(TO + timedelta(days=1)), periods) == {"FL-002"}
    assert overlapping(periods, TO - timedelta(seconds=1), TO) == [periods[0]]
    assert overlapping(periods, TO, None) == [periods[1]]


def test_ending_early_sets_a_new_to_and_keeps_the_planned_one() -> None:
    at = datetime(2026, 3, 26, 12, 0, tzinfo=UTC)
    ended = period().ended(at, by="a.smith", now=at)
    assert (ended.end, ended.planned_end, ended.ended_by, ended.ended_at) == (at, TO, "a.smith", at)
    assert ended.to_dict()["planned_to"] == "2026-03-30T06:00:00Z"


def test_ending_now_is_not_in_the_past_whatever_the_sub_seconds() -> None:
    now = datetime(2026, 3, 26, 12, 0, 0, 750000, tzinfo=UTC)
    ended = period().ended(now, by="a.smith", now=now)  # "now" of a command: --at defaults to it
    assert ended.end == now.replace(microsecond=0) == ended.ended_at


@pytest.mark.parametrize(("at", "now", "message"), [
    (FROM, FROM, "is not after the period's from"),
    (FROM - timedelta(hours=1), FROM - timedelta(hours=2), "is not after the period's from"),
    (FROM + timedelta(days=1), FROM + timedelta(days=2), "is before now"),
    (TO, FROM, "is not before the period's to"),
    (datetime(2026, 3, 26, 12, 0), FROM, "no UTC offset"),
])
def test_ending_early_refuses_what_cannot_be(at: datetime, now: datetime, message: str) -> None:
    with pytest.raises(InvalidInput, match=message) as refused:
        period().ended(at, by="a.smith", now=now)
    assert refused.value.field == "at"


def test_the_stored_form_reads_back_equal() -> None:
    for stored in (period(), period(end=None), period().ended(FROM + timedelta(days=1), by="x", now=FROM)):
        item = period_item(stored)
        assert (item["pk"], item["sk"], item["type"]) == (
            "OUT_OF_SERVICE", f"{item['from']}#FL-001", "out_of_service")
        assert period_of(item) == stored
        assert ("to" in item) == (stored.end is not None)


def test_only_a_planned_period_can_be_cancelled() -> None:
    period().require_planned(FROM - timedelta(seconds=1))
    for now in (FROM, FROM + timedelta(days=1)):
        with pytest.raises(InvalidInput, match="only a planned period can be cancelled") as refused:
            period().require_planned(now)
        assert refused.value.field == "from"
