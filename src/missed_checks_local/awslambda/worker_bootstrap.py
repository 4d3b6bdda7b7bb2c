"""Runs one Lambda function in its own process, the way Lambda's Python runtime does.

Started by :mod:`missed_checks_local.awslambda.workers` as
``PYTHON -I -S -X pycache_prefix=... -X utf8 worker_bootstrap.py`` (``workers.bytecode_options``):
``-I`` ignores ``PYTHON*`` variables and the user site directory and leaves this script's own
directory off ``sys.path``; ``-S`` leaves out the interpreter's ``site-packages``. So the handler
sees only the standard library and the directories of ``_WORKER_PATH``, which the parent lists in
Lambda's order: the function's code (``/var/task``), each layer's
``python/lib/python3.13/site-packages`` and ``python`` (``/opt``), the packages the runtime
provides (boto3...). They go at the front of ``sys.path`` and, as Lambda does, are also site
directories (their ``.pth`` files are processed).

Standard library only, and nothing from ``missed_checks*``: this file runs on the function's
interpreter, not the developer's.

Configuration (environment variables, removed before the handler is imported):

``_WORKER_PATH``        the directories above, joined with ``os.pathsep``;
``_WORKER_LOG``         the worker's log file: file descriptors 1 and 2 are pointed at it, so whatever
                        the handler (or a subprocess) writes lands there and never in the protocol;
``_WORKER_SPAWNED_AT``  ``time.time()`` when the parent started the process (for ``Init Duration``).

``_HANDLER`` (``app.handler``) stays, as in Lambda, with the function's own variables.

Protocol: the parent writes one JSON object per line on stdin; the worker answers one JSON object
per line on a duplicate of its original stdout, made before fds 0, 1 and 2 are redirected
(stdin then reads ``/dev/null``). First the worker imports the handler (the cold start) and says
``{"ready": true, "pid", "init_ms", "init_error"}``. Then, for each request
``{"request_id", "payload": "<event as JSON text>", "deadline_ms": <epoch ms>, "context": {...},
"trace_id": ...}`` it answers ``{"request_id", "ok": true, "payload": "<result as JSON text>"}``
(``"payload_b64"`` when the handler returned bytes) or ``{"request_id", "ok": false, "error":
{"errorMessage", "errorType", "requestId", "stackTrace"}}``, with ``"logs"`` (everything written to
the log during the invocation, from ``START`` to ``REPORT``; the first one also holds the init's
output) and ``"duration_ms"``. End of stdin ends the worker.

Errors are reported as Lambda's runtime (awslambdaric) reports them: ``Runtime.ImportModuleError``
(``Unable to import module 'app': No module named 'xyz'``), ``Runtime.UserCodeSyntaxError``,
``Runtime.HandlerNotFound``, ``Runtime.MalformedHandlerName``, ``Runtime.MarshalError``,
``Runtime.UnmarshalError``, or the exception's class name and message with the handler's frames.
A failed init is reported on every invocation of the worker. ``SystemExit`` and other
``BaseException`` are not caught: the process exits, as Lambda's runtime does.
"""

from __future__ import annotations

import io
import json
import logging
import os
import sys
import time
import traceback

TYPE_CHECKING = False  # typing is not imported at run time: a worker's cold start does not pay for it
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_STARTED = time.time()
# Placeholder for a Decimal in a result: Lambda writes Decimals as raw JSON numbers.
_RAW_MARK = "\ue000" + os.urandom(6).hex()


class _Fault(Exception):
    """A runtime fault with Lambda's error type (awslambdaric's FaultException)."""

    def __init__(self, error_type: str, message: str, trace: list[str] | None = None) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.trace = trace


def _make_error(message: str | None, error_type: str | None, stack_trace: list[str] | None,
                request_id: str | None) -> dict[str, Any]:
    return {
        "errorMessage": message or "",
        "errorType": error_type or "",
        "requestId": request_id or "",
        "stackTrace": stack_trace or [],
    }


def _exception_error(error: BaseException, request_id: str | None) -> dict[str, Any]:
    """Lambda's payload for an exception raised by user code: the class name, ``str()`` of the
    exception, and the frames from the first one that is not the runtime's."""
    frames = [(f.filename, f.lineno, f.name, f.line) for f in traceback.extract_tb(error.__traceback__)]
    for index, frame in enumerate(frames):
        if frame[0] != __file__:
            frames = frames[index:]
            break
    # (typeshed wants an int line number in a tuple; None prints as traceback prints it)
    return _make_error(str(error), type(error).__name__, traceback.format_list(frames),  # type: ignore[arg-type]
                       request_id)


def _load_handler(name: str) -> Callable[[Any, LambdaContext], Any]:
    """Import the handler as awslambdaric's ``_get_handler`` does (same faults, same wording)."""
    try:
        module_name, function_name = name.rsplit(".", 1)
    except ValueError as error:
        raise _Fault("Runtime.MalformedHandlerName", f"Bad handler '{name}': {error}") from None
    if module_name.split(".")[0] in sys.builtin_module_names:
        raise _Fault("Runtime.BuiltInModuleConflict", f"Cannot use built-in module {module_name} as a handler module")
    import importlib

    try:
        module = importlib.import_module(module_name.replace("/", "."))
    except ImportError as error:
        raise _Fault("Runtime.ImportModuleError", f"Unable to import module '{module_name}': {error}") from None
    except SyntaxError as error:
        trace = [f'  File "{error.filename}" Line {error.lineno}\n    {error.text}']
        raise _Fault("Runtime.UserCodeSyntaxError", f"Syntax error in module '{module_name}': {error}", trace) from None
    try:
        handler: Callable[[Any, LambdaContext], Any] = getattr(module, function_name)
        return handler
    except AttributeError:
        raise _Fault(
            "Runtime.HandlerNotFound", f"Handler '{function_name}' missing on module '{module_name}'"
        ) from None


class _Identity:
    __slots__ = ("cognito_identity_id", "cognito_identity_pool_id")

    def __init__(self) -> None:
        self.cognito_identity_id: str | None = None
        self.cognito_identity_pool_id: str | None = None

    def __repr__(self) -> str:
        return (
            f"CognitoIdentity([cognito_identity_id={self.cognito_identity_id},"
            f"cognito_identity_pool_id={self.cognito_identity_pool_id}])"
        )


class LambdaContext:
    """The handler's ``context``, with the attributes of Lambda's (``memory_limit_in_mb`` is a
    string there too: it comes from ``AWS_LAMBDA_FUNCTION_MEMORY_SIZE``)."""

    def __init__(self, request_id: str, deadline_ms: int, fields: dict[str, Any]) -> None:
        env = os.environ

        def field(name: str, variable: str) -> Any:
            value = fields.get(name)
            return env.get(variable) if value is None else value

        self.aws_request_id = request_id
        self.log_group_name = field("log_group_name", "AWS_LAMBDA_LOG_GROUP_NAME")
        self.log_stream_name = field("log_stream_name", "AWS_LAMBDA_LOG_STREAM_NAME")
        self.function_name = field("function_name", "AWS_LAMBDA_FUNCTION_NAME")
        memory = field("memory_limit_in_mb", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE")
        self.memory_limit_in_mb = None if memory is None else str(memory)
        self.function_version = field("function_version", "AWS_LAMBDA_FUNCTION_VERSION")
        self.invoked_function_arn = fields.get("invoked_function_arn")
        self.tenant_id = fields.get("tenant_id")
        self.client_context: Any = None
        self.identity = _Identity()
        self._epoch_deadline_time_in_ms = deadline_ms

    def get_remaining_time_in_millis(self) -> int:
        delta_ms = self._epoch_deadline_time_in_ms - int(time.time() * 1000)
        return delta_ms if delta_ms > 0 else 0

    def log(self, msg: object) -> None:
        sys.stdout.write(str(msg))

    def __repr__(self) -> str:
        return (
            f"LambdaContext([aws_request_id={self.aws_request_id},log_group_name={self.log_group_name},"
            f"log_stream_name={self.log_stream_name},function_name={self.function_name},"
            f"memory_limit_in_mb={self.memory_limit_in_mb},function_version={self.function_version},"
            f"invoked_function_arn={self.invoked_function_arn},client_context={self.client_context},"
            f"identity={self.identity},tenant_id={self.tenant_id}])"
        )


class _Encoder(json.JSONEncoder):
    """Lambda's result encoder: ``ensure_ascii=False`` (python3.12+) and Decimals as numbers."""

    def __init__(self) -> None:
        super().__init__(ensure_ascii=False)
        self.raw: list[str] = []

    def default(self, o: Any) -> Any:
        decimal = sys.modules.get("decimal")
        if decimal is not None and isinstance(o, decimal.Decimal):
            if o.is_nan():
                return float("nan")
            self.raw.append(str(o))
            return f"{_RAW_MARK}{len(self.raw) - 1}{_RAW_MARK}"
        return super().default(o)


def _marshal(result: Any) -> str | bytes:
    if isinstance(result, bytes):
        return result
    encoder = _Encoder()
    try:
        text = encoder.encode(result)
    except Exception as error:
        raise _Fault("Runtime.MarshalError", f"Unable to marshal response: {error}") from None
    for index, raw in enumerate(encoder.raw):
        text = text.replace(f'"{_RAW_MARK}{index}{_RAW_MARK}"', raw, 1)
    return text


def _unmarshal(payload: str) -> Any:
    try:
        return json.loads(payload)
    except Exception as error:
        raise _Fault("Runtime.UnmarshalError", f"Unable to unmarshal input: {error}") from None


class _LambdaLogHandler(logging.Handler):
    """The root logger's handler in Lambda: text format, the request id on each record, written to
    whatever ``sys.stdout`` is at the time."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stdout.write(self.format(record))
        except Exception:
            self.handleError(record)


class _RequestIdFilter(logging.Filter):
    request_id: str | None = None  # of the invocation running, as Lambda's _GLOBAL_AWS_REQUEST_ID

    def filter(self, record: logging.LogRecord) -> bool:
        record.aws_request_id = _RequestIdFilter.request_id or ""
        return True


def _setup_logging() -> None:
    logging.Formatter.converter = time.gmtime
    handler = _LambdaLogHandler()
    handler.setFormatter(
        logging.Formatter(
            "[%(levelname)s]\t%(asctime)s.%(msecs)03dZ\t%(aws_request_id)s\t%(message)s\n", "%Y-%m-%dT%H:%M:%S"
        )
    )
    handler.addFilter(_RequestIdFilter())
    root = logging.getLogger()
    level = os.environ.get("AWS_LAMBDA_LOG_LEVEL", "").upper()
    if level in logging.getLevelNamesMapping():
        root.setLevel(level)
    root.addHandler(handler)


def _error_log(error: dict[str, Any]) -> str:
    """What Lambda's runtime logs for a failed invocation or init."""
    description = "[ERROR]"
    if error.get("errorType"):
        description += " " + error["errorType"]
    if error.get("errorMessage"):
        description += (":" if error.get("errorType") else "") + " " + error["errorMessage"]
    lines = [description, "Traceback (most recent call last):"]
    for element in error.get("stackTrace") or []:
        lines.extend(element.splitlines() if element else [""])
    return "\n".join(lines) + "\n"


class _Channel:
    """The worker's file descriptors: requests in, responses out, and the log."""

    def __init__(self, log_path: str) -> None:
        self.requests = os.fdopen(os.dup(0), "rb")
        self.responses = os.fdopen(os.dup(1), "wb")
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        log = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        self._log_reader = os.open(log_path, os.O_RDONLY)
        # The runtime's own lines (START, END, REPORT, errors) do not depend on what the handler
        # did to sys.stdout or fd 1.
        self._log_writer = os.open(log_path, os.O_WRONLY | os.O_APPEND)
        # Unbuffered, as in Lambda (its runtime wraps both streams): what a handler prints is in the
        # log even if the process is killed at the timeout.
        # (typeshed: __stdout__/__stderr__ are Final; Lambda's runtime rebinds them, and so do we)
        sys.stdout = sys.__stdout__ = io.TextIOWrapper(  # type: ignore[misc]
            io.FileIO(1, "w", closefd=False), encoding="utf-8", write_through=True
        )
        sys.stderr = sys.__stderr__ = io.TextIOWrapper(  # type: ignore[misc]
            io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace", write_through=True
        )

    def log_size(self) -> int:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # a handler may have replaced or closed them
                pass
        return os.fstat(self._log_reader).st_size

    def log(self, text: str) -> None:
        data = text.encode("utf-8", "backslashreplace")
        self.log_size()  # flushes the handler's streams first, to keep the order
        while data:
            data = data[os.write(self._log_writer, data) :]

    def logs_since(self, offset: int) -> str:
        end = self.log_size()
        if end <= offset:
            return ""
        chunks = []
        while offset < end:
            chunk = os.pread(self._log_reader, end - offset, offset)
            if not chunk:
                break
            chunks.append(chunk)
            offset += len(chunk)
        return b"".join(chunks).decode("utf-8", "replace")

    def receive(self) -> dict[str, Any] | None:
        line = self.requests.readline()
        if not line:
            return None
        request: dict[str, Any] = json.loads(line)
        return request

    def send(self, message: dict[str, Any]) -> None:
        self.responses.write(json.dumps(message).encode("ascii") + b"\n")
        self.responses.flush()


def _max_memory_mb() -> int:
    try:
        import resource
    except ImportError:  # not POSIX
        return 0
    used = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(used / (1024 * 1024 if sys.platform == "darwin" else 1024))


def _set_trace_id(trace_id: str | None) -> None:
    if trace_id:
        os.environ["_X_AMZN_TRACE_ID"] = trace_id
    else:
        os.environ.pop("_X_AMZN_TRACE_ID", None)


class _Worker:
    def __init__(self, channel: _Channel, handler_name: str, spawned_at: float) -> None:
        self.channel = channel
        self.handler_name = handler_name
        self.spawned_at = spawned_at
        self.handler: Callable[[Any, LambdaContext], Any] | None = None
        self.init_error: dict[str, Any] | None = None
        self.init_ms = 0.0
        self.pending_offset: int | None = None  # the first invocation's logs start with the init's

    def init(self) -> None:
        self.pending_offset = self.channel.log_size()
        version = "{}.{}".format(*sys.version_info[:2])
        self.channel.log(f"INIT_START Runtime Version: python:{version}.local\tInterpreter: {sys.executable}\n")
        try:
            _setup_logging()
            self.handler = _load_handler(self.handler_name)
        except _Fault as fault:
            self.init_error = _make_error(fault.message, fault.error_type, fault.trace, None)
        except Exception as error:
            self.init_error = _exception_error(error, None)
        if self.init_error is not None:
            self.channel.log(_error_log(self.init_error))
        self.init_ms = (time.time() - self.spawned_at) * 1000
        self.channel.send(
            {
                "ready": True,
                "pid": os.getpid(),
                "init_ms": self.init_ms,
                "init_error": self.init_error,
            }
        )

    def invoke(self, request: dict[str, Any]) -> None:
        request_id = request["request_id"]
        fields = request.get("context") or {}
        offset = self.pending_offset if self.pending_offset is not None else self.channel.log_size()
        _RequestIdFilter.request_id = request_id
        _set_trace_id(request.get("trace_id"))
        _set_simulated_clock(fields.get("clock"), fields.get("clock_module"))
        self.channel.log(f"START RequestId: {request_id} Version: {fields.get('function_version') or '$LATEST'}\n")
        started = time.perf_counter()
        result: str | bytes | None = None
        error: dict[str, Any] | None = None
        if self.init_error is not None:
            error = dict(self.init_error, requestId=request_id)
        else:
            try:
                context = LambdaContext(request_id, request["deadline_ms"], fields)
                event = _unmarshal(request["payload"])
                handler = self.handler
                assert handler is not None  # init() loaded it, or said why not (init_error)
                result = _marshal(handler(event, context))
            except _Fault as fault:
                error = _make_error(fault.message, fault.error_type, fault.trace, request_id)
            except Exception as exception:
                error = _exception_error(exception, request_id)
        duration_ms = (time.perf_counter() - started) * 1000
        if error is not None:
            self.channel.log(_error_log(error))
        self.channel.log(f"END RequestId: {request_id}\n")
        memory = fields.get("memory_limit_in_mb") or os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE") or 128
        report = (
            f"REPORT RequestId: {request_id}\tDuration: {duration_ms:.2f} ms\t"
            f"Billed Duration: {max(1, int(-(-duration_ms // 1)))} ms\tMemory Size: {memory} MB\t"
            f"Max Memory Used: {_max_memory_mb()} MB"
        )
        if self.pending_offset is not None:
            report += f"\tInit Duration: {self.init_ms:.2f} ms"
        self.channel.log(report + "\n")
        self.pending_offset = None  # (the request id stays for later records, as in Lambda)
        response: dict[str, Any] = {"request_id": request_id, "ok": error is None, "duration_ms": duration_ms}
        if error is not None:
            response["error"] = error
        elif isinstance(result, bytes):
            import base64

            response["payload_b64"] = base64.b64encode(result).decode("ascii")
        else:
            response["payload"] = result
        response["logs"] = self.channel.logs_since(offset)
        self.channel.send(response)


def _set_simulated_clock(instant: str | None, module_name: str | None) -> None:
    """The emulator's simulated time (``clock`` in the request: the parent's ``now`` as ISO 8601)
    becomes what the application's clock module (``clock_module``: the one whose ``set_source(now)``
    the application registered, e.g. ``missed_checks.clock``) returns during this invocation,
    moving on with real elapsed time. A function that has not imported that module is untouched."""
    module = sys.modules.get(module_name) if module_name else None
    if module is None or not instant:
        return
    from datetime import datetime, timedelta

    start, origin = datetime.fromisoformat(instant), time.monotonic()
    module.set_source(lambda: start + timedelta(seconds=time.monotonic() - origin))


def main() -> int:
    search_path = [entry for entry in os.environ.pop("_WORKER_PATH", "").split(os.pathsep) if entry]
    log_path = os.environ.pop("_WORKER_LOG")
    spawned_at = float(os.environ.pop("_WORKER_SPAWNED_AT", "") or _STARTED)
    channel = _Channel(log_path)
    sys.path[:0] = search_path
    if search_path:
        import site

        # Already on sys.path (even those that do not exist): only their .pth files are processed.
        known = {site.makepath(entry)[1] for entry in sys.path}
        for entry in search_path:
            site.addsitedir(entry, known)
    worker = _Worker(channel, os.environ.get("_HANDLER", ""), spawned_at)
    worker.init()
    while True:
        request = channel.receive()
        if request is None:
            return 0
        worker.invoke(request)


if __name__ == "__main__":
    sys.exit(main())
