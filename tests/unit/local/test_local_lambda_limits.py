"""Lambda's limits on a function's worker, as the template sets them: its memory size (a worker past
it is killed, ``Runtime.OutOfMemory``), the 6 MB response of a synchronous invocation, its timeout."""

from __future__ import annotations

import json
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from missed_checks_local.awslambda.runtime import LambdaRuntime
from missed_checks_local.awslambda.workers import MAX_RESPONSE_BYTES, FunctionWorker
from missed_checks_local.stack import EmbeddedStack
from tests.unit.local.test_local_workers import find_python313

pytestmark = pytest.mark.stack  # starts Python 3.13 worker processes: not in the fast lane

APP = """
import os


def handler(event, context):
    held = b"x" * (event.get("mb", 0) * 1024 * 1024)  # written, so resident
    if event.get("respond_bytes"):
        return "y" * event["respond_bytes"]
    return {"held_mb": len(held) // (1024 * 1024), "pid": os.getpid(), "memory": context.memory_limit_in_mb}
"""


@pytest.fixture(scope="module")
def code(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("limits")
    (root / "code").mkdir()
    (root / "code" / "app.py").write_text(APP)
    (root / "runtime").mkdir()
    return root


@pytest.fixture
def worker(code: Path) -> Iterator[FunctionWorker]:
    """A function with MemorySize 128 (the variable Lambda sets says it, as the runtime passes it)."""
    made = FunctionWorker(python=find_python313(), code_dir=code / "code", runtime_dir=code / "runtime",
                          handler="app.handler", environment={"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "128"},
                          timeout_s=20.0, log_path=code / "logs" / f"{uuid.uuid4().hex}.log")
    try:
        yield made
    finally:
        made.close()


def test_a_function_past_its_memory_size_is_killed_as_lambda_kills_it(worker: FunctionWorker) -> None:
    assert worker.memory_mb == 128
    fits = worker.invoke({"mb": 40})
    assert fits.ok and json.loads(fits.payload or b"null")["held_mb"] == 40, fits.error
    outcome = worker.invoke({"mb": 400})
    assert outcome.error is not None, "a handler holding 400 MB in a 128 MB function must fail"
    assert outcome.error["errorType"] == "Runtime.OutOfMemory"
    assert outcome.error["errorMessage"] == f"RequestId: {outcome.request_id} Error: Runtime exited with error: " \
                                            "signal: killed"
    assert "Status: error\tError Type: Runtime.OutOfMemory" in outcome.logs and "Memory Size: 128 MB" in outcome.logs
    assert not worker.running
    again = worker.invoke({"mb": 1})  # the next invocation gets a new environment, as on Lambda
    assert again.ok and again.init_ms is not None


def test_the_memory_size_given_wins_over_the_environment(code: Path) -> None:
    made = FunctionWorker(python=find_python313(), code_dir=code / "code", runtime_dir=code / "runtime",
                          handler="app.handler", environment={"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "128"},
                          timeout_s=20.0, log_path=code / "logs" / "given.log", memory_mb=1024)
    try:
        assert made.invoke({"mb": 200}).ok  # 200 MB fit in 1024
    finally:
        made.close()


def test_a_response_over_6_mb_fails_with_lambdas_error(worker: FunctionWorker) -> None:
    outcome = worker.invoke({"respond_bytes": MAX_RESPONSE_BYTES})  # its JSON adds the quotes: 2 bytes over
    assert outcome.error is not None and outcome.error["errorType"] == "Function.ResponseSizeTooLarge"
    assert "Response payload size exceeded maximum allowed payload size (6291556 bytes)" in \
        outcome.error["errorMessage"]
    assert worker.invoke({"respond_bytes": MAX_RESPONSE_BYTES - 2}).ok


def test_each_function_has_the_memory_size_the_template_gives_it(embedded: None, tmp_path: Path) -> None:
    """Globals' MemorySize for one function, its own for the other, as deployed: 300 MB fit in the
    Globals' 1024 and kill the function that says 128."""
    package = f"limits_{uuid.uuid4().hex[:8]}"
    (tmp_path / package).mkdir()
    (tmp_path / package / "app.py").write_text(APP)
    (tmp_path / "template.yaml").write_text(textwrap.dedent(f"""\
        Transform: AWS::Serverless-2016-10-31
        Globals:
          Function:
            Runtime: python3.13
            Timeout: 20
            MemorySize: 1024
        Resources:
          Roomy:
            Type: AWS::Serverless::Function
            Properties: {{CodeUri: {package}/, Handler: app.handler}}
          Hungry:
            Type: AWS::Serverless::Function
            Properties: {{CodeUri: {package}/, Handler: app.handler, MemorySize: 128}}
        """))
    stack = EmbeddedStack.provision(tmp_path / "template.yaml", stack_name="limits")
    with LambdaRuntime(stack) as runtime:
        roomy, hungry = runtime.invoke("Roomy", {"mb": 300}), runtime.invoke("Hungry", {"mb": 300})
    assert roomy.error is None and roomy.result["memory"] == "1024", roomy.error
    assert hungry.error is not None and hungry.error["errorType"] == "Runtime.OutOfMemory"
    assert "Memory Size: 128 MB" in hungry.logs
