"""A defect's id is the check's (one check opens one defect, whoever retries) and its document form."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta, timezone

from missed_checks.defects.defect import Defect, DefectStatus, ResolvedHow, defect_id_of
from missed_checks.performed_checks.answers import FailedItem

AT = datetime(2026, 3, 2, 5, 42, tzinfo=UTC)
BRAKES = FailedItem("brakes", "Brakes work", True, "fail", "pass")


def test_the_id_is_the_checks_whatever_the_offset() -> None:
    expected = "D-" + hashlib.sha256(b"forklift-daily|FL-1|2026-03-02T05:42:00Z").hexdigest()[:16]
    assert defect_id_of("forklift-daily", "FL-1", AT) == expected
    assert defect_id_of("forklift-daily", "FL-1", AT.astimezone(timezone(timedelta(hours=1)))) == expected
    assert defect_id_of("forklift-daily", "FL-2", AT) != expected
    assert defect_id_of("forklift-daily", "FL-1", AT + timedelta(seconds=1)) != expected


def test_opened_then_resolved() -> None:
    defect = Defect(defect_id_of("forklift-daily", "FL-1", AT), "forklift-daily", "FL-1", "north", (BRAKES,),
                    "ann", AT, AT + timedelta(minutes=1))
    assert defect.is_open and defect.revision == 1
    assert defect.describe() == "Brakes work (critical): fail, expected pass"
    resolved = defect.resolved(by="sam", at=AT + timedelta(hours=2), note="brake pads replaced",
                               how=ResolvedHow.SUPERVISOR)
    assert not resolved.is_open and resolved.revision == 2 and resolved.status is DefectStatus.RESOLVED
    assert resolved.to_dict() == {
        "defect_id": defect.defect_id, "checklist_id": "forklift-daily", "equipment_id": "FL-1", "site_id": "north",
        "status": "resolved", "failed_items": [{"item_id": "brakes", "label": "Brakes work", "critical": True,
                                                "answer": "fail", "expected": "pass"}],
        "found_by": "ann", "found_at": "2026-03-02T05:42:00Z", "opened_at": "2026-03-02T05:43:00Z",
        "resolved_by": "sam", "resolved_at": "2026-03-02T07:42:00Z", "resolution": "brake pads replaced",
        "resolved_how": "supervisor", "cleared_by_check": None, "revision": 2}
