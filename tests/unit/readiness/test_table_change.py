"""What a stream record means for readiness (missed_checks.aws.table.readiness.table_change_of_record):
the equipment of the item kinds the readiness function's filter passes, a pre-use checklist's fleet
when its rule or flags change, and a defect just opened (its people are told once)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from missed_checks.aws.table import keys
from missed_checks.aws.table.base import serialize
from missed_checks.aws.table.readiness import table_change_of_record
from missed_checks.errors import InvalidInput
from missed_checks.readiness.watching import TableChange
from missed_checks_local.cloudformation.deploy import load_sam_template
from missed_checks_local.streams.filters import matches_any

ROOT = Path(__file__).resolve().parents[3]


def record(event: str, item_keys: dict[str, str], old: dict[str, Any] | None = None,
           new: dict[str, Any] | None = None) -> dict[str, Any]:
    stream: dict[str, Any] = {"Keys": serialize(item_keys), "SequenceNumber": "1"}
    if old is not None:
        stream["OldImage"] = serialize({**item_keys, **old})
    if new is not None:
        stream["NewImage"] = serialize({**item_keys, **new})
    return {"eventID": "e1", "eventName": event, "dynamodb": stream}


PERFORMED = record("INSERT", keys.performed_key("daily", "FL-1", "2026-03-04T05:42:00Z"),
                   new={"type": "performed_check", "equipment_id": "FL-1", "checklist_id": "daily"})
DEFECT = record("INSERT", {"pk": "DEFECT#D-1", "sk": "DEFECT"},
                new={"type": "defect", "defect_id": "D-1", "equipment_id": "FL-1", "status": "open"})
RESOLVED = record("MODIFY", {"pk": "DEFECT#D-1", "sk": "DEFECT"},
                  old={"defect_id": "D-1", "equipment_id": "FL-1", "status": "open"},
                  new={"defect_id": "D-1", "equipment_id": "FL-1", "status": "resolved"})
PERIOD = record("REMOVE", keys.out_of_service_key("2026-03-04T00:00:00Z", "FL-2"), old={"equipment_id": "FL-2"})
ASSIGNED = record("INSERT", keys.assignment_key("daily", 3, "FL-3"), new={"equipment_id": "FL-3"})
MOVED = record("MODIFY", keys.registered_key("FL-4"), old={"equipment_id": "FL-4", "site_id": "north"},
               new={"equipment_id": "FL-4", "site_id": "south"})
PRE_USE_ON = record("MODIFY", keys.checklist_key("daily"), old={"pre_use": False, "name": "a"},
                    new={"pre_use": True, "name": "a"})
RENAMED = record("MODIFY", keys.checklist_key("daily"), old={"pre_use": True, "name": "a"},
                 new={"pre_use": True, "name": "b"})
NOT_PRE_USE = record("MODIFY", keys.checklist_key("daily"), old={"recurrence": "x"}, new={"recurrence": "y"})
READINESS = record("MODIFY", keys.readiness_key("FL-1"), old={"equipment_id": "FL-1"}, new={"equipment_id": "FL-1"})


def test_each_kind_names_its_equipment_and_a_new_open_defect_is_told() -> None:
    assert table_change_of_record(PERFORMED) == TableChange(("FL-1",), through_checklist="daily")
    assert table_change_of_record(DEFECT) == TableChange(("FL-1",), opened_defect_id="D-1")
    assert table_change_of_record(RESOLVED) == TableChange(("FL-1",))  # rechecked, nobody told again
    assert table_change_of_record(PERIOD) == TableChange(("FL-2",))
    assert table_change_of_record(ASSIGNED) == TableChange(("FL-3",), through_checklist="daily")
    assert table_change_of_record(MOVED) == TableChange(("FL-4",))


def test_a_checklist_counts_when_it_is_pre_use_and_its_rule_or_flags_changed() -> None:
    assert table_change_of_record(PRE_USE_ON) == TableChange(checklist_id="daily")
    assert table_change_of_record(RENAMED) == TableChange()  # a new name changes no readiness
    assert table_change_of_record(NOT_PRE_USE) == TableChange()
    assert table_change_of_record(READINESS) == TableChange()  # its own writes: nothing (and filtered out)


def test_a_record_without_its_dynamodb_section_is_refused() -> None:
    with pytest.raises(InvalidInput, match="no dynamodb section"):
        table_change_of_record({"eventID": "e9"})


def test_the_templates_filter_passes_exactly_the_kinds_it_reads() -> None:
    template = load_sam_template(ROOT / "template.yaml")
    event = template["Resources"]["ReadinessFunction"]["Properties"]["Events"]["ReadinessChanges"]["Properties"]
    patterns = tuple(json.loads(f["Pattern"]) for f in event["FilterCriteria"]["Filters"])
    for passed in (PERFORMED, DEFECT, RESOLVED, PERIOD, ASSIGNED, MOVED, PRE_USE_ON):
        assert matches_any(patterns, passed), passed["dynamodb"]["Keys"]
    for left in (READINESS, record("INSERT", keys.missed_key("daily", "2026-03-04T05:00:00Z", "FL-1"), new={}),
                 record("INSERT", keys.notification_key("n1"), new={})):
        assert not matches_any(patterns, left), left["dynamodb"]["Keys"]
