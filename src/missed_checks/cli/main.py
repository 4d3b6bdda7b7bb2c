"""Entry point of the ``missed-checks`` console script.

Each command group lives in its own module with a ``register(subparsers)`` function; this file
only assembles them. Exit codes: 0 ok, 1 failure, 2 bad usage or invalid input.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from missed_checks.errors import InvalidInput

# Command-group modules, in the order ``--help`` lists them.
COMMAND_MODULES = (
    "missed_checks.cli.recurrence",
    "missed_checks.cli.local",
    "missed_checks.cli.checklist",
    "missed_checks.cli.report",
    "missed_checks.cli.operate",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="missed-checks",
        description="Record and report the checks nobody did.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except InvalidInput as error:
        print(f"missed-checks: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("missed-checks: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
