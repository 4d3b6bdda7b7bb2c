"""``calendar`` commands (#23 item 2): closure calendars, named lists of local dates (site holidays,
planned shutdowns) on which the checklists that reference them (``checklist put --closed-on``)
have no window due."""

from __future__ import annotations

import argparse
from typing import Any

from missed_checks import clock
from missed_checks.checklists.closure_calendar import (
    ClosureCalendar,
    parse_dates,
    validate_author,
    validate_calendar_id,
)
from missed_checks.errors import InvalidInput
from missed_checks.timefmt import to_utc_iso
from missed_checks_ops.calendars import calendar_specs, delete_calendar, get_calendar, list_calendars, put_calendar
from missed_checks_ops.cli.common import (
    RECORD_FORMATS,
    RESULT_FORMATS,
    Output,
    add_command,
    add_group,
    caller_of,
    err_console,
    fail,
    interactive,
    target_of,
)
from missed_checks_ops.target import LOCAL_ENDPOINT


def register(subparsers: Any) -> None:
    group = add_group(subparsers, "calendar", help="closure calendars: dates on which checklists are not due",
                      description="Closure calendars: named lists of local dates (site holidays, planned "
                                  "shutdowns). A checklist that references one (checklist put --closed-on) has no "
                                  "window on those dates, in its own time zone, exactly as an EXDATE.")
    put = add_command(
        group, "put", help="create a calendar or replace its dates",
        description="Create a closure calendar or replace its dates (a new revision). Windows already judged "
                    "keep their outcome; windows not judged yet follow the new dates; the schedules of the "
                    "checklists that reference it are re-synced.",
        examples="  missed-checks calendar put plant-shutdown --date 2026-08-03,2026-08-04 --date 2026-08-05 "
                 "--description 'Summer shutdown' --stack missed-checks\n"
                 f"  missed-checks calendar put --file shutdown.yaml --endpoint {LOCAL_ENDPOINT}",
        handler=calendar_put, formats=RESULT_FORMATS)
    put.add_argument("calendar_id", nargs="?", metavar="ID", help="calendar id (or `id:` in --file)")
    put.add_argument("--date", action="append", metavar="YYYY-MM-DD",
                     help="a closed local date; repeat, or separate several with commas")
    put.add_argument("--description", metavar="TEXT")
    put.add_argument("--file", metavar="FILE", help="YAML or JSON: one calendar or a list (id, dates, description)")
    put.add_argument("--by", metavar="WHO", help="who puts it, kept on the revision (default cli:<login name>)")

    show = add_command(group, "show", help="one calendar: its dates, revision and checklists",
                       description="Show a closure calendar: its dates, revision and the checklists that reference "
                                   "it; --revision N shows the dates an earlier revision held (a judged window's "
                                   "judged_by.closed_on names the revision it was judged by).",
                       examples="  missed-checks calendar show plant-shutdown --stack missed-checks\n"
                                "  missed-checks calendar show plant-shutdown --revision 1 --format json "
                                "--stack missed-checks",
                       handler=calendar_show, formats=RESULT_FORMATS)
    show.add_argument("calendar_id", metavar="ID")
    show.add_argument("--revision", type=int, metavar="N")

    add_command(group, "list", help="every calendar", description="List every closure calendar (one Query).",
                examples="  missed-checks calendar list --stack missed-checks\n"
                         f"  missed-checks calendar list --endpoint {LOCAL_ENDPOINT} --format csv",
                handler=calendar_list, formats=RECORD_FORMATS)

    delete = add_command(group, "delete", help="delete a calendar no checklist references",
                         description="Delete a closure calendar. Refused while a checklist references it "
                                     "(the error names them); its revisions stay for the judged windows.",
                         examples="  missed-checks calendar delete plant-shutdown --yes --stack missed-checks",
                         handler=calendar_delete, formats=RESULT_FORMATS)
    delete.add_argument("calendar_id", metavar="ID")
    delete.add_argument("--yes", action="store_true", help="do not ask for confirmation")


def _specs(args: argparse.Namespace) -> list[dict[str, Any]]:
    if args.file:
        if args.date:
            raise InvalidInput("date", "give the dates in --file or with --date, not both")
        specs = calendar_specs(args.file)
        if args.calendar_id:
            if len(specs) > 1:
                raise InvalidInput("id", "give no ID with a file holding several calendars")
            specs[0]["id"] = validate_calendar_id(args.calendar_id)
        if args.description is not None:
            for spec in specs:
                spec["description"] = args.description
        return specs
    if not args.calendar_id:
        raise InvalidInput("id", "give the calendar's ID (or --file)")
    if not args.date:
        raise InvalidInput("date", "give at least one --date YYYY-MM-DD (or --file)")
    dates = [part.strip() for value in args.date for part in value.split(",")]
    return [{"id": validate_calendar_id(args.calendar_id), "dates": parse_dates(dates, "date"),
             "description": args.description}]


def calendar_put(args: argparse.Namespace) -> int:
    specs = _specs(args)  # every one validated before any is written
    target = target_of(args)
    now = clock.now()
    by = validate_author(args.by, "by") if args.by is not None else None  # None: the caller (cli:<login>, --as's)
    caller = caller_of(args)
    written = [put_calendar(target, caller, spec["id"], spec["dates"], now, spec.get("description"), by=by)
               for spec in specs]
    out: Output = args.out
    if out.format == "json":
        documents = [c.to_dict() for c in written]
        out.json(documents if len(documents) > 1 else documents[0])
        return 0
    for calendar in written:
        out.say(f"calendar {calendar.calendar_id}: revision {calendar.revision}, {len(calendar.dates)} date(s)"
                + (f"; re-syncing {len(calendar.used_by)} checklist(s)" if calendar.used_by else ""), "bold")
    return 0


def _say_calendar(calendar: ClosureCalendar, out: Output) -> None:
    out.say(f"calendar {calendar.calendar_id}" + (f" ({calendar.description})" if calendar.description else ""),
            "bold")
    out.say(f"  {'revision:':<12}{calendar.revision}"
            + (f", put by {calendar.updated_by}" if calendar.updated_by else "")
            + (f" at {to_utc_iso(calendar.updated_at)}" if calendar.updated_at else ""))
    out.say(f"  {'dates:':<12}{', '.join(d.isoformat() for d in calendar.dates) or '-'}")
    out.say(f"  {'used by:':<12}{', '.join(sorted(calendar.used_by)) or '-'}")


def calendar_show(args: argparse.Namespace) -> int:
    calendar = get_calendar(target_of(args), caller_of(args), args.calendar_id, args.revision)
    out: Output = args.out
    if out.format == "json":
        out.json(calendar.to_dict())
    else:
        _say_calendar(calendar, out)
    return 0


def calendar_list(args: argparse.Namespace) -> int:
    calendars = list_calendars(target_of(args), caller_of(args))
    rows = [{"id": c.calendar_id, "description": c.description, "dates": len(c.dates),
             "first": c.dates[0].isoformat() if c.dates else None,
             "last": c.dates[-1].isoformat() if c.dates else None,
             "revision": c.revision, "used_by": " ".join(sorted(c.used_by))} for c in calendars]
    args.out.records(rows, {"id": "id", "description": "description", "dates": "dates", "first": "first",
                            "last": "last", "revision": "revision", "used_by": "used by"},
                     document=[c.to_dict() for c in calendars], empty="no calendars")
    return 0


def calendar_delete(args: argparse.Namespace) -> int:
    calendar_id = validate_calendar_id(args.calendar_id)
    if not args.yes:
        if not interactive():
            raise InvalidInput("yes", "deleting a calendar needs --yes")
        if err_console().input(f"Delete calendar {calendar_id}? [y/N] ").strip().lower() not in ("y", "yes"):
            return fail("not deleted", 1)
    delete_calendar(target_of(args), caller_of(args), calendar_id)
    out: Output = args.out
    if out.format == "json":
        out.json({"calendar_id": calendar_id, "deleted": True})
    else:
        out.say(f"calendar {calendar_id} deleted (its revisions are kept for the windows judged by them)")
    return 0
