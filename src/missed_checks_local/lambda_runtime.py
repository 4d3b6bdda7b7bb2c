"""An in-process Lambda: our real handlers run where moto's Step Functions calls Lambda.

moto's ASL interpreter invokes Lambda through a boto3 client of the *default* session (and
moto's own Lambda invoke needs Docker). :class:`LambdaRuntime` registers a botocore
``before-call.lambda.Invoke`` handler on that session: when the function named in the request
is one of the stack's, it imports the handler module, sets the function's environment, calls
``handler(event, context)`` with a real-looking context, and answers the call as Lambda does:
``StatusCode`` 200 and the JSON result, or for a raised exception ``FunctionError: Unhandled``
and ``{"errorMessage", "errorType", "stackTrace"}``, so the state machine's Retry and Catch
match on the exception's class name as they do in AWS.

Invocations are serialized (one at a time, like a function with reserved concurrency 1) because
the environment variables are process-wide. What handlers print or log is captured per
invocation (see :attr:`LambdaRuntime.invocations`), optionally appended to a log file, and kept
out of the user's terminal.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import unquote

import boto3
from botocore.awsrequest import AWSResponse
from botocore.response import StreamingBody

from missed_checks_local.stack import LOCAL_CREDENTIALS, EmbeddedStack, FunctionSpec

__all__ = ["Invocation", "LambdaContext", "LambdaRuntime"]

_EVENT = "before-call.lambda.Invoke"
_URL_MARKER = "/functions/"

# Set for every invocation on top of the function's own environment.
_RUNTIME_ENVIRONMENT = {
    "POWERTOOLS_METRICS_DISABLED": "true",
    "POWERTOOLS_TRACE_DISABLED": "true",
    "POWERTOOLS_DEV": "false",
    "AWS_EXECUTION_ENV": "AWS_Lambda_python_local",
    "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
    "AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand",
}


class LambdaContext:
    """The ``context`` argument of a Python Lambda handler (the fields handlers read)."""

    def __init__(self, spec: FunctionSpec, region: str, request_id: str, deadline: float) -> None:
        self.function_name = spec.name
        self.function_version = "$LATEST"
        self.invoked_function_arn = spec.arn
        self.memory_limit_in_mb = spec.memory_mb
        self.aws_request_id = request_id
        self.log_group_name = f"/aws/lambda/{spec.name}"
        self.log_stream_name = time.strftime("%Y/%m/%d/[$LATEST]") + request_id.replace("-", "")
        self.identity = None
        self.client_context = None
        self.tenant_id = None
        self._deadline = deadline
        self._region = region

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))

    def __repr__(self) -> str:
        return f"LambdaContext({self.function_name!r}, request {self.aws_request_id})"


@dataclass
class Invocation:
    """One call of a handler: what went in, what came out, what it logged."""

    function: str
    """Logical id of the function (``PlanEvaluationFunction``)."""
    request_id: str
    event: Any
    result: Any = None
    payload: bytes = b"null"
    """The result as Lambda returns it (JSON)."""
    error: dict[str, Any] | None = None
    """Lambda's error payload when the handler raised (``errorType``, ``errorMessage``...)."""
    duration_ms: float = 0.0
    logs: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None


class _ThreadRoutedStream(io.TextIOBase):
    """Stands in for ``sys.stdout``/``sys.stderr``: writes from a thread that is running a
    handler go to that invocation's log buffer, every other write to the original stream."""

    def __init__(self, original: TextIO, local: threading.local) -> None:
        self.original = original
        self._local = local

    def write(self, text: str) -> int:
        buffer = getattr(self._local, "buffer", None)
        if buffer is not None:
            return buffer.write(text)
        return self.original.write(text)

    def flush(self) -> None:
        if getattr(self._local, "buffer", None) is None:
            self.original.flush()

    def isatty(self) -> bool:
        return self.original.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.original, "encoding", "utf-8")

    def fileno(self) -> int:
        return self.original.fileno()


class _ThreadEnviron(dict):  # type: ignore[type-arg]
    """Stands in for ``os.environ._data``: a thread running a handler sees its function's
    variables on top of the process's; every other thread sees the process's, unchanged.

    Setting and restoring ``os.environ`` around each call instead would race with the other
    threads of the process (moto's interpreter creates botocore clients, which read and copy
    the environment, while a handler runs).
    """

    def __init__(self, base: dict, local: threading.local) -> None:  # type: ignore[type-arg]
        super().__init__(base)
        self._local = local

    def _overlay(self) -> dict | None:  # type: ignore[type-arg]
        return getattr(self._local, "environment", None)

    def __getitem__(self, key: Any) -> Any:
        overlay = self._overlay()
        if overlay is not None and key in overlay:
            return overlay[key]
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        overlay = self._overlay()
        return (overlay is not None and key in overlay) or super().__contains__(key)

    def __iter__(self) -> Iterator[Any]:
        overlay = self._overlay()
        if overlay is None:
            return iter(list(super().keys()))
        return iter(list(dict.fromkeys([*super().keys(), *overlay])))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if key in self else default


_capture_local = threading.local()
_environ_users = [0]
_environ_lock = threading.Lock()
_environ_local = threading.local()


def _install_environ() -> None:
    with _environ_lock:
        if _environ_users[0] == 0 and not isinstance(os.environ._data, _ThreadEnviron):  # type: ignore[attr-defined]
            os.environ._data = _ThreadEnviron(os.environ._data, _environ_local)  # type: ignore[attr-defined]
        _environ_users[0] += 1


def _uninstall_environ() -> None:
    with _environ_lock:
        _environ_users[0] -= 1
        data = os.environ._data  # type: ignore[attr-defined]
        if _environ_users[0] == 0 and isinstance(data, _ThreadEnviron):
            os.environ._data = dict(dict.items(data))  # type: ignore[attr-defined]


class LambdaRuntime:
    """Runs the stack's functions in-process when anything in this process invokes them.

    Use as a context manager (or :meth:`install` / :meth:`uninstall`). ``log_path`` appends
    every invocation's captured output to a file. ``endpoint_url`` is exported to handlers as
    ``AWS_ENDPOINT_URL`` (server mode: their clients must reach the moto server).
    ``on_invocation`` is called after each invocation (the scenario runner uses it to count).
    """

    def __init__(
        self,
        stack: EmbeddedStack,
        *,
        log_path: str | Path | None = None,
        keep_invocations: bool = True,
        on_invocation: Callable[[Invocation], None] | None = None,
    ) -> None:
        self.stack = stack
        self.invocations: list[Invocation] = []
        self.keep_invocations = keep_invocations
        self.on_invocation = on_invocation
        self._log_path = Path(log_path) if log_path else None
        self._lock = threading.RLock()
        # Shared by every runtime: a logger that kept an earlier runtime's routing stream (Powertools
        # pins sys.stdout when the handler module is imported) must still route by thread.
        self._local = _capture_local
        self._session: boto3.session.Session | None = None
        self._streams: tuple[TextIO, TextIO] | None = None
        self._handlers: dict[str, Callable[[Any, Any], Any]] = {}
        self._log: TextIO | None = None

    # -- installation --------------------------------------------------------------------
    def __enter__(self) -> LambdaRuntime:
        self.install()
        return self

    def __exit__(self, *exc: object) -> None:
        self.uninstall()

    def install(self) -> None:
        """Hook into boto3's current default session (again, if it was replaced)."""
        session = boto3._get_default_session()
        if session is not self._session:
            if self._session is not None:
                self._session.events.unregister(_EVENT, unique_id=self._unique_id)
            session.events.register(_EVENT, self._before_invoke, unique_id=self._unique_id)
            self._session = session
        if self._streams is None:
            _install_environ()
            self._streams = (sys.stdout, sys.stderr)
            sys.stdout = _ThreadRoutedStream(sys.stdout, self._local)  # type: ignore[assignment]
            sys.stderr = _ThreadRoutedStream(sys.stderr, self._local)  # type: ignore[assignment]

    def uninstall(self) -> None:
        if self._session is not None:
            self._session.events.unregister(_EVENT, unique_id=self._unique_id)
            self._session = None
        if self._streams is not None:
            if isinstance(sys.stdout, _ThreadRoutedStream):
                sys.stdout = self._streams[0]
            if isinstance(sys.stderr, _ThreadRoutedStream):
                sys.stderr = self._streams[1]
            self._streams = None
            _uninstall_environ()
        if self._log is not None:
            self._log.close()
            self._log = None

    @property
    def _unique_id(self) -> str:
        return f"missed-checks-local-lambda-{id(self)}"

    # -- invocation ----------------------------------------------------------------------
    def _before_invoke(self, params: Mapping[str, Any], **_: Any) -> tuple[AWSResponse, dict] | None:
        path = str(params.get("url_path", ""))
        if _URL_MARKER not in path:
            return None
        name = unquote(path.split(_URL_MARKER, 1)[1].split("/", 1)[0])
        spec = self.stack.function_by_name(name)
        if spec is None:
            return None  # not ours: let the call through
        body = params.get("body") or b"{}"
        if isinstance(body, str):
            body = body.encode()
        try:
            event = json.loads(body or b"{}")
        except ValueError:
            event = body.decode("utf-8", "replace")
        invocation = self.invoke(spec.logical_id, event)
        if invocation.error is not None:
            payload = json.dumps(invocation.error).encode()
            parsed: dict[str, Any] = {"FunctionError": "Unhandled"}
        else:
            payload = invocation.payload
            parsed = {}
        parsed.update(
            {
                "StatusCode": 200,
                "ExecutedVersion": "$LATEST",
                "Payload": StreamingBody(io.BytesIO(payload), len(payload)),
                "ResponseMetadata": {"HTTPStatusCode": 200, "RequestId": invocation.request_id},
            }
        )
        headers = {"x-amzn-requestid": invocation.request_id}
        if invocation.error is not None:
            headers["x-amz-function-error"] = "Unhandled"
        http = AWSResponse(url=path, status_code=200, headers=headers, raw=None)
        return http, parsed

    def invoke(self, function: str, event: Any) -> Invocation:
        """Run ``function`` (logical id, name or ARN) with ``event``, as Lambda would."""
        spec = self.stack.functions.get(function) or self.stack.function_by_name(function)
        if spec is None:
            raise KeyError(f"no function {function!r} in the stack")
        request_id = str(uuid.uuid4())
        invocation = Invocation(function=spec.logical_id, request_id=request_id, event=event)
        with self._lock, self._environment(spec), self._capture() as buffer:
            started = time.monotonic()
            context = LambdaContext(spec, self.stack.region, request_id, started + spec.timeout_s)
            print(f"START RequestId: {request_id} Version: $LATEST")
            try:
                handler = self._handler(spec)
            except Exception as error:  # Lambda reports import failures this way
                invocation.error = _error_payload(
                    error,
                    request_id=request_id,
                    message=f"Unable to import module '{spec.module}': {error}",
                    error_type="Runtime.ImportModuleError",
                )
            else:
                try:
                    result = handler(event, context)
                except Exception as error:
                    invocation.error = _error_payload(error, request_id=request_id)
                else:
                    try:
                        invocation.payload = json.dumps(result).encode()
                        invocation.result = result
                    except (TypeError, ValueError) as error:
                        invocation.error = _error_payload(
                            error,
                            request_id=request_id,
                            message=f"Unable to marshal response: {error}",
                            error_type="Runtime.MarshalError",
                        )
            elapsed = time.monotonic() - started
            if invocation.error is None and elapsed > spec.timeout_s:
                invocation.error = {
                    "errorMessage": f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} "
                    f"{request_id} Task timed out after {spec.timeout_s:.2f} seconds",
                    "errorType": "Sandbox.Timedout",
                }
            invocation.duration_ms = elapsed * 1000
            if invocation.error is not None:
                print(json.dumps(invocation.error))
            print(f"END RequestId: {request_id}")
            print(
                f"REPORT RequestId: {request_id}\tDuration: {invocation.duration_ms:.2f} ms\t"
                f"Memory Size: {spec.memory_mb} MB"
            )
        invocation.logs = buffer.getvalue()
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
        if self.on_invocation is not None:
            self.on_invocation(invocation)

    def _handler(self, spec: FunctionSpec) -> Callable[[Any, Any], Any]:
        if spec.logical_id not in self._handlers:
            root = str(self.stack.template_path.parent)
            if root not in sys.path:
                # Lambda puts the function's code on the path; here the code is the checkout.
                sys.path.insert(0, root)
            module = importlib.import_module(spec.module)
            self._handlers[spec.logical_id] = getattr(module, spec.attribute)
        return self._handlers[spec.logical_id]

    @contextmanager
    def _environment(self, spec: FunctionSpec) -> Iterator[None]:
        values = {
            **spec.environment,
            **_RUNTIME_ENVIRONMENT,
            "AWS_LAMBDA_FUNCTION_NAME": spec.name,
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory_mb),
            "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{spec.name}",
            "AWS_REGION": self.stack.region,
            "AWS_DEFAULT_REGION": self.stack.region,
        }
        if not os.environ.get("AWS_ACCESS_KEY_ID"):
            values["AWS_ACCESS_KEY_ID"] = LOCAL_CREDENTIALS["aws_access_key_id"]
            values["AWS_SECRET_ACCESS_KEY"] = LOCAL_CREDENTIALS["aws_secret_access_key"]
        if self.stack.endpoint_url:
            values["AWS_ENDPOINT_URL"] = self.stack.endpoint_url
        if not isinstance(os.environ._data, _ThreadEnviron):  # type: ignore[attr-defined]
            raise RuntimeError("the Lambda runtime is not installed (use it as a context manager)")
        encode_key, encode_value = os.environ.encodekey, os.environ.encodevalue  # type: ignore[attr-defined]
        previous = getattr(_environ_local, "environment", None)
        _environ_local.environment = {encode_key(k): encode_value(v) for k, v in values.items()}
        try:
            yield
        finally:
            _environ_local.environment = previous

    @contextmanager
    def _capture(self) -> Iterator[io.StringIO]:
        buffer = io.StringIO()
        previous = getattr(self._local, "buffer", None)
        self._local.buffer = buffer
        redirected = self._redirect_pinned_log_handlers()
        try:
            yield buffer
        finally:
            self._local.buffer = previous
            for handler, stream in redirected:
                handler.setStream(stream)

    def _redirect_pinned_log_handlers(self) -> list[tuple[Any, Any]]:
        """Loggers created before :meth:`install` (Powertools pins ``sys.stdout`` at creation)
        write to the real terminal; point them at the routing stream for this invocation."""
        import logging

        if self._streams is None:
            return []
        routed = {
            id(stream.original): stream
            for stream in (sys.stdout, sys.stderr)
            if isinstance(stream, _ThreadRoutedStream)
        }
        changed = []
        # list() copies in one step: other threads create loggers (botocore clients) meanwhile
        loggers = [logging.getLogger(), *list(logging.Logger.manager.loggerDict.values())]
        for logger in loggers:
            for handler in getattr(logger, "handlers", []):
                stream = getattr(handler, "stream", None)
                if isinstance(handler, logging.StreamHandler) and id(stream) in routed:
                    changed.append((handler, handler.setStream(routed[id(stream)])))
        return changed


def _error_payload(
    error: BaseException, *, request_id: str, message: str | None = None, error_type: str | None = None
) -> dict[str, Any]:
    return {
        "errorMessage": message if message is not None else str(error),
        "errorType": error_type or type(error).__name__,
        "requestId": request_id,
        # Like Lambda's: the handler's frames, not the runtime's.
        "stackTrace": traceback.format_list(
            [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename != __file__]
        ),
    }


def invocation_summary(invocations: list[Invocation]) -> dict[str, dict[str, int]]:
    """``{function: {"ok": n, "error": n}}``."""
    summary: dict[str, dict[str, int]] = {}
    for invocation in invocations:
        counts = summary.setdefault(invocation.function, {"ok": 0, "error": 0})
        counts["ok" if invocation.ok else "error"] += 1
    return summary
