"""``digest`` commands: who gets the fleet report of the period just ended by e-mail, and when."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from missed_checks import clock
from missed_checks.errors import InvalidInput
from missed_checks.notifications.digest import DAYS, Period, Subscription
from missed_checks_ops.cli.common import (
    RECORD_FORMATS,
    RESULT_FORMATS,
    Output,
    add_command,
    add_group,
    caller_of,
    instant_arg,
    target_of,
)
from missed_checks_ops.digests import (
    list_digests,
    preview_digest,
    subscribe_digest,
    unsubscribe_digest,
)
from missed_checks_ops.target import LOCAL_ENDPOINT

COLUMNS = {"subscription_id": "id", "address": "to", "when": "when", "checklists": "checklists"}


def register(subparsers: Any) -> None:
    group = add_group(subparsers, "digest", help="subscribe an address to the fleet report by e-mail",
                      description="Digest subscriptions: an address gets the fleet report of the period just "
                                  "ended (the previous local day, or the previous week) as one HTML e-mail, "
                                  "worst first, at a local time in its own time zone.")
    subscribe = add_command(
        group, "subscribe", help="create or replace a digest subscription (validated before it is written)",
        description="Subscribe one or more addresses (--to, repeated) to a daily or weekly digest. Everything "
                    "is checked before anything is written: each address, the period, the local time (HH:MM; a "
                    "time the clocks skip on some day is refused), the IANA zone, the day (weekly) and that "
                    "every checklist named exists. Subscribing an existing ID replaces that subscription.",
        examples=f"""  missed-checks digest subscribe fleet-daily --to fleet@example.com --to lead@example.com \\
      --period daily --time 07:00 --timezone Europe/Berlin --stack missed-checks
  missed-checks digest subscribe lead-weekly --to lead@example.com --period weekly --day MO --time 06:30 \\
      --timezone America/New_York --endpoint {LOCAL_ENDPOINT}""",
        handler=digest_subscribe, formats=RESULT_FORMATS)
    subscribe.add_argument("subscription_id", metavar="ID", help="subscription id (names its schedule)")
    subscribe.add_argument("--to", required=True, action="append", metavar="ADDRESS",
                           help="an e-mail address; repeat for several (each gets its own e-mail)")
    subscribe.add_argument("--period", required=True, choices=[p.value for p in Period],
                           help="daily: the previous local day; weekly: the seven days before --day")
    subscribe.add_argument("--time", required=True, metavar="HH:MM", help="local time it is sent, in --timezone")
    subscribe.add_argument("--timezone", required=True, metavar="ZONE", help="IANA zone, e.g. Europe/Berlin")
    subscribe.add_argument("--day", metavar="DAY", help=f"weekly only: {', '.join(DAYS)} (default MO)")
    subscribe.add_argument("--checklist", action="append", default=[], metavar="ID",
                           help="only this checklist (repeat); default: the whole fleet")

    add_command(group, "list", help="every digest subscription",
                description="List every digest subscription (one Query).",
                examples="  missed-checks digest list --stack missed-checks\n"
                         f"  missed-checks digest list --format json --endpoint {LOCAL_ENDPOINT}",
                handler=digest_list, formats=RECORD_FORMATS)

    preview = add_command(
        group, "preview", help="write the digest a subscription would get, without sending it",
        description="Build the digest a firing at --at would send (the report of the period just ended, "
                    "as of --at) and write its HTML, the e-mail's body, to --output (or standard output). "
                    "Nothing is sent or recorded.",
        examples="  missed-checks digest preview fleet-daily --at now --html-output digest.html --stack missed-checks",
        handler=digest_preview, formats=RESULT_FORMATS)
    preview.add_argument("subscription_id", metavar="ID")
    preview.add_argument("--at", default="now", metavar="INSTANT|now", help="the firing's instant (default now)")
    preview.add_argument("--html-output", metavar="FILE", help="write the e-mail's HTML to FILE")

    unsubscribe = add_command(group, "unsubscribe", help="delete a digest subscription",
                              description="Delete a digest subscription: no digest is sent for it any more.",
                              examples="  missed-checks digest unsubscribe fleet-daily --stack missed-checks",
                              handler=digest_unsubscribe, formats=RESULT_FORMATS)
    unsubscribe.add_argument("subscription_id", metavar="ID")


def digest_subscribe(args: argparse.Namespace) -> int:
    now = clock.now()
    subscription = Subscription.create(args.subscription_id, address=args.to, period=args.period, at=args.time,
                                       timezone=args.timezone, day=args.day, checklists=args.checklist, now=now)
    result = subscribe_digest(target_of(args), caller_of(args), subscription, now)
    out: Output = args.out
    if out.format == "json":
        out.json(result)
        return 0
    out.say(f"digest {subscription.subscription_id}: {result['action']}", "bold")
    _print_subscription(result, out)
    return 0


def _when(document: dict[str, Any]) -> str:
    on = f" on {document['day']}" if document.get("day") else ""
    return f"{document['period']}{on} at {document['time']} {document['timezone']}"


def _print_subscription(result: dict[str, Any], out: Output) -> None:
    document, upcoming = result["subscription"], result["next_digest"]
    out.say(f"  to {', '.join(document['addresses'])}, {_when(document)}, "
            + ("every checklist" if not document["checklists"] else "checklists " + ", ".join(document["checklists"])))
    out.say(f"  schedule: {document['schedule']['expression']} in {document['schedule']['timezone']}")
    out.say(f"  next digest: {upcoming['at']}, covering {upcoming['from']} to {upcoming['to']}")


def digest_list(args: argparse.Namespace) -> int:
    found, problems = list_digests(target_of(args), caller_of(args))
    rows = [{"subscription_id": s.subscription_id, "address": ", ".join(s.addresses), "when": s.describe_when(),
             "checklists": ", ".join(s.checklists) or "(all)"} for s in found]
    args.out.records(rows, COLUMNS, document=[s.to_dict() for s in found], empty="no digest subscriptions")
    for problem in problems:
        print(f"missed-checks: warning: {problem}", file=sys.stderr)
    return 0


def digest_unsubscribe(args: argparse.Namespace) -> int:
    result = unsubscribe_digest(target_of(args), caller_of(args), args.subscription_id)
    out: Output = args.out
    if out.format == "json":
        out.json(result)
    else:
        out.say(f"digest {result['subscription_id']}: deleted (no more digests to {', '.join(result['addresses'])})")
    return 0


def digest_preview(args: argparse.Namespace) -> int:
    instant = instant_arg(args.at, "at")
    digest = preview_digest(target_of(args), args.subscription_id, instant)
    if args.html_output:
        try:
            with open(args.html_output, "w", encoding="utf-8") as html_file:
                html_file.write(digest.html)
        except OSError as error:
            raise InvalidInput("html-output", f"cannot write {args.html_output}: {error.strerror}") from None
    out: Output = args.out
    if out.format == "json":
        out.json({**digest.to_dict(), "html_output": args.html_output})
    else:
        out.say(f"digest {digest.digest_id}: {digest.subject}")
        where = f"; HTML written to {args.html_output}" if args.html_output else " (--html-output FILE: its HTML)"
        others = len(digest.subscription.addresses) - 1
        out.say(f"  to {digest.notification.recipient}{where}"
                + (f" (and {others} more address(es), each its own e-mail)" if others else ""))
    return 0
