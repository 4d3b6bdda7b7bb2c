"""The ``local_runtime`` fixture: writes reach schedule-sync, schedules fire, executions finish."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest

from missed_checks import clock
from missed_checks.aws.table import ChecklistTable
from missed_checks.checklists.saving import save_checklist
from missed_checks_local.runtime import LocalRuntime

pytestmark = pytest.mark.filterwarnings("ignore:No application metrics to publish:UserWarning")


def test_a_checklist_gets_its_schedule_and_its_window_judged(local_runtime: LocalRuntime) -> None:
    stack = local_runtime.stack
    table = ChecklistTable(stack.table_name)
    start = local_runtime.clock.now()
    assert clock.now() == start  # handlers and adapters see the simulated time
    save_checklist(table,
        "morning", recurrence="DTSTART;TZID=Europe/Berlin:20260302T080000\nRRULE:FREQ=DAILY", window="PT2H", now=start,
            by="tests"
    )
    table.assign_equipment("morning", ["m-1"], start, by="tests")
    local_runtime.settle()
    schedule = stack.client("scheduler").get_schedule(GroupName=stack.schedule_group, Name="morning")
    assert schedule["ScheduleExpressionTimezone"] == "Europe/Berlin"
    assert schedule["Target"]["Arn"] == stack.state_machine_arn
    fired = local_runtime.advance_to(datetime(2026, 3, 2, 12, tzinfo=UTC))
    assert [f.scheduled_time for f in fired] == [datetime(2026, 3, 2, 9, tzinfo=UTC)]  # 10:00 in Berlin
    (execution,) = local_runtime.executions
    assert execution.status == "SUCCEEDED" and execution.input["instant"] == "2026-03-02T09:00:00Z"
    missed = table.missed_checks_of_checklist("morning", start, local_runtime.clock.now())
    assert [(m["equipment_id"], m["window_start"], m["window_end"]) for m in missed] == [
        ("m-1", "2026-03-02T07:00:00Z", "2026-03-02T09:00:00Z")
    ]
    # One piece of equipment: PlanEvaluation judged the window itself, nothing was fanned out.
    summary = local_runtime.invocation_summary()
    assert summary["PlanEvaluationFunction"] == {"ok": 1, "error": 0}
    assert "RecordMissedChecksFunction" not in summary and "CloseWindowFunction" not in summary


def test_an_execution_is_bounded_by_the_state_machines_timeout_seconds(
    local_runtime: LocalRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The limit is the template's (TimeoutSeconds, then TIMED_OUT as on AWS), not a guess that
    stops the whole run."""
    assert local_runtime.execution_timeout_s == 3600  # statemachines/evaluate_checklist.asl.json
    table = ChecklistTable(local_runtime.stack.table_name)
    start = local_runtime.clock.now()
    save_checklist(table, "slow", recurrence="DTSTART;TZID=UTC:20260302T080000\nRRULE:FREQ=DAILY", window="PT2H",
                        now=start, by="tests")
    table.assign_equipment("slow", ["s-1"], start, by="tests")
    local_runtime.settle()
    timed_out = threading.Event()
    time_out, invoke = local_runtime._time_out, local_runtime.lambda_runtime.invoke

    def declare(*args: object) -> None:
        time_out(*args)
        timed_out.set()

    def held(*args: object, **kwargs: object) -> object:  # the task outlives the execution's limit
        timed_out.wait(60)
        return invoke(*args, **kwargs)

    monkeypatch.setattr(local_runtime, "_time_out", declare)
    monkeypatch.setattr(local_runtime.lambda_runtime, "invoke", held)
    local_runtime.execution_timeout_s = 0.0
    fired = local_runtime.advance_to(datetime(2026, 3, 2, 12, tzinfo=UTC))
    assert [f.scheduled_time for f in fired] == [datetime(2026, 3, 2, 10, tzinfo=UTC)]
    (execution,) = local_runtime.executions
    assert (execution.status, execution.error) == ("TIMED_OUT", "States.Timeout")
    assert "TimeoutSeconds (0 s)" in str(execution.cause)
    assert local_runtime.execution_counts()["by_status"] == {"TIMED_OUT": 1}
