"""SIGINT and SIGTERM stop a ``local`` command within :data:`STOP_BOUND_S`, however busy it is.

A stop signal raises ``KeyboardInterrupt`` in the main thread wherever it stands (waiting for an
execution, or for a function worker's answer: the notifier sending a big fleet's alerts, a
schedule-sync batch), so that the runtime is closed on the way out as usual (workers stopped,
temporary folders removed). That is the way out, but not the promise: when the process owns itself
(the console script), the first signal also kills every function worker at once (nothing they do
outlives the stop, and nothing waits for them) and arms a watchdog. If the process has not ended
:data:`GRACEFUL_S` later (a teardown slowed down by a busy machine, a thread or a lock it waits
for), the watchdog removes the runtime's temporary folders and ends the process with the command's
exit code; the kernel's teardown of a big process (a second, on a busy machine) fits in what is left
of :data:`STOP_BOUND_S`. Signals after the first one change nothing: the stop is under way.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

STOP_BOUND_S = 5.0
"""From a stop signal to the end of the process, at most (the product's promise, tested against
a busy ``local serve`` and ``local run`` in tests/e2e/test_local_exits.py)."""
GRACEFUL_S = 2.5
"""How long the orderly stop may take before the watchdog ends the process itself."""

__all__ = ["GRACEFUL_S", "STOP_BOUND_S", "emergency_exit", "say_once", "stop_signals"]

_said = threading.Lock()


def say_once(line: str) -> None:
    """``line`` on stderr, by whichever comes first of the orderly stop and the watchdog."""
    if _said.acquire(blocking=False):
        try:
            os.write(2, (line + "\n").encode())
        except OSError:
            pass


def emergency_exit(code: int, line: str | None = None) -> None:
    """End the process now: every function worker killed, the runtime's temporary folders removed,
    ``line`` on stderr, exit ``code`` (no interpreter teardown)."""
    from missed_checks_local.awslambda.runtime import remove_scratch_directories
    from missed_checks_local.awslambda.workers import kill_every_worker

    try:
        kill_every_worker()
        remove_scratch_directories()
        if line:
            say_once(line)
    finally:
        os._exit(code)


def _quiet_moto() -> None:
    """moto's interpreter logs every execution that the stop breaks (a worker killed under a task)
    with its whole state: nothing a user asked for, in the last seconds of the process."""
    logger = logging.getLogger("moto")
    logger.handlers = [logging.NullHandler()]
    logger.propagate = False


@contextmanager
def stop_signals(*, owns_process: bool, code: int, on_stop: Callable[[], None] | None = None,
                 line: str | None = None) -> Iterator[None]:
    """For the block: SIGINT and SIGTERM call ``on_stop`` and raise ``KeyboardInterrupt`` (the
    first one; later ones are ignored); with ``owns_process``, the first also arms the watchdog,
    which ends the process with ``code`` (saying ``line``) when it is still running
    :data:`GRACEFUL_S` later. Outside the main thread (an embedding caller) signals stay its own."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    stopping = threading.Event()

    def watchdog() -> None:
        threading.Event().wait(GRACEFUL_S)
        emergency_exit(code, line)

    def stop(_number: int, _frame: Any) -> None:
        if stopping.is_set():
            return  # the stop is under way (and bounded): a second Ctrl-C changes nothing
        stopping.set()
        if owns_process:
            from missed_checks_local.awslambda.workers import kill_every_worker

            kill_every_worker()
            _quiet_moto()
            threading.Thread(target=watchdog, name="stop-watchdog", daemon=True).start()
        if on_stop is not None:
            on_stop()
        raise KeyboardInterrupt

    previous: dict[int, Any] = {}
    try:
        for number in (signal.SIGINT, signal.SIGTERM):
            previous[number] = signal.signal(number, stop)
    except ValueError:  # not the main thread after all: its signals are its own
        pass
    try:
        yield
    finally:
        for restored, handler in previous.items():
            signal.signal(restored, handler)
