"""A denial is said first: when IAM refused a function an action, a failed local run names the
function, the action and the resource before the failure it led to (issue 22: `make demo` without
dynamodb:PutItem failed on `events[..].dismiss.window_start: nothing to dismiss`, the AccessDenied
answers only in the handler log)."""

from __future__ import annotations

import ast
import json
from typing import Any

import pytest

from missed_checks.errors import InvalidInput
from missed_checks_local.product.scenario import Scenario, run_scenario
from missed_checks_ops.cli import local as local_cli
from missed_checks_ops.cli.main import main

pytestmark = pytest.mark.filterwarnings("ignore:No application metrics to publish:UserWarning")

SCENARIO = {
    "start": "2026-03-01T00:00:00Z", "end": "2026-03-03T12:00:00Z",
    "events": [
        {"at": "2026-03-01T09:00:00Z", "put_checklist": {"id": "daily", "recurrence":
            "DTSTART;TZID=UTC:20260302T060000\nRRULE:FREQ=DAILY", "window": "PT2H"}},
        {"at": "2026-03-01T09:00:00Z", "assign": {"checklist": "daily", "equipment": ["fl-01"]}},
        {"at": "2026-03-02T10:00:00Z", "dismiss": {"checklist": "daily", "equipment": "fl-01",
                                                   "window_start": "2026-03-02T06:00:00Z",
                                                   "reason": "in the workshop", "by": "j.doe"}},
    ],
}


def without_put_item(runtime: Any) -> None:
    """Take dynamodb:PutItem out of every function role's inline policies (as a template edit would)."""
    iam = runtime.stack.client("iam")
    for spec in runtime.stack.functions.values():
        role = spec.role_arn.rsplit("/", 1)[-1]
        for name in iam.list_role_policies(RoleName=role)["PolicyNames"]:
            document = iam.get_role_policy(RoleName=role, PolicyName=name)["PolicyDocument"]
            if isinstance(document, str):  # moto's CloudFormation keeps an inline policy as Python's repr
                document = ast.literal_eval(document)
            for statement in document["Statement"]:
                actions = statement.get("Action")
                if isinstance(actions, list):
                    statement["Action"] = [a for a in actions if a != "dynamodb:PutItem"] or ["dynamodb:GetItem"]
            iam.put_role_policy(RoleName=role, PolicyName=name, PolicyDocument=json.dumps(document))


def test_a_failed_run_carries_the_denial_with_function_action_and_resource() -> None:
    with pytest.raises(InvalidInput) as failed:
        run_scenario(Scenario.from_dict(SCENARIO), prepare=without_put_item)
    assert failed.value.field == "events[2].dismiss.window_start"  # the consequence
    denials = failed.value.denials  # type: ignore[attr-defined]
    assert denials, "the denial that caused it"
    assert any(line.startswith("PlanEvaluationFunction was denied dynamodb:PutItem on arn:aws:dynamodb:")
               and ":table/" in line for line in denials), denials


def test_the_command_line_says_the_denial_before_the_failure(monkeypatch: pytest.MonkeyPatch, tmp_path: Any,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    def failing(*_args: Any, **_kwargs: Any) -> dict[str, Any]:
        error = InvalidInput("events[2].dismiss.window_start", "no missed check ...: nothing to dismiss")
        error.denials = ["PlanEvaluationFunction was denied dynamodb:PutItem on arn:aws:dynamodb:r:1:table/T"]
        raise error

    monkeypatch.setattr("missed_checks_local.product.scenario.run_scenario", failing)
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps(SCENARIO))
    assert main(["local", "run", str(scenario), "--log-file", str(tmp_path / "run.log")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [
        "missed-checks: denied: PlanEvaluationFunction was denied dynamodb:PutItem on arn:aws:dynamodb:r:1:table/T",
        "missed-checks: error: events[2].dismiss.window_start: no missed check ...: nothing to dismiss",
    ]
    assert local_cli  # the emulator's command line is the one under test
