"""``equipment out-of-service``, ``equipment back-in-service`` and ``equipment out-of-service-list``
(issue #23 item 1): equipment out of use over a period, for all its checklists."""

from __future__ import annotations

import argparse
import getpass
from typing import Any

from missed_checks import clock, identifiers
from missed_checks.api.parameters import period_bound
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.errors import InvalidInput
from missed_checks_ops.cli.common import (
    RECORD_FORMATS,
    RESULT_FORMATS,
    Output,
    add_command,
    caller_of,
    instant_arg,
    target_of,
)
from missed_checks_ops.inputs import within_item_size
from missed_checks_ops.out_of_service import back_in_service, cancel_planned, list_periods, take_out_of_service
from missed_checks_ops.target import LOCAL_ENDPOINT

COLUMNS = {"equipment_id": "equipment", "from": "from", "to": "to", "reason": "reason", "recorded_by": "by",
           "recorded_at": "recorded at", "ended": "ended early"}


def register(group: Any) -> None:
    """The commands, in the ``equipment`` group."""
    out = add_command(
        group, "out-of-service", help="take equipment out of service (no missed checks meanwhile)",
        description="Record that a piece of equipment is out of service over [--from, --to), for all its "
                    "checklists: a window overlapping the period for any part is excused (no missed check; the "
                    "report counts it apart). Leave --to out when the end is not known yet, and end it with "
                    "back-in-service. Windows judged before the period was recorded keep their outcome. "
                    "Recording the same period again changes nothing; a period overlapping another one of the "
                    "same equipment is refused.",
        examples="  missed-checks equipment out-of-service FL-001 --from 2026-03-23T06:00:00+01:00 "
                 "--to 2026-03-30T06:00:00+02:00 \\\n      --reason 'gearbox in the workshop' --stack missed-checks\n"
                 "  missed-checks equipment out-of-service FL-002 --from 2026-03-23T06:00:00+01:00 "
                 f"--reason 'waiting for parts' --by j.doe --endpoint {LOCAL_ENDPOINT}",
        handler=out_of_service, formats=RESULT_FORMATS)
    out.add_argument("equipment", metavar="EQUIPMENT")
    out.add_argument("--from", dest="start", metavar="INSTANT", help="ISO 8601 instant with offset (default now)")
    out.add_argument("--to", dest="end", metavar="INSTANT", help="back in service from then (default: not known)")
    out.add_argument("--reason", required=True, help="why (shown in the report)")
    out.add_argument("--by", metavar="WHO", help="who records it (default: your user name)")

    back = add_command(
        group, "back-in-service", help="end an out-of-service period early",
        description="End the equipment's out-of-service period in effect at --at (default now): its to becomes "
                    "--at, the planned one is kept. --at may not be in the past (windows judged meanwhile were "
                    "excused and stay so), nor at or before the period's from.",
        examples="  missed-checks equipment back-in-service FL-002 --by j.doe --stack missed-checks",
        handler=back_in_service_command, formats=RESULT_FORMATS)
    back.add_argument("equipment", metavar="EQUIPMENT")
    back.add_argument("--at", metavar="INSTANT", help="back in service from then (default now)")
    back.add_argument("--by", metavar="WHO", help="who ends it (default: your user name)")

    cancel = add_command(
        group, "out-of-service-cancel", help="cancel a planned out-of-service period (not started yet)",
        description="Delete the equipment's out-of-service period starting at --from, while it has not started: "
                    "no window overlapping it has been judged, so nothing judged changes. A period that has "
                    "started is ended with back-in-service instead.",
        examples="  missed-checks equipment out-of-service FL-001 --from 2031-01-06T06:00:00+01:00 "
                 "--reason 'annual service' --stack missed-checks\n"
                 "  missed-checks equipment out-of-service-cancel FL-001 --from 2031-01-06T06:00:00+01:00 "
                 "--stack missed-checks",
        handler=cancel_command, formats=RESULT_FORMATS)
    cancel.add_argument("equipment", metavar="EQUIPMENT")
    cancel.add_argument("--from", dest="start", required=True, metavar="INSTANT",
                        help="the period's from, as out-of-service-list shows it")

    listing = add_command(
        group, "out-of-service-list", help="out-of-service periods (of some equipment, in a period)",
        description="List out-of-service periods, past and planned, by from: every one, or those sharing an "
                    "instant with [--from, --to), of the --equipment given (one Query).",
        examples=f"  missed-checks equipment out-of-service-list --endpoint {LOCAL_ENDPOINT}\n"
                 "  missed-checks equipment out-of-service-list --equipment FL-001 --from 2026-03-01 --to 2026-04-01 "
                 "--tz Europe/Berlin --format csv --stack missed-checks",
        handler=out_of_service_list, formats=RECORD_FORMATS)
    listing.add_argument("--equipment", action="append", default=[], metavar="EQUIPMENT",
                         help="only this equipment (repeat for more)")
    listing.add_argument("--from", dest="start", metavar="DATE|INSTANT")
    listing.add_argument("--to", dest="end", metavar="DATE|INSTANT")
    listing.add_argument("--tz", default="UTC", metavar="ZONE", help="zone of dates given as YYYY-MM-DD")


def _who(given: str | None) -> str:
    if given is not None:
        return given
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name in this environment
        return "unknown"


def out_of_service(args: argparse.Namespace) -> int:
    now = clock.now()
    start = instant_arg(args.start, "from")
    end = None if args.end is None else instant_arg(args.end, "to")
    by = _who(args.by)
    within_item_size({"reason": args.reason, "by": by})
    recorded = take_out_of_service(target_of(args), caller_of(args), args.equipment, start, end, reason=args.reason,
                                   by=by, now=now)
    document = {**recorded.period.to_dict(), "action": "recorded" if recorded.written else "unchanged"}
    out: Output = args.out
    if out.format == "json":
        out.json(document)
    else:
        out.say(f"{document['equipment_id']} out of service from {document['from']} "
                + (f"until {document['to']}" if document["to"] else "until further notice")
                + f": {document['reason']}"
                + ("" if recorded.written else f" (recorded already by {document['recorded_by']} at "
                                               f"{document['recorded_at']}: unchanged)"))
    return 0


def back_in_service_command(args: argparse.Namespace) -> int:
    now = clock.now()
    ended = back_in_service(target_of(args), caller_of(args), args.equipment, instant_arg(args.at, "at"),
                            by=_who(args.by), now=now)
    document = ended.to_dict()
    out: Output = args.out
    if out.format == "json":
        out.json(document)
    else:
        planned = f"planned {document['planned_to']}" if document.get("planned_to") else "it had no end"
        out.say(f"{document['equipment_id']} back in service from {document['to']} (out of service since "
                f"{document['from']}; {planned})")
    return 0


def cancel_command(args: argparse.Namespace) -> int:
    now = clock.now()
    cancelled = cancel_planned(target_of(args), caller_of(args), args.equipment,
                               instant_arg(args.start, "from", default_now=False), now=now)
    document = {**cancelled.to_dict(), "action": "cancelled"}
    out: Output = args.out
    if out.format == "json":
        out.json(document)
    else:
        out.say(f"cancelled: {document['equipment_id']} out of service from {document['from']}"
                + (f" until {document['to']}" if document["to"] else "") + f" ({document['reason']})")
    return 0


def _row(period: OutOfServicePeriod) -> dict[str, Any]:
    row = period.to_dict()
    row["ended"] = ""
    if row.get("ended_at"):
        row["ended"] = f"{row['ended_by']} at {row['ended_at']}" + (
            f" (planned {row['planned_to']})" if row.get("planned_to") else "")
    return row


def out_of_service_list(args: argparse.Namespace) -> int:
    identifiers.zone(args.tz, "tz")  # checked even when no date is given to read in it
    start = period_bound(args.start, "from", args.tz) if args.start else None
    end = period_bound(args.end, "to", args.tz) if args.end else None
    if start is not None and end is not None and end <= start:
        raise InvalidInput("to", f"--to ({args.end}) must be after --from ({args.start})")
    periods = list_periods(target_of(args), caller_of(args), start, end, args.equipment)
    args.out.records([_row(p) for p in periods], COLUMNS, document=[p.to_dict() for p in periods],
                     empty="no equipment out of service" + (" in that period" if start or end else ""))
    return 0

