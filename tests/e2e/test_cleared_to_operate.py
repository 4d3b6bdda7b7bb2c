"""#33's must-show run, end to end on the local runtime: cleared to operate.

The bundled scenario ``src/missed_checks_local/scenarios/cleared-to-operate.json``: a site in Berlin,
a week from Tuesday 20 October 2026 20:00 UTC to Wednesday 28 October 00:00 UTC, across the end of
summer time (Sunday 25 October, 03:00 CEST becomes 02:00 CET at 01:00 UTC). Two pre-use checklists,
daily 06:00 to 14:00 Berlin with one hour's grace: until the 24th that is 04:00 to 12:00 UTC, from
the 25th 05:00 to 13:00 UTC, judged at 13:00 UTC, then 14:00 UTC.

* ``forklift-pre-use`` (FL-1, FL-2): brakes (critical), horn (not critical), hydraulic oil (a
  choice; ``empty`` fails, critical). A supervisor must resolve a defect (``clear_on_pass`` false).
* ``reach-pre-use`` (RT-1): brakes (critical); a later check passing every critical item clears its
  defect (``clear_on_pass``).
* Both tell ``lead@example.com``.

Every expectation below is written out by hand from the scenario's events, never computed by the
code under test. The readiness of a piece of equipment: out of service, else not cleared (an open
defect), else unchecked (a pre-use checklist's latest started window has no check passing every
critical item since its start), else cleared. A run again with the stream's batches delivered twice
and redelivered, and the recheck schedules' firings delivered twice, must announce and send exactly
the same, once each.
"""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources
from typing import Any

import pytest

from missed_checks_local.product.faults import Fault, FaultInjector
from missed_checks_local.product.scenario import Scenario, run_scenario

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.stack,
    pytest.mark.filterwarnings("ignore:No application metrics to publish:UserWarning"),
]

SET_UP = "2026-10-20T20:00"

# (minute of the change, UTC; equipment; readiness; previous). The first of each piece of equipment
# comes when it is assigned: no pre-use window has started yet, so it is cleared.
READINESS = [
    (SET_UP, "FL-1", "cleared", None),
    (SET_UP, "FL-2", "cleared", None),
    (SET_UP, "RT-1", "cleared", None),
    # Wed 21: the first windows open at 06:00 CEST = 04:00Z
    ("2026-10-21T04:00", "FL-1", "unchecked", "cleared"),
    ("2026-10-21T04:00", "FL-2", "unchecked", "cleared"),
    ("2026-10-21T04:00", "RT-1", "unchecked", "cleared"),
    ("2026-10-21T04:30", "FL-1", "cleared", "unchecked"),  # every item passed
    ("2026-10-21T04:40", "FL-2", "not_cleared", "unchecked"),  # brakes failed: a defect
    ("2026-10-21T05:00", "RT-1", "not_cleared", "unchecked"),  # brakes failed: a defect
    # Thu 22: FL-2 and RT-1 stay not cleared as the window opens (a defect comes before unchecked)
    ("2026-10-22T04:00", "FL-1", "unchecked", "cleared"),
    ("2026-10-22T05:00", "RT-1", "cleared", "not_cleared"),  # a passing check clears it (clear_on_pass)
    ("2026-10-22T08:00", "FL-2", "unchecked", "not_cleared"),  # resolved; today's check is still to do
    ("2026-10-22T09:30", "FL-2", "cleared", "unchecked"),
    # Fri 23: FL-1 was unchecked all along (missed yesterday): no change as the window opens
    ("2026-10-23T04:00", "FL-2", "unchecked", "cleared"),
    ("2026-10-23T04:00", "RT-1", "unchecked", "cleared"),
    ("2026-10-23T04:20", "FL-1", "cleared", "unchecked"),  # the horn failed: not critical
    ("2026-10-23T04:25", "FL-2", "cleared", "unchecked"),
    ("2026-10-23T04:30", "RT-1", "cleared", "unchecked"),
    # Sat 24: only the reach truck is checked
    ("2026-10-24T04:00", "FL-1", "unchecked", "cleared"),
    ("2026-10-24T04:00", "FL-2", "unchecked", "cleared"),
    ("2026-10-24T04:00", "RT-1", "unchecked", "cleared"),
    ("2026-10-24T08:00", "RT-1", "cleared", "unchecked"),
    # Sun 25: winter time; the window opens at 06:00 CET = 05:00Z, not 04:00Z
    ("2026-10-25T05:00", "RT-1", "unchecked", "cleared"),
    ("2026-10-25T05:30", "FL-1", "not_cleared", "unchecked"),  # hydraulic oil empty: a defect
    ("2026-10-25T06:00", "RT-1", "cleared", "unchecked"),
    # Mon 26: FL-1's passing check at 06:00Z does not clear it (a supervisor must); the resolution does
    ("2026-10-26T05:00", "RT-1", "unchecked", "cleared"),
    ("2026-10-26T06:30", "FL-2", "cleared", "unchecked"),
    ("2026-10-26T06:45", "RT-1", "cleared", "unchecked"),
    ("2026-10-26T08:00", "FL-1", "cleared", "not_cleared"),
    ("2026-10-26T10:00", "FL-2", "out_of_service", "cleared"),
    # Tue 27
    ("2026-10-27T05:00", "FL-1", "unchecked", "cleared"),
    ("2026-10-27T05:00", "RT-1", "unchecked", "cleared"),
    ("2026-10-27T05:30", "FL-1", "cleared", "unchecked"),
    ("2026-10-27T10:00", "FL-2", "unchecked", "out_of_service"),  # back in service; today's check not done
]

DEFECTS = [
    {"checklist": "forklift-pre-use", "equipment": "FL-2", "found_at": "2026-10-21T04:40:00Z", "found_by": "anna",
     "failed_items": ["brakes"], "status": "resolved", "resolved_how": "supervisor",
     "resolved_at": "2026-10-22T08:00:00Z", "resolved_by": "sam"},
    {"checklist": "reach-pre-use", "equipment": "RT-1", "found_at": "2026-10-21T05:00:00Z", "found_by": "ben",
     "failed_items": ["brakes"], "status": "resolved", "resolved_how": "passing_check",
     "resolved_at": "2026-10-22T05:00:00Z", "resolved_by": "ben"},
    {"checklist": "forklift-pre-use", "equipment": "FL-1", "found_at": "2026-10-25T05:30:00Z", "found_by": "anna",
     "failed_items": ["hydraulic_oil"], "status": "resolved", "resolved_how": "supervisor",
     "resolved_at": "2026-10-26T08:00:00Z", "resolved_by": "sam"},
]

# (kind, checklist, equipment, minute sent, UTC): each to lead@example.com. A defect is told as it is
# found; a window's missed alert when it is judged (end + grace).
NOTIFICATIONS = [
    ("defect", "forklift-pre-use", ["FL-2"], "2026-10-21T04:40"),
    ("defect", "reach-pre-use", ["RT-1"], "2026-10-21T05:00"),
    ("missed", "forklift-pre-use", ["FL-1"], "2026-10-22T13:00"),
    ("missed", "forklift-pre-use", ["FL-1", "FL-2"], "2026-10-24T13:00"),
    ("defect", "forklift-pre-use", ["FL-1"], "2026-10-25T05:30"),
    ("missed", "forklift-pre-use", ["FL-2"], "2026-10-25T14:00"),  # the window after the change
    ("missed", "reach-pre-use", ["RT-1"], "2026-10-27T14:00"),  # FL-2 is excused (out of service)
]

# A failed check was still performed: (expected, on time, missed, excused, compliance %); an excused
# window is not expected (docs/report-outcomes.md)
ROWS = {
    ("forklift-pre-use", "FL-1"): (7, 5, 2, 0, 71.43),  # checked 21, 23, 25 (oil empty), 26, 27
    ("forklift-pre-use", "FL-2"): (6, 4, 2, 1, 66.67),  # 21 (brakes failed), 22, 23, 26; excused 27
    ("reach-pre-use", "RT-1"): (7, 6, 1, 0, 85.71),  # 21 (brakes failed) to 26; missed 27
}
COLUMNS = ("expected", "on_time", "missed", "excused", "compliance_pct")


def _scenario() -> Scenario:
    text = resources.files("missed_checks_local").joinpath("scenarios", "cleared-to-operate.json").read_text("utf-8")
    return Scenario.from_dict(json.loads(text), name="cleared-to-operate")


@pytest.fixture(scope="module")
def clean() -> dict[str, Any]:
    return run_scenario(_scenario())


@pytest.fixture(scope="module")
def retried() -> dict[str, Any]:
    """The same week with at-least-once delivery everywhere readiness listens: every stream batch
    delivered twice and its records redelivered, the recheck firings delivered twice, PutEvents failing
    5 times (fewer than the SDK's 8 attempts of one call, so each is absorbed by its retry: more could
    fail a whole invocation, which then goes to a dead-letter queue, as it should, for a replay)."""
    faults = FaultInjector([Fault("stream_duplicate", count=200), Fault("stream_redeliver", count=200),
                            Fault("firing_duplicate", count=200), Fault("eventbridge_failure", count=5)])
    result = run_scenario(_scenario(), faults=faults)
    result["struck"] = {fault.kind: fault.struck for fault in faults.faults}
    return result


def changes(result: dict[str, Any]) -> list[tuple[str, str, str, str | None]]:
    return sorted((str(e["changed_at"])[:16], e["equipment_id"], e["readiness"], e["previous"])
                  for e in result["readiness"])


def sent(result: dict[str, Any]) -> list[tuple[str, str, list[str], str]]:
    found = [(n["kind"], n["checklist"], sorted(n["equipment"]), str(n["sent_at"])[:16])
             for n in result["notifications"] if n["to"] == "lead@example.com"]
    return sorted(found, key=lambda n: (n[3], n[1]))


def test_every_readiness_change_is_announced_once_in_order(clean: dict[str, Any]) -> None:
    assert changes(clean) == sorted(READINESS)
    ids = [e["change_id"] for e in clean["readiness"]]
    assert len(ids) == len(set(ids))
    for equipment in ("FL-1", "FL-2", "RT-1"):  # each one's changes numbered 1, 2, 3... in order
        mine = sorted((e for e in clean["readiness"] if e["equipment_id"] == equipment), key=lambda e: e["sequence"])
        assert [e["sequence"] for e in mine] == list(range(1, len(mine) + 1))
        assert [e["previous"] for e in mine[1:]] == [e["readiness"] for e in mine[:-1]]


def test_the_readiness_event_says_why(clean: dict[str, Any]) -> None:
    by = {(str(e["changed_at"])[:16], e["equipment_id"]): e for e in clean["readiness"]}
    brakes = by[("2026-10-21T04:40", "FL-2")]
    assert brakes["site_id"] is None and len(brakes["open_defects"]) == 1
    assert "Brakes work" in brakes["reason"]
    oil = by[("2026-10-25T05:30", "FL-1")]
    assert "Hydraulic oil level" in oil["reason"] and oil["since"] == "2026-10-25T05:30:00Z"
    after_dst = by[("2026-10-25T05:00", "RT-1")]
    assert after_dst["unchecked_checklists"] == ["reach-pre-use"] and after_dst["since"] == "2026-10-25T05:00:00Z"
    off = by[("2026-10-26T10:00", "FL-2")]
    assert off["out_of_service_until"] == "2026-10-27T10:00:00Z"


def test_every_defect_and_how_it_ended(clean: dict[str, Any]) -> None:
    found = [{k: v for k, v in d.items() if k != "defect_id"} for d in clean["defects"]]
    assert found == DEFECTS
    assert len({d["defect_id"] for d in clean["defects"]}) == 3


def test_every_notification_to_the_lead(clean: dict[str, Any]) -> None:
    assert sent(clean) == sorted(NOTIFICATIONS, key=lambda n: (n[3], n[1]))


def test_a_failed_check_counts_as_performed(clean: dict[str, Any]) -> None:
    rows = {(r["checklist_id"], r["equipment_id"]): tuple(r[c] for c in COLUMNS)
            for r in clean["report"].to_dict()["rows"]}
    assert rows == ROWS


def test_retries_announce_and_send_nothing_twice(clean: dict[str, Any], retried: dict[str, Any]) -> None:
    assert all(retried["struck"].values()), retried["struck"]  # every kind of retry happened
    assert retried["dead_letters"] == clean["dead_letters"], retried["dead_letters"]
    assert changes(retried) == changes(clean), set(changes(retried)) ^ set(changes(clean))
    assert not [i for i, n in Counter(e["change_id"] for e in retried["readiness"]).items() if n > 1]
    assert sent(retried) == sent(clean)
    ids = [n["notification_id"] for n in retried["notifications"]]
    assert len(ids) == len(set(ids))
    assert [{k: v for k, v in d.items()} for d in retried["defects"]] == clean["defects"]
