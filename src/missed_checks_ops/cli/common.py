"""What every operations command shares: target options, errors and exit codes, output, progress.

Exit codes: 0 ok, 1 failure (the stack said no, a record is missing, a replay failed), 2 bad
usage or invalid input. ``--json`` prints one JSON document on stdout. Colours and progress bars
appear only when the stream is a terminal.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, time
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from botocore.exceptions import BotoCoreError, ClientError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from missed_checks import clock
from missed_checks.errors import InvalidInput, MissedChecksError
from missed_checks.timefmt import parse_instant
from missed_checks_ops.target import StackTarget, TargetError, resolve_target

Handler = Callable[[argparse.Namespace], int | None]

TARGET_HELP = """target (every command):
  --stack NAME [--region R]   a stack deployed with `sam deploy` (its Outputs name the resources)
  --endpoint URL              `missed-checks local serve` (or set AWS_ENDPOINT_URL)
"""


def target_parent() -> argparse.ArgumentParser:
    """Options every command takes: where the stack is, and --json."""
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("target")
    group.add_argument("--stack", metavar="NAME",
                       help="CloudFormation stack deployed with SAM (default: $MISSED_CHECKS_STACK, or the "
                            "local runtime's stack when --endpoint is given)")
    group.add_argument("--region", metavar="REGION", help="AWS region (default: AWS_REGION / your profile)")
    group.add_argument("--endpoint", metavar="URL",
                       help="send every call to this endpoint, e.g. `missed-checks local serve` "
                            "(default: $AWS_ENDPOINT_URL)")
    group.add_argument("--table", metavar="NAME", help="override the stack's TableName output")
    group.add_argument("--state-machine-arn", metavar="ARN", help="override the stack's StateMachineArn output")
    group.add_argument("--schedule-group", metavar="NAME", help="override the stack's ScheduleGroupName output")
    group.add_argument("--sync-dlq-url", metavar="URL", help="override ScheduleSyncDeadLetterQueueUrl")
    group.add_argument("--scheduler-dlq-url", metavar="URL", help="override SchedulerDeadLetterQueueUrl")
    group.add_argument("--evaluation-dlq-url", metavar="URL", help="override EvaluationDeadLetterQueueUrl")
    parent.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout")
    return parent


def add_command(subparsers: Any, name: str, *, help: str, description: str, examples: str,  # noqa: A002
                handler: Handler) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        name, help=help, description=description, parents=[target_parent()],
        epilog="examples:\n" + examples.rstrip() + "\n\n" + TARGET_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.set_defaults(handler=guarded(handler))
    return parser


def add_group(subparsers: Any, name: str, *, help: str, description: str) -> Any:  # noqa: A002
    parser = subparsers.add_parser(name, help=help, description=description,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    return parser.add_subparsers(dest=f"{name}_command", metavar="COMMAND", required=True)


def target_of(args: argparse.Namespace) -> StackTarget:
    overrides = {name: getattr(args, name, None) for name in (
        "table", "state_machine_arn", "schedule_group", "sync_dlq_url", "scheduler_dlq_url", "evaluation_dlq_url")}
    return resolve_target(args.stack, args.region, args.endpoint, overrides)


def guarded(handler: Handler) -> Callable[[argparse.Namespace], int]:
    """Turn the errors a command can meet into a message on stderr and the documented exit code."""

    @functools.wraps(handler)
    def run(args: argparse.Namespace) -> int:
        try:
            return int(handler(args) or 0)
        except TargetError as error:
            return fail(str(error), 2 if error.usage else 1)
        except InvalidInput as error:
            return fail(str(error), 2)
        except MissedChecksError as error:
            return fail(str(error), 1)
        except ClientError as error:
            info = error.response.get("Error", {})
            return fail(f"AWS {error.operation_name}: {info.get('Code')}: {info.get('Message')}", 1)
        except BotoCoreError as error:
            return fail(f"AWS: {error}", 1)

    return run


def fail(message: str, code: int = 1) -> int:
    err_console().print(f"missed-checks: error: {message}", style="bold red", markup=False, highlight=False)
    return code


@functools.cache
def console() -> Console:
    terminal = Console(highlight=False, soft_wrap=True)
    if terminal.is_terminal:
        return terminal
    # A pipe or a file: wide enough that no table column is cut (ids must stay copyable).
    return Console(highlight=False, soft_wrap=True, width=200)


@functools.cache
def err_console() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)


def print_json(document: Any) -> None:
    sys.stdout.write(json.dumps(document, indent=2, sort_keys=False, default=str) + "\n")


def say(message: str, style: str | None = None) -> None:
    """A line for people (stdout); plain text when stdout is not a terminal."""
    console().print(message, style=style, markup=False)


@contextmanager
def progress_bar(description: str, total: int | None) -> Iterator[Callable[[int], None]]:
    """A rich progress bar on stderr, only on a terminal; yields ``advance(n)``."""
    stderr = err_console()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=stderr, disable=not stderr.is_terminal, transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n=1: bar.advance(task, n)


def instant_arg(text: str | None, field: str, default_now: bool = True) -> datetime:
    if text is None or text == "now":
        if not default_now:
            raise InvalidInput(field, "required")
        return clock.now()
    return parse_instant(text, field)


def period_bound(text: str, field: str, zone_name: str) -> datetime:
    """A date (midnight in ``zone_name``) or an instant with an offset."""
    try:
        zone = ZoneInfo(zone_name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidInput("tz", f"{zone_name!r} is not an IANA time zone") from None
    if len(text.strip()) == 10:
        try:
            day = datetime.strptime(text.strip(), "%Y-%m-%d").date()
        except ValueError:
            raise InvalidInput(field, f"{text!r} is not a date (YYYY-MM-DD) or an instant") from None
        return datetime.combine(day, time(0), tzinfo=zone).astimezone(UTC)
    return parse_instant(text, field)
