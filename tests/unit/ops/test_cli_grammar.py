"""One grammar for every ``missed-checks`` command: examples in every --help (the local endpoint
they use is ``local serve``'s), ``--format``/``--output``, ``--version``, and every usage error as
one line, ``missed-checks: error: <field>: <what to do>``, with exit code 2."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from importlib.metadata import version

import pytest

from missed_checks_ops.cli.common import subcommands
from missed_checks_ops.cli.main import build_parser, main

PARSER = build_parser()
ONE_LINE_ERROR = re.compile(r"missed-checks: error: (?P<field>[a-z][a-z0-9_.\[\]-]*): (?P<advice>[^\n]+)\n")

Command = tuple[tuple[str, ...], argparse.ArgumentParser]

# In cli/report.py, which is being reworked on another branch: they still print with --json.
NOT_YET_ON_THE_GRAMMAR: set[tuple[str, str]] = set()


def every_command(parser: argparse.ArgumentParser = PARSER, path: tuple[str, ...] = ()) -> Iterator[Command]:
    """The root, every group and every command, with the words that reach it."""
    yield path, parser
    for name, child in subcommands(parser).items():
        yield from every_command(child, (*path, name))


COMMANDS = list(every_command())


def option(parser: argparse.ArgumentParser, flag: str) -> argparse.Action | None:
    return next((action for action in parser._actions if flag in action.option_strings), None)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:  # argparse: --help, --version and its own usage errors
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_walk_reaches_every_command_local_ones_included() -> None:
    paths = {path for path, _ in COMMANDS}
    assert {("local", "run"), ("local", "demo"), ("local", "serve"), ("local", "chaos"), ("recurrence", "windows"),
            ("checklist", "put"), ("dlq", "replay"), ("report",), ("missed", "list")} <= paths
    assert len(paths) >= 30


@pytest.mark.parametrize(("path", "parser"), COMMANDS, ids=[" ".join(path) or "missed-checks" for path, _ in COMMANDS])
def test_every_help_ends_with_examples_of_that_command(path: tuple[str, ...], parser: argparse.ArgumentParser) -> None:
    text = parser.format_help()
    assert "\nexamples:\n" in text
    examples = text.split("\nexamples:\n", 1)[1]
    assert re.search(r"^  missed-checks " + re.escape(" ".join(path)), examples, re.MULTILINE), examples


def test_help_examples_reach_local_serve_on_its_own_port() -> None:
    serve_port = option(dict(COMMANDS)[("local", "serve")], "--port").default
    endpoints = [(path, port) for path, parser in COMMANDS
                 for port in re.findall(r"(?:127\.0\.0\.1|localhost):(\d+)", parser.format_help())]
    assert len(endpoints) >= 5
    assert {port for _, port in endpoints} == {str(serve_port)}, endpoints


def test_every_format_option_is_spelled_alike_defaults_to_table_and_comes_with_output() -> None:
    with_format = [(path, parser) for path, parser in COMMANDS if option(parser, "--format")]
    assert len(with_format) >= 20
    for path, parser in with_format:
        formats = option(parser, "--format")
        assert formats.choices[0] == "table" and set(formats.choices) >= {"table", "json"}, path
        assert formats.default in (None, "table"), path  # None: table unless the old --json is given
        assert option(parser, "--output") is not None, path
    printing = {path for path, parser in COMMANDS if not subcommands(parser) and path[:2] != ("local", "serve")}
    assert printing - {path for path, _ in with_format} == NOT_YET_ON_THE_GRAMMAR
    records = {path for path, parser in with_format if "csv" in option(parser, "--format").choices}
    assert records >= {("checklist", "list"), ("equipment", "list"), ("dlq", "list"),
                       ("report",), ("recurrence", "windows"), ("recurrence", "schedule"), ("local", "run"),
                       ("local", "demo")}


def test_version_comes_from_the_package(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--version")
    assert (code, out) == (0, f"missed-checks {version('missed-checks')}\n")


WEEKDAYS = r"DTSTART;TZID=Europe/Berlin:20260105T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"


@pytest.mark.parametrize(
    ("argv", "field", "advice"),
    [
        # argparse's own errors
        ([], "command", "give one of recurrence, "),
        (["checklist"], "command", "give one of put, show, list, pause, resume, delete"),
        (["checklist", "shw", "x"], "command", "'shw' is not one of put, show, "),
        (["dlq", "list", "--queue", "dead"], "queue",
         "'dead' is not one of schedule-sync, scheduler, evaluation, notification, audit, readiness, all"),
        (["checklist", "list", "--format", "xml"], "format", "'xml' is not one of table, json, csv: choose one"),
        (["checklist", "pause", "x", "--format", "csv"], "format", "'csv' is not one of table, json"),
        (["report", "--from", "2026-03-01"], "to", "missing: give --to DATE|INSTANT"),
        (["missed", "dismiss", "--checklist", "c"], "equipment", "missing: give --equipment ID, --window-start"),
        (["rerun", "--checklist"], "checklist", "expected one argument: give --checklist ID"),
        (["checklist", "show", "c", "--windows", "many"], "windows", "'many' is not a whole number"),
        (["checklist", "list", "--colour"], "colour", "--colour not understood here"),
        # no prefix matching: an abbreviated option is unknown, and said to be
        (["checklist", "list", "--st", "x"], "st", "--st not understood here: did you mean --stack?"),
        (["report", "--form", "json", "--from", "2026-03-01", "--to", "2026-03-08"], "form",
         "--form not understood here: did you mean --format?"),
        (["local", "demo", "--form", "json"], "form", "--form not understood here: did you mean --format?"),
        (["--vers"], "vers", "--vers not understood here: did you mean --version?"),
        # an unknown option is said first, before what it left missing
        (["checklist", "put", "x", "--recurence", "RRULE:FREQ=DAILY"], "recurence",
         "--recurence not understood here: did you mean --recurrence?"),
        (["checklist", "put", "x", "--recurence=RRULE:FREQ=DAILY"], "recurence",
         "--recurence not understood here: did you mean --recurrence?"),
        (["recurrence", "windows", "--recurence", WEEKDAYS, "--from", "2026-03-02", "--to", "2026-03-09"],
         "recurence", "--recurence not understood here: did you mean --recurrence?"),
        (["equipment", "assign", "--checklst", "forklift-daily", "FL-1"], "checklst",
         "--checklst not understood here: did you mean --checklist?"),
        (["equipment", "assign"], "checklist", "missing: give --checklist ID"),
        (["local"], "command", "give one of run, demo, serve, token, advance, chaos"),
        (["local", "run"], "scenario", "missing: give SCENARIO.json"),
        (["local", "demo", "--format", "xml"], "format", "'xml' is not one of table, json, csv"),
        (["local", "serve", "--port", "http"], "port", "'http' is not a whole number"),
        (["recurrence", "windows", "--recurrence", WEEKDAYS], "from", "missing: give --from ISO, --to ISO"),
        # the commands' own checks
        (["recurrence", "windows", "--recurrence", WEEKDAYS, "--from", "2026-03-27", "--to", "2026-03-28T00:00:00Z"],
         "from", "2026-03-27"),
        (["recurrence", "schedule", "--recurrence", WEEKDAYS, "--output", "/nonexistent/dir/schedule.json"],
         "output", "cannot write /nonexistent/dir/schedule.json"),
        (["checklist", "list", "--region", "us-east-1"], "stack", "no target: give --stack NAME"),
        # no stack and no region: the stack is what is missing first
        (["checklist", "list"], "stack", "no target: give --stack NAME"),
        (["checklist", "put", "c", "--dry-run"], "recurrence", "give --recurrence (or --file)"),
        (["local", "serve", "--speed", "-1"], "speed", "-1 is negative"),
        (["local", "serve", "--parameter", "LogLevel"], "parameter", "'LogLevel' is not NAME=VALUE"),
        (["local", "chaos", "--faults", "/nonexistent/faults.json"], "faults", "no such file"),
    ],
)
def test_bad_usage_is_one_line_naming_the_field_and_exits_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str], field: str, advice: str
) -> None:
    for name in ("MISSED_CHECKS_STACK", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    if "--region" not in argv:  # nor a region from the environment or a profile
        for name in ("AWS_DEFAULT_REGION", "AWS_REGION", "AWS_PROFILE"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config")
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, ""), err
    error = ONE_LINE_ERROR.fullmatch(err)
    assert error is not None, err
    assert error["field"] == field, err
    assert advice in error["advice"], err


@pytest.mark.parametrize(("path", "parser"), COMMANDS, ids=[" ".join(path) or "missed-checks" for path, _ in COMMANDS])
def test_no_parser_takes_an_abbreviation_for_an_option(path: tuple[str, ...], parser: argparse.ArgumentParser) -> None:
    """``report --form`` is not ``--format``: every parser, the root, each group and each command
    (``local`` ones too), refuses an option that is not spelled out."""
    assert parser.allow_abbrev is False, path


def test_a_command_line_builds_only_its_commands_group_and_the_same_help() -> None:
    """``main`` builds the parser of the command's group only (a command's start); what that
    parser says and accepts is what the whole parser says for that command."""
    import importlib

    from missed_checks_ops.cli.common import root_parser
    from missed_checks_ops.cli.main import COMMAND_MODULES

    for module, commands in COMMAND_MODULES.items():  # the table in main.py is what each module registers
        alone = root_parser(lambda: "x")
        importlib.import_module(module).register(alone.add_subparsers(dest="command"))
        assert tuple(subcommands(alone)) == commands, module
    assert [name for names in COMMAND_MODULES.values() for name in names] == list(subcommands(PARSER))
    full = {path: parser.format_help() for path, parser in COMMANDS if path}
    for command in subcommands(PARSER):
        lean = build_parser([command, "--help"])
        owner = next(names for names in COMMAND_MODULES.values() if command in names)
        assert tuple(subcommands(lean)) == owner
        for path, parser in every_command(lean):
            if path and path[0] == command:
                assert parser.format_help() == full[path], path
    for argv in ([], ["--help"], ["--version"], ["bogus"], ["-x", "checklist"]):
        assert list(subcommands(build_parser(argv))) == list(subcommands(PARSER)), argv


def _single_value_options() -> list[tuple[tuple[str, ...], argparse.Action]]:
    """Every option of every command that takes one value (argparse's ``store``), target options included."""
    return [(path, action) for path, parser in COMMANDS if not subcommands(parser)
            for action in parser._actions
            if action.option_strings and isinstance(action, argparse._StoreAction) and action.nargs is None]


SINGLE_VALUE_OPTIONS = _single_value_options()


def _two_values(action: argparse.Action) -> tuple[str, str]:
    if action.choices:
        first, second, *_ = list(action.choices)
        return str(first), str(second)
    return "1", "2"


@pytest.mark.parametrize(("path", "action"), SINGLE_VALUE_OPTIONS,
                         ids=[f"{' '.join(path)} {action.option_strings[-1]}" for path, action in SINGLE_VALUE_OPTIONS])
def test_an_option_of_one_value_given_twice_is_refused_naming_it(
    capsys: pytest.CaptureFixture[str], path: tuple[str, ...], action: argparse.Action
) -> None:
    """Found by an adversarial user: ``digest subscribe --to a --to b`` kept b alone and exited 0
    (argparse's ``store`` keeps the last value silently). Every option that takes one value refuses
    a second, different one (exit 2, one line naming it); those that make sense several times
    accumulate (``append``)."""
    flag = action.option_strings[-1]
    first, second = _two_values(action)
    code, out, err = run(capsys, *path, flag, first, flag, second)
    assert (code, out) == (2, ""), err
    error = ONE_LINE_ERROR.fullmatch(err)
    assert error is not None and error["field"] in {name.lstrip("-") for name in action.option_strings}, err
    assert "given twice" in error["advice"], err


def test_the_audit_reaches_the_options_people_repeat_and_digest_to_accumulates() -> None:
    reached = {(" ".join(path), action.option_strings[-1]) for path, action in SINGLE_VALUE_OPTIONS}
    assert {("report", "--from"), ("check record", "--at"), ("equipment out-of-service", "--reason"),
            ("missed dismiss", "--by"), ("checklist put", "--window"), ("local serve", "--port"),
            ("digest subscribe", "--stack"), ("report", "--format")} <= reached
    assert ("digest subscribe", "--to") not in reached
    args = PARSER.parse_args(["digest", "subscribe", "fleet", "--to", "a@example.com", "--to", "b@example.com",
                              "--period", "daily", "--time", "07:00", "--timezone", "UTC", "--to", "a@example.com"])
    assert args.to == ["a@example.com", "b@example.com", "a@example.com"]  # repeats are folded by the subscription


def test_the_same_value_twice_changes_nothing_and_is_accepted() -> None:
    args = PARSER.parse_args(["report", "--from", "2026-03-01", "--from", "2026-03-01", "--to", "2026-04-01"])
    assert vars(args)[next(a.dest for a in option_actions("report") if "--from" in a.option_strings)] == "2026-03-01"


def option_actions(command: str) -> list[argparse.Action]:
    return next(parser for path, parser in COMMANDS if path == (command,))._actions
