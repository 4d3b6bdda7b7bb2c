"""Entry point of the ``missed-checks`` console script.

Each command group lives in its own module with a ``register(subparsers)`` function; this file
only assembles them. Exit codes: 0 ok, 1 failure, 2 bad usage or invalid input (the grammar
every command shares: :mod:`missed_checks_ops.cli.common`).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from missed_checks.errors import InvalidInput
from missed_checks_ops.cli.common import root_parser, set_examples, usage_message

# Command-group modules, in the order ``--help`` lists them.
COMMAND_MODULES = (
    "missed_checks_ops.cli.recurrence",
    "missed_checks_local.cli",  # the emulator's commands: present only where it is installed
    "missed_checks_ops.cli.checklist",
    "missed_checks_ops.cli.calendar",  # closure calendars (#23 item 2)
    "missed_checks_ops.cli.report",
    "missed_checks_ops.cli.operate",
)


def build_parser() -> argparse.ArgumentParser:
    parser = root_parser(_version())
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if not name.startswith("missed_checks_local") or not (error.name or "").startswith("missed_checks_local"):
                raise
            _register_missing_emulator(subparsers)
            continue
        module.register(subparsers)
    return parser


def _version() -> str:
    try:
        return version("missed-checks")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "(not installed)"


def _register_missing_emulator(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``local`` without the emulator installed (an operator's install): say how to get it."""

    def missing(_args: argparse.Namespace) -> int:
        print(
            "missed-checks: error: local: the emulator (package missed_checks_local) is not installed; "
            "it comes with the development install: pip install -e '.[dev]' (or run 'make demo')",
            file=sys.stderr,
        )
        return 2

    local = subparsers.add_parser("local", help="run the whole system on an embedded AWS (needs the dev install)")
    set_examples(local, "  missed-checks local demo     # once installed with pip install -e '.[dev]'")
    local.add_argument("rest", nargs=argparse.REMAINDER)
    local.set_defaults(handler=missing)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.owns_process = argv is None  # the console script: a command may end the process itself
    try:
        code = int(args.handler(args) or 0)
        sys.stdout.flush()  # a full disk or a closed pipe shows here, not as a traceback at exit
        return code
    except InvalidInput as error:
        print(f"missed-checks: error: {usage_message(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("missed-checks: interrupted", file=sys.stderr)
        return 130
    except OSError as error:  # what a command wrote could not be written (or read) by the system
        _drop_pending_output()
        where = error.filename or "standard output"
        print(f"missed-checks: error: {where}: {error.strerror or error}", file=sys.stderr)
        return 1


def _drop_pending_output() -> None:
    """Point the process's standard output at /dev/null, so that what could not be written is not
    tried again (and reported as a traceback) when the interpreter exits."""
    if sys.stdout is not sys.__stdout__ or sys.stdout is None:
        return  # redirected by the caller (tests): theirs to handle
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
