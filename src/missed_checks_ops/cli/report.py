"""``report`` and ``missed`` commands: who skipped which checks, and excusing a missed check."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from missed_checks import clock, identifiers
from missed_checks.api.parameters import period_bound
from missed_checks.checklists.checklist import validate_checklist_id
from missed_checks.equipment.assignments import validate_equipment_id
from missed_checks.errors import InvalidInput
from missed_checks.timefmt import parse_instant
from missed_checks_ops.cli.common import (
    RECORD_FORMATS,
    RESULT_FORMATS,
    Output,
    add_command,
    add_group,
    caller_of,
    close_output,
    open_output,
    progress_bar,
    target_of,
)
from missed_checks_ops.inputs import within_item_size
from missed_checks_ops.missed import dismiss_missed, list_missed
from missed_checks_ops.report_output import DEFINITION, FORMATS, stdout_console, write_report
from missed_checks_ops.report_reading import read_report
from missed_checks_ops.target import LOCAL_ENDPOINT


def register(subparsers: Any) -> None:
    report = add_command(
        subparsers, "report",
        help="per checklist and equipment: on time, late, missed, recorded late, dismissed, excused, compliance",
        description="The fleet report over [--from, --to): per checklist and equipment, the occurrence windows "
                    "expected, done on time, late, missed, recorded late, dismissed, excused and pending, the "
                    f"compliance rate, and a fleet total. {DEFINITION}. Reads by Query only. --format json also "
                    "lists every window with its outcome and the facts behind it; --format html writes one "
                    "self-contained page (charts per week, a heatmap with each cell's denominator, repeat "
                    "offenders, late, recorded-late, excused and dismissed checks; opens offline, prints on A4).",
        examples="""  missed-checks report --from 2026-01-01 --to 2026-04-01 --stack missed-checks
  missed-checks report --from 2026-03-01 --to 2026-03-08 --checklist forklift-daily --format csv \\
      --stack missed-checks > week.csv
  missed-checks report --from 2026-03-01 --to 2026-04-01 --equipment FL-001 --format json --tz Europe/Berlin \\
      --stack missed-checks
  missed-checks report --from 2026-03-01 --to 2026-04-01 --tz Europe/Berlin --format html --output march.html \\
      --stack missed-checks""",
        handler=report_command)
    report.add_argument("--from", dest="start", required=True, metavar="DATE|INSTANT",
                        help="first day (midnight in --tz) or an instant; windows starting from here count")
    report.add_argument("--to", dest="end", required=True, metavar="DATE|INSTANT",
                        help="end, exclusive (a date means its midnight in --tz)")
    report.add_argument("--tz", default="UTC", metavar="ZONE", help="zone of --from/--to dates (default UTC)")
    report.add_argument("--checklist", action="append", default=[], metavar="ID", help="only this checklist (repeat)")
    report.add_argument("--equipment", action="append", default=[], metavar="ID", help="only this equipment (repeat)")
    report.add_argument("--format", choices=FORMATS, default=None,
                        help="table for people (default), csv or json for tools, html: one self-contained page "
                             "(charts, heatmap, lists) to open in a browser or print; --json is --format json")
    report.add_argument("--output", metavar="FILE",
                        help="write the report (any format) to FILE instead of standard output")

    group = add_group(subparsers, "missed", help="list or dismiss missed checks",
                      description="Missed checks are durable records; a dismissal (reason, who, when) excuses "
                                  "one without deleting it.")
    dismiss = add_command(
        group, "dismiss", help="dismiss a missed check with a reason",
        description="Dismiss one missed check: the record keeps its history and the report counts it as "
                    "dismissed. Dismissing twice, or a record that does not exist, fails (exit 1).",
        examples="  missed-checks missed dismiss --checklist forklift-daily --equipment FL-001 \\\n"
                 "      --window-start 2026-03-02T05:00:00Z --reason 'in the workshop' --by 'j.doe' \\\n"
                 "      --stack missed-checks",
        handler=missed_dismiss, formats=RESULT_FORMATS)
    dismiss.add_argument("--checklist", required=True, metavar="ID")
    dismiss.add_argument("--equipment", required=True, metavar="ID")
    dismiss.add_argument("--window-start", required=True, metavar="INSTANT",
                         help="the window's start, as `missed list` shows it")
    dismiss.add_argument("--reason", required=True)
    dismiss.add_argument("--by", required=True, metavar="WHO")
    listing = add_command(
        group, "list", help="missed checks of a checklist or equipment in a period",
        description="List missed-check records whose window started in [--from, --to).",
        examples="  missed-checks missed list --checklist forklift-daily --from 2026-03-01 --to 2026-03-08 "
                 "--stack missed-checks\n"
                 f"  missed-checks missed list --equipment FL-001 --from 2026-03-01 --to 2026-04-01 "
                 f"--endpoint {LOCAL_ENDPOINT} --format csv --output fl-001.csv",
        handler=missed_list, formats=RECORD_FORMATS)
    listing.add_argument("--checklist", metavar="ID")
    listing.add_argument("--equipment", metavar="ID")
    listing.add_argument("--from", dest="start", required=True, metavar="DATE|INSTANT")
    listing.add_argument("--to", dest="end", required=True, metavar="DATE|INSTANT")
    listing.add_argument("--tz", default="UTC", metavar="ZONE")


def report_command(args: argparse.Namespace) -> int:
    start = period_bound(args.start, "from", args.tz)
    end = period_bound(args.end, "to", args.tz)
    for checklist_id in args.checklist:
        validate_checklist_id(checklist_id, "checklist")
    for equipment_id in args.equipment:
        validate_equipment_id(equipment_id)
    _require_order(start, end, args)
    out = open_output(args.output)  # before the (long) report, so a bad path fails at once
    target = target_of(args)
    fmt = args.format or ("json" if args.json else "table")
    units = len(args.equipment) or len(args.checklist) or None
    with progress_bar("reading" + (" equipment" if args.equipment else " checklists"), units) as advance:
        report = read_report(target, start, end, now=clock.now(), checklist_ids=args.checklist,
                              equipment_ids=args.equipment, progress=lambda _name: advance(1),
                              detail=fmt in ("html", "json"))
    try:
        write_report(report, fmt, out, zone=identifiers.zone(args.tz, "tz"), zone_name=args.tz,
                     console=stdout_console(out))
    except BaseException:
        if args.output:
            out.close()
        raise
    close_output(out)  # a full disk says so (exit 3): the report was read, only its output is lost
    for warning in report.warnings:
        print(f"missed-checks: warning: {warning}", file=sys.stderr)
    return 0


def missed_dismiss(args: argparse.Namespace) -> int:
    checklist_id = validate_checklist_id(args.checklist, "checklist")
    equipment_id = validate_equipment_id(args.equipment)
    window_start = parse_instant(args.window_start, "window-start")
    within_item_size({"reason": args.reason, "by": args.by})
    record = dismiss_missed(target_of(args), caller_of(args), checklist_id, window_start, equipment_id,
                            reason=args.reason, by=args.by, at=clock.now())
    out: Output = args.out
    if out.format == "json":
        out.json(record)
    else:
        dismissal = record["dismissal"]
        out.say(f"dismissed: {equipment_id} on {checklist_id}, window {record['window_start']} - "
                f"{record['window_end']}, by {dismissal['by']} at {dismissal['at']}: {dismissal['reason']}")
    return 0


def _require_order(start: Any, end: Any, args: argparse.Namespace) -> None:
    if start >= end:
        raise InvalidInput("to", f"--to ({args.end}) must be after --from ({args.start})")


def missed_list(args: argparse.Namespace) -> int:
    start = period_bound(args.start, "from", args.tz)
    end = period_bound(args.end, "to", args.tz)
    _require_order(start, end, args)
    if not args.checklist and not args.equipment:
        raise InvalidInput("checklist", "give --checklist and/or --equipment")
    target = target_of(args)
    if args.equipment:
        rows = list_missed(target, start, end, equipment_id=validate_equipment_id(args.equipment),
                           checklist_id=args.checklist)
    else:
        rows = list_missed(target, start, end, checklist_id=validate_checklist_id(args.checklist, "checklist"))
    table_rows = [{**row, "dismissed": f"{row['dismissal']['by']}: {row['dismissal']['reason']}"
                   if row["dismissal"] else ""} for row in rows]
    args.out.records(table_rows, MISSED_COLUMNS, document=rows, empty="no missed checks in that period")
    return 0


MISSED_COLUMNS = {"checklist_id": "checklist", "equipment_id": "equipment", "window_start": "window start",
                  "window_end": "window end", "judged_at": "judged at", "dismissed": "dismissed"}
