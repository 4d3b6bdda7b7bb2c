"""Entry point of the ``missed-checks`` console script.

Each command group lives in its own module with a ``register(subparsers)`` function; this file
only assembles them. Exit codes: 0 done, 1 failed, 2 bad usage or invalid input, 3 output lost (the
work was done), 130 interrupted, for every command (:mod:`missed_checks_ops.cli.streams`; the
grammar every command shares: :mod:`missed_checks_ops.cli.common`).
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from missed_checks.errors import InvalidInput
from missed_checks_ops.cli.common import CliParser, root_parser, set_examples, usage_message
from missed_checks_ops.cli.streams import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OUTPUT_LOST,
    OutputLost,
    finish,
    say_error,
    standard_streams,
)

# Command-group modules, in the order ``--help`` lists them, with the commands each registers
# (tests/unit/ops/test_cli_grammar.py checks that the two agree).
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "missed_checks_ops.cli.recurrence": ("recurrence",),
    "missed_checks_ops.cli.local": ("local",),  # the emulator's commands: present only where it is installed
    "missed_checks_ops.cli.checklist": ("checklist", "equipment", "check"),
    "missed_checks_ops.cli.defect": ("defect",),  # defects (#33); equipment readiness is in the equipment group
    "missed_checks_ops.cli.calendar": ("calendar",),  # closure calendars (#23 item 2)
    "missed_checks_ops.cli.report": ("report", "missed"),
    "missed_checks_ops.cli.operate": ("rerun", "dlq"),
    "missed_checks_ops.cli.notifications": ("notifications",),  # notifications (#18)
    "missed_checks_ops.cli.digest": ("digest",),  # digest subscriptions (issue 18)
}


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser. Given the arguments, and when they start with a command, only
    that command's group is imported and built: one group instead of eight is about a fifth of a
    command's start (each ``missed-checks`` process is one command). ``--help``, ``--version``, no
    command or an unknown one get every group, as does ``build_parser()``."""
    parser = root_parser(_version)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    command = argv[0] if argv else None
    modules = [name for name, commands in COMMAND_MODULES.items() if command in commands] or list(COMMAND_MODULES)
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if name != "missed_checks_ops.cli.local" or not (error.name or "").startswith("missed_checks_local"):
                raise
            _register_missing_emulator(subparsers)
            continue
        module.register(subparsers)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # deferred: only --version needs it

    try:
        return version("missed-checks")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "(not installed)"


def _register_missing_emulator(subparsers: argparse._SubParsersAction[CliParser]) -> None:
    """``local`` without the emulator installed (an operator's install): say how to get it."""

    def missing(_args: argparse.Namespace) -> int:
        print(
            "missed-checks: error: local: the emulator (package missed_checks_local) is not installed; "
            "it comes with the development install: pip install -e '.[dev]' (or run 'make demo')",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT

    local = subparsers.add_parser("local", help="run the whole system on an embedded AWS (needs the dev install)")
    set_examples(local, "  missed-checks local demo     # once installed with pip install -e '.[dev]'")
    local.add_argument("rest", nargs=argparse.REMAINDER)
    local.set_defaults(handler=missing)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit code (:data:`missed_checks_ops.cli.streams.EXIT_CODES`). argparse's
    own exits (``--help``, ``--version``, usage errors) stay ``SystemExit``, with 3 for a help that
    could not be written. ``argv`` None: the console script, which owns the process (its standard
    descriptors, SIGTERM, and a command may end the process itself)."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    owns_process = argv is None
    with standard_streams(owns_process=owns_process), _sigterm_interrupts(owns_process):
        try:
            code = _command(arguments, owns_process)
        except SystemExit as exit_:
            given = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else EXIT_FAILED)
            final = finish(given)
            if final != given:
                raise SystemExit(final) from None
            raise
        return finish(code)


def _command(arguments: list[str], owns_process: bool) -> int:
    parser = build_parser(arguments)
    args = parser.parse_args(arguments)
    args.owns_process = owns_process  # the console script: a command may end the process itself
    try:
        return int(args.handler(args) or 0)
    except InvalidInput as error:
        say_error(usage_message(error))
        return EXIT_BAD_INPUT
    except OutputLost as lost:  # a command's --output or standard output (the work is done)
        say_error(lost.line)
        return EXIT_OUTPUT_LOST
    except KeyboardInterrupt:
        print("missed-checks: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as error:  # the system refused something the command needed (not its output)
        where = f"{error.filename}: " if error.filename else ""
        say_error(f"{where}{error.strerror or error}")
        return EXIT_FAILED


@contextmanager
def _sigterm_interrupts(owns_process: bool) -> Iterator[None]:
    """SIGTERM stops a command as Ctrl-C does (exit 130; a bulk write says what it wrote), instead
    of ending the process where it stands."""

    def interrupt(*_: object) -> None:
        raise KeyboardInterrupt

    if not owns_process or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
