"""An equipment's status across its checklists (missed_checks.equipment.status): the current or next
window in the checklist's own zone, done / undone / not due / paused, and the open run of misses."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from missed_checks.checklists.checklist import Checklist, Status
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.equipment.assignments import Assignment
from missed_checks.equipment.status import status_of
from missed_checks.reporting.report import MissedRecord
from missed_checks.timefmt import parse_instant, to_utc_iso

# Europe/Riga (UTC+2 in March): a daily window 06:00-14:00 local, 30 minutes' grace.
RIGA_DAILY = "DTSTART;TZID=Europe/Riga:20260301T060000\nRRULE:FREQ=DAILY"
BRISBANE_WEEKLY = "DTSTART;TZID=Australia/Brisbane:20260302T080000\nRRULE:FREQ=WEEKLY;BYDAY=MO"
CREATED = datetime(2026, 2, 1, tzinfo=UTC)


@dataclass
class Reader:
    checklists: dict[str, Checklist] = field(default_factory=dict)
    assigned: list[Assignment] = field(default_factory=list)
    performed: list[tuple[str, str]] = field(default_factory=list)
    judged: dict[str, list[str]] = field(default_factory=dict)
    missed: dict[str, list[str]] = field(default_factory=dict)

    def assignments_of_equipment(self, equipment_id: str) -> list[Assignment]:
        return [a for a in self.assigned if a.equipment_id == equipment_id]

    def get_checklist(self, checklist_id: str) -> Checklist | None:
        return self.checklists.get(checklist_id)

    def performed_checks_of_equipment(self, equipment_id: str, low: str, until: str) -> list[tuple[str, str]]:
        return [(c, at) for c, at in self.performed if low <= at <= until]

    def judged_windows_of(self, checklist_id: str, start: datetime, end: datetime) -> list[OccurrenceWindow]:
        return [OccurrenceWindow(parse_instant(s, "s"), parse_instant(s, "s") + timedelta(hours=8),
                                 parse_instant(s, "s") + timedelta(hours=8, minutes=30))
                for s in self.judged.get(checklist_id, []) if to_utc_iso(start) <= s < to_utc_iso(end)]

    def missed_records_of_equipment(self, equipment_id: str, checklist_ids: Iterable[str], start: datetime,
                                    end: datetime) -> list[tuple[str, MissedRecord]]:
        return [(c, MissedRecord(equipment_id, s, False)) for c in checklist_ids for s in self.missed.get(c, [])]


def reader() -> Reader:
    daily = Checklist("forklift-daily", RIGA_DAILY, window="PT8H", grace="PT30M", created_at=CREATED)
    weekly = Checklist("weekly", BRISBANE_WEEKLY, window="PT4H", created_at=CREATED)
    old = Checklist("retired", RIGA_DAILY, window="PT8H", created_at=CREATED)
    return Reader(
        checklists={c.checklist_id: c for c in (daily, weekly, old)},
        assigned=[Assignment("forklift-daily", "FL-1", CREATED), Assignment("weekly", "FL-1", CREATED),
                  Assignment("retired", "FL-1", CREATED, unassigned_at=datetime(2026, 3, 1, tzinfo=UTC))],
        # the Riga windows of 3 and 4 March were judged and missed, the 2 March one was done
        judged={"forklift-daily": ["2026-03-02T04:00:00Z", "2026-03-03T04:00:00Z", "2026-03-04T04:00:00Z"]},
        missed={"forklift-daily": ["2026-03-03T04:00:00Z", "2026-03-04T04:00:00Z"]},
    )


def test_undone_then_done_in_local_time_with_the_open_run_of_misses() -> None:
    data = reader()
    now = datetime(2026, 3, 5, 9, 0, tzinfo=UTC)  # 11:00 in Riga: inside the window of 5 March
    daily, weekly = status_of(data, "FL-1", now)
    assert daily.to_dict() == {
        "checklist_id": "forklift-daily", "name": "", "timezone": "Europe/Riga", "state": "undone",
        "window": {"start": "2026-03-05T06:00:00+02:00", "end": "2026-03-05T14:00:00+02:00",
                   "due_by": "2026-03-05T14:00:00+02:00", "late_until": "2026-03-05T14:30:00+02:00"},
        "performed_at": None, "open_misses": {"count": 2, "since": "2026-03-03T06:00:00+02:00"}}
    # the weekly Brisbane check is not due before Monday 9 March 08:00 (+10:00)
    assert (weekly.state, weekly.to_dict()["window"]["start"]) == ("not_due", "2026-03-09T08:00:00+10:00")
    data.performed.append(("forklift-daily", "2026-03-05T12:20:00Z"))  # late, inside the grace period
    late = datetime(2026, 3, 5, 12, 25, tzinfo=UTC)
    done = status_of(data, "FL-1", late)[0]
    assert (done.state, done.to_dict()["performed_at"]) == ("done", "2026-03-05T14:20:00+02:00")


def test_paused_unassigned_and_after_the_grace_period() -> None:
    data = reader()
    data.checklists["weekly"] = data.checklists["weekly"].with_changes(status=Status.PAUSED)
    after_grace = datetime(2026, 3, 5, 12, 31, tzinfo=UTC)  # the 5 March window can no longer be done
    daily, weekly = status_of(data, "FL-1", after_grace)
    assert (daily.state, daily.to_dict()["window"]["start"]) == ("not_due", "2026-03-06T06:00:00+02:00")
    assert weekly.state == "paused"
    assert status_of(data, "FL-2", after_grace) == []
    data.judged["forklift-daily"].append("2026-03-05T04:00:00Z")  # judged and done: the run is closed
    assert status_of(data, "FL-1", after_grace + timedelta(hours=1))[0].open_misses == 0
