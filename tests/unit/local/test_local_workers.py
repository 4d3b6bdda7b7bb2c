"""Lambda functions in their own Python 3.13 processes: import path, errors, logs, warmth, timeouts."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from missed_checks_local.awslambda.workers import (
    BOOTSTRAP,
    FunctionWorker,
    InterpreterError,
    WorkerResult,
    bytecode_options,
)

pytestmark = pytest.mark.stack  # starts Python 3.13 worker processes: not in the fast lane

APP = """
import datetime
import decimal
import importlib
import logging
import os
import subprocess
import sys
import time

import somelib

# Like Powertools' Logger: a handler holding the sys.stdout of import time.
pinned = logging.getLogger("pinned")
_stream = logging.StreamHandler(sys.stdout)
_stream.setFormatter(logging.Formatter("PINNED %(message)s"))
pinned.addHandler(_stream)
pinned.setLevel(logging.INFO)
pinned.propagate = False

print("cold start of app")
COUNT = 0


class CustomError(Exception):
    pass


def _importable(name):
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def handler(event, context):
    global COUNT
    COUNT += 1
    action = event.get("action", "count")
    if action == "count":
        return {"count": COUNT, "pid": os.getpid(), "somelib": somelib.VALUE, "somelib_file": somelib.__file__}
    if action == "sys":
        return {
            "path": sys.path,
            "env": dict(os.environ),
            "cwd": os.getcwd(),
            "modules": sorted(sys.modules),
            "flags": [sys.flags.isolated, sys.flags.no_site, sys.flags.safe_path, sys.flags.dont_write_bytecode],
            "pycache_prefix": sys.pycache_prefix,
            "version": list(sys.version_info[:2]),
        }
    if action == "imports":
        return {name: _importable(name) for name in event["names"]}
    if action == "log":
        tag = event["tag"]
        print(f"print {tag}")
        logging.getLogger().warning(f"root {tag}")
        pinned.info(f"pinned {tag}")
        sys.stderr.write(f"stderr {tag}\\n")
        sys.__stdout__.write(f"dunder {tag}\\n")
        os.write(1, f"fd1 {tag}\\n".encode())
        os.write(2, f"fd2 {tag}\\n".encode())
        print('{"request_id": "forged", "ok": true, "payload": "\\\\"forged\\\\""}')
        subprocess.run(["echo", f"echo {tag}"], check=True)
        context.log(f"context {tag}\\n")
        return {"tag": tag}
    if action == "raise":
        raise CustomError(event["message"])
    if action == "keyerror":
        return {}["missing"]
    if action == "datetime":
        return {"now": datetime.datetime(2024, 1, 1)}
    if action == "decimal":
        return {"d": decimal.Decimal("1.10"), "i": decimal.Decimal("3"), "u": "é"}
    if action == "bytes":
        return b"\\x00raw"
    if action == "sleep":
        start = time.time()
        time.sleep(event["seconds"])
        return {"start": start, "end": time.time(), "pid": os.getpid()}
    if action == "exit":
        os._exit(event["code"])
    if action == "context":
        return {
            "aws_request_id": context.aws_request_id,
            "function_name": context.function_name,
            "function_version": context.function_version,
            "invoked_function_arn": context.invoked_function_arn,
            "memory_limit_in_mb": context.memory_limit_in_mb,
            "log_group_name": context.log_group_name,
            "log_stream_name": context.log_stream_name,
            "remaining": context.get_remaining_time_in_millis(),
            "trace": os.environ.get("_X_AMZN_TRACE_ID"),
        }
    raise ValueError(f"unknown action {action}")
"""

CONTEXT = {
    "function_name": "stack-Fn-1",
    "function_version": "$LATEST",
    "invoked_function_arn": "arn:aws:lambda:eu-west-1:123456789012:function:stack-Fn-1",
    "memory_limit_in_mb": 256,
    "log_group_name": "/aws/lambda/stack-Fn-1",
    "log_stream_name": "2024/01/01/[$LATEST]abc",
}
ENVIRONMENT = {"TABLE_NAME": "checks", "AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "testing"}


def find_python313() -> str:
    configured = os.environ.get("MISSED_CHECKS_PYTHON313")
    if configured:
        return configured
    found = sorted(Path.home().glob(".pyenv/versions/3.13*/bin/python3.13"), reverse=True)
    if not found:
        pytest.fail(
            "no Python 3.13 interpreter to run the Lambda workers with: set MISSED_CHECKS_PYTHON313 to one "
            "(e.g. ~/.pyenv/versions/3.13.0/bin/python3.13) or install it with pyenv"
        )
    return str(found[0])


@pytest.fixture(scope="module")
def python313() -> str:
    return find_python313()


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A built function (code), its layer, a layer without ``somelib``, the runtime's packages."""
    root = tmp_path_factory.mktemp("lambda")
    code = root / "code"
    code.mkdir()
    (code / "app.py").write_text(APP)
    (code / "broken.py").write_text("def handler(event, context)\n    return 1\n")
    (code / "boom.py").write_text("import somelib\nraise RuntimeError('no config at import')\n")
    layer = root / "layer"
    (layer / "python").mkdir(parents=True)
    (layer / "python" / "somelib.py").write_text("VALUE = 'from layer'\n")
    second = root / "second"
    (second / "python" / "lib" / "python3.13" / "site-packages").mkdir(parents=True)
    (second / "python" / "lib" / "python3.13" / "site-packages" / "somelib.py").write_text("VALUE = 'second'\n")
    (root / "pth-target").mkdir()
    (root / "pth-target" / "pthmod.py").write_text("")
    (second / "python" / "lib" / "python3.13" / "site-packages" / "extra.pth").write_text(f"{root / 'pth-target'}\n")
    empty = root / "empty-layer"
    (empty / "python").mkdir(parents=True)
    runtime = root / "runtime"
    runtime.mkdir()
    (runtime / "fakeruntime.py").write_text("PROVIDED = True\n")
    return {"root": root, "code": code, "layer": layer, "second": second, "empty": empty, "runtime": runtime}


@pytest.fixture(scope="module")
def make_worker(python313: str, tree: dict[str, Path]) -> Iterator[Callable[..., FunctionWorker]]:
    made: list[FunctionWorker] = []

    def make(**overrides: object) -> FunctionWorker:
        options: dict[str, Any] = {
            "python": python313,
            "code_dir": tree["code"],
            "layer_dirs": [tree["layer"]],
            "runtime_dir": tree["runtime"],
            "handler": "app.handler",
            "environment": ENVIRONMENT,
            "timeout_s": 5.0,
            "log_path": tree["root"] / "logs" / f"{uuid.uuid4().hex}.log",
        }
        options.update(overrides)
        worker = FunctionWorker(**options)
        made.append(worker)
        return worker

    yield make
    for worker in made:
        worker.close()


@pytest.fixture(scope="module")
def shared(make_worker: Callable[..., FunctionWorker]) -> FunctionWorker:
    """One warm worker for the tests that neither kill it nor count its invocations: invoked once
    here, so that no test's first invocation also carries the cold start's log lines (whichever
    test pytest-randomly puts first)."""
    worker = make_worker()
    result(call(worker, {"action": "imports", "names": []}))
    return worker


def call(worker: FunctionWorker, event: dict[str, object], **kwargs: Any) -> WorkerResult:
    return worker.invoke(event, request_id=str(uuid.uuid4()), context_fields=CONTEXT, **kwargs)


def result(outcome: WorkerResult) -> object:
    assert outcome.ok, (outcome.error, outcome.logs)
    assert outcome.payload is not None
    return json.loads(outcome.payload)


# -- the import path -------------------------------------------------------------------------
def test_a_module_of_the_layer_is_importable(shared: FunctionWorker, tree: dict[str, Path]) -> None:
    value = result(call(shared, {"action": "count"}))
    assert value["somelib"] == "from layer"
    assert value["somelib_file"] == str(tree["layer"] / "python" / "somelib.py")


def test_without_the_module_in_the_layer_every_invocation_fails_as_lambda_does(
    make_worker: Callable[..., FunctionWorker], tree: dict[str, Path]
) -> None:
    worker = make_worker(layer_dirs=[tree["empty"]])
    first = call(worker, {"action": "count"})
    pid = worker.pid
    second = call(worker, {"action": "count"})
    for outcome in (first, second):
        assert outcome.payload is None
        assert outcome.error == {
            "errorMessage": "Unable to import module 'app': No module named 'somelib'",
            "errorType": "Runtime.ImportModuleError",
            "requestId": outcome.request_id,
            "stackTrace": [],
        }
        assert "[ERROR] Runtime.ImportModuleError: Unable to import module 'app'" in outcome.logs
    assert first.init_ms is not None and second.init_ms is None
    assert worker.pid == pid  # the worker stays, and keeps failing
    assert "INIT_START" in first.logs and "INIT_START" not in second.logs


def test_modules_of_the_dev_virtualenv_are_not_importable(shared: FunctionWorker) -> None:
    dev_only = ["yaml", "moto", "pytest", "boto3", "missed_checks_local", "missed_checks", "worker_bootstrap"]
    for name in ("yaml", "moto", "pytest", "missed_checks_local"):
        assert importlib.util.find_spec(name) is not None, f"{name} should be in the dev virtualenv"
    value = result(call(shared, {"action": "imports", "names": [*dev_only, "fakeruntime", "json", "somelib"]}))
    assert value == {**dict.fromkeys(dev_only, False), "fakeruntime": True, "json": True, "somelib": True}
    modules = result(call(shared, {"action": "sys"}))["modules"]
    assert not [name for name in modules if name.startswith("missed_checks")]


def test_sys_path_is_the_code_the_layer_the_runtime_and_the_stdlib(
    shared: FunctionWorker, tree: dict[str, Path], python313: str
) -> None:
    stdlib = json.loads(
        subprocess.run(
            [python313, "-I", "-S", "-c", "import json, sys; print(json.dumps(sys.path))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    value = result(call(shared, {"action": "sys"}))
    layer = tree["layer"]
    assert value["path"] == [
        str(tree["code"]),
        str(layer / "python" / "lib" / "python3.13" / "site-packages"),
        str(layer / "python"),
        str(tree["runtime"]),
        *stdlib,
    ]
    assert str(BOOTSTRAP.parent) not in value["path"]  # -I: the script's directory is left out
    assert value["flags"] == [1, 1, True, 0]
    assert value["pycache_prefix"] == bytecode_options()[1].split("=", 1)[1]  # bytecode kept out of the build
    assert value["version"] == [3, 13]
    assert value["cwd"] == str(tree["code"])


def test_the_last_layer_wins_as_when_lambda_extracts_them_into_opt(
    make_worker: Callable[..., FunctionWorker], tree: dict[str, Path]
) -> None:
    worker = make_worker(layer_dirs=[tree["layer"], tree["second"]])
    assert result(call(worker, {"action": "count"}))["somelib"] == "second"
    # As in Lambda, the layers' directories are site directories: their .pth files count.
    assert result(call(worker, {"action": "imports", "names": ["pthmod"]})) == {"pthmod": True}
    assert result(call(worker, {"action": "sys"}))["path"][-1] == str(tree["root"] / "pth-target")
    assert worker.search_path == [
        str(tree["code"]),
        str(tree["second"] / "python" / "lib" / "python3.13" / "site-packages"),
        str(tree["layer"] / "python" / "lib" / "python3.13" / "site-packages"),
        str(tree["second"] / "python"),
        str(tree["layer"] / "python"),
        str(tree["runtime"]),
    ]


def test_the_environment_is_the_functions_and_nothing_of_this_process(
    make_worker: Callable[..., FunctionWorker], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", "/leaked/from/the/dev/process")
    monkeypatch.setenv("LEAK_CANARY", "1")
    worker = make_worker()
    value = result(call(worker, {"action": "sys"}))
    expected = worker.process_environment()
    env = value["env"]
    assert {name: env.get(name) for name in expected} == expected
    assert set(env) - set(expected) <= {"LC_CTYPE"}  # Python's locale coercion, if en_US.UTF-8 is missing
    assert "LEAK_CANARY" not in env and "_WORKER_PATH" not in env and "_WORKER_LOG" not in env
    assert env["PYTHONPATH"] == expected["LAMBDA_RUNTIME_DIR"]
    assert env["TABLE_NAME"] == "checks" and env["_HANDLER"] == "app.handler" and env["TZ"] == ":UTC"
    assert not any("leaked" in entry for entry in value["path"])


# -- warmth, timeouts, exits -----------------------------------------------------------------
def test_the_worker_stays_warm(make_worker: Callable[..., FunctionWorker]) -> None:
    worker = make_worker()
    outcomes = [call(worker, {"action": "count"}) for _ in range(3)]
    values = [result(outcome) for outcome in outcomes]
    assert [value["count"] for value in values] == [1, 2, 3]
    assert len({value["pid"] for value in values}) == 1 and values[0]["pid"] == worker.pid
    assert outcomes[0].init_ms is not None and outcomes[0].init_ms > 0
    assert [outcome.init_ms for outcome in outcomes[1:]] == [None, None]
    assert "cold start of app" in outcomes[0].logs and "Init Duration" in outcomes[0].logs
    assert "cold start of app" not in outcomes[1].logs and "Init Duration" not in outcomes[1].logs


def test_the_build_stays_as_built_and_the_next_cold_start_reads_compiled_modules(
    make_worker: Callable[..., FunctionWorker], tree: dict[str, Path]
) -> None:
    """No ``__pycache__`` lands in the function's code or its layer (``sam build``'s output, Lambda's
    read-only ``/var/task`` and ``/opt``); the bytecode goes to this user's private cache instead."""
    worker = make_worker()
    assert result(call(worker, {"action": "count"}))["somelib"] == "from layer"
    worker.close()
    assert not list(tree["code"].rglob("__pycache__")) and not list(tree["layer"].rglob("__pycache__"))
    options = bytecode_options()
    assert options[0] == "-X" and options[1].startswith("pycache_prefix="), options
    cache = Path(options[1].split("=", 1)[1])
    assert cache.stat().st_mode & 0o777 == 0o700
    mirrored = cache / str(tree["layer"] / "python").lstrip(os.sep)  # the prefix mirrors the source's path
    assert [p.name for p in mirrored.glob("somelib.*.pyc")], f"no compiled somelib under {mirrored}"


def test_a_timeout_kills_the_worker_and_the_next_invocation_starts_a_new_one(
    make_worker: Callable[..., FunctionWorker],
) -> None:
    worker = make_worker(timeout_s=0.5)
    first = result(call(worker, {"action": "count"}))
    started = time.monotonic()
    outcome = call(worker, {"action": "sleep", "seconds": 10})
    assert time.monotonic() - started < 8  # killed at 0.5 s, well before the 10 s sleep ends (generous under load)
    assert outcome.error is not None and outcome.error["errorType"] == "Sandbox.Timedout"
    pattern = rf"\d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{{3}}Z {outcome.request_id} Task timed out after 0\.50 seconds"
    assert re.fullmatch(pattern, outcome.error["errorMessage"])
    assert f"START RequestId: {outcome.request_id}" in outcome.logs
    assert "Task timed out after 0.50 seconds" in outcome.logs and "Status: timeout" in outcome.logs
    assert not worker.running
    again = call(worker, {"action": "count"})
    value = result(again)
    assert value["count"] == 1 and value["pid"] != first["pid"] and again.init_ms is not None
    assert "Status: timeout" in worker.log_path.read_text()


def test_a_worker_that_exits_is_reported_and_restarted(make_worker: Callable[..., FunctionWorker]) -> None:
    worker = make_worker()
    outcome = call(worker, {"action": "exit", "code": 3})
    assert outcome.error == {
        "errorMessage": f"RequestId: {outcome.request_id} Error: Runtime exited with error: exit status 3",
        "errorType": "Runtime.ExitError",
    }
    assert "Runtime.ExitError" in outcome.logs and f"END RequestId: {outcome.request_id}" in outcome.logs
    assert result(call(worker, {"action": "count"}))["count"] == 1


# -- logs ------------------------------------------------------------------------------------
def test_logs_come_back_with_each_invocation_and_never_break_the_protocol(shared: FunctionWorker) -> None:
    first = call(shared, {"action": "log", "tag": "alpha"})
    second = call(shared, {"action": "log", "tag": "beta"})
    assert result(first) == {"tag": "alpha"} and result(second) == {"tag": "beta"}
    for outcome, tag, other in ((first, "alpha", "beta"), (second, "beta", "alpha")):
        logs = outcome.logs
        for line in (f"print {tag}", f"PINNED pinned {tag}", f"stderr {tag}", f"dunder {tag}", f"fd1 {tag}"):
            assert line in logs
        for line in (f"fd2 {tag}", f"echo {tag}", f"context {tag}", '"request_id": "forged"'):
            assert line in logs
        assert re.search(rf"\[WARNING\]\t\S+Z\t{outcome.request_id}\troot {tag}\n", logs)
        assert logs.startswith(f"START RequestId: {outcome.request_id} Version: $LATEST\n")
        assert f"END RequestId: {outcome.request_id}\nREPORT RequestId: {outcome.request_id}\tDuration: " in logs
        assert "Memory Size: 256 MB" in logs
        assert other not in logs
    whole = shared.log_path.read_text()
    assert first.logs in whole and second.logs in whole


# -- errors ----------------------------------------------------------------------------------
def test_an_exception_gives_its_class_name_message_and_the_handlers_frames(shared: FunctionWorker) -> None:
    outcome = call(shared, {"action": "raise", "message": "the plan is wrong"})
    error = outcome.error
    assert error is not None and outcome.payload is None
    assert error["errorType"] == "CustomError" and error["errorMessage"] == "the plan is wrong"
    assert error["requestId"] == outcome.request_id
    assert isinstance(error["stackTrace"], list) and error["stackTrace"]
    assert error["stackTrace"][0].startswith(f'  File "{shared.code_dir / "app.py"}", line ')
    assert ", in handler\n    raise CustomError" in error["stackTrace"][-1]
    assert not any("worker_bootstrap" in frame for frame in error["stackTrace"])
    assert "[ERROR] CustomError: the plan is wrong\nTraceback (most recent call last):\n" in outcome.logs
    keyerror = call(shared, {"action": "keyerror"}).error
    assert keyerror is not None and (keyerror["errorType"], keyerror["errorMessage"]) == ("KeyError", "'missing'")


def test_results_are_marshalled_as_lambda_does(shared: FunctionWorker) -> None:
    pid = shared.pid
    outcome = call(shared, {"action": "datetime"})
    assert outcome.error == {
        "errorMessage": "Unable to marshal response: Object of type datetime is not JSON serializable",
        "errorType": "Runtime.MarshalError",
        "requestId": outcome.request_id,
        "stackTrace": [],
    }
    assert call(shared, {"action": "decimal"}).payload == '{"d": 1.10, "i": 3, "u": "é"}'.encode()
    assert call(shared, {"action": "bytes"}).payload == b"\x00raw"
    # bytes are the event's JSON text, as the Invoke API's Payload
    assert result(shared.invoke(b'{"action": "decimal"}')) == {"d": 1.1, "i": 3, "u": "é"}
    unreadable = shared.invoke(b"{not json")
    assert unreadable.error is not None and unreadable.error["errorType"] == "Runtime.UnmarshalError"
    assert unreadable.error["errorMessage"].startswith("Unable to unmarshal input: Expecting property name")
    assert shared.pid == pid


@pytest.mark.parametrize(
    ("handler", "error_type", "message"),
    [
        ("app.nope", "Runtime.HandlerNotFound", "Handler 'nope' missing on module 'app'"),
        ("app", "Runtime.MalformedHandlerName", "Bad handler 'app': not enough values to unpack (expected 2, got 1)"),
        ("broken.handler", "Runtime.UserCodeSyntaxError", "Syntax error in module 'broken': expected ':' (broken.py"),
        ("boom.handler", "RuntimeError", "no config at import"),
    ],
)
def test_init_failures(make_worker: Callable[..., FunctionWorker], handler: str, error_type: str, message: str) -> None:
    outcome = call(make_worker(handler=handler), {})
    assert outcome.error is not None
    assert outcome.error["errorType"] == error_type
    assert outcome.error["errorMessage"].startswith(message)
    assert outcome.error["requestId"] == outcome.request_id


def test_the_context_has_lambdas_attributes(shared: FunctionWorker) -> None:
    outcome = call(shared, {"action": "context"}, trace_id="Root=1-abc")
    value = result(outcome)
    assert value == {
        **CONTEXT,
        "memory_limit_in_mb": "256",  # a string in Lambda too
        "aws_request_id": outcome.request_id,
        "remaining": value["remaining"],
        "trace": "Root=1-abc",
    }
    assert 4000 < value["remaining"] <= 5000
    assert result(call(shared, {"action": "context"}))["trace"] is None


# -- concurrency -----------------------------------------------------------------------------
def test_functions_run_in_parallel_and_each_one_serially(
    make_worker: Callable[..., FunctionWorker], tree: dict[str, Path]
) -> None:
    workers = {key: make_worker() for key in ("First", "Second")}  # two functions' environments
    for worker in workers.values():
        result(worker.invoke({"action": "count"}))  # warm
    seconds = 0.4

    def run(keys: list[str]) -> tuple[float, list[dict[str, float]]]:
        values: list[dict[str, float]] = []
        threads = [
            threading.Thread(
                target=lambda k=key: values.append(
                    result(workers[k].invoke({"action": "sleep", "seconds": seconds}))
                )
            )
            for key in keys
        ]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return time.monotonic() - started, values

    elapsed, values = run(["First", "Second"])
    first, second = sorted(values, key=lambda value: value["start"])
    # in parallel: the second sleep began before the first ended (on the workers' own clocks; the
    # total elapsed time also counted the machine's delays in starting and answering them)
    assert len(values) == 2 and second["start"] < first["end"] and first["pid"] != second["pid"]
    elapsed, values = run(["First", "First"])
    assert len(values) == 2 and elapsed >= 2 * seconds
    earlier, later = sorted(values, key=lambda value: value["start"])
    assert earlier["end"] <= later["start"] and earlier["pid"] == later["pid"]
    for worker in workers.values():
        worker.close()
    assert not workers["First"].running


# -- the interpreter -------------------------------------------------------------------------
def test_a_missing_interpreter_is_a_clear_error(make_worker: Callable[..., FunctionWorker], tmp_path: Path) -> None:
    missing = str(tmp_path / "no-python3.13")
    with pytest.raises(InterpreterError, match=r"'.*no-python3\.13' does not exist.*`make build` sets it up"):
        make_worker(python=missing).invoke({})


def test_an_interpreter_that_is_not_313_is_a_clear_error(make_worker: Callable[..., FunctionWorker]) -> None:
    assert sys.version_info[:2] != (3, 13)  # the dev virtualenv's
    with pytest.raises(InterpreterError, match=r"is Python 3\.\d+, not 3\.13.*`make build` sets it up"):
        make_worker(python=sys.executable).invoke({})
