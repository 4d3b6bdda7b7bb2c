"""The local Lambda service: a function runs from its deployment package and layers in its own
Python 3.13 worker, with its role's credentials; moto's Step Functions reaches it through
lambda:Invoke, which IAM must allow."""

from __future__ import annotations

import json
import textwrap
import time
import uuid
from pathlib import Path

import boto3
import pytest

from missed_checks_local.awslambda.runtime import LambdaRuntime
from missed_checks_local.stack import EmbeddedStack

HANDLER = """
import json
import logging
import os

import greeting_lib  # from the layer

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
        "greeting": greeting_lib.greet(os.environ["GREETING"]),
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


def write_fake_project(tmp_path: Path, *, layer_has_library: bool = True, invoke_allowed: bool = True) -> Path:
    package = f"fake_fns_{uuid.uuid4().hex[:8]}"
    (tmp_path / package / "echo").mkdir(parents=True)
    (tmp_path / package / "echo" / "app.py").write_text(HANDLER)
    (tmp_path / "layer" / "python").mkdir(parents=True)
    if layer_has_library:
        (tmp_path / "layer" / "python" / "greeting_lib.py").write_text("def greet(text):\n    return text\n")
    (tmp_path / "sm.asl.json").write_text(json.dumps(DEFINITION))
    policies = "[LambdaInvokePolicy: {FunctionName: !Ref Echo}]" if invoke_allowed else "[]"
    (tmp_path / "template.yaml").write_text(
        textwrap.dedent(
            f"""\
            Transform: AWS::Serverless-2016-10-31
            Globals:
              Function:
                Runtime: python3.13
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
              Library:
                Type: AWS::Serverless::LayerVersion
                Properties:
                  ContentUri: layer/
              Echo:
                Type: AWS::Serverless::Function
                Properties:
                  CodeUri: {package}/echo/
                  Layers: [!Ref Library]
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
                  Policies: {policies}
            """
        )
    )
    return tmp_path / "template.yaml"


@pytest.fixture
def fake_stack(embedded: None, tmp_path: Path) -> EmbeddedStack:
    return EmbeddedStack.provision(write_fake_project(tmp_path), stack_name="fake")


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
    assert str(output["memory"]) == "256"
    assert output["remaining_ok"] is True
    (invocation,) = runtime.invocations
    assert invocation.request_id == output["request_id"]
    assert invocation.event == {"x": 1}
    assert f"hello from {spec.name}" in invocation.logs
    assert "logged line" in invocation.logs
    assert "hello from" not in capsys.readouterr().out  # kept out of the terminal


def test_the_worker_sees_only_its_package_layers_and_the_runtime(fake_stack) -> None:
    with LambdaRuntime(fake_stack) as runtime:
        worker = runtime._worker(fake_stack.functions["Echo"])
        path = worker.search_path
    spec = fake_stack.functions["Echo"]
    assert path[0] == str(spec.code_dir)
    assert str(spec.layer_dirs[0] / "python") in path
    assert not any(".venv" in entry for entry in path)


def test_a_module_missing_from_the_layer_fails_as_on_lambda(embedded: None, tmp_path: Path) -> None:
    stack = EmbeddedStack.provision(write_fake_project(tmp_path, layer_has_library=False), stack_name="nolib")
    with LambdaRuntime(stack) as runtime:
        described = _run(stack, {"x": 1})
    assert described["status"] == "FAILED"
    assert described["error"] == "Runtime.ImportModuleError"
    (invocation,) = runtime.invocations
    assert invocation.error["errorMessage"] == "Unable to import module 'app': No module named 'greeting_lib'"
    with LambdaRuntime(stack) as runtime:  # Lambda initialises again after a failed init: it fails again
        first, second = runtime.invoke("Echo", {}), runtime.invoke("Echo", {})
    assert first.init_ms is not None and second.init_ms is not None
    assert second.error["errorType"] == "Runtime.ImportModuleError"


def test_a_state_machine_without_invoke_permission_is_denied(embedded: None, tmp_path: Path) -> None:
    stack = EmbeddedStack.provision(write_fake_project(tmp_path, invoke_allowed=False), stack_name="noinvoke")
    with LambdaRuntime(stack) as runtime:
        described = _run(stack, {"x": 1})
    assert described["status"] == "FAILED"
    # As on AWS: Lambda's JSON error type, which a Retry/Catch can name.
    assert "AccessDeniedException" in described["cause"], described["cause"]
    assert runtime.invocations == []  # never reached the function
    assert [call.action for call in runtime.denied] == ["lambda:InvokeFunction"]


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
    assert not any("worker_bootstrap.py" in frame for frame in cause["stackTrace"])
    assert [i.ok for i in runtime.invocations] == [False]


def test_retry_on_error_name_reaches_the_same_warm_worker(fake_stack) -> None:
    with LambdaRuntime(fake_stack) as runtime:
        described = _run(fake_stack, {"fail": "once"})
    assert described["status"] == "SUCCEEDED"
    assert json.loads(described["output"])["attempts"] == 2  # module state kept: one warm process
    assert [i.error["errorType"] if i.error else "ok" for i in runtime.invocations] == ["TransientError", "ok"]
    assert runtime.invocations[0].init_ms is not None and runtime.invocations[1].init_ms is None


def test_direct_boto3_invoke_is_answered_after_uninstall_nothing_runs(fake_stack) -> None:
    spec = fake_stack.functions["Echo"]
    with LambdaRuntime(fake_stack) as runtime:
        response = boto3.client("lambda").invoke(FunctionName=spec.name, Payload=b'{"fail": "always"}')
        worker = runtime._worker(spec)
    assert response["FunctionError"] == "Unhandled"
    assert json.loads(response["Payload"].read())["errorType"] == "ValueError"
    assert not worker.running  # uninstall stopped the warm worker
    with pytest.raises(RuntimeError, match="not installed"):
        runtime.invoke("Echo", {})
