"""The table adapter's items read back as domain types (moved here from the domain's tests with the
readers themselves, #35 item 2: item shapes are :mod:`missed_checks.aws.table`'s alone)."""

from missed_checks.aws.table.windows import missed_record_of
from missed_checks.reporting.report import Dismissal, MissedRecord


def test_a_missed_check_item_keeps_its_window_end_and_dismissal() -> None:
    item = {"equipment_id": "E1", "window_start": "2026-03-02T05:00:00Z", "window_end": "2026-03-02T13:00:00Z",
            "dismissal": {"reason": "in the workshop", "by": "j.doe", "at": "2026-03-03T08:00:00Z"}}
    record = missed_record_of(item)
    assert record == MissedRecord("E1", "2026-03-02T05:00:00Z", True, "2026-03-02T13:00:00Z",
                                  Dismissal("in the workshop", "j.doe", "2026-03-03T08:00:00Z"))
    assert missed_record_of({"equipment_id": "E1", "window_start": "x"}) == MissedRecord("E1", "x", False)
