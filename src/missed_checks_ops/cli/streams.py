"""A ``missed-checks`` process's standard streams and its exit codes: failures of the terminal, not of
the input (issue 22).

**Exit codes**, the same for every command, ``local`` ones included (:data:`EXIT_CODES`, shown at the
end of ``missed-checks --help`` and in docs/operations.md):

- 0 done; 1 failed; 2 bad input or usage (nothing was done); 3 output lost: the work was done but
  what the command prints could not be written (standard output closed or full, a broken pipe, a
  full disk under ``--output``); 130 interrupted (Ctrl-C, SIGTERM).

**Streams.** :func:`standard_streams` puts a :class:`GuardedOutput` in front of standard output:
a write that fails (or a closed stream) never raises into the command, whose work goes on to its
end; the first failure is kept, everything after it is dropped, and the command then exits 3 with
one line on standard error (:func:`finish`). Standard error is written best effort
(:class:`BestEffortOutput`): when it cannot be written either, the exit code alone says it. A
process started with a descriptor 0-2 closed gets ``/dev/null`` on it, so that no file or socket it
opens later lands there (a Lambda worker of ``local serve`` would inherit it as its stdout);
``sys.stdin``/``sys.stdout`` stay ``None``, as Python made them, so what reads or prints there still
knows it is closed.
"""

from __future__ import annotations

import errno
import io
import os
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_OUTPUT_LOST = 3
EXIT_INTERRUPTED = 130

EXIT_CODES: tuple[tuple[int, str], ...] = (
    (EXIT_OK, "done"),
    (EXIT_FAILED, "failed: the stack said no, a record does not exist, a replay or an evaluation failed, "
                  "the local run broke"),
    (EXIT_BAD_INPUT, "bad input or usage: nothing was done; one line on stderr names the option or field "
                     "(an unreadable or closed standard input given as -, too)"),
    (EXIT_OUTPUT_LOST, "output lost: the work was done, but what the command prints could not be written "
                       "(standard output closed or full, a broken pipe, --output on a full disk)"),
    (EXIT_INTERRUPTED, "interrupted (Ctrl-C or SIGTERM; local serve, which runs until then, exits 0): a bulk "
                       "write says on stderr exactly what it wrote"),
)
"""Every exit code of every command, with what it means."""


def exit_codes_help() -> str:
    """The exit-code table of ``missed-checks --help``."""
    lines = ["exit codes (every command, local ones included):"]
    for code, meaning in EXIT_CODES:
        lines += textwrap.wrap(meaning, width=100, initial_indent=f"  {code:<4} ", subsequent_indent=" " * 7)
    return "\n".join(lines)


def _reason(error: BaseException) -> str:
    if isinstance(error, ValueError):  # "I/O operation on closed file"
        return "it is closed"
    if isinstance(error, OSError) and error.errno == errno.EBADF:
        return "it is closed"
    return (getattr(error, "strerror", None) or str(error)) or type(error).__name__


class OutputLost(Exception):
    """What a command printed could not be written: its work is done, exit 3."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"cannot write {where}: {reason}")
        self.where, self.reason = where, reason

    @property
    def line(self) -> str:
        """``output: cannot write standard output: No space left on device (...)``, the one line said."""
        return f"output: cannot write {self.where}: {self.reason} (the command's work is done: only its output is lost)"


class GuardedOutput:
    """A text stream whose writes never raise: the first that fails (or any, on a closed stream) is
    kept in :attr:`lost` and what follows is dropped, so that a command whose output cannot be written
    still finishes its work, then says so once (exit 3). Everything else is the wrapped stream's."""

    def __init__(self, stream: TextIO | None, name: str, on_lost: Callable[[], None] | None = None) -> None:
        self._stream = stream
        self.name = name
        self.lost: str | None = None
        """Why the output was lost (``No space left on device``, ``it is closed``), or None."""
        self.reported = False
        """The loss was said already (a command said it; :func:`finish` does not say it twice)."""
        self._on_lost = on_lost

    @property
    def wrapped(self) -> TextIO | None:
        return self._stream

    def _lose(self, reason: str) -> None:
        if self.lost is None:
            self.lost = reason
            if self._on_lost is not None:
                self._on_lost()

    def write(self, text: str) -> int:
        if self.lost is None:
            if self._stream is None:
                if text:
                    self._lose("it is closed")
            else:
                try:
                    return self._stream.write(text)
                except (OSError, ValueError) as error:
                    self._lose(_reason(error))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self.lost is None and self._stream is not None:
            try:
                self._stream.flush()
            except (OSError, ValueError) as error:
                self._lose(_reason(error))

    def isatty(self) -> bool:
        try:
            return self._stream is not None and self.lost is None and self._stream.isatty()
        except (OSError, ValueError):
            return False

    def fileno(self) -> int:
        if self._stream is None:
            raise io.UnsupportedOperation("standard output is closed")
        return self._stream.fileno()

    def close(self) -> None:
        if self._stream is not None:
            try:
                self._stream.close()
            except (OSError, ValueError) as error:
                self._lose(_reason(error))

    @property
    def closed(self) -> bool:
        return self._stream is None or bool(getattr(self._stream, "closed", False))

    def error(self) -> OutputLost | None:
        """The loss as an :class:`OutputLost`, or None when everything was written."""
        return None if self.lost is None else OutputLost(self.name, self.lost)

    def raise_if_lost(self) -> None:
        """:class:`OutputLost` when something written here was lost and not said yet (the caller says
        it: :func:`finish` will not again)."""
        lost = self.error()
        if lost is not None and not self.reported:
            self.reported = True
            raise lost

    def __getattr__(self, name: str) -> Any:
        if self._stream is None:
            raise AttributeError(name)
        return getattr(self._stream, name)


class BestEffortOutput:
    """Standard error, written when it can be: a closed or full stderr loses the message, never the
    exit code (there is nowhere left to say it)."""

    def __init__(self, stream: TextIO | None) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        if self._stream is not None:
            try:
                return self._stream.write(text)
            except (OSError, ValueError):
                pass
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._stream is not None:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                pass

    def isatty(self) -> bool:
        try:
            return self._stream is not None and self._stream.isatty()
        except (OSError, ValueError):
            return False

    def fileno(self) -> int:
        if self._stream is None:
            raise io.UnsupportedOperation("standard error is closed")
        return self._stream.fileno()

    def __getattr__(self, name: str) -> Any:
        if self._stream is None:
            raise AttributeError(name)
        return getattr(self._stream, name)


def reserve_standard_descriptors() -> None:
    """Open ``/dev/null`` on each of descriptors 0, 1 and 2 the process was started without, so that
    no file or socket opened later takes their place (nor a child process inherits one as its
    standard stream). ``sys.stdin``/``sys.stdout``/``sys.stderr`` are left as Python made them (None)."""
    for descriptor in (0, 1, 2):
        try:
            os.fstat(descriptor)
        except OSError:
            try:
                opened = os.open(os.devnull, os.O_RDWR)
            except OSError:
                return
            if opened != descriptor:
                os.dup2(opened, descriptor)
                os.close(opened)


def _drop_pending_output() -> None:
    """Point the process's standard output at /dev/null, so that what could not be written is not
    tried again (and reported as ``Exception ignored``) when the interpreter exits."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
    except OSError:
        pass


def guarded_stdout() -> GuardedOutput | None:
    """The process's guarded standard output, while :func:`standard_streams` is in force."""
    return sys.stdout if isinstance(sys.stdout, GuardedOutput) else None


@contextmanager
def standard_streams(*, owns_process: bool) -> Iterator[GuardedOutput]:
    """Standard output guarded (:class:`GuardedOutput`) and standard error best effort for the
    block; ``owns_process`` (the console script): descriptors 0-2 reserved first, and a loss on the
    real standard output drops what is still buffered for it."""
    if owns_process:
        reserve_standard_descriptors()
    saved = sys.stdout, sys.stderr
    current = guarded_stdout()
    if current is not None:  # nested (a command calling main): one guard
        yield current
        return
    real = sys.stdout is not None and sys.stdout is sys.__stdout__
    stdout = GuardedOutput(sys.stdout, "standard output", _drop_pending_output if owns_process and real else None)
    sys.stdout = stdout
    if not isinstance(sys.stderr, BestEffortOutput):
        sys.stderr = BestEffortOutput(sys.stderr)
    try:
        yield stdout
    finally:
        sys.stdout, sys.stderr = saved


def say_error(line: str) -> None:
    """``missed-checks: error: <line>`` on standard error, best effort."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(f"missed-checks: error: {line}\n")
        stream.flush()
    except (OSError, ValueError):
        pass


def finish(code: int) -> int:
    """The process's exit code once the command ended with ``code``: standard output flushed; when
    what it printed was lost and not said yet, one line says so, and a command that was done exits 3
    (a failure, bad input or an interruption keeps its own code)."""
    stdout = guarded_stdout()
    if stdout is None:
        return code
    stdout.flush()
    lost = stdout.error()
    if lost is None or stdout.reported:
        return EXIT_OUTPUT_LOST if lost is not None and code == EXIT_OK else code
    stdout.reported = True
    say_error(lost.line)
    return EXIT_OUTPUT_LOST if code == EXIT_OK else code
