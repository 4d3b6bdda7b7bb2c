"""missed-checks local chaos: every kind of fault strikes, the operator's recovery runs, and the
result matches the run without faults (nothing lost, duplicated, announced twice, blocked)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from missed_checks_local.product.faults import KINDS

# duration: its two chaos runs took 25 s each in make unit (docs/measurements.md, 2026-11-25)
pytestmark = [pytest.mark.e2e, pytest.mark.duration(17)]

SCENARIO = {
    "start": "2026-03-02T05:00:00Z",
    "end": "2026-03-06T12:00:00Z",
    "events": [
        {"at": "2026-03-02T05:00:00Z", "put_checklist": {
            "id": "forklift-daily", "recurrence": "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY",
            "window": "PT8H", "grace": "PT30M",
            # notifications (#18): reminders, missed alerts and escalations must survive the faults too
            "notify": {"to": ["crew@example.com"], "remind_before": ["PT2H"], "escalate_to": ["lead@example.com"],
                       "escalate_after": 2}}},
        {"at": "2026-03-02T05:00:00Z", "assign": {"checklist": "forklift-daily",
                                                   "equipment": ["fl-01", "fl-02", "fl-03", "fl-04"]}},
        {"at": "2026-03-02T05:01:00Z", "put_checklist": {
            "id": "extinguisher-weekly", "recurrence": "DTSTART;TZID=America/New_York:20260302T080000\n"
            "RRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR", "window": "PT10H"}},
        {"at": "2026-03-02T05:01:00Z", "assign": {"checklist": "extinguisher-weekly", "equipment": ["ex-1", "ex-2"]}},
        {"at": "2026-03-02T06:00:00Z", "performed": {"checklist": "forklift-daily", "equipment": "fl-01"}},
        {"at": "2026-03-03T06:00:00Z", "performed": {"checklist": "forklift-daily", "equipment": "fl-02"}},
        {"at": "2026-03-04T14:00:00Z", "performed": {"checklist": "extinguisher-weekly", "equipment": "ex-1"}},
    ],
}
# The scenario's fleets are small: PlanEvaluation judges them itself. FANNED_OUT makes the forklift
# fleet (four pieces) fan out in two batch tasks, so that their functions are struck too.
FANNED_OUT = {"EquipmentPerTask": "2"}
EVERY_KIND = [
    {"kind": "lambda_error", "function": "PlanEvaluationFunction"},
    {"kind": "lambda_error", "function": "PlanEvaluationFunction", "transient": False, "skip": 4},
    {"kind": "lambda_throttle", "skip": 3},
    {"kind": "dynamodb_throttle", "operation": "write", "skip": 2},
    {"kind": "dynamodb_throttle", "operation": "read", "skip": 5},
    {"kind": "eventbridge_failure"},
    {"kind": "stream_duplicate"},
    {"kind": "stream_redeliver", "skip": 1},
    {"kind": "firing_drop", "skip": 1},
    {"kind": "firing_duplicate", "skip": 2},
    {"kind": "firing_late", "skip": 3, "hours": 5},
    {"kind": "concurrent_execution", "skip": 2},
    {"kind": "stop_mid_map", "skip": 2},
]
EVERY_KIND_FANNED_OUT = [
    {"kind": "lambda_error", "function": "RecordMissedChecksFunction"},
    {"kind": "lambda_error", "function": "CloseWindowFunction", "transient": False},
    *EVERY_KIND[2:-1],
    {"kind": "stop_mid_map", "skip": 4},
]


def chaos(tmp_path: Path, *args: str, parameters: dict | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    scenario, figures = tmp_path / "scenario.json", tmp_path / "chaos.json"
    scenario.write_text(json.dumps({**SCENARIO, "parameters": parameters or {}}))
    result = subprocess.run([sys.executable, "-m", "missed_checks_ops.cli.main", "local", "chaos", str(scenario),
                             "--format", "json", "--output", str(figures), "--log-file", str(tmp_path / "run.log"),
                             *args],
                            capture_output=True, text=True, timeout=900, check=False)
    assert figures.exists(), result.stderr
    return result, json.loads(figures.read_text())


@pytest.mark.parametrize(("plan_faults", "parameters"), [
    pytest.param(EVERY_KIND, None, id="judged-by-the-plan"),
    pytest.param(EVERY_KIND_FANNED_OUT, FANNED_OUT, id="fanned-out"),
])
def test_every_kind_of_fault_strikes_and_nothing_is_lost_duplicated_or_blocked(tmp_path: Path, plan_faults,
                                                                               parameters) -> None:
    plan = tmp_path / "faults.json"
    plan.write_text(json.dumps({"faults": plan_faults}))
    result, figures = chaos(tmp_path, "--faults", str(plan), parameters=parameters)
    assert set(figures["injected"]) == set(KINDS), figures["injected"]
    assert figures["invariants"] == dict.fromkeys(figures["invariants"], 0), figures
    assert figures["ok"] is True and result.returncode == 0, result.stdout + result.stderr
    # The permanent failure reached the evaluation DLQ and the operator's replay recovered it.
    assert figures["dead_lettered"]["EvaluationDeadLetterQueue"] >= 1
    assert figures["recovery"]["dead_letters_replayed"] >= 1 and figures["recovery"]["dead_letters_left"] == 0
    assert figures["missed_checks"]["faulty"] == figures["missed_checks"]["clean"] > 0
    assert figures["survived_by_retry"] >= 4  # Lambda service error, throttles, a failed publish
    # #18: every reminder, missed alert and escalation of the clean run went out once in the faulty one
    assert figures["notifications"]["faulty"] == figures["notifications"]["clean"] > 0
    assert "every invariant held" in result.stderr


def test_a_bad_fault_plan_is_a_clear_error(tmp_path: Path) -> None:
    plan = tmp_path / "faults.json"
    plan.write_text(json.dumps([{"kind": "meteor"}]))
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps(SCENARIO))
    result = subprocess.run([sys.executable, "-m", "missed_checks_ops.cli.main", "local", "chaos", str(scenario),
                             "--faults", str(plan)], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 2
    assert result.stderr.strip().startswith("missed-checks: error: faults[0].kind: expected one of")
