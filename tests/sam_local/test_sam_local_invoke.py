"""Every sample in ``events/`` through the real ``sam local invoke`` (SAM CLI, podman, the Lambda
base image built here), against a running ``missed-checks local serve``: each asserts the handler's
result and what it did to the local stack. One local stack for the lane, emptied and seeded with the
samples' checklist (tests/event_samples.py) before each test; the samples are used as they are."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from missed_checks.checklists.checklist import JudgedBy
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.checklists.schedule import TARGET_INPUT_TEMPLATE
from missed_checks.contracts import (
    BatchCounts,
    CloseWindowOutput,
    ExecutionInput,
    PlanEvaluationOutput,
    RecordMissedChecksInput,
    dump,
    parse,
)
from missed_checks.equipment.assignments import shard_of
from missed_checks.timefmt import to_utc_iso
from tests.event_samples import (
    CHECKED,
    CHECKLIST,
    EQUIPMENT,
    EVENTS,
    MONDAY_END,
    MONDAY_START,
    RULE,
    sample,
    seed_sample_checklist,
)

pytestmark = [pytest.mark.stack, pytest.mark.sam_local]

SEED = Path(__file__).resolve().parents[2] / "tools" / "sam_local" / "seed_samples.py"
SAMPLE_WINDOW = OccurrenceWindow.from_dict(sample("record_missed_checks.json")["window"])
"""The samples' window (Monday 2 March), as the state machine passes it."""
MISSED = sorted(set(EQUIPMENT) - set(CHECKED))
SYNC_TIMEOUT_S = 30


@pytest.fixture
def checklist(stack):
    seed_sample_checklist(stack.table)
    return stack


def watermark(stack) -> datetime | None:
    return stack.table.get_checklist(CHECKLIST).evaluated_until


def test_plan_evaluation_sample_judges_the_monday_window_and_writes_its_missed_checks(checklist):
    output = parse(PlanEvaluationOutput, checklist.invoke("PlanEvaluationFunction", EVENTS / "plan_evaluation.json"))
    assert (output.outcome.value, output.checklist_id, output.equipment) == ("EVALUATE", CHECKLIST, len(EQUIPMENT))
    assert [(w.window_start, w.window_end, w.missed, w.newly_recorded, w.announced_now) for w in output.judged] == [
        (to_utc_iso(MONDAY_START), to_utc_iso(MONDAY_END), len(MISSED), len(MISSED), True)]
    assert checklist.table.missed_equipment_of_window(CHECKLIST, MONDAY_START) == MISSED
    assert checklist.table.judged_window(CHECKLIST, MONDAY_START)["execution"] == sample("plan_evaluation.json")[
        "execution"]
    assert watermark(checklist) == MONDAY_END


def test_record_missed_checks_sample_writes_the_missed_checks_of_its_shards(checklist):
    task = parse(RecordMissedChecksInput, sample("record_missed_checks.json"))
    checklist.table.open_window(CHECKLIST, SAMPLE_WINDOW, JudgedBy(RULE))
    counts = parse(BatchCounts, checklist.invoke("RecordMissedChecksFunction", EVENTS / "record_missed_checks.json"))
    in_shards = [e for e in EQUIPMENT if shard_of(e) in task.shards]
    missed_here = sorted(e for e in in_shards if e in MISSED)
    assert counts.shards == task.shards and missed_here, "the sample's shards hold some missed equipment"
    assert (counts.counted, counts.performed, counts.missed, counts.recorded) == (
        len(in_shards), len(in_shards) - len(missed_here), len(missed_here), len(missed_here))
    assert checklist.table.missed_equipment_of_window(CHECKLIST, MONDAY_START) == missed_here
    assert watermark(checklist) != MONDAY_END
    # close_window.json's batch counts are these answers, as the Map collects them
    assert dump(counts) == sample("close_window.json")["batches"][0]  # closing the window is CloseWindow's


def test_close_window_sample_claims_announces_the_window_and_moves_the_watermark(checklist):
    given = sample("close_window.json")
    checklist.table.open_window(CHECKLIST, SAMPLE_WINDOW, JudgedBy(RULE))
    closed = parse(CloseWindowOutput, checklist.invoke("CloseWindowFunction", EVENTS / "close_window.json"))
    assert (closed.window_start, closed.window_end) == (to_utc_iso(MONDAY_START), to_utc_iso(MONDAY_END))
    assert closed.announced and closed.announced_now and closed.watermark_advanced
    assert closed.claimed_by == given["execution"]
    assert closed.missed == sum(batch["missed"] for batch in given["batches"]) == len(MISSED)
    judged = checklist.table.judged_window(CHECKLIST, MONDAY_START)
    assert judged["execution"] == given["execution"] and judged["announced"] is True
    assert watermark(checklist) == MONDAY_END


def synced_by_local_serve(stack) -> dict:
    """The schedule local serve's own stream poller made for the seeded checklist."""
    deadline = time.monotonic() + SYNC_TIMEOUT_S
    while "schedule" not in (stack.table.get_checklist_item(CHECKLIST) or {}):
        assert time.monotonic() < deadline, "local serve did not sync the seeded checklist"
        time.sleep(0.2)
    return stack.client("scheduler").get_schedule(Name=CHECKLIST, GroupName=stack.outputs["ScheduleGroupName"])


def test_schedule_sync_sample_creates_the_checklists_schedule(checklist):
    # local serve syncs the seeded checklist first; undo that, so that the schedule the test finds
    # is the one the invoked function made.
    synced_by_local_serve(checklist)
    assert checklist.schedules.delete(CHECKLIST)
    checklist.client("dynamodb").update_item(TableName=checklist.table.name, UpdateExpression="REMOVE #s",
                                             ExpressionAttributeNames={"#s": "schedule"},
                                             Key={"pk": {"S": f"CHECKLIST#{CHECKLIST}"}, "sk": {"S": "CHECKLIST"}})
    assert checklist.schedules.names() == []

    result = checklist.invoke("ScheduleSyncFunction", EVENTS / "schedule_sync.json")
    assert result == {"batchItemFailures": []}
    assert checklist.schedules.names() == [CHECKLIST]
    schedule = checklist.client("scheduler").get_schedule(Name=CHECKLIST,
                                                          GroupName=checklist.outputs["ScheduleGroupName"])
    assert schedule["Target"]["Arn"] == checklist.outputs["StateMachineArn"]
    assert schedule["Target"]["Input"] == TARGET_INPUT_TEMPLATE.format(checklist_id=CHECKLIST)
    assert checklist.table.get_checklist_item(CHECKLIST)["schedule"]["fingerprint"]


def test_evaluation_input_sample_is_what_the_schedule_sends_and_plan_evaluation_receives(stack):
    """Not a function's event: the state machine's input, as the checklist's schedule sends it. It
    reaches a function as plan_evaluation.json's "input" (the task's Payload), invoked above. The
    checklist is put in by the tool docs/sam-local-invoke.md gives for it."""
    subprocess.run([sys.executable, str(SEED), "--endpoint", stack.endpoint], check=True, capture_output=True)
    assert stack.table.count_assignments(CHECKLIST) == len(EQUIPMENT)
    given = sample("evaluation_input.json")
    parse(ExecutionInput, given)
    schedule = synced_by_local_serve(stack)
    sent = json.loads(schedule["Target"]["Input"].replace("<aws.scheduler.scheduled-time>", given["instant"]))
    assert given == sent
    assert sample("plan_evaluation.json")["input"] == given
