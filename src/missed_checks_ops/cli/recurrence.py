"""``missed-checks recurrence``: try a checklist's recurrence without a stack.

``windows`` lists the occurrence windows in a time range, ``schedule`` prints the EventBridge
Scheduler expression schedule-sync would write, each as ``--format table|json|csv``; invalid input
exits 2 with one line on stderr and nothing on stdout. The domain judges every argument (the
recurrence engine raises only ``InvalidInput``, instants outside 1970..2299 are refused), so no
input ends in a traceback.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from missed_checks.checklists.recurrence import MAX_TEXT_CHARS, Recurrence, parse_recurrence
from missed_checks.checklists.schedule_expression import schedule_for
from missed_checks.errors import InvalidInput, shorten
from missed_checks.timefmt import parse_instant
from missed_checks_ops.cli.common import (
    RECORD_FORMATS,
    add_format_options,
    chosen_format,
    command_output,
    set_examples,
)

DEFAULT_LIMIT = 10_000

_RULE_HELP = """recurrence text (RFC 5545):
  DTSTART;TZID=Europe/Berlin:20260105T060000     start, local time in a zone
  DTSTART:20260105 / DTSTART:20260105T060000      with --timezone
  RRULE:FREQ=WEEKLY;BYDAY=MO,FR                  the rule (DAILY..YEARLY, HOURLY at most)
  EXDATE;TZID=Europe/Berlin:20260406T060000      optional, repeatable; VALUE=DATE skips a day
  RDATE;TZID=Europe/Berlin:20260408T060000       optional extra occurrences
Separate lines with real newlines or a literal \\n; @FILE reads the text from a file.
Durations (--window, --grace) are ISO 8601: PT8H, P1D, P1W, PT30M, P1DT2H. Days and weeks are
nominal (P1D ends at the same local time next day, 23 or 25 hours across DST), hours exact.
"""

_WINDOWS_EXAMPLES = """  missed-checks recurrence windows \\
      --recurrence 'DTSTART;TZID=Europe/Berlin:20260105T060000\\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR' \\
      --window PT8H --grace PT30M --from 2026-03-27T00:00:00Z --to 2026-04-01T00:00:00Z
  missed-checks recurrence windows --recurrence @forklift.ics --from 2026-01-01T00:00:00+01:00 \\
      --to 2026-02-01T00:00:00+01:00 --format csv --output january.csv

--format json prints [{"start": "2026-03-27T06:00:00+01:00", "end": "...", "evaluate_at": "..."}, ...]
"""

_SCHEDULE_EXAMPLES = """  missed-checks recurrence schedule --format json \\
      --recurrence 'DTSTART:20260105T060000\\nRRULE:FREQ=WEEKLY;BYDAY=MO' --timezone Europe/Berlin --window PT8H
  prints {"expression": "cron(0 14 ? * MON *)", "timezone": "Europe/Berlin",
          "start_date": "2026-01-05T13:00:00Z", "end_date": null, "exact": true}
  missed-checks recurrence schedule --recurrence @forklift.ics --window PT8H --grace PT30M

  exact=false means the expression is a superset (every other week, BYSETPOS, EXDATE, DST shifts):
  the state machine skips firings that close no window.
"""

WINDOW_COLUMNS = {"start": "start", "end": "end", "evaluate_at": "judged after (end + grace)"}
SCHEDULE_COLUMNS = ("expression", "timezone", "start_date", "end_date", "exact")


def register(subparsers: Any) -> None:
    """Add the ``recurrence`` command group to the ``missed-checks`` parser."""
    group = subparsers.add_parser(
        "recurrence",
        help="list occurrence windows or the schedule of a recurrence (no AWS needed)",
        description="Try a checklist's recurrence locally: its windows and its EventBridge schedule.",
        epilog=_RULE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = group.add_subparsers(dest="recurrence_command", metavar="SUBCOMMAND", required=True)

    windows = commands.add_parser(
        "windows",
        help="occurrence windows starting in [--from, --to)",
        description="Print every occurrence window whose start lies in [--from, --to).",
        epilog=_RULE_HELP,
    )
    set_examples(windows, _WINDOWS_EXAMPLES)
    _rule_arguments(windows)
    windows.add_argument("--from", dest="start", required=True, metavar="ISO",
                         help="range start, ISO 8601 with offset, e.g. 2026-03-01T00:00:00Z")
    windows.add_argument("--to", dest="end", required=True, metavar="ISO",
                         help="range end (exclusive), ISO 8601 with offset")
    windows.add_argument("--limit", default=str(DEFAULT_LIMIT), metavar="N",
                         help=f"refuse ranges with more than N (a positive number) windows (default {DEFAULT_LIMIT})")
    add_format_options(windows, RECORD_FORMATS)
    windows.set_defaults(handler=_windows)

    schedule = commands.add_parser(
        "schedule",
        help="the EventBridge Scheduler expression for the recurrence",
        description="Print the schedule schedule-sync would write for this recurrence.",
        epilog=_RULE_HELP,
    )
    set_examples(schedule, _SCHEDULE_EXAMPLES)
    _rule_arguments(schedule)
    add_format_options(schedule, RECORD_FORMATS)
    schedule.set_defaults(handler=_schedule)


def _rule_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--recurrence", required=True, metavar="TEXT",
                        help="RFC 5545 DTSTART + RRULE (+ EXDATE/RDATE) text, literal \\n allowed, or @FILE")
    parser.add_argument("--timezone", metavar="TZ", help="IANA zone when DTSTART has no TZID, e.g. Europe/Berlin")
    parser.add_argument("--window", metavar="DUR", help="completion window (default P1D), e.g. PT8H")
    parser.add_argument("--grace", metavar="DUR", help="grace after the window (default PT0S), e.g. PT30M")


def _recurrence(args: argparse.Namespace) -> Recurrence:
    return parse_recurrence(
        _recurrence_text(args.recurrence), timezone=args.timezone, window=args.window, grace=args.grace
    )


def _recurrence_text(value: str) -> str:
    """The recurrence text: ``@FILE`` is read, literal ``\\n`` sequences become newlines."""
    if value.startswith("@"):
        path = Path(value[1:])
        try:
            with path.open(encoding="utf-8") as file:
                value = file.read(MAX_TEXT_CHARS + 1)  # longer is refused anyway: never read more
        except (OSError, ValueError) as error:  # ValueError: undecodable bytes, a NUL in the name
            reason = getattr(error, "strerror", None) or error
            raise InvalidInput("recurrence", f"cannot read {shorten(str(path))}: {reason}") from None
    return value.replace("\\n", "\n")


def _limit(text: str) -> int:
    """``--limit``: a positive whole number (0 or a negative number would remove the cap)."""
    value = text.strip()
    if not (value.isascii() and value.isdigit()) or len(value) > 9 or int(value) < 1:
        raise InvalidInput("limit", f"{shorten(text)} is not a positive whole number (at most 999999999), e.g. 100")
    return int(value)


def _windows(args: argparse.Namespace) -> int:
    limit = _limit(args.limit)
    start = parse_instant(args.start, "from")
    end = parse_instant(args.end, "to")
    if end <= start:
        raise InvalidInput("to", f"{args.end} is not after --from {args.start}")
    recurrence = _recurrence(args)
    found: list[dict[str, Any]] = []
    for window in recurrence.iter_windows(start):
        if window.start >= end:
            break
        if len(found) == limit:
            raise InvalidInput("to", f"more than {limit} windows in range; narrow --from/--to or raise --limit")
        found.append(window.to_dict())
    with command_output(chosen_format(args), args.output) as out:
        out.records(found, WINDOW_COLUMNS, empty="no window starts in that range")
    return 0


def _schedule(args: argparse.Namespace) -> int:
    schedule = schedule_for(_recurrence(args)).to_dict()
    with command_output(chosen_format(args), args.output) as out:
        out.records([schedule], SCHEDULE_COLUMNS, document=schedule)
    return 0
