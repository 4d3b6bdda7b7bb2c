from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from boto3.dynamodb.types import TypeSerializer

from missed_checks.aws.table.windows import judged_window_fields, missed_check_item
from missed_checks.checklists.checklist import JudgedBy
from missed_checks.equipment.assignments import Assignment
from missed_checks.evaluation.missed_check import MissedCheck, judge
from missed_checks.performed_checks.performed_check import PerformedCheck, Timeliness, timeliness
from missed_checks_local.testing.metering import item_size

START = datetime(2026, 3, 2, 5, 0, tzinfo=UTC)
END = START + timedelta(hours=8)
EVALUATE_AT = END + timedelta(minutes=30)


@dataclass
class Window:
    start: datetime
    end: datetime
    evaluate_at: datetime


WINDOW = Window(START, END, EVALUATE_AT)


def test_timeliness_on_time_late_and_outside():
    assert timeliness(START, START, END, EVALUATE_AT) is Timeliness.ON_TIME
    assert timeliness(END - timedelta(seconds=1), START, END, EVALUATE_AT) is Timeliness.ON_TIME
    assert timeliness(END, START, END, EVALUATE_AT) is Timeliness.LATE
    assert timeliness(EVALUATE_AT - timedelta(seconds=1), START, END, EVALUATE_AT) is Timeliness.LATE
    assert timeliness(EVALUATE_AT, START, END, EVALUATE_AT) is None
    assert timeliness(START - timedelta(seconds=1), START, END, EVALUATE_AT) is None


def test_judge_misses_exactly_the_counted_equipment_without_a_check():
    assignments = [
        Assignment("c", "a", START - timedelta(days=1)),
        Assignment("c", "b", START - timedelta(days=1)),
        Assignment("c", "c", START - timedelta(days=1)),
        Assignment("c", "late-joiner", START + timedelta(hours=1)),
        Assignment("c", "left-early", START - timedelta(days=1), unassigned_at=START + timedelta(hours=2)),
    ]
    performed = [
        PerformedCheck("c", "a", START + timedelta(hours=1)),
        PerformedCheck("c", "b", END + timedelta(minutes=10)),  # late, within grace
        PerformedCheck("c", "c", EVALUATE_AT + timedelta(minutes=1)),  # after grace: does not count
    ]
    judgement = judge(WINDOW, assignments, performed)
    assert judgement.counted == ("a", "b", "c")
    assert judgement.performed == ("a", "b")
    assert judgement.missed == ("c",)


def test_missed_check_record_is_keyed_for_idempotency_in_no_index_and_under_one_write_unit():
    execution = "arn:aws:states:us-east-1:123456789012:execution:EvaluationStateMachine-ABCDEFGHIJKL:" + "x" * 80
    item = missed_check_item(MissedCheck(checklist_id="c" * 64, equipment_id="e" * 128, window=WINDOW,
                                         judged_at=EVALUATE_AT, execution=execution))
    # the checklist and the equipment's write partition (keys.write_partition: 84 for this id)
    assert (item["pk"], item["sk"]) == (f"MISSED#{'c' * 64}#084", f"2026-03-02T05:00:00Z#{'e' * 128}")
    assert not {name for name in item if name.startswith("gsi")}  # no index copies: one write unit
    assert item_size({k: TypeSerializer().serialize(v) for k, v in item.items()}) < 1024  # even at the longest ids
    assert item["window_end"] == "2026-03-02T13:00:00Z" and item["evaluate_at"] == "2026-03-02T13:30:00Z"


def test_the_judged_window_keeps_the_rule_and_its_fleet_index_entry():
    rule = JudgedBy("DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY", window="PT8H", grace="PT30M",
                    timezone=None)
    fields = judged_window_fields("forklift", WINDOW, rule)
    assert fields["judged_by"] == {"recurrence": rule.recurrence, "window": "PT8H", "grace": "PT30M"}  # valued ones
    assert (fields["gsi2pk"], fields["gsi2sk"]) == ("WINDOWS#2026-03", "2026-03-02T05:00:00Z#forklift")
