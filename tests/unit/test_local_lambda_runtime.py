"""The in-process Lambda: real handlers answer the Lambda invokes of moto's Step Functions."""

from __future__ import annotations

import json
import textwrap
import time
import uuid
from pathlib import Path

import boto3
import pytest

from missed_checks_local.lambda_runtime import LambdaRuntime
from missed_checks_local.stack import EmbeddedStack

HANDLER = """
import json
import logging
import os

logger = logging.getLogger("fake-function")
logger.addHandler(logging.StreamHandler())
logger.setLevel(logging.INFO)


class TransientError(Exception):
    pass


ATTEMPTS = {"n": 0}


def handler(event, context):
    print("hello from", context.function_name)
    logger.info("logged line")
    if event.get("fail") == "always":
        raise ValueError("bad input " + event.get("what", ""))
    if event.get("fail") == "once":
        ATTEMPTS["n"] += 1
        if ATTEMPTS["n"] == 1:
            raise TransientError("try again")
    return {
        "greeting": os.environ["GREETING"],
        "table": os.environ["TABLE_NAME"],
        "metrics_disabled": os.environ["POWERTOOLS_METRICS_DISABLED"],
        "function": context.function_name,
        "arn": context.invoked_function_arn,
        "memory": context.memory_limit_in_mb,
        "remaining_ok": 0 < context.get_remaining_time_in_millis() <= 7000,
        "request_id": context.aws_request_id,
        "attempts": ATTEMPTS["n"],
    }
"""

DEFINITION = {
    "StartAt": "Call",
    "States": {
        "Call": {
            "Type": "Task",
            "Resource": "arn:aws:states:::lambda:invoke",
            "Parameters": {"FunctionName": "${FnArn}", "Payload.$": "$"},
            "OutputPath": "$.Payload",
            "Retry": [{"ErrorEquals": ["TransientError"], "IntervalSeconds": 1, "MaxAttempts": 2}],
            "Catch": [{"ErrorEquals": ["ValueError"], "ResultPath": "$.error", "Next": "Caught"}],
            "End": True,
        },
        "Caught": {"Type": "Pass", "End": True},
    },
}


@pytest.fixture
def fake_stack(embedded: None, tmp_path: Path) -> EmbeddedStack:
    package = f"fake_fns_{uuid.uuid4().hex[:8]}"
    (tmp_path / package / "echo").mkdir(parents=True)
    (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / package / "echo" / "__init__.py").write_text("")
    (tmp_path / package / "echo" / "app.py").write_text(HANDLER)
    (tmp_path / "sm.asl.json").write_text(json.dumps(DEFINITION))
    (tmp_path / "template.yaml").write_text(
        textwrap.dedent(
            f"""\
            Transform: AWS::Serverless-2016-10-31
            Globals:
              Function:
                Timeout: 7
                Environment:
                  Variables:
                    TABLE_NAME: !Ref Table
            Resources:
              Table:
                Type: AWS::DynamoDB::Table
                Properties:
                  BillingMode: PAY_PER_REQUEST
                  AttributeDefinitions: [{{AttributeName: pk, AttributeType: S}}]
                  KeySchema: [{{AttributeName: pk, KeyType: HASH}}]
              Echo:
                Type: AWS::Serverless::Function
                Properties:
                  CodeUri: {package}/echo/
                  Handler: app.handler
                  MemorySize: 256
                  Environment:
                    Variables:
                      GREETING: !Sub "hi from ${{AWS::StackName}}"
              Machine:
                Type: AWS::Serverless::StateMachine
                Properties:
                  DefinitionUri: sm.asl.json
                  DefinitionSubstitutions:
                    FnArn: !GetAtt Echo.Arn
            """
        )
    )
    return EmbeddedStack.provision(tmp_path / "template.yaml", stack_name="fake")


def _run(stack: EmbeddedStack, payload: dict) -> dict:
    sfn = stack.client("stepfunctions")
    arn = sfn.start_execution(stateMachineArn=stack.state_machine_arn, input=json.dumps(payload))["executionArn"]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        described = sfn.describe_execution(executionArn=arn)
        if described["status"] != "RUNNING":
            return described
        time.sleep(0.02)
    raise AssertionError("execution did not finish")


def test_state_machine_runs_the_handler_with_its_environment_and_context(fake_stack, capsys) -> None:
    with LambdaRuntime(fake_stack) as runtime:
        described = _run(fake_stack, {"x": 1})
    assert described["status"] == "SUCCEEDED"
    output = json.loads(described["output"])
    spec = fake_stack.functions["Echo"]
    assert output["greeting"] == "hi from fake"
    assert output["table"] == fake_stack.table_name
    assert output["metrics_disabled"] == "true"
    assert output["function"] == spec.name and output["arn"] == spec.arn
    assert output["memory"] == 256
    assert output["remaining_ok"] is True
    (invocation,) = runtime.invocations
    assert invocation.request_id == output["request_id"]
    assert invocation.event == {"x": 1}
    assert "hello from fake-Echo" in invocation.logs
    assert "logged line" in invocation.logs
    assert "hello from" not in capsys.readouterr().out  # kept out of the terminal


def test_environment_is_restored_after_the_call(fake_stack, monkeypatch) -> None:
    monkeypatch.delenv("GREETING", raising=False)
    with LambdaRuntime(fake_stack) as runtime:
        invocation = runtime.invoke("Echo", {})
    assert invocation.result["greeting"] == "hi from fake"
    import os

    assert "GREETING" not in os.environ


def test_exception_becomes_lambda_error_and_catch_matches_its_type(fake_stack) -> None:
    with LambdaRuntime(fake_stack) as runtime:
        described = _run(fake_stack, {"fail": "always", "what": "here"})
    assert described["status"] == "SUCCEEDED"
    error = json.loads(described["output"])["error"]
    assert error["Error"] == "ValueError"
    cause = json.loads(error["Cause"])
    assert cause["errorType"] == "ValueError"
    assert cause["errorMessage"] == "bad input here"
    assert any("app.py" in frame for frame in cause["stackTrace"])
    assert not any("lambda_runtime.py" in frame for frame in cause["stackTrace"])
    assert [i.ok for i in runtime.invocations] == [False]


def test_retry_on_error_name(fake_stack) -> None:
    with LambdaRuntime(fake_stack) as runtime:
        described = _run(fake_stack, {"fail": "once"})
    assert described["status"] == "SUCCEEDED"
    assert json.loads(described["output"])["attempts"] == 2
    assert [i.error["errorType"] if i.error else "ok" for i in runtime.invocations] == ["TransientError", "ok"]


def test_direct_boto3_invoke_is_answered_and_unknown_functions_pass_through(fake_stack) -> None:
    spec = fake_stack.functions["Echo"]
    with LambdaRuntime(fake_stack):
        response = boto3.client("lambda").invoke(FunctionName=spec.name, Payload=b'{"fail": "always"}')
    assert response["FunctionError"] == "Unhandled"
    assert json.loads(response["Payload"].read())["errorType"] == "ValueError"
    with LambdaRuntime(fake_stack) as runtime:
        assert runtime._before_invoke({"url_path": "/2015-03-31/functions/someone-else/invocations"}) is None


def test_uninstall_removes_the_hook(fake_stack) -> None:
    import sys

    original = sys.stdout
    runtime = LambdaRuntime(fake_stack)
    runtime.install()
    assert sys.stdout is not original
    runtime.uninstall()
    assert sys.stdout is original
    with LambdaRuntime(fake_stack) as second:
        second.invoke("Echo", {})
    assert runtime.invocations == []
