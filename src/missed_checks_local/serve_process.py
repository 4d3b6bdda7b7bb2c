"""``missed-checks local serve`` as a child process, for the tests and tools that drive a stack the
way a user does (a command in one terminal, other commands against its endpoint)."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

READY_LINE = "Ctrl-C stops the server."
"""What ``local serve`` prints once its stack is up and its clock runs."""


class ServeDidNotStart(RuntimeError):
    """``local serve`` exited, or did not print :data:`READY_LINE` in time; its output is in the message."""


@contextmanager
def serve_process(command: Sequence[str], output: Path, *, timeout_s: float, env: Mapping[str, str] | None = None,
                  cwd: Path | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``command`` (a ``local serve`` command line) with its output in ``output``; yield the
    process once it printed :data:`READY_LINE`; stop it with Ctrl-C (SIGINT) when the block ends,
    killing it if it has not stopped a minute later."""
    with output.open("w") as sink:
        process = subprocess.Popen(list(command), stdout=sink, stderr=subprocess.STDOUT, env=env, cwd=cwd)
    try:
        deadline = time.monotonic() + timeout_s
        while READY_LINE not in output.read_text():
            if process.poll() is not None:
                raise ServeDidNotStart(f"local serve exited ({process.returncode}):\n{output.read_text()}")
            if time.monotonic() > deadline:
                raise ServeDidNotStart(f"local serve not up in {timeout_s:g} s:\n{output.read_text()}")
            time.sleep(0.2)
        yield process
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
