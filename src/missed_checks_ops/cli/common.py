"""The grammar every ``missed-checks`` command shares: the parser, usage errors, target options,
``--format``/``--output``, exit codes, progress.

Exit codes (:mod:`missed_checks_ops.cli.streams`, the same table for every command): 0 done, 1
failed (the stack said no, a record is missing, a replay failed), 2 bad usage or invalid input,
always one line on stderr: ``missed-checks: error: <field>: <what to do>`` (argparse's own errors
too: :class:`CliParser`), 3 the work was done but its output could not be written, 130
interrupted. Commands that print records take ``--format table|json|csv`` (``table`` for people
by default) and ``--output FILE``; commands that change something print their result as ``table``
or ``json``. Every command's ``--help`` ends with examples. Colours and progress bars appear only
when the stream is a terminal.
"""

from __future__ import annotations

import argparse
import csv
import difflib
import functools
import json
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NoReturn, TextIO

from botocore.exceptions import BotoCoreError, ClientError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from missed_checks import clock
from missed_checks.errors import InvalidInput, MissedChecksError
from missed_checks.permissions.caller import Caller
from missed_checks.timefmt import parse_instant
from missed_checks_ops.cli.streams import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_OUTPUT_LOST,
    GuardedOutput,
    OutputLost,
    exit_codes_help,
)
from missed_checks_ops.principal import cli_principal
from missed_checks_ops.target import (
    LOCAL_ENDPOINT,
    ClockAnchor,
    StackTarget,
    TargetError,
    resolve_target,
    stack_clock,
)

Handler = Callable[[argparse.Namespace], int | None]

RECORD_FORMATS = ("table", "json", "csv")
"""For commands that print records (rows)."""
RESULT_FORMATS = ("table", "json")
"""For commands that change something: their result is one document."""

TARGET_HELP = f"""target (every command):
  --stack NAME [--region R]   a stack deployed with `sam deploy` (its Outputs name the resources)
  --endpoint URL              `missed-checks local serve` ({LOCAL_ENDPOINT} unless given --port);
                              or set AWS_ENDPOINT_URL
"""


# -- the parser: one-line usage errors, examples in every --help ---------------------------------
class CliParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors read ``missed-checks: error: <field>: <what to do>``
    (exit 2), and whose ``--help`` always ends with examples: a command group without its own
    shows the first example of each of its commands."""

    examples: str = ""
    """The command's examples, one per line (a trailing backslash continues an example)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # No prefix matching, for every parser of the command line (each command's parser is made
        # by its group's add_parser, of this class): ``--form`` is not taken for ``--format``, an
        # option is spelled out or refused as unknown.
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)
        # An option that takes one value, given twice with two values, is refused (argparse's own
        # ``store`` keeps the last silently): options that make sense several times are ``append``.
        self.register("action", None, StoreOnce)
        self.register("action", "store", StoreOnce)

    def error(self, message: str) -> NoReturn:
        field, advice = usage_error(self, message)
        self.exit(2, f"missed-checks: error: {field}: {advice}\n")

    # (typeshed overloads it generically on the namespace's type; ours takes and gives argparse's)
    def parse_known_args(  # type: ignore[override]
        self, args: Any = None, namespace: Any = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """A command (not a group) refuses what it does not know itself, so the error names it; an
        unknown option is refused first, before argparse or the command says that something is
        missing (the option meant to give it may be the misspelt one)."""
        unknown = unknown_options(self, sys.argv[1:] if args is None else list(args))
        if unknown:
            self.error(_UNRECOGNIZED + " ".join(unknown))
        namespace, extras = super().parse_known_args(args, namespace)
        if extras and not subcommands(self):
            self.error(_UNRECOGNIZED + " ".join(extras))
        return namespace, extras

    def format_help(self) -> str:
        text = super().format_help()
        if "examples:" in text:
            return text
        shown = [first_example(child) for child in subcommands(self).values()]
        return text.rstrip("\n") + "\n\nexamples:\n" + "\n".join(e for e in shown if e) + "\n"


class StoreOnce(argparse._StoreAction):
    """argparse's ``store`` that refuses a second, different value for the same option (exit 2,
    naming it): ``--to a --to b`` would otherwise keep ``b`` and drop ``a`` without a word. The same
    value twice changes nothing and is accepted."""

    _GIVEN = "_options_given"
    """The namespace attribute holding the dests given so far in this parse (and their values)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        given: dict[str, Any] = namespace.__dict__.setdefault(self._GIVEN, {})
        if option_string is not None and self.dest in given and given[self.dest] != values:
            raise argparse.ArgumentError(self, f"given twice ({given[self.dest]!r}, then {values!r}), and it "
                                               "takes one value: give it once")
        given[self.dest] = values
        super().__call__(parser, namespace, values, option_string)


def set_examples(parser: CliParser, examples: str) -> None:
    """Put ``examples`` at the end of the parser's ``--help`` (before any epilog it has)."""
    parser.examples = examples.rstrip()
    parser.epilog = "examples:\n" + parser.examples + ("\n\n" + parser.epilog if parser.epilog else "")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return {name: child for action in parser._actions if isinstance(action, argparse._SubParsersAction)
            for name, child in action.choices.items()}


def first_example(parser: argparse.ArgumentParser) -> str:
    """The first example of a command, or of the first of its commands that has one."""
    lines: list[str] = []
    for line in getattr(parser, "examples", "").splitlines():
        if line.strip().startswith("missed-checks") or lines:
            lines.append(line)
            if not line.endswith("\\"):
                return "\n".join(lines)
    return next((found for child in subcommands(parser).values() if (found := first_example(child))), "")


_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


def unknown_options(parser: argparse.ArgumentParser, args: Sequence[str]) -> list[str]:
    """The options in ``args`` that ``parser`` does not know (as argparse reads an option: ``-``
    alone, a negative number or text with a space is a value; nothing after ``--`` is an option).
    A group reads only what comes before its command's name (the rest is the command's), as does a
    parser that hands the rest on (an ``argparse.REMAINDER`` positional)."""
    known = parser._option_string_actions
    hands_on = bool(subcommands(parser)) or any(action.nargs == argparse.REMAINDER for action in parser._actions)
    found = []
    for arg in args:
        if arg == "--":
            break
        if len(arg) < 2 or arg[0] not in parser.prefix_chars or _NEGATIVE_NUMBER.match(arg) or " " in arg:
            if hands_on:
                break
            continue
        name = arg.split("=", 1)[0]
        if name in known or (arg[1] not in parser.prefix_chars and arg[:2] in known):  # -pVALUE
            continue
        found.append(name)
    return found


def _did_you_mean(parser: argparse.ArgumentParser, unknown: Sequence[str]) -> str:
    """``did you mean --recurrence?`` for ``--recurence``: the closest option the parser knows."""
    spelled = [name for name in parser._option_string_actions if name.startswith("--")]
    close = [(name, found[0]) for name in unknown  # an option it begins first (--st: --stack, not --as)
             if (found := [known for known in spelled if known.startswith(name)][:1]
                 or difflib.get_close_matches(name, spelled, n=1, cutoff=0.6))]
    if not close:
        return ""
    if len(unknown) == 1:
        return f"did you mean {close[0][1]}?"
    return "did you mean " + ", ".join(f"{known} for {name}" for name, known in close) + "?"


_REQUIRED = "the following arguments are required: "
_UNRECOGNIZED = "unrecognized arguments: "
_ARGUMENT = re.compile(r"argument (?P<names>[^:]+): (?P<problem>.+)", re.DOTALL)
_CHOICE = re.compile(r"invalid choice: (?P<value>.*) \(choose from (?P<choices>.*)\)", re.DOTALL)
_CONVERSION = re.compile(r"invalid (?P<kind>\w+) value: (?P<value>.*)", re.DOTALL)
_AMBIGUOUS = re.compile(r"ambiguous option: (?P<option>\S+) could match (?P<matches>.*)", re.DOTALL)


def usage_error(parser: argparse.ArgumentParser, message: str) -> tuple[str, str]:
    """argparse's message as (field, what to do)."""
    see = f"see {parser.prog} --help"
    if message.startswith(_REQUIRED):
        names = message.removeprefix(_REQUIRED).split(", ")
        action = _action(parser, names[0])
        if isinstance(action, argparse._SubParsersAction):
            return _field(names[0]), f"give one of {', '.join(action.choices)} ({see})"
        return _field(names[0]), f"missing: give {', '.join(_spelled(parser, name) for name in names)} ({see})"
    if message.startswith(_UNRECOGNIZED):
        extra = message.removeprefix(_UNRECOGNIZED)
        first = extra.split()[0] if extra.split() else extra
        field = _field(first.split("=", 1)[0]) if first.startswith("-") else "arguments"
        options = [word.split("=", 1)[0] for word in extra.split() if word.startswith("--")]
        hint = _did_you_mean(parser, options) or ("remove or correct them" if len(extra.split()) > 1
                                                  else "remove or correct it")
        return field, f"{extra} not understood here: {hint} ({see})"
    if ambiguous := _AMBIGUOUS.fullmatch(message):
        return _field(ambiguous["option"]), f"could be {ambiguous['matches']}: spell the option out"
    argument = _ARGUMENT.fullmatch(message)
    if argument is None:
        return "usage", f"{message} ({see})"
    names, problem = argument["names"].split("/"), argument["problem"]
    field = _field(max(names, key=len))
    if choice := _CHOICE.fullmatch(problem):
        return field, f"{choice['value']} is not one of {choice['choices'].replace(chr(39), '')}: choose one"
    if conversion := _CONVERSION.fullmatch(problem):
        kind = {"int": "a whole number", "float": "a number"}.get(conversion["kind"], f"a valid {conversion['kind']}")
        return field, f"{conversion['value']} is not {kind} ({see})"
    if problem.startswith("expected"):
        return field, f"{problem}: give {_spelled(parser, max(names, key=len))}"
    return field, f"{problem} ({see})"


def _action(parser: argparse.ArgumentParser, name: str) -> argparse.Action | None:
    for action in parser._actions:
        if name in action.option_strings or name in (action.metavar, action.dest):
            return action
    return None


def _field(name: str) -> str:
    """``--window-start`` -> ``window-start``; a positional's ``SCENARIO.json`` -> ``scenario``."""
    if name.startswith("-"):
        return name.lstrip("-")
    return name.split(".")[0].lower()


def _spelled(parser: argparse.ArgumentParser, name: str) -> str:
    action = _action(parser, name)
    if action is None or not action.option_strings or action.nargs == 0:
        return name
    return f"{name} {action.metavar or action.dest.upper()}"


class _VersionAction(argparse.Action):
    """``--version``: the installed distribution's version, looked up only when asked for
    (``importlib.metadata`` is a fair part of a command's start)."""

    def __init__(self, option_strings: Sequence[str], version: Callable[[], str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str = "show program's version number and exit") -> None:
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)
        self.version = version

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        parser._print_message(f"missed-checks {self.version()}\n", sys.stdout)
        parser.exit()


def root_parser(version: Callable[[], str]) -> CliParser:
    parser = CliParser(prog="missed-checks", formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Record and report the checks nobody did.\n\n"
                                   "Every command takes --help, with examples. Commands that print records take "
                                   "--format table|json|csv\n(table by default) and --output FILE. Bad usage exits 2 "
                                   "with one line: missed-checks: error: <field>: <what to do>.",
                       epilog=exit_codes_help())
    # _VersionAction takes the callable and calls it only for --version (typeshed types version a str)
    parser.add_argument("--version", action=_VersionAction, version=version)  # type: ignore[arg-type]
    return parser


# -- output: --format and --output ---------------------------------------------------------------
@dataclass
class Output:
    """Where and how a command prints: ``--format`` on ``--output`` (default standard output)."""

    format: str
    stream: TextIO

    @functools.cached_property
    def console(self) -> Console:
        if self.stream is sys.stdout:
            return console()
        return Console(file=self.stream, highlight=False, soft_wrap=True, width=200, no_color=True)

    def say(self, message: str, style: str | None = None) -> None:
        self.console.print(message, style=style, markup=False)

    def json(self, document: Any) -> None:
        self.stream.write(json.dumps(document, indent=2, default=str) + "\n")

    def records(self, rows: Sequence[Mapping[str, Any]], columns: Mapping[str, str] | Sequence[str], *,
                document: Any = None, empty: str = "", title: str | None = None) -> None:
        """``rows`` as a table (``columns``: the keys, or key -> heading), CSV (the keys as header)
        or JSON (``document``, by default the rows)."""
        headings = columns if isinstance(columns, Mapping) else {key: key for key in columns}
        if self.format == "json":
            self.json(list(rows) if document is None else document)
        elif self.format == "csv":
            writer = csv.writer(self.stream)
            writer.writerow(headings)
            writer.writerows([_cell(row.get(key)) for key in headings] for row in rows)
        elif not rows and empty:
            self.say(empty)
        else:
            view = Table(*headings.values(), title=title)
            for row in rows:
                view.add_row(*(_cell(row.get(key)) for key in headings))
            self.console.print(view)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict | list):
        return json.dumps(value, default=str)
    return str(value)


def add_format_options(parser: argparse.ArgumentParser, formats: Sequence[str]) -> None:
    """``--format`` (default table) and ``--output FILE``; the handler finds them as ``args.out``."""
    group = parser.add_argument_group("output")
    kinds = {"table": "table for people (default)", "json": "json", "csv": "csv"}
    group.add_argument("--format", choices=formats, default=None,
                       help=", ".join(kinds[f] for f in formats) + (" for tools" if len(formats) > 1 else ""))
    group.add_argument("--output", metavar="FILE", help="write there instead of standard output (replaced)")
    parser.set_defaults(formats=tuple(formats))


def open_output(path: str | None) -> TextIO:
    """``--output``'s file, opened before any work so that a bad path fails at once (exit 2, nothing
    done); a write that fails later (a full disk) does not stop the work: :func:`close_output` says
    it (exit 3). Standard output without one."""
    if not path or path == "-":
        return sys.stdout
    try:
        opened = open(path, "w", encoding="utf-8", newline="")  # closed by close_output
    except OSError as error:
        raise InvalidInput("output", f"cannot write {path}: {error.strerror or error}; give a writable file") from None
    return GuardedOutput(opened, path)  # type: ignore[return-value]


def close_output(stream: TextIO) -> None:
    """Flush (and close, unless it is standard output) a stream :func:`open_output` gave;
    :class:`OutputLost` when what was written to it was lost (the work is done: exit 3)."""
    try:
        stream.flush()
    except (OSError, ValueError):
        pass  # a stream of the caller's (tests): nothing more to say than its own error
    if stream is not sys.stdout:
        try:
            stream.close()
        except (OSError, ValueError):
            pass
    if isinstance(stream, GuardedOutput):
        stream.raise_if_lost()


def chosen_format(args: argparse.Namespace) -> str:
    """``--format``, else ``json`` for the old ``--json``, else ``table``."""
    return str(args.format or ("json" if getattr(args, "json", False) else "table"))


@contextmanager
def command_output(fmt: str, path: str | None) -> Iterator[Output]:
    """The command's :class:`Output` in format ``fmt`` (``--output`` opened now), its file closed
    when it ends: :class:`OutputLost` then when what the command wrote could not be written (its work
    is done; exit 3). A command that fails keeps its own error."""
    stream = open_output(path)
    try:
        yield Output(fmt, stream)
    except BaseException:
        if stream is not sys.stdout:
            try:
                stream.close()
            except (OSError, ValueError):
                pass
        raise
    close_output(stream)


# -- target and commands ---------------------------------------------------------------------------
def target_parent(json_option: bool = True) -> argparse.ArgumentParser:
    """Options every command takes: where the stack is, and ``--json`` (shown only on commands
    without ``--format``; elsewhere it is the old spelling of ``--format json``)."""
    parent = CliParser(add_help=False)
    group = parent.add_argument_group("target")
    group.add_argument("--stack", metavar="NAME",
                       help="CloudFormation stack deployed with SAM (default: $MISSED_CHECKS_STACK, or the "
                            "local runtime's stack when --endpoint is given)")
    group.add_argument("--region", metavar="REGION", help="AWS region (default: AWS_DEFAULT_REGION / your profile)")
    group.add_argument("--endpoint", metavar="URL",
                       help="send every call to this endpoint, e.g. `missed-checks local serve` "
                            "(default: $AWS_ENDPOINT_URL)")
    group.add_argument("--table", metavar="NAME", help="override the stack's TableName output")
    group.add_argument("--state-machine-arn", metavar="ARN", help="override the stack's StateMachineArn output")
    group.add_argument("--schedule-group", metavar="NAME", help="override the stack's ScheduleGroupName output")
    group.add_argument("--sync-dlq-url", metavar="URL", help="override ScheduleSyncDeadLetterQueueUrl")
    group.add_argument("--scheduler-dlq-url", metavar="URL", help="override SchedulerDeadLetterQueueUrl")
    group.add_argument("--evaluation-dlq-url", metavar="URL", help="override EvaluationDeadLetterQueueUrl")
    person = parent.add_argument_group("acting as a person (#31; docs/people.md)")
    who = person.add_mutually_exclusive_group()
    who.add_argument("--as", dest="as_user", metavar="USER",
                     help="act as USER of the stack's user pool, with that person's roles at sites (signs in; "
                          "with --endpoint, to the local one)")
    who.add_argument("--token", metavar="JWT", help="act as the person of this access or id token of the stack's pool")
    person.add_argument("--password", metavar="PASSWORD",
                        help="--as USER's password (default: $MISSED_CHECKS_PASSWORD; locally, the one `local serve` "
                             "printed)")
    parent.add_argument("--json", action="store_true",
                        help="print machine-readable JSON on stdout" if json_option else argparse.SUPPRESS)
    return parent


def add_command(subparsers: Any, name: str, *, help: str, description: str, examples: str,
                handler: Handler, formats: Sequence[str] = ()) -> argparse.ArgumentParser:
    """A command on a stack; with ``formats``, it takes ``--format`` and ``--output`` and its
    handler prints through ``args.out`` (an :class:`Output`)."""
    parser: CliParser = subparsers.add_parser(
        name, help=help, description=description, parents=[target_parent(json_option=not formats)], epilog=TARGET_HELP)
    set_examples(parser, examples)
    if formats:
        add_format_options(parser, formats)
    parser.set_defaults(handler=guarded(handler))
    return parser


def add_group(subparsers: Any, name: str, *, help: str, description: str) -> Any:
    parser = subparsers.add_parser(name, help=help, description=description,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    return parser.add_subparsers(dest=f"{name}_command", metavar="COMMAND", required=True)


def target_of(args: argparse.Namespace) -> StackTarget:
    overrides = {name: getattr(args, name, None) for name in (
        "table", "state_machine_arn", "schedule_group", "sync_dlq_url", "scheduler_dlq_url", "evaluation_dlq_url")}
    return resolve_target(args.stack, args.region, args.endpoint, overrides)


def caller_of(args: argparse.Namespace) -> Caller:
    """Who a command acts as, through the product's scoped use cases: the operator with the stack's
    credentials (every site, every action), named ``cli:<login name>`` in the audit trail."""
    return person_of_args(args) or Caller.operator(cli_principal())


def person_of_args(args: argparse.Namespace) -> Caller | None:
    """The person ``--as USER`` (signed in to the stack's user pool) or ``--token JWT`` names, with
    their roles at sites (token groups and grant record, as the people's API builds them); None
    without either: the operator with the stack's credentials."""
    from missed_checks_ops import people

    user, token = getattr(args, "as_user", None), getattr(args, "token", None)
    if not user and not token:
        return None
    target = target_of(args)
    if user:
        password = people.password_for(getattr(args, "password", None), local=target.endpoint_url is not None)
        token = people.sign_in(target, user, password)["AccessToken"]
    assert token is not None
    return people.person(target, people.claims_of(target, token))


def guarded(handler: Handler) -> Callable[[argparse.Namespace], int]:
    """Turn the errors a command can meet into a message on stderr and the documented exit code."""

    @functools.wraps(handler)
    def run(args: argparse.Namespace) -> int:
        try:
            with target_clock(args):
                if not getattr(args, "formats", None):
                    return int(handler(args) or 0)
                with command_output(chosen_format(args), args.output) as out:
                    args.out = out
                    return int(handler(args) or 0)
        except TargetError as error:
            if error.field:
                return fail(f"{error.field}: {error}", EXIT_BAD_INPUT)
            return fail(str(error), EXIT_FAILED)
        except InvalidInput as error:
            return fail(usage_message(error), EXIT_BAD_INPUT)
        except MissedChecksError as error:
            return fail(str(error), EXIT_FAILED)
        except ClientError as error:
            info = error.response.get("Error", {})
            return fail(f"AWS {error.operation_name}: {info.get('Code')}: {info.get('Message')}", EXIT_FAILED)
        except BotoCoreError as error:
            return fail(f"AWS: {error}", EXIT_FAILED)
        except OutputLost as lost:
            return fail(lost.line, EXIT_OUTPUT_LOST)

    return run


class _StackClock:
    """"now" of a local stack, read from it the first time it is asked for (most commands ask
    before they look the stack up); the wall clock when the stack publishes no clock."""

    def __init__(self, args: argparse.Namespace) -> None:
        self._args = args
        self._anchor: ClockAnchor | None = None
        self._asked = False

    def __call__(self) -> datetime:
        if not self._asked:
            self._asked = True
            self._anchor = stack_clock(getattr(self._args, "stack", None), getattr(self._args, "region", None),
                                       getattr(self._args, "endpoint", None))
        return self._anchor.now() if self._anchor is not None else datetime.now(UTC)

    @property
    def simulated(self) -> bool:
        self()
        return self._anchor is not None


@contextmanager
def target_clock(args: argparse.Namespace) -> Iterator[None]:
    """The command's "now" (:func:`missed_checks.clock.now`): the local stack's own clock when the
    target is one (``--endpoint``, or ``AWS_ENDPOINT_URL``: ``local serve`` publishes its simulated
    clock on the stack), the wall clock against AWS. A process that runs a stack itself (tests, the
    local runtime) has set its clock already, and keeps it."""
    if not hasattr(args, "endpoint") or clock.source() is not None:
        yield
        return
    clock.set_source(_StackClock(args))
    try:
        yield
    finally:
        clock.set_source(None)


def clock_kind() -> str:
    """What "now" is for this command: ``simulated`` (a local stack's clock) or ``wall``."""
    source = clock.source()
    if source is None:
        return "wall"
    return "simulated" if getattr(source, "simulated", True) else "wall"


def usage_message(error: InvalidInput) -> str:
    """``<field>: <what to do>``, the field as the user types it (without dashes)."""
    return f"{error.field.lstrip('-')}: {error.message}"


def fail(message: str, code: int = 1) -> int:
    try:
        err_console().print(f"missed-checks: error: {message}", style="bold red", markup=False, highlight=False)
    except (OSError, ValueError):  # standard error itself cannot be written: the exit code says it
        pass
    return code


def interactive() -> bool:
    """Whether a question can be asked and answered: standard input and standard error are both a
    terminal (a closed standard input is not one)."""
    stdin = sys.stdin
    try:
        return stdin is not None and not stdin.closed and stdin.isatty() and err_console().is_terminal
    except (OSError, ValueError):
        return False


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

        def advance(n: int = 1) -> None:
            bar.advance(task, n)

        yield advance


class _StopBetweenSteps:
    """While a bulk write runs: Ctrl-C (SIGINT) or SIGTERM is noted, not raised where it lands (in
    the middle of a batch, whose items would be written but not counted), and raised as
    ``KeyboardInterrupt`` by :meth:`check` once the batch in flight is written and counted. A second
    signal stops at once (:attr:`forced`). In the main thread only (signals are delivered there)."""

    def __init__(self) -> None:
        self.requested = False
        self.forced = False
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _StopBetweenSteps:
        if threading.current_thread() is not threading.main_thread():
            return self
        for number in (signal.SIGINT, signal.SIGTERM):
            try:
                previous = signal.getsignal(number)
                if previous is signal.SIG_IGN:  # ignored (a background job's Ctrl-C): still ignored
                    continue
                self._previous[number] = signal.signal(number, self._note)
            except (ValueError, OSError):
                continue
        return self

    def __exit__(self, *exc: object) -> None:
        for number, handler in self._previous.items():
            try:
                signal.signal(number, handler)
            except (ValueError, OSError):
                pass
        self._previous = {}

    def _note(self, _number: int, _frame: Any) -> None:
        if self.requested:  # asked again: at once
            self.forced = True
            raise KeyboardInterrupt
        self.requested = True

    def check(self) -> None:
        """Stop now (``KeyboardInterrupt``) if a stop was asked for: between two batches."""
        if self.requested and not self.forced and threading.current_thread() is threading.main_thread():
            raise KeyboardInterrupt


@contextmanager
def bulk_progress(description: str, noun: str, planned: Sequence[str], *,
                  in_order: bool = True) -> Iterator[Callable[[int], None]]:
    """:func:`progress_bar` for a command that writes many items, which also says on stderr what it
    wrote when it is stopped (Ctrl-C, SIGTERM) or fails part way (not when it fails before its first
    write): ``wrote 412 of 1000 checklists: a .. b; not written: c .. d``, exactly: a stop takes
    effect between two steps (``advance(n)`` after each batch written), never inside a batch
    (:class:`_StopBetweenSteps`; a second Ctrl-C stops at once, and says that the batch in flight may
    be written in part). ``planned`` are the ids in the order they are written; with
    ``in_order=False`` (the order is the store's own) only the counts are said."""
    done = 0
    with progress_bar(description, len(planned)) as advance, _StopBetweenSteps() as stop:
        def step(n: int = 1) -> None:
            nonlocal done
            done += n
            advance(n)
            stop.check()

        try:
            yield step
            stop.check()  # asked during the last batch: everything is written, and the command stops
        except BaseException as error:
            # interrupted: always said; failed part way: said; refused before the first write (a row
            # the rules refuse, exit 2): its error says that nothing was written, in one line
            if stop.requested or isinstance(error, KeyboardInterrupt) or 0 < done < len(planned):
                said = written_so_far(noun, planned, done, in_order)
                if stop.forced:
                    said += (" (stopped at once, by a second signal: the batch being written then may be written "
                             "in part)")
                try:
                    err_console().print(f"missed-checks: {said}", markup=False, highlight=False, soft_wrap=True)
                except (OSError, ValueError):
                    pass
            raise


def written_so_far(noun: str, planned: Sequence[str], done: int, in_order: bool = True) -> str:
    """``wrote 412 of 1000 checklists: a .. b; not written: c .. d`` (ids listed when few)."""
    if not in_order:
        return (f"stopped after {done} of {len(planned)} {noun}; the same command again does the rest "
                "(what is done stays as it is)")
    return (f"wrote {done} of {len(planned)} {noun}: {_id_span(planned[:done])}; "
            f"not written: {_id_span(planned[done:])}")


def _id_span(ids: Sequence[str]) -> str:
    if not ids:
        return "none"
    if len(ids) <= 10:
        return ", ".join(ids)
    return f"{ids[0]} .. {ids[-1]} ({len(ids)}, in the file's order)"


def instant_arg(text: str | None, field: str, default_now: bool = True) -> datetime:
    if text is None or text == "now":
        if not default_now:
            raise InvalidInput(field, "required")
        return clock.now()
    return parse_instant(text, field)
