"""A defect in what deploys fails the local run, as it would fail on AWS.

Each test copies the project, breaks one thing in the copy (a dependency left out of the layer's
lock file, a permission left out of a role), builds the copy with its own ``make build`` and plays
a short scenario on the copy's build: the local run must fail with Lambda's import error or IAM's
AccessDenied, and ``missed-checks local run`` must exit 1 saying so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from missed_checks_local.product.scenario import Scenario, run_scenario
from missed_checks_local.stack import project_root

# duration: it builds copies of the project, 58, 32 and 24 s at load 10 (docs/measurements.md, 2026-11-25)
pytestmark = [pytest.mark.e2e, pytest.mark.duration(20)]

ROOT = project_root()
SCENARIO = {
    "start": "2026-03-02T05:00:00Z",
    "end": "2026-03-03T08:00:00Z",
    "events": [
        {
            "at": "2026-03-02T05:00:00Z",
            "put_checklist": {
                "id": "forklift-daily",
                "recurrence": "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY",
                "window": "PT8H",
                "grace": "PT30M",
            },
        },
        {"at": "2026-03-02T05:00:00Z", "assign": {"checklist": "forklift-daily", "equipment": ["fl-01", "fl-02"]}},
        {"at": "2026-03-02T06:00:00Z", "performed": {"checklist": "forklift-daily", "equipment": "fl-01"}},
    ],
}


def copy_project(destination: Path) -> Path:
    """The files ``make build`` reads, copied; the virtualenvs and the runtime's SDK shared."""
    for name in ("template.yaml", "samconfig.toml", "Makefile"):
        shutil.copy2(ROOT / name, destination / name)
    for name in ("statemachines", "functions", "lambda-runtime"):
        shutil.copytree(ROOT / name, destination / name, ignore=shutil.ignore_patterns("__pycache__"))
    (destination / "src").mkdir()
    for name in ("Makefile", "layer-requirements.txt"):
        shutil.copy2(ROOT / "src" / name, destination / "src" / name)
    shutil.copytree(ROOT / "src" / "missed_checks", destination / "src" / "missed_checks",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (destination / "tools").mkdir()
    shutil.copy2(ROOT / "tools" / "find_python313", destination / "tools" / "find_python313")
    for name in (".venv", ".venv-sam"):
        (destination / name).symlink_to(ROOT / name)
    (destination / ".aws-sam").mkdir()
    (destination / ".aws-sam" / "lambda-runtime").symlink_to(ROOT / ".aws-sam" / "lambda-runtime")
    return destination


def build(project: Path) -> Path:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("MAKE")}
    result = subprocess.run(["make", "-C", str(project), "build"], capture_output=True, text=True, env=environment,
                            timeout=600, check=False)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return project / ".aws-sam" / "build" / "template.yaml"


def play(template: Path) -> dict:
    return run_scenario(Scenario.from_dict(SCENARIO, name="artifact"), template_path=template)


def test_a_dependency_left_out_of_the_layer_fails_with_lambdas_import_error(tmp_path: Path) -> None:
    project = copy_project(tmp_path)
    lock = project / "src" / "layer-requirements.txt"
    kept = [line for line in lock.read_text().splitlines() if not line.lower().startswith("aws-lambda-powertools")]
    lock.write_text("\n".join(kept) + "\n")
    report = play(build(project))
    problems = report["deployment_problems"]
    assert problems, report["lambda"]
    assert all("Runtime.ImportModuleError" in problem for problem in problems)
    assert "Unable to import module 'app': No module named 'aws_lambda_powertools'" in problems[0]
    assert report["lambda"]["ScheduleSyncFunction"]["ok"] == 0  # the stream's records never got through
    assert report["missed"] == []


def test_a_write_permission_left_out_of_a_role_fails_with_access_denied(tmp_path: Path) -> None:
    project = copy_project(tmp_path)
    template = project / "template.yaml"
    text = template.read_text()
    # PlanEvaluation judges the scenario's small fleet itself: its role writes the missed checks.
    query, put = "                  - dynamodb:Query\n", "                  - dynamodb:PutItem\n"
    judge = "              - Sid: PlanAndJudgeSmallFleets\n                Effect: Allow\n                Action:\n" \
            "                  - dynamodb:GetItem\n"
    assert judge + query + put in text
    template.write_text(text.replace(judge + query + put, judge + query))
    built = build(project)
    report = play(built)
    problems = report["deployment_problems"]
    assert any(p.startswith("PlanEvaluationFunction:") and "dynamodb:PutItem" in p for p in problems), problems
    assert report["missed"] == []  # fl-02 was never recorded: the write was denied
    assert report["executions"]["by_status"].get("FAILED", 0) >= 1
    assert report["dead_letters"]["EvaluationDeadLetterQueue"]  # the failure is kept for a replay

    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps(SCENARIO))
    result = subprocess.run([sys.executable, "-m", "missed_checks_ops.cli.main", "local", "run", str(scenario),
                             "--report", "csv"], cwd=project, capture_output=True, text=True, timeout=600,
                            check=False)
    assert result.returncode == 1, result.stderr
    assert "the deployed stack is broken" in result.stderr and "dynamodb:PutItem" in result.stderr


def test_a_denied_call_that_the_function_survives_still_fails_the_local_run(tmp_path: Path) -> None:
    """schedule-sync reports a failed record as a partial batch failure (its invocation succeeds):
    the denial is still what the run reports."""
    project = copy_project(tmp_path)
    template = project / "template.yaml"
    text = template.read_text()
    # schedule-sync's own statement (the digest schedules' roles hold CreateSchedule too, #31)
    create = ("              - Sid: ManageChecklistSchedules\n                Effect: Allow\n"
              "                Action:\n                  - scheduler:CreateSchedule\n")
    assert text.count(create) == 1
    template.write_text(text.replace(create, create.replace("                  - scheduler:CreateSchedule\n", "")))
    report = play(build(project))
    assert "ScheduleSyncFunction: AccessDenied: its role does not allow scheduler:CreateSchedule" in (
        report["deployment_problems"]
    )
    assert report["schedules"] == {}  # no schedule, so nothing was ever judged
