"""Lambda functions run as Lambda runs them: one warm Python 3.13 process per function.

A :class:`FunctionWorker` runs :mod:`missed_checks_local.awslambda.worker_bootstrap` (stdlib only) as
``PYTHON -I -S -X pycache_prefix=... -X utf8 worker_bootstrap.py`` in the function's code directory (``sam build``'s
output, Lambda's ``/var/task``). The worker's import path is the code directory, the layers'
``python/lib/python3.13/site-packages`` and ``python`` directories (Lambda's ``/opt``), the directory
of packages the Lambda runtime provides (boto3, botocore: ``/var/runtime``) and the interpreter's
standard library: nothing from the developer's virtualenv, so a module missing from the build fails
here as it fails in AWS (``Runtime.ImportModuleError``).

The process is started on the first invocation (the cold start: ``WorkerResult.init_ms``) and kept
for the next ones; one invocation at a time per worker, as one Lambda execution environment serves
one request at a time. A worker that does not answer within ``timeout_s`` is killed
(``Sandbox.Timedout``) and started again on the next invocation; one that dies is reported with
``Runtime.ExitError`` and started again too. One whose resident memory passes the function's
``MemorySize`` is killed as Lambda's sandbox kills it (``Runtime.OutOfMemory``, "Runtime exited with
error: signal: killed"): its RSS is read every :data:`MEMORY_POLL_S` while it runs, so an allocation
made and freed between two readings passes unseen (Linux only: ``/proc``). What the handler prints
or logs goes to the worker's log file (the whole history, with Lambda's ``START``/``END``/``REPORT``
lines) and comes back with each result (:attr:`WorkerResult.logs`).

:class:`~missed_checks_local.awslambda.runtime.LambdaRuntime` keeps the workers of each function.
POSIX only (process groups, ``poll``).
"""

from __future__ import annotations

import base64
import json
import math
import os
import select
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
import uuid
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "BOOTSTRAP",
    "PYTHON_VERSION",
    "FunctionWorker",
    "InterpreterError",
    "WorkerError",
    "WorkerResult",
    "check_interpreter",
    "kill_every_worker",
]

BOOTSTRAP = Path(__file__).with_name("worker_bootstrap.py")
PYTHON_VERSION = (3, 13)
"""The version of the ``python3.13`` Lambda runtime the template declares."""
INIT_TIMEOUT_S = 10.0
"""Lambda's limit for the init phase (the handler's import) of an on-demand function."""
MAX_RESPONSE_BYTES = 6 * 1024 * 1024 + 100
"""Lambda's limit for a synchronous invocation's response (the 6291556 bytes of its message)."""

MEMORY_POLL_S = 0.02
"""How often a running worker's resident memory is compared with its memory size."""

_BASE_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
_READ_CHUNK = 1 << 20
_CLOSE_GRACE_S = 1.0

_running: set[subprocess.Popen[bytes]] = set()
"""Every worker process this process started and has not stopped yet (for :func:`kill_every_worker`)."""


def kill_every_worker() -> None:
    """SIGKILL the process group of every worker still running, at once: no lock taken, nothing
    waited for (an emergency stop of the whole process, which ends right after; each worker runs in
    a session of its own, so it would outlive it)."""
    for process in list(_running):
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass


class WorkerError(RuntimeError):
    """The worker could not be started or broke the protocol (a problem of the emulator or of
    its configuration, never of the function's code: those are :class:`WorkerResult` errors)."""


class InterpreterError(WorkerError):
    """The interpreter to run the functions with is missing or is not Python 3.13."""


@dataclass(frozen=True)
class WorkerResult:
    """The outcome of one invocation, as Lambda would give it."""

    request_id: str
    payload: bytes | None
    """The handler's result as Lambda returns it (JSON text, or the bytes it returned); ``None`` on error."""
    error: dict[str, Any] | None
    """Lambda's error payload (``errorMessage``, ``errorType``, ``requestId``, ``stackTrace``)."""
    logs: str
    """What the invocation wrote to the log, ``START`` to ``REPORT`` (after a cold start, the init's too)."""
    duration_ms: float
    init_ms: float | None = None
    """Process start and handler import, when this invocation started the worker; ``None`` when warm."""

    @property
    def ok(self) -> bool:
        return self.error is None


class _OutOfMemory(Exception):
    def __init__(self, used_mb: int) -> None:
        super().__init__(used_mb)
        self.used_mb = used_mb


def _resident_mb(pid: int) -> int | None:
    """The process's resident set in MB (``VmRSS``), ``None`` when it cannot be read."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


class _Timeout(Exception):
    pass


def bytecode_options() -> list[str]:
    """How a worker keeps the bytecode it compiles: ``-X pycache_prefix=DIR``, a private directory
    (mode 0700) of this user under the temporary directory, so the build stays as ``sam build`` made
    it (no ``__pycache__`` written into it, as Lambda's read-only ``/var/task`` gets none) while the
    next cold start reads the layer's and the runtime's modules compiled (boto3, botocore and
    Powertools: about half of a cold start's CPU when compiled again each time). Python checks each
    cached file against its source's size and mtime, so a rebuild is compiled afresh. ``-B`` (write
    none) when that directory cannot be made private to this user."""
    directory = Path(tempfile.gettempdir()) / f"missed-checks-pycache-{os.getuid()}"
    try:
        directory.mkdir(mode=0o700, exist_ok=True)
        status = directory.lstat()
    except OSError:
        return ["-B"]
    if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.getuid() or status.st_mode & 0o077:
        return ["-B"]
    return ["-X", f"pycache_prefix={directory}"]


_interpreters: dict[tuple[str, tuple[int, int]], str] = {}
_interpreters_lock = threading.Lock()


def check_interpreter(python: str, version: tuple[int, int] = PYTHON_VERSION) -> str:
    """The path of ``python`` if it runs Python ``version``; :class:`InterpreterError` otherwise.

    A name without a directory is looked up on ``PATH``. The answer is cached per interpreter.
    """
    key = (python, version)
    with _interpreters_lock:
        if key in _interpreters:
            return _interpreters[key]
    wanted = "{}.{}".format(*version)

    def fail(problem: str) -> InterpreterError:
        return InterpreterError(
            f"cannot run the Lambda functions locally: Python interpreter {python!r} {problem}. They run on "
            f"Python {wanted}, as the python{wanted} Lambda runtime does; `make build` sets it up."
        )

    path = python if os.sep in python else shutil.which(python)
    if not path or not Path(path).is_file():
        raise fail("does not exist")
    try:
        probe = subprocess.run(
            [path, "-I", "-S", "-c", "import sys; print('%d.%d' % sys.version_info[:2], sys.executable)"],
            capture_output=True,
            text=True,
            timeout=30,
            env={"PATH": os.pathsep.join(_BASE_PATH)},  # enough for a pyenv shim
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as error:
        raise fail(f"cannot be run ({error})") from error
    found, _, executable = probe.stdout.strip().partition(" ")
    if probe.returncode != 0 or not found:
        raise fail(f"does not start (exit status {probe.returncode}: {probe.stderr.strip()[-300:]})")
    if found != wanted:
        raise fail(f"is Python {found}, not {wanted}")
    path = executable or path  # the interpreter itself, not a shim in front of it
    with _interpreters_lock:
        _interpreters[key] = path
    return path


def _terminate(process: subprocess.Popen[bytes], grace_s: float = 0.0) -> int:
    """Stop the worker (and what it started: its process group); its exit status."""
    _running.discard(process)
    if grace_s > 0 and process.poll() is None:
        try:
            if process.stdin is not None:
                process.stdin.close()  # end of requests: the worker exits by itself
            process.wait(grace_s)
        except (OSError, subprocess.TimeoutExpired):
            pass
    if process.poll() is None:  # not reaped: its group id is still its own
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            process.kill()
    returncode = process.wait()
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            try:
                stream.close()
            except OSError:
                pass
    return returncode


def _exit_reason(returncode: int) -> str:
    """Lambda's wording for a runtime that exited (``exit status 1``, ``signal: killed``)."""
    if returncode == 0:
        return "Runtime exited without providing a reason"
    if returncode > 0:
        return f"Runtime exited with error: exit status {returncode}"
    try:
        name = (signal.strsignal(-returncode) or signal.Signals(-returncode).name).lower()
    except ValueError:
        name = str(-returncode)
    return f"Runtime exited with error: signal: {name}"


def _iso_now() -> str:
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"


class FunctionWorker:
    """One Lambda function's execution environment: a warm worker process, one invocation at a time.

    ``python`` is the Python 3.13 interpreter; ``code_dir`` the function's built code
    (``.aws-sam/build/<Function>``); ``layer_dirs`` its layers, in the template's order (each holds
    ``python/``); ``runtime_dir`` the packages the Lambda runtime provides; ``handler`` as in the
    template (``app.handler``); ``environment`` every variable the function gets (its own,
    ``AWS_REGION``, credentials, ``AWS_ENDPOINT_URL``...): the process gets those and the few a
    Lambda environment has besides (:meth:`process_environment`), nothing from this process.
    ``log_path`` is the worker's log file (appended to; one per worker).
    """

    def __init__(
        self,
        *,
        python: str,
        code_dir: Path,
        layer_dirs: Sequence[Path] = (),
        runtime_dir: Path,
        handler: str,
        environment: Mapping[str, str],
        timeout_s: float,
        log_path: Path,
        init_timeout_s: float = INIT_TIMEOUT_S,
        python_version: tuple[int, int] = PYTHON_VERSION,
        memory_mb: int | None = None,
    ) -> None:
        self.python = str(python)
        self.code_dir = Path(code_dir).absolute()
        self.layer_dirs = tuple(Path(layer).absolute() for layer in layer_dirs)
        self.runtime_dir = Path(runtime_dir).absolute()
        self.handler = handler
        self.environment = {str(key): str(value) for key, value in environment.items()}
        self.timeout_s = float(timeout_s)
        self.log_path = Path(log_path).absolute()
        self.init_timeout_s = float(init_timeout_s)
        self.python_version = python_version
        memory = memory_mb if memory_mb is not None else self.environment.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE")
        self.memory_mb = int(memory) if memory is not None else None
        """The function's MemorySize: past it the worker is killed (``None``: no limit)."""
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize[[subprocess.Popen[bytes]], FunctionWorker] | None = None
        self._poller: Any = None
        self._buffer = bytearray()
        self._log_offset = 0
        self._fresh = False  # started, no invocation yet: its logs begin with the init's

    # -- what the process gets -------------------------------------------------------------
    @property
    def search_path(self) -> list[str]:
        """The directories put before the standard library on the worker's ``sys.path``.

        Lambda extracts the layers into ``/opt`` in order, a later layer's files replacing an
        earlier one's: so the last layer's directories come first here.
        """
        tag = "python{}.{}".format(*self.python_version)
        layers = list(reversed(self.layer_dirs))
        return [
            str(self.code_dir),
            *(str(layer / "python" / "lib" / tag / "site-packages") for layer in layers),
            *(str(layer / "python") for layer in layers),
            str(self.runtime_dir),
        ]

    def process_environment(self) -> dict[str, str]:
        """The worker's environment: :attr:`environment` over what Lambda's has besides (``PATH``,
        ``LANG``, ``TZ``, ``LD_LIBRARY_PATH``, ``LAMBDA_TASK_ROOT``, ``LAMBDA_RUNTIME_DIR``,
        ``PYTHONPATH``, ``_HANDLER``). ``HOME`` is not set (Lambda sets none) and botocore's config
        and credentials files point to ``os.devnull`` unless given: the developer's ``~/.aws`` must
        not change what the function does."""
        layers = list(reversed(self.layer_dirs))
        code, runtime = str(self.code_dir), str(self.runtime_dir)
        base = {
            "PATH": os.pathsep.join(
                [str(Path(self.python).parent), *_BASE_PATH, *(str(layer / "bin") for layer in layers)]
            ),
            "LANG": "en_US.UTF-8",
            "TZ": ":UTC",
            "LD_LIBRARY_PATH": os.pathsep.join(
                [runtime, f"{runtime}/lib", code, f"{code}/lib", *(str(layer / "lib") for layer in layers)]
            ),
            "LAMBDA_TASK_ROOT": code,
            "LAMBDA_RUNTIME_DIR": runtime,
            "PYTHONPATH": runtime,
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        }
        return {**base, **self.environment, "_HANDLER": self.handler}

    # -- state -----------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        process = self._process
        return process is not None and process.poll() is None

    @property
    def pid(self) -> int | None:
        process = self._process
        return process.pid if process is not None else None

    def __enter__(self) -> FunctionWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"FunctionWorker({self.handler!r} in {str(self.code_dir)!r}, pid {self.pid})"

    def start(self) -> float | None:
        """Start the worker now (its cold start) unless it runs: the init's duration in ms, or
        ``None`` if it was running. :class:`WorkerError` if the handler's init failed so badly that
        the process exited or timed out (an import error is not one: every invocation reports it)."""
        with self._lock:
            if self.running:
                return None
            init_ms, failure = self._start(str(uuid.uuid4()), None)
            if failure is not None:
                raise WorkerError(f"worker for {self.handler!r} did not start: {failure.error}")
            return init_ms

    def close(self) -> None:
        """Stop the worker process (the next invocation starts a new one). An invocation in
        progress ends with ``Runtime.ExitError``."""
        if self._lock.acquire(blocking=False):
            try:
                self._stop(grace_s=_CLOSE_GRACE_S)
            finally:
                self._lock.release()
        else:  # an invocation holds the worker: kill it, the invocation reports the exit
            process = self._process
            if process is not None and process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass

    # -- invocation ------------------------------------------------------------------------
    def invoke(
        self,
        event: Any,
        *,
        request_id: str | None = None,
        context_fields: Mapping[str, Any] | None = None,
        trace_id: str | None = None,
    ) -> WorkerResult:
        """Run the handler with ``event``: any JSON value, or ``bytes`` taken as the JSON text itself
        (the Invoke API's ``Payload``; not JSON: ``Runtime.UnmarshalError``). ``context_fields`` are the ``context``
        attributes: ``function_name``, ``function_version``, ``invoked_function_arn``,
        ``memory_limit_in_mb``, ``log_group_name``, ``log_stream_name`` (missing ones come from the
        ``AWS_LAMBDA_*`` variables, as in Lambda). ``trace_id`` becomes ``_X_AMZN_TRACE_ID``."""
        request_id = request_id or str(uuid.uuid4())
        if isinstance(event, bytes | bytearray):
            payload = bytes(event).decode("utf-8")
        else:
            payload = json.dumps(event)
        fields = dict(context_fields or {})
        with self._lock:
            init_ms = None
            if not self.running:
                init_ms, failure = self._start(request_id, fields)
                if failure is not None:
                    return failure
            return self._invoke(request_id, payload, fields, trace_id, init_ms)

    def _invoke(
        self, request_id: str, payload: str, fields: dict[str, Any], trace_id: str | None, init_ms: float | None
    ) -> WorkerResult:
        offset = self._log_offset if self._fresh else self._log_size()
        self._fresh = False
        started = time.monotonic()
        deadline = started + self.timeout_s
        request = {
            "request_id": request_id,
            "payload": payload,
            "deadline_ms": int((time.time() + self.timeout_s) * 1000),
            "context": fields,
            "trace_id": trace_id,
        }
        try:
            self._send(request)
            message = self._receive(deadline)
        except _Timeout:
            return self._timed_out(request_id, offset, started, self.timeout_s, fields, init_ms)
        except _OutOfMemory as out:
            return self._out_of_memory(request_id, offset, started, out.used_mb, fields, init_ms)
        except OSError:  # the request could not be written: the worker is gone
            message = None
        except BaseException:  # interrupted (KeyboardInterrupt...): the worker's state is unknown
            self._stop()
            raise
        if message is None:
            return self._exited(request_id, offset, started, deadline, fields, init_ms)
        if message.get("request_id") != request_id:
            self._stop()
            raise WorkerError(f"worker for {self.handler!r} answered {message!r} to request {request_id}")
        duration_ms = float(message.get("duration_ms") or (time.monotonic() - started) * 1000)
        logs = message.get("logs", "")
        if not message.get("ok"):
            return WorkerResult(request_id, None, message.get("error") or {}, logs, duration_ms, init_ms)
        if "payload_b64" in message:
            result = base64.b64decode(message["payload_b64"])
        else:
            result = str(message.get("payload", "null")).encode("utf-8", "surrogatepass")
        if len(result) > MAX_RESPONSE_BYTES:
            error = {
                "errorMessage": f"Response payload size exceeded maximum allowed payload size ({MAX_RESPONSE_BYTES} "
                "bytes).",
                "errorType": "Function.ResponseSizeTooLarge",
            }
            return WorkerResult(request_id, None, error, logs, duration_ms, init_ms)
        return WorkerResult(request_id, result, None, logs, duration_ms, init_ms)

    def _start(self, request_id: str, fields: Mapping[str, Any] | None) -> tuple[float | None, WorkerResult | None]:
        """Start the process and wait for its init; ``(init_ms, None)``, or ``(None, failure)``."""
        self._stop()
        python = check_interpreter(self.python, self.python_version)
        if not self.code_dir.is_dir():
            raise WorkerError(f"the code of {self.handler!r} is not built: no directory {self.code_dir}")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        environment = {
            **self.process_environment(),
            "_WORKER_PATH": os.pathsep.join(self.search_path),
            "_WORKER_LOG": str(self.log_path),
            "_WORKER_SPAWNED_AT": repr(time.time()),
        }
        started = time.monotonic()
        with self.log_path.open("ab") as log:
            offset = os.fstat(log.fileno()).st_size
            try:
                process = subprocess.Popen(
                    [python, "-I", "-S", *bytecode_options(), "-X", "utf8", str(BOOTSTRAP)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=log,  # until the worker points fd 2 at the log itself
                    cwd=self.code_dir,
                    env=environment,
                    bufsize=0,
                    close_fds=True,
                    start_new_session=True,  # out of the terminal's Ctrl-C, killed as a group
                )
            except OSError as error:
                raise WorkerError(f"cannot start the worker for {self.handler!r}: {error}") from error
        self._process = process
        _running.add(process)
        self._finalizer = weakref.finalize(self, _terminate, process)
        self._buffer = bytearray()
        self._poller = select.poll()
        assert process.stdout is not None  # started with stdout=PIPE
        self._poller.register(process.stdout.fileno(), select.POLLIN | select.POLLHUP | select.POLLERR)
        self._log_offset = offset
        self._fresh = True
        budget = max(self.init_timeout_s, self.timeout_s)  # Lambda retries a slow init within the timeout
        try:
            message = self._receive(started + budget)
        except _Timeout:
            return None, self._timed_out(request_id, offset, started, budget, fields or {}, None)
        except _OutOfMemory as out:
            return None, self._out_of_memory(request_id, offset, started, out.used_mb, fields or {}, None)
        if message is None:
            return None, self._exited(request_id, offset, started, started + budget, fields or {}, None)
        if not message.get("ready"):
            self._stop()
            raise WorkerError(f"worker for {self.handler!r} did not start: it said {message!r}")
        return (time.monotonic() - started) * 1000, None

    def _stop(self, grace_s: float = 0.0) -> int | None:
        process, self._process = self._process, None
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        self._poller = None
        self._buffer = bytearray()
        self._fresh = False
        return _terminate(process, grace_s) if process is not None else None

    # -- protocol --------------------------------------------------------------------------
    def _send(self, message: dict[str, Any]) -> None:
        assert self._process is not None and self._process.stdin is not None
        data = memoryview(json.dumps(message).encode("ascii") + b"\n")
        fd = self._process.stdin.fileno()
        while data:
            data = data[os.write(fd, data) :]

    def _receive(self, deadline: float) -> dict[str, Any] | None:
        """The worker's next message, ``None`` at end of file; :class:`_Timeout` at ``deadline``,
        :class:`_OutOfMemory` when its resident memory passes :attr:`memory_mb`."""
        assert self._process is not None and self._process.stdout is not None
        fd = self._process.stdout.fileno()
        pid = self._process.pid
        searched = 0
        while (newline := self._buffer.find(b"\n", searched)) < 0:
            searched = len(self._buffer)
            remaining = deadline - time.monotonic()
            if self.memory_mb is not None:
                used = _resident_mb(pid)
                if used is not None and used > self.memory_mb:
                    raise _OutOfMemory(used)
                remaining = min(remaining, MEMORY_POLL_S)
            if remaining <= 0 or not self._poller.poll(math.ceil(remaining * 1000)):
                if time.monotonic() >= deadline:
                    raise _Timeout
                continue
            chunk = os.read(fd, _READ_CHUNK)
            if not chunk:
                return None
            self._buffer += chunk
        line = bytes(self._buffer[:newline])
        del self._buffer[: newline + 1]
        try:
            message: dict[str, Any] = json.loads(line)
        except ValueError as error:
            self._stop()
            raise WorkerError(f"worker for {self.handler!r} broke the protocol: {line[:200]!r}") from error
        return message

    # -- failures --------------------------------------------------------------------------
    def _timed_out(
        self,
        request_id: str,
        offset: int,
        started: float,
        timeout_s: float,
        fields: Mapping[str, Any],
        init_ms: float | None,
    ) -> WorkerResult:
        self._stop()
        duration_ms = (time.monotonic() - started) * 1000
        message = f"{_iso_now()} {request_id} Task timed out after {timeout_s:.2f} seconds"
        tail = f"{message}\n{self._end_lines(request_id, duration_ms, fields, 'Status: timeout')}"
        error = {"errorMessage": message, "errorType": "Sandbox.Timedout"}
        return WorkerResult(request_id, None, error, self._log_tail(offset, tail), duration_ms, init_ms)

    def _out_of_memory(
        self,
        request_id: str,
        offset: int,
        started: float,
        used_mb: int,
        fields: Mapping[str, Any],
        init_ms: float | None,
    ) -> WorkerResult:
        """Killed past its memory size, as Lambda's sandbox is: ``Runtime.OutOfMemory``, the
        runtime's exit (signal: killed) and ``Max Memory Used`` in the REPORT line."""
        self._stop()
        duration_ms = (time.monotonic() - started) * 1000
        message = f"RequestId: {request_id} Error: {_exit_reason(-signal.SIGKILL)}"
        status = f"Max Memory Used: {used_mb} MB\tStatus: error\tError Type: Runtime.OutOfMemory"
        tail = f"{message}\nRuntime.OutOfMemory\n{self._end_lines(request_id, duration_ms, fields, status)}"
        error = {"errorMessage": message, "errorType": "Runtime.OutOfMemory"}
        return WorkerResult(request_id, None, error, self._log_tail(offset, tail), duration_ms, init_ms)

    def _exited(
        self,
        request_id: str,
        offset: int,
        started: float,
        deadline: float,
        fields: Mapping[str, Any],
        init_ms: float | None,
    ) -> WorkerResult:
        process = self._process
        if process is not None:
            try:  # end of file: the process is exiting (or closed the protocol's descriptors)
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        returncode = self._stop()
        duration_ms = (time.monotonic() - started) * 1000
        message = f"RequestId: {request_id} Error: {_exit_reason(returncode if returncode is not None else -9)}"
        status = "Status: error\tError Type: Runtime.ExitError"
        tail = f"{message}\nRuntime.ExitError\n{self._end_lines(request_id, duration_ms, fields, status)}"
        error = {"errorMessage": message, "errorType": "Runtime.ExitError"}
        return WorkerResult(request_id, None, error, self._log_tail(offset, tail), duration_ms, init_ms)

    def _end_lines(self, request_id: str, duration_ms: float, fields: Mapping[str, Any], status: str) -> str:
        memory = fields.get("memory_limit_in_mb") or self.environment.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE") or 128
        return (
            f"END RequestId: {request_id}\nREPORT RequestId: {request_id}\tDuration: {duration_ms:.2f} ms\t"
            f"Billed Duration: {math.ceil(duration_ms)} ms\tMemory Size: {memory} MB\t{status}\n"
        )

    def _log_size(self) -> int:
        try:
            return self.log_path.stat().st_size
        except FileNotFoundError:
            return 0

    def _log_tail(self, offset: int, tail: str) -> str:
        """The invocation's logs from ``offset``, with ``tail`` (the platform's lines) appended to
        the file as well."""
        try:
            with self.log_path.open("rb") as log:
                log.seek(offset)
                written = log.read().decode("utf-8", "replace")
        except FileNotFoundError:
            written = ""
        if written and not written.endswith("\n"):
            tail = "\n" + tail
        with self.log_path.open("a", encoding="utf-8") as log:
            log.write(tail)
        return written + tail
