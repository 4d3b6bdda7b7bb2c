"""End to end on the local runtime: a closure calendar shared by two checklists in two zones (#23 item 2).

The calendar closes local dates: each checklist has no window on them (in its own zone, across both
DST changes of the period), nothing is missed there, nothing is pending. The calendar is edited
mid-run: a date added after its windows were judged keeps their outcome; a date removed before its
windows are judged makes them due again. Every judged window records the calendar revision it was
judged by, and the schedules follow the calendar (re-synced from the stream; never ``exact``).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from missed_checks.aws.table import ChecklistTable
from missed_checks_local.product.scenario import Scenario, run_scenario

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.filterwarnings("ignore:No application metrics to publish:UserWarning"),
]

ZONES = {"berlin-daily": "Europe/Berlin", "chicago-daily": "America/Chicago"}
START, END = "2026-03-04T00:00:00Z", "2026-04-08T00:00:00Z"
FIRST_DAY, LAST_DAY = date(2026, 3, 5), date(2026, 4, 7)
EDIT_AT = "2026-03-20T00:00:00Z"
BEFORE_EDIT = ["2026-03-09", "2026-03-30", "2026-04-03", "2026-04-06"]
AFTER_EDIT = ["2026-03-06", "2026-03-09", "2026-04-03"]  # 03-06 added after it was judged; 03-30, 04-06 reopened


def window_start(checklist: str, day: date) -> str:
    local = datetime.combine(day, time(6, 0), ZoneInfo(ZONES[checklist]))
    return local.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture(scope="module")
def run() -> dict[str, Any]:
    events: list[dict[str, Any]] = [
        {"at": "2026-03-04T01:00:00Z", "put_calendar": {"id": "site-holidays", "dates": BEFORE_EDIT,
                                                        "description": "public holidays"}},
    ]
    for checklist, zone in ZONES.items():
        events += [
            {"at": "2026-03-04T02:00:00Z", "put_checklist": {
                "id": checklist, "recurrence": f"DTSTART;TZID={zone}:20260305T060000\nRRULE:FREQ=DAILY",
                "window": "PT8H", "closed_on": ["site-holidays"]}},
            {"at": "2026-03-04T02:00:00Z", "assign": {"checklist": checklist, "equipment": ["fl-1"]}},
        ]
    events.append({"at": EDIT_AT, "put_calendar": {"id": "site-holidays", "dates": AFTER_EDIT}})
    seen: dict[str, Any] = {}

    def observe(runtime: Any) -> None:
        table = ChecklistTable(runtime.stack.table_name)
        for checklist in ZONES:
            seen[checklist] = table.judged_windows(checklist, datetime(2026, 3, 1, tzinfo=UTC),
                                                   datetime(2026, 5, 1, tzinfo=UTC))
            seen[f"{checklist}:item"] = table.get_checklist_item(checklist)
        seen["revision 1"] = table.calendar_revision("site-holidays", 1)

    result = run_scenario(Scenario.from_dict({"start": START, "end": END, "events": events}), observe=observe)
    result["observed"] = seen
    return result


def test_closed_dates_are_not_due_in_either_zone(run: dict[str, Any]) -> None:
    for checklist in ZONES:
        days = [FIRST_DAY + timedelta(days=n) for n in range((LAST_DAY - FIRST_DAY).days + 1)]
        # closed when judged: 03-09 (both revisions) and 04-03 (both); 03-30 and 04-06 were reopened before
        # their windows were judged; 03-06 was judged before it was added
        open_days = [d for d in days if d.isoformat() not in ("2026-03-09", "2026-04-03")]
        expected = {window_start(checklist, d) for d in open_days}
        missed = {m["window_start"] for m in run["missed"] if m["checklist"] == checklist}
        assert missed == expected, checklist
        outcomes = [o for o in run["report"].outcomes if o.checklist_id == checklist]
        assert {o.window_start for o in outcomes} == expected
        assert {o.outcome for o in outcomes} == {"missed"}
        row = next(r for r in run["report"].rows if r.checklist_id == checklist)
        assert (row.expected, row.missed, row.pending) == (len(expected), len(expected), 0)


def test_judged_windows_record_the_calendar_revision(run: dict[str, Any]) -> None:
    for checklist in ZONES:
        records = {r["window_start"]: r for r in run["observed"][checklist]}
        assert records[window_start(checklist, date(2026, 3, 6))]["judged_by"]["closed_on"] == {"site-holidays": 1}
        assert records[window_start(checklist, date(2026, 3, 30))]["judged_by"]["closed_on"] == {"site-holidays": 2}
    first = run["observed"]["revision 1"]
    assert [d.isoformat() for d in first.dates] == BEFORE_EDIT


def test_the_schedule_follows_and_is_never_exact(run: dict[str, Any]) -> None:
    for checklist in ZONES:
        item = run["observed"][f"{checklist}:item"]
        assert item["closed_on"] == ["site-holidays"]
        assert item["schedule"]["exact"] is False
        assert item["schedule"]["timezone"] == ZONES[checklist]
