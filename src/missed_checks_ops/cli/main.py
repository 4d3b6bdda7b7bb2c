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

from missed_checks.errors import InvalidInput
from missed_checks_ops.cli.common import root_parser, set_examples, usage_message

# Command-group modules, in the order ``--help`` lists them, with the commands each registers
# (tests/unit/test_cli_grammar.py checks that the two agree).
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "missed_checks_ops.cli.recurrence": ("recurrence",),
    "missed_checks_local.cli": ("local",),  # the emulator's commands: present only where it is installed
    "missed_checks_ops.cli.checklist": ("checklist", "equipment", "check"),
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
            if not name.startswith("missed_checks_local") or not (error.name or "").startswith("missed_checks_local"):
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
    arguments = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(arguments)
    args = parser.parse_args(arguments)
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
