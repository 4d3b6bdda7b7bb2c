"""``defect list``, ``defect show`` and ``defect resolve`` (#33), and ``equipment readiness``: what a
check's failed critical items found, followed until a supervisor resolves it, and whether a piece of
equipment may be used now (docs/readiness.md)."""

from __future__ import annotations

import argparse
from typing import Any

from missed_checks import clock
from missed_checks.api.parameters import choice
from missed_checks.defects.defect import Defect, DefectStatus
from missed_checks.errors import InvalidInput
from missed_checks.sites.site import validate_site_id
from missed_checks_ops.cli.common import (
    RECORD_FORMATS,
    RESULT_FORMATS,
    Output,
    add_command,
    add_group,
    caller_of,
    target_of,
)
from missed_checks_ops.defects import get_defect, list_defects, resolve_defect
from missed_checks_ops.inputs import within_item_size
from missed_checks_ops.readiness import equipment_readiness, readiness_of_site
from missed_checks_ops.target import LOCAL_ENDPOINT

COLUMNS = {"defect_id": "defect", "equipment_id": "equipment", "checklist_id": "checklist", "status": "status",
           "found_at": "found at", "found_by": "found by", "failed": "what failed", "resolved": "resolved"}
READINESS_COLUMNS = {"equipment_id": "equipment", "state": "readiness", "since": "since", "reason": "why",
                     "changed_at": "announced at"}
STATE_WORDS = {"cleared": "cleared to operate", "not_cleared": "NOT cleared to operate",
               "unchecked": "not cleared: unchecked", "out_of_service": "out of service"}
STATUSES = tuple(status.value for status in DefectStatus)


def register(subparsers: Any) -> None:
    group = add_group(subparsers, "defect", help="defects: failed critical items, followed until resolved",
                      description="Defects (#33): a check that fails a critical item of its checklist opens one; "
                                  "the equipment is not cleared to operate until a supervisor resolves it with a "
                                  "note (or a later passing check clears it, when the checklist says so).")
    listing = add_command(
        group, "list", help="defects of your sites (or one site, one piece of equipment)",
        description="List defects, oldest found first: every one at the sites you may read, or those of --site, "
                    "of --equipment, and of --status (open or resolved).",
        examples=f"  missed-checks defect list --status open --endpoint {LOCAL_ENDPOINT}\n"
                 "  missed-checks defect list --site north --equipment FL-001 --format csv --stack missed-checks\n"
                 f"  missed-checks defect list --site north --as supervisor-north --endpoint {LOCAL_ENDPOINT}",
        handler=defect_list, formats=RECORD_FORMATS)
    listing.add_argument("--site", metavar="SITE", help="only this site")
    listing.add_argument("--equipment", metavar="EQUIPMENT", help="only this piece of equipment")
    listing.add_argument("--status", metavar="STATUS", help="open or resolved")

    show = add_command(
        group, "show", help="one defect: what failed, who found it, how it was resolved",
        description="Show one defect: the critical items its check failed (as its checklist's revision asked "
                    "them), who found it and when, and, once resolved, by whom, when and with which note.",
        examples=f"  missed-checks defect show D-3f9a2c1b7e4d5a60 --endpoint {LOCAL_ENDPOINT}\n"
                 "  missed-checks defect show D-3f9a2c1b7e4d5a60 --format json --stack missed-checks",
        handler=defect_show, formats=RESULT_FORMATS)
    show.add_argument("defect", metavar="DEFECT")

    resolve = add_command(
        group, "resolve", help="resolve an open defect with a note (a supervisor, a site manager or an admin)",
        description="Resolve an open defect: say what was done in --note (kept with the defect). Its equipment "
                    "is cleared to operate again once no defect of it is open and its pre-use checks are done. "
                    "An operator or an auditor may not; a defect resolved already is refused (exit 1).",
        examples=f"  missed-checks defect resolve D-3f9a2c1b7e4d5a60 --note 'brake line replaced' "
                 f"--as supervisor-north --endpoint {LOCAL_ENDPOINT}",
        handler=defect_resolve, formats=RESULT_FORMATS)
    resolve.add_argument("defect", metavar="DEFECT")
    resolve.add_argument("--note", required=True, help="what was done (1 to 1,000 characters)")


def register_readiness(group: Any) -> None:
    """``equipment readiness``, in the ``equipment`` group."""
    command = add_command(
        group, "readiness", help="whether equipment is cleared to operate (one, or a site's)",
        description="One piece of equipment's readiness now: cleared, not_cleared (a defect is open), unchecked "
                    "(a pre-use checklist's current window has no passing check) or out_of_service, since when and "
                    "why. With --site instead: the readiness last announced of each piece of the site's equipment.",
        examples=f"  missed-checks equipment readiness FL-001 --endpoint {LOCAL_ENDPOINT}\n"
                 f"  missed-checks equipment readiness --site north --format csv --endpoint {LOCAL_ENDPOINT}\n"
                 "  missed-checks equipment readiness FL-001 --format json --stack missed-checks",
        handler=readiness, formats=RECORD_FORMATS)
    command.add_argument("equipment", nargs="?", metavar="EQUIPMENT")
    command.add_argument("--site", metavar="SITE", help="every piece of this site's equipment instead")


def _row(defect: Defect) -> dict[str, Any]:
    resolved = ""
    if defect.resolved_at is not None:
        resolved = f"{defect.resolved_by} at {defect.to_dict()['resolved_at']}: {defect.resolution}"
    return {**defect.to_dict(), "failed": defect.describe(), "resolved": resolved}


def defect_list(args: argparse.Namespace) -> int:
    status = None if args.status is None else DefectStatus(choice(args.status, "status", STATUSES))
    site = None if args.site is None else validate_site_id(args.site, "site")
    found = list_defects(target_of(args), caller_of(args), site_id=site, equipment_id=args.equipment, status=status)
    args.out.records([_row(d) for d in found], COLUMNS, document=[d.to_dict() for d in found],
                     empty="no defect" + (f" {args.status}" if args.status else "")
                     + (f" at {site}" if site else "") + (f" of {args.equipment}" if args.equipment else ""))
    return 0


def _say_defect(out: Output, defect: Defect) -> None:
    document = defect.to_dict()
    out.say(f"defect {defect.defect_id}: {defect.status.value}")
    out.say(f"  {'equipment:':<14}{defect.equipment_id} (site {defect.site_id or '-'})")
    out.say(f"  {'checklist:':<14}{defect.checklist_id}")
    out.say(f"  {'found:':<14}{document['found_at']} by {defect.found_by or 'someone unnamed'}")
    for item in defect.failed_items:
        out.say(f"  {'failed:':<14}{item.describe()}")
    if defect.resolved_at is not None:
        how = "a passing check" if document["resolved_how"] == "passing_check" else defect.resolved_by
        out.say(f"  {'resolved:':<14}{document['resolved_at']} by {how}: {defect.resolution}")


def defect_show(args: argparse.Namespace) -> int:
    defect = get_defect(target_of(args), caller_of(args), args.defect)
    out: Output = args.out
    if out.format == "json":
        out.json(defect.to_dict())
    else:
        _say_defect(out, defect)
    return 0


def defect_resolve(args: argparse.Namespace) -> int:
    within_item_size({"note": args.note})
    defect = resolve_defect(target_of(args), caller_of(args), args.defect, args.note, now=clock.now())
    out: Output = args.out
    if out.format == "json":
        out.json(defect.to_dict())
    else:
        out.say(f"resolved: {defect.defect_id} of {defect.equipment_id} ({defect.describe()}), by "
                f"{defect.resolved_by}: {defect.resolution}")
    return 0


def readiness(args: argparse.Namespace) -> int:
    if (args.equipment is None) == (args.site is None):
        raise InvalidInput("equipment", "give one piece of equipment, or --site SITE for every one of a site "
                                        "(not both)")
    out: Output = args.out
    if args.site is not None:
        records = readiness_of_site(target_of(args), caller_of(args), validate_site_id(args.site, "site"))
        rows = [record.to_dict() for record in records]
        out.records(rows, READINESS_COLUMNS, empty=f"no readiness announced at {args.site} yet")
        return 0
    now = clock.now()
    found = equipment_readiness(target_of(args), caller_of(args), args.equipment, now)
    document = found.to_dict()
    if out.format == "json":
        out.json(document)
    elif out.format == "csv":
        out.records([document], {k: k for k in ("equipment_id", "state", "since", "reason")})
    else:
        since = f" since {document['since']}" if document["since"] else ""
        out.say(f"{found.equipment_id}: {STATE_WORDS.get(found.state.value, found.state.value)}{since}")
        out.say(f"  {found.reason}")
    return 0
