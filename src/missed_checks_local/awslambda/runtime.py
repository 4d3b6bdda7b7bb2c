"""The local Lambda service: each deployed function runs from its deployment package and
layers in its own warm Python 3.13 process, with its role's credentials.

What a function sees is what Lambda gives it: its unzipped package (``/var/task``), its
layers (``/opt``), the packages the python3.13 runtime ships (boto3/botocore at a pinned,
runtime-like version, from ``make build``) and the standard library, nothing from the dev
virtualenv (:mod:`missed_checks_local.awslambda.workers`). Its environment holds the function's variables,
the credentials of its execution role (``sts:AssumeRole``: IAM is enforced on every call it
makes, see :mod:`missed_checks_local.iam.enforcement`) and ``AWS_ENDPOINT_URL`` pointing at a moto server
that this process serves on 127.0.0.1, in front of the same embedded AWS.

Invocations arrive the way they do on AWS: the state machine's tasks call ``lambda:Invoke``
(moto checks the state machine role's permission, then hands the call to
:meth:`LambdaRuntime.invoke` instead of Docker); the stream poller and the scheduler call
:meth:`LambdaRuntime.invoke` directly, as the Lambda service's own pollers do.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

from missed_checks_local import clock
from missed_checks_local.application import registered
from missed_checks_local.awslambda.patches import lambda_invoke
from missed_checks_local.awslambda.workers import FunctionWorker, WorkerResult
from missed_checks_local.iam.enforcement import RoleCall, RoleSessions, enforced, observed
from missed_checks_local.stack import DeployError, EmbeddedStack, FunctionSpec, project_root
from missed_checks_local.stepfunctions.patches import state_machine_clients

__all__ = ["Invocation", "LambdaRuntime", "lambda_runtime_paths", "remove_scratch_directories"]

# Set for every function on top of its own environment, as the Lambda service does.
_RUNTIME_ENVIRONMENT = {
    "POWERTOOLS_METRICS_DISABLED": "true",
    "POWERTOOLS_TRACE_DISABLED": "true",
    "AWS_EXECUTION_ENV": "AWS_Lambda_python3.13",
    "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
    "AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand",
    "LAMBDA_TASK_ROOT": "",
    "TZ": ":UTC",
}


@dataclass
class Invocation:
    """One call of a function: what went in, what came out, what it logged."""

    function: str
    """Logical id of the function (``PlanEvaluationFunction``)."""
    request_id: str
    event: Any
    result: Any = None
    payload: bytes = b"null"
    """The result as Lambda returns it (JSON)."""
    error: dict[str, Any] | None = None
    """Lambda's error payload when the function failed (``errorType``, ``errorMessage``...)."""
    duration_ms: float = 0.0
    init_ms: float | None = None
    """Set on a cold start: the time the worker took to start and import the handler."""
    logs: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None


def lambda_runtime_paths(root: Path | None = None) -> tuple[str, Path]:
    """The Python 3.13 interpreter and the runtime packages directory ``make build`` set up."""
    base = (root or project_root()) / ".aws-sam" / "lambda-runtime"
    marker, packages = base / "python313", base / "python"
    if not marker.is_file() or not packages.is_dir():
        raise DeployError(
            f"{base} is not set up: run 'make build' (it finds Python 3.13 and installs the runtime's boto3 there)"
        )
    return marker.read_text(encoding="utf-8").strip(), packages


class LambdaRuntime:
    """Runs the stack's functions, one warm worker process per function.

    Use as a context manager (or :meth:`install` / :meth:`uninstall`). ``log_path`` appends
    every invocation's logs to a file. ``on_invocation`` is called after each invocation.
    """

    def __init__(
        self,
        stack: EmbeddedStack,
        *,
        log_path: str | Path | None = None,
        keep_invocations: bool = True,
        on_invocation: Callable[[Invocation], None] | None = None,
        max_concurrency: int = 4,
    ) -> None:
        self.stack = stack
        self.invocations: list[Invocation] = []
        self.keep_invocations = keep_invocations
        self.on_invocation = on_invocation
        self._log_path = Path(log_path) if log_path else None
        self._lock = threading.Lock()
        self._available = threading.Condition(self._lock)
        self._workers: dict[str, list[FunctionWorker]] = {}
        self._idle: dict[str, list[FunctionWorker]] = {}
        self.max_concurrency = max_concurrency
        """Environments per function: concurrent invocations beyond it wait (like a reserved
        concurrency; executions of two windows, or two of one window, do run in parallel)."""
        self._exit: ExitStack | None = None
        self._endpoint: str | None = None
        self._log: Any = None
        self._closed = False
        self._worker_logs: Path | None = None
        self.roles = RoleSessions(lambda: stack.client("sts"))
        self.faults: Any = None
        """A :class:`~missed_checks_local.product.faults.FaultInjector` for the Lambda service's faults."""
        self.denied: list[RoleCall] = []
        """Every call IAM refused to a role of this stack while the runtime ran."""

    # -- installation --------------------------------------------------------------------
    def __enter__(self) -> LambdaRuntime:
        self.install()
        return self

    def __exit__(self, *exc: object) -> None:
        self.uninstall()

    def install(self) -> None:
        if self._exit is not None:
            return
        exit_stack = ExitStack()
        try:
            self._closed = False
            self._endpoint = self.stack.endpoint_url or exit_stack.enter_context(_moto_server())
            self._worker_logs = exit_stack.enter_context(_scratch_directory("lambda-logs-"))
            exit_stack.enter_context(enforced())
            exit_stack.enter_context(observed(self._record_denial))
            exit_stack.enter_context(self._serve_lambda_invoke())
            exit_stack.enter_context(self._state_machine_credentials())
        except BaseException:
            exit_stack.close()
            raise
        self._exit = exit_stack

    def _record_denial(self, call: RoleCall) -> None:
        if call.denied:
            self.denied.append(call)

    def uninstall(self) -> None:
        with self._available:
            self._closed = True  # no worker starts after this
            workers = [worker for every in self._workers.values() for worker in every]
            self._workers, self._idle = {}, {}
            self._available.notify_all()
        # All at once: each worker takes up to its grace period to exit (about half a second for
        # a Python interpreter on a busy machine), which one after another added seconds per run.
        closing = [threading.Thread(target=worker.close, name="lambda-worker-close") for worker in workers]
        for thread in closing:
            thread.start()
        for thread in closing:
            thread.join()
        if self._exit is not None:
            self._exit.close()
            self._exit = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def _serve_lambda_invoke(self) -> Any:
        """moto's ``lambda:Invoke`` (after its IAM check) hands our functions' calls to us."""
        runtime = self

        def serve(function_arn: str, body: Any, response_headers: Any) -> bytes | None:
            spec = runtime.stack.function_by_name(function_arn)
            if spec is None:
                return None
            try:
                event = json.loads(body) if body else {}
            except ValueError:
                event = body
            if runtime._service_faults(spec, event):
                invocation = runtime._injected_failure(spec, event)
            else:
                invocation = runtime.invoke(spec.logical_id, event)
            if invocation.error is not None:
                response_headers["x-amz-function-error"] = "Unhandled"
                return json.dumps(invocation.error).encode()
            return invocation.payload

        return lambda_invoke(serve)

    @contextmanager
    def _state_machine_credentials(self) -> Iterator[None]:
        """The state machine's tasks call AWS with its role's credentials (moto's use fixed
        dummy keys), one client per region and service, reused while the runtime runs."""

        role_arns = {res["RoleArn"] for res in self.stack._of_type("AWS::StepFunctions::StateMachine").values()}
        if len(role_arns) > 1:
            raise DeployError("the local runtime runs state machines with one role only")
        clients: dict[tuple[str, str], Any] = {}
        lock = threading.Lock()
        config = Config(parameter_validation=False, retries={"max_attempts": 0, "total_max_attempts": 1})

        def client_for(region: str, service: str, state_credentials: Any = None) -> Any:
            key = (region, service)
            with lock:
                if key not in clients:
                    credentials = (
                        self.roles.client_kwargs(next(iter(role_arns)), "states")
                        if role_arns
                        else {"aws_access_key_id": "ak", "aws_secret_access_key": "sk"}
                    )
                    clients[key] = boto3.client(
                        service, region_name=region, endpoint_url=self.stack.endpoint_url, config=config, **credentials
                    )
                return clients[key]

        with state_machine_clients(client_for):
            yield

    # -- faults (missed_checks_local.product.faults) -----------------------------------------------
    def _service_faults(self, spec: FunctionSpec, event: Any) -> bool:
        """Faults of the Lambda service and of Step Functions around a task's invoke; True when
        the function itself must fail this time."""
        from moto.core.exceptions import JsonRESTError  # deferred: moto is a dev dependency and slow to import

        if self.faults is None:
            return False
        if self.faults.strike("lambda_throttle", function=spec.logical_id):
            error = JsonRESTError("TooManyRequestsException", "Rate Exceeded. (injected fault)")
            error.code = 429
            raise error
        fault = self.faults.strike("lambda_error", function=spec.logical_id)
        if fault is not None and fault.transient:
            error = JsonRESTError("ServiceException", "The Lambda service failed. (injected fault)")
            error.code = 500
            raise error
        judging = isinstance(event, dict) and ("shards" in event or "input" in event)  # fanned out, or small fleet
        if judging and self.faults.strike("stop_mid_map"):
            execution = str(event.get("execution") or "")
            if execution.startswith("arn:"):
                self.stack.client("stepfunctions").stop_execution(
                    executionArn=execution, error="InjectedStop", cause="stopped in the middle of its Map (fault)"
                )
        return fault is not None

    def _injected_failure(self, spec: FunctionSpec, event: Any) -> Invocation:
        request_id = str(uuid.uuid4())
        invocation = Invocation(function=spec.logical_id, request_id=request_id, event=event)
        invocation.error = {"errorType": "InjectedFailure", "errorMessage": "the function failed (injected fault)",
                            "requestId": request_id, "stackTrace": []}
        self._record(invocation)
        return invocation

    # -- invocation ----------------------------------------------------------------------
    def _new_worker(self, spec: FunctionSpec, index: int) -> FunctionWorker:
        python, runtime_dir = lambda_runtime_paths()
        environment = {
            **spec.environment,
            **_RUNTIME_ENVIRONMENT,
            "LAMBDA_TASK_ROOT": str(spec.code_dir),
            "AWS_LAMBDA_FUNCTION_NAME": spec.name,
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory_mb),
            "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{spec.name}",
            "AWS_REGION": self.stack.region,
            "AWS_DEFAULT_REGION": self.stack.region,
            "AWS_ENDPOINT_URL": str(self._endpoint),
            **self.roles.environment(spec.role_arn, spec.name),
        }
        assert self._worker_logs is not None  # set by install()
        return FunctionWorker(
            python=python,
            code_dir=spec.code_dir,
            layer_dirs=spec.layer_dirs,
            runtime_dir=runtime_dir,
            handler=spec.handler,
            environment=environment,
            timeout_s=float(spec.timeout_s),
            memory_mb=spec.memory_mb,
            log_path=self._worker_logs / f"{spec.logical_id}-{index}.log",
        )

    def _acquire(self, spec: FunctionSpec) -> FunctionWorker:
        """A warm, idle environment of the function, or a new one while fewer than
        :attr:`max_concurrency` exist (Lambda scales out the same way); else wait for one."""
        with self._available:
            while True:
                if self._closed:
                    raise RuntimeError("the Lambda runtime is not installed (use it as a context manager)")
                idle = self._idle.setdefault(spec.logical_id, [])
                if idle:
                    return idle.pop()
                every = self._workers.setdefault(spec.logical_id, [])
                if len(every) < self.max_concurrency:
                    worker = self._new_worker(spec, len(every))
                    every.append(worker)
                    return worker
                self._available.wait()

    def _release(self, spec: FunctionSpec, worker: FunctionWorker) -> None:
        with self._available:
            if not self._closed:
                self._idle.setdefault(spec.logical_id, []).append(worker)
            self._available.notify_all()

    def _worker(self, spec: FunctionSpec) -> FunctionWorker:
        """A warm environment of the function (for inspection; it stays available)."""
        worker = self._acquire(spec)
        self._release(spec, worker)
        return worker

    def invoke(self, function: str, event: Any) -> Invocation:
        """Run ``function`` (logical id, name or ARN) with ``event``, as Lambda would."""
        if self._exit is None or self._closed:
            raise RuntimeError("the Lambda runtime is not installed (use it as a context manager)")
        spec = self.stack.functions.get(function) or self.stack.function_by_name(function)
        if spec is None:
            raise KeyError(f"no function {function!r} in the stack")
        request_id = str(uuid.uuid4())
        invocation = Invocation(function=spec.logical_id, request_id=request_id, event=event)
        context = {
            "function_name": spec.name,
            "function_version": "$LATEST",
            "invoked_function_arn": spec.arn,
            "memory_limit_in_mb": spec.memory_mb,
            "log_group_name": f"/aws/lambda/{spec.name}",
            "log_stream_name": time.strftime("%Y/%m/%d/[$LATEST]") + request_id.replace("-", ""),
            "clock": clock.now().isoformat(),
            "clock_module": registered().functions_clock,
        }
        worker = self._acquire(spec)
        try:
            result: WorkerResult = worker.invoke(event, request_id=request_id, context_fields=context)
            if result.error is not None and result.error.get("errorType") in _INIT_ERRORS:
                worker.close()  # as Lambda does after a failed init: the next invocation initialises again
        finally:
            self._release(spec, worker)
        invocation.error = result.error
        invocation.duration_ms = result.duration_ms
        invocation.init_ms = result.init_ms
        invocation.logs = result.logs
        if result.error is None and result.payload is not None:
            invocation.payload = result.payload
            invocation.result = json.loads(result.payload or b"null")
        self._record(invocation)
        return invocation

    def _record(self, invocation: Invocation) -> None:
        if self.keep_invocations:
            self.invocations.append(invocation)
        if self._log_path is not None:
            with self._lock:
                if self._log is None:
                    self._log = self._log_path.open("a", encoding="utf-8")
                self._log.write(f"--- {invocation.function}\n{invocation.logs}")
                self._log.flush()
        if self.on_invocation is not None:
            self.on_invocation(invocation)


_INIT_ERRORS = {
    "Runtime.ImportModuleError",
    "Runtime.UserCodeSyntaxError",
    "Runtime.HandlerNotFound",
    "Runtime.MalformedHandlerName",
}

_scratch: set[Path] = set()
"""The temporary directories of the runtimes in use (for :func:`remove_scratch_directories`)."""


@contextmanager
def _scratch_directory(prefix: str) -> Iterator[Path]:
    """A temporary directory, removed at the end even while a stopping worker's invocation still
    appends its last lines there (a plain TemporaryDirectory fails with "Directory not empty")."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    _scratch.add(path)
    try:
        yield path
    finally:
        for _ in range(100):
            shutil.rmtree(path, ignore_errors=True)
            if not path.exists():
                break
            time.sleep(0.05)
        _scratch.discard(path)


def remove_scratch_directories() -> None:
    """Remove the temporary directories of every runtime in use, at once (an emergency stop of the
    process, after :func:`~missed_checks_local.awslambda.workers.kill_every_worker`)."""
    for path in list(_scratch):
        shutil.rmtree(path, ignore_errors=True)


@contextmanager
def _moto_server() -> Iterator[str]:
    """A moto server on a free loopback port, in front of this process's embedded AWS, for the
    function workers to call."""
    from moto.server import ThreadedMotoServer  # deferred: moto is a dev dependency and slow to import

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # not a line per request on the terminal
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def invocation_summary(invocations: list[Invocation]) -> dict[str, dict[str, int]]:
    """``{function: {"ok": n, "error": n}}``."""
    summary: dict[str, dict[str, int]] = {}
    for invocation in invocations:
        counts = summary.setdefault(invocation.function, {"ok": 0, "error": 0})
        counts["ok" if invocation.ok else "error"] += 1
    return summary
