"""``notifications`` commands (#18): the record of every notification a stack sent or tried to send."""

from __future__ import annotations

import argparse
from typing import Any

from missed_checks.api.parameters import period_bound
from missed_checks.checklists.checklist import validate_checklist_id
from missed_checks.errors import InvalidInput
from missed_checks.notifications.notification import Kind
from missed_checks_ops.cli.common import RECORD_FORMATS, add_command, add_group, caller_of, target_of
from missed_checks_ops.notifications import list_notifications
from missed_checks_ops.target import LOCAL_ENDPOINT

COLUMNS = {"claimed_at": "claimed at", "kind": "kind", "checklist_id": "checklist", "window_start": "window start",
           "to": "to", "equipment": "equipment", "status": "status", "sent_at": "sent at"}


def register(subparsers: Any) -> None:
    group = add_group(subparsers, "notifications", help="who was told what, when (reminders, missed alerts, "
                                                        "escalations)",
                      description="Every notification is recorded once, under a deterministic id, before it is "
                                  "sent (docs/notifications.md).")
    listing = add_command(
        group, "list", help="notification records of a period",
        description="List the notification records first claimed in [--from, --to): kind, checklist, window, "
                    "recipient, the equipment named, status (SENT, FAILED, SENDING) and when each channel sent it.",
        examples="  missed-checks notifications list --from 2026-03-01 --to 2026-04-01 --stack missed-checks\n"
                 "  missed-checks notifications list --from 2026-03-01 --to 2026-03-08 --checklist forklift-daily "
                 f"--kind missed --format json --endpoint {LOCAL_ENDPOINT}",
        handler=notifications_list, formats=RECORD_FORMATS)
    listing.add_argument("--from", dest="start", required=True, metavar="DATE|INSTANT")
    listing.add_argument("--to", dest="end", required=True, metavar="DATE|INSTANT")
    listing.add_argument("--tz", default="UTC", metavar="ZONE", help="zone of date-only --from/--to (default UTC)")
    listing.add_argument("--checklist", metavar="ID")
    listing.add_argument("--kind", choices=[kind.value for kind in Kind])


def notifications_list(args: argparse.Namespace) -> int:
    start = period_bound(args.start, "from", args.tz)
    end = period_bound(args.end, "to", args.tz)
    if start >= end:
        raise InvalidInput("to", f"--to ({args.end}) must be after --from ({args.start})")
    checklist_id = validate_checklist_id(args.checklist, "checklist") if args.checklist else None
    rows = list_notifications(target_of(args), caller_of(args), start, end, checklist_id=checklist_id, kind=args.kind)
    shown = [{**row, "equipment": ", ".join(row["equipment"][:5]) + (" ..." if len(row["equipment"]) > 5 else "")}
             for row in rows]
    args.out.records(shown, COLUMNS, document=rows, empty="no notifications in that period")
    return 0
