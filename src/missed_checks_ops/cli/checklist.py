"""``checklist``, ``equipment`` and ``check`` commands: the data a fleet's checks are judged on."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import date
from typing import Any

from rich.table import Table

from missed_checks import clock
from missed_checks.checklists.checklist import Checklist, validate_checklist_id
from missed_checks.checklists.closure_calendar import validate_closed_on
from missed_checks.equipment.assignments import validate_equipment_id
from missed_checks.errors import InvalidInput
from missed_checks.notifications.notification import NotifySettings
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks.performed_checks.recording import ChecksRefused
from missed_checks.timefmt import to_utc_iso
from missed_checks_ops.calendars import closures_of_specs
from missed_checks_ops.checklists import (
    change_assignments,
    checklist_state,
    delete_checklist,
    equipment_of,
    import_checks,
    list_checklists,
    named_checklist,
    pause_checklist,
    preview,
    put_checklist,
    record_check,
    refused_checks,
    resume_checklist,
    site_defaults,
    validate_rule,
)
from missed_checks_ops.cli.common import (
    RECORD_FORMATS,
    RESULT_FORMATS,
    Output,
    add_command,
    add_group,
    bulk_progress,
    caller_of,
    clock_kind,
    err_console,
    fail,
    instant_arg,
    interactive,
    target_of,
)
from missed_checks_ops.cli.defect import register_readiness  # #33
from missed_checks_ops.cli.out_of_service import register as register_out_of_service  # issue #23 item 1
from missed_checks_ops.inputs import (
    bad_rows,
    checklist_specs,
    equipment_ids,
    performed_checks_csv,
    within_item_size,
)
from missed_checks_ops.principal import cli_principal
from missed_checks_ops.target import LOCAL_ENDPOINT


def register(subparsers: Any) -> None:
    _register_checklist(subparsers)
    _register_equipment(subparsers)
    _register_check(subparsers)


# -- checklist ------------------------------------------------------------------------------------
def _register_checklist(subparsers: Any) -> None:
    group = add_group(subparsers, "checklist", help="create, show, list, pause, resume, delete checklists",
                      description="Checklists: a recurrence, a time zone, a window and a grace period.")
    put = add_command(
        group, "put", help="create or edit a checklist (validated before it is written)",
        description="Create or edit a checklist. The rule is checked by the recurrence engine first; the "
                    "next windows and the schedule it will get are shown. Editing the rule changes the "
                    "future only: windows that closed before the edit are never judged by the new rule. "
                    "A put replaces the whole rule: an omitted --timezone, --window or --grace takes its "
                    "default (one day, no grace), it does not keep the old value.",
        examples=f"""  missed-checks checklist put forklift-daily --name "Forklift pre-use check" \\
      --recurrence 'DTSTART;TZID=Europe/Berlin:20260105T060000' \\
      --recurrence 'RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR' --window PT8H --grace PT30M --stack missed-checks
  missed-checks checklist put --file checklists.yaml --endpoint {LOCAL_ENDPOINT}
  missed-checks checklist put --file pre-use.yaml --stack missed-checks   # a pre-use checklist with items (#33)
  missed-checks checklist put fire-monthly --recurrence 'DTSTART:20260105T080000' \\
      --recurrence 'RRULE:FREQ=MONTHLY;BYDAY=1MO' --timezone Europe/Riga --dry-run --format json \\
      --stack missed-checks
  missed-checks checklist put forklift-daily --recurrence 'DTSTART;TZID=Europe/Berlin:20260105T060000' \\
      --recurrence 'RRULE:FREQ=DAILY' --window PT8H --notify-to crew@example.com --remind-before PT1H \\
      --escalate-to lead@example.com --escalate-after 3 --stack missed-checks""",
        handler=checklist_put, formats=RESULT_FORMATS)
    put.add_argument("checklist_id", nargs="?", metavar="ID", help="checklist id (or `id:` in --file)")
    put.add_argument("--file", metavar="FILE", help="YAML or JSON: one checklist or a list "
                                                    "(id, name, recurrence, timezone, window, grace, closed_on, "
                                                    "notify)")
    put.add_argument("--name")
    put.add_argument("--recurrence", action="append", metavar="LINE",
                     help="RFC 5545 text; repeat for several lines (DTSTART, RRULE, EXDATE) or separate them "
                          "with \\n")
    put.add_argument("--timezone", metavar="ZONE", help="IANA zone when DTSTART has no TZID")
    put.add_argument("--window", metavar="DURATION", help="ISO 8601 window length, e.g. PT8H or P1D")
    put.add_argument("--grace", metavar="DURATION", help="ISO 8601 grace after the window, e.g. PT30M")
    put.add_argument("--windows", type=int, default=5, metavar="N", help="how many next windows to show")
    put.add_argument("--closed-on", action="append", metavar="CALENDAR",  # closure calendars (#23 item 2)
                     help="a closure calendar whose dates close this checklist's windows (repeat for several; "
                          "each must exist: missed-checks calendar put)")
    put.add_argument("--site", metavar="SITE",  # sites (#31)
                     help="the site a new checklist belongs to (its time zone is the default); a person (--as) "
                          "names one of the sites they manage")
    put.add_argument("--dry-run", action="store_true", help="validate and show, write nothing")
    # notifications (#18): who is told; any of these replaces the checklist's notify block, none keeps it
    notify = put.add_argument_group("who is told (docs/notifications.md); without these flags a put keeps them")
    notify.add_argument("--notify-to", action="append", metavar="ADDRESS",
                        help="told of reminders and missed windows (repeat for several)")
    notify.add_argument("--remind-before", action="append", metavar="DURATION",
                        help="a reminder this long before each window closes, e.g. PT1H (repeat, up to 3; at "
                             "least PT1M, so that it fires before the window closes)")
    notify.add_argument("--escalate-to", action="append", metavar="ADDRESS",
                        help="told when the same equipment is missed --escalate-after windows in a row")
    notify.add_argument("--escalate-after", type=int, metavar="N", help="consecutive misses that escalate (1 or more)")
    notify.add_argument("--no-notify", action="store_true", help="tell nobody any more")

    show = add_command(group, "show", help="one checklist, its schedule and next windows",
                       description="Show a checklist: rule, status, watermark, schedule (or sync error), "
                                   "equipment count and next windows.",
                       examples="  missed-checks checklist show forklift-daily --stack missed-checks\n"
                                "  missed-checks checklist show forklift-daily --format json --output forklift.json "
                                "--stack missed-checks",
                       handler=checklist_show, formats=RESULT_FORMATS)
    show.add_argument("checklist_id", metavar="ID")
    show.add_argument("--windows", type=int, default=5, metavar="N")

    add_command(group, "list", help="every checklist", description="List every checklist (one Query).",
                examples="  missed-checks checklist list --stack missed-checks\n"
                         f"  missed-checks checklist list --endpoint {LOCAL_ENDPOINT} --format csv "
                         "--output checklists.csv",
                handler=checklist_list, formats=RECORD_FORMATS)

    for name, verb, text in (
        ("pause", "Pause", "its schedule is disabled; windows closing while paused are never judged"),
        ("resume", "Resume", "judging restarts from now: the pause is not back-filled"),
        ("delete", "Delete", "its schedule goes, its assignments end; judged windows and checks stay"),
    ):
        command = add_command(group, name, help=f"{name} a checklist", description=f"{verb} a checklist: {text}.",
                              examples=f"  missed-checks checklist {name} forklift-daily --stack missed-checks"
                                       + (" --yes" if name == "delete" else ""),
                              handler=checklist_change, formats=RESULT_FORMATS)
        command.add_argument("checklist_id", metavar="ID")
        if name == "delete":
            command.add_argument("--yes", action="store_true", help="do not ask for confirmation")


def _rule_args(args: argparse.Namespace) -> list[dict[str, Any]]:
    flags = {
        "id": args.checklist_id,
        "name": args.name,
        # Lines as repeated flags, or one flag with real newlines or a literal \n (as `recurrence` takes).
        "recurrence": "\n".join(args.recurrence).replace("\\n", "\n") if args.recurrence else None,
        "timezone": args.timezone,
        "window": args.window,
        "grace": args.grace,
        "closed_on": args.closed_on,
        "site_id": args.site,  # sites (#31)
    }
    if args.file:
        specs = checklist_specs(args.file)
        if len(specs) > 1 and args.checklist_id:
            raise InvalidInput("id", "give no ID with a file holding several checklists")
        return [{**spec, **{k: v for k, v in flags.items() if v}} for spec in specs]
    if not flags["recurrence"]:
        raise InvalidInput("recurrence", "give --recurrence (or --file)")
    return [flags]


def _notify_flags(args: argparse.Namespace) -> dict[str, Any] | None:
    """The notify block the flags give (#18), None when no flag is given (the checklist keeps its own)."""
    if args.no_notify:
        if args.notify_to or args.remind_before or args.escalate_to or args.escalate_after is not None:
            raise InvalidInput("no-notify", "give either --no-notify or the --notify-to ... flags, not both")
        return {}
    given = {"to": args.notify_to, "remind_before": args.remind_before, "escalate_to": args.escalate_to,
             "escalate_after": args.escalate_after}
    return {k: v for k, v in given.items() if v is not None} if any(v is not None for v in given.values()) else None


def checklist_put(args: argparse.Namespace) -> int:
    specs = _rule_args(args)
    flags = _notify_flags(args)
    now = clock.now()
    rules = []
    if args.site and not args.dry_run:  # sites (#31): the site exists, and its zone is the default
        specs = [site_defaults(target_of(args), spec) for spec in specs]
    for spec in specs:  # validate every one before writing any
        if not spec.get("id"):
            raise InvalidInput("id", "every checklist needs an id")
        validate_checklist_id(spec["id"])
        if not spec.get("recurrence"):
            raise InvalidInput("recurrence", f"checklist {spec['id']} has no recurrence")
        within_item_size({key: spec.get(key) for key in ("name", "recurrence", "timezone", "window", "grace")})
        rule = validate_rule(str(spec["recurrence"]), spec.get("timezone"), spec.get("window"), spec.get("grace"))
        if flags is not None or "notify" in spec:  # notifications (#18): checked against this rule's windows
            spec["notify"] = NotifySettings.parse(flags if flags is not None else spec["notify"], rule)
        rules.append(rule)
    target = None if args.dry_run else target_of(args)
    # closure calendars (#23 item 2): every calendar named exists (checked before any write); the
    # preview leaves their dates out
    if target is None:
        for index, spec in enumerate(specs):
            validate_closed_on(spec.get("closed_on"), f"entries[{index}].closed_on" if len(specs) > 1 else "closed_on")
        closures: list[frozenset[date]] = [frozenset()] * len(specs)
    else:
        closures = closures_of_specs(target, specs)
    previews = [preview(rule.with_closures(closed), now, max(0, args.windows))
                for rule, closed in zip(rules, closures, strict=True)]
    results = []
    with bulk_progress("writing checklists", "checklists", [str(spec["id"]) for spec in specs]) as advance:
        for spec, shown in zip(specs, previews, strict=True):
            checklist_id = str(spec["id"])
            action = "valid (dry run, nothing written)"
            if target is not None:
                action = put_checklist(target, caller_of(args), spec, now, validated=True)
                advance(1)
            results.append({"checklist_id": checklist_id, "action": action, **shown.to_dict(),
                            **_notify_document(spec.get("notify"))})
    out: Output = args.out
    if out.format == "json":
        out.json(results if len(results) > 1 else results[0])
        return 0
    for result in results:
        out.say(f"checklist {result['checklist_id']}: {result['action']}", "bold")
        _print_preview(result, out)
    return 0


def _notify_document(settings: NotifySettings | None) -> dict[str, Any]:
    return {} if settings is None else {"notify": settings.to_dict()}


def _print_notify(document: dict[str, Any], out: Output) -> None:
    """Who is told (#18), one line each."""
    notify = document.get("notify")
    if not isinstance(notify, dict) or not (notify.get("to") or notify.get("escalate_to")):
        if isinstance(notify, dict):
            out.say("  notify:         nobody")
        return
    out.say(f"  {'notify:':<16}{', '.join(notify.get('to') or []) or '-'}"
            + (f"; reminders {', '.join(notify['remind_before'])} before a window closes"
               if notify.get("remind_before") else ""))
    if notify.get("escalate_to"):
        out.say(f"  {'escalate:':<16}{', '.join(notify['escalate_to'])} after "
                f"{notify.get('escalate_after')} consecutive misses of the same equipment")


def _print_preview(document: dict[str, Any], out: Output) -> None:
    _print_notify(document, out)
    schedule = document["schedule"]
    exact = "exact" if schedule["exact"] else "superset: the evaluation skips firings that close no window"
    out.say(f"  schedule: {schedule['expression']} in {schedule['timezone']} ({exact})")
    if schedule.get("start_date") or schedule.get("end_date"):
        out.say(f"  from {schedule.get('start_date') or '-'} until {schedule.get('end_date') or '-'}")
    if not document["next_windows"]:
        out.say("  no windows ahead: the rule has ended")
        return
    table = Table("next window starts", "ends", "judged after (end + grace)", box=None, pad_edge=False)
    for window in document["next_windows"]:
        table.add_row(window["start"], window["end"], window["evaluate_at"])
    out.console.print(table)


def _checklist_document(checklist: Checklist) -> dict[str, Any]:
    item = checklist.to_dict()
    item.update({k: v for k, v in checklist.extra.items() if k in ("schedule", "sync_error")})
    if checklist.watermark is not None:
        # Windows ending at or before this instant are never judged (again).
        item["watermark"] = to_utc_iso(checklist.watermark)
    return item


def checklist_show(args: argparse.Namespace) -> int:
    now = clock.now()
    state = checklist_state(target_of(args), caller_of(args), args.checklist_id, now)
    checklist = state.checklist
    document = _checklist_document(checklist)
    document["equipment"] = {"assigned": state.assigned, "unassigned": state.unassigned}
    document["now"] = {"at": to_utc_iso(now), "clock": clock_kind()}  # what "next windows" count from
    try:
        shown = preview(checklist.parsed(), now, max(0, args.windows)).to_dict()
        document["next_windows"] = shown["next_windows"]
        if not document.get("schedule"):
            document["schedule"] = {**shown["schedule"], "state": "not synced yet"}
    except InvalidInput as error:
        document["rule_error"] = str(error)
    out: Output = args.out
    if out.format == "json":
        out.json(document)
        return 0
    out.say(f"checklist {checklist.checklist_id}" + (f" ({checklist.name})" if checklist.name else ""), "bold")
    for name in ("status", "recurrence", "timezone", "window", "grace", "closed_on", "created_at", "updated_at",
                 "effective_from", "evaluated_until", "watermark", "revision"):
        if document.get(name) not in (None, ""):
            value = str(document[name]).replace("\n", "\n" + " " * 18)
            out.say(f"  {name + ':':<16}{value}")
    clock_name = "the local stack's simulated clock" if document["now"]["clock"] == "simulated" else "wall clock"
    out.say(f"  {'now:':<16}{document['now']['at']} ({clock_name})")
    out.say(f"  {'equipment:':<16}{document['equipment']['assigned']} assigned, "
            f"{document['equipment']['unassigned']} unassigned")
    if checklist.items:  # what a check answers (#33): --answer ITEM=VALUE of check record
        flags = [name for name in ("pre_use", "clear_on_pass") if getattr(checklist, name)]
        out.say(f"  {'items:':<16}revision {checklist.items_revision}" + (f" ({', '.join(flags)})" if flags else ""))
        for item in checklist.items:
            asked = {"pass_fail": "pass or fail", "number": f"a number, passing {item.expected()}",
                     "choice": f"one of {', '.join(item.choices)}, passing {item.expected()}",
                     "text": "text"}[item.kind.value]
            out.say(f"    {item.item_id}: {item.label}{' (critical)' if item.critical else ''}: {asked}"
                    + ("" if item.required else " (optional)"))
    if document.get("sync_error"):
        out.say(f"  schedule error: {document['sync_error']}", "red")
    elif document.get("schedule", {}).get("synced_at"):
        out.say(f"  schedule state: {document['schedule'].get('state')} "
                f"(synced {document['schedule'].get('synced_at')})")
    if "rule_error" in document:
        out.say(f"  rule error: {document['rule_error']}", "red")
        return 0
    _print_preview(document, out)
    return 0


CHECKLIST_COLUMNS = {"checklist_id": "id", "name": "name", "status": "status", "recurrence": "rule",
                     "timezone": "zone", "window": "window", "grace": "grace", "watermark": "judged up to",
                     "schedule": "schedule"}


def checklist_list(args: argparse.Namespace) -> int:
    checklists = list_checklists(target_of(args), caller_of(args))
    rows = []
    for checklist in checklists:
        schedule = checklist.extra.get("schedule") or {}
        state = ("ERROR: " + str(checklist.extra["sync_error"].get("message"))) if checklist.extra.get(
            "sync_error") else f"{schedule.get('expression', '-')} {schedule.get('state', '')}".strip()
        rows.append({"checklist_id": checklist.checklist_id, "name": checklist.name, "status": checklist.status.value,
                     "recurrence": checklist.recurrence.replace("\n", "\\n"), "timezone": checklist.timezone,
                     "window": checklist.window, "grace": checklist.grace,
                     "watermark": to_utc_iso(checklist.watermark) if checklist.watermark else None,
                     "schedule": state})
    args.out.records(rows, CHECKLIST_COLUMNS, document=[_checklist_document(c) for c in checklists],
                     empty="no checklists")
    return 0


def checklist_change(args: argparse.Namespace) -> int:
    command = args.checklist_command
    target = target_of(args)
    checklist_id = validate_checklist_id(args.checklist_id)
    now = clock.now()
    if command == "delete":
        if not args.yes:
            if not interactive():
                raise InvalidInput("yes", "deleting a checklist needs --yes")
            answer = err_console().input(f"Delete checklist {checklist_id} (its assignments end)? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                return fail("not deleted", 1)
        delete_checklist(target, caller_of(args), checklist_id)
        document: dict[str, Any] = {"checklist_id": checklist_id, "deleted": True}
    else:
        change = pause_checklist if command == "pause" else resume_checklist
        document = _checklist_document(change(target, caller_of(args), checklist_id, now))
    out: Output = args.out
    if out.format == "json":
        out.json(document)
    elif command == "delete":
        out.say(f"checklist {checklist_id} deleted (its performed and missed checks are kept)")
    else:
        out.say(f"checklist {checklist_id}: {document['status']}"
                + (f", judging windows that end after {document.get('watermark')}" if command == "resume" else ""))
    return 0


# -- equipment ------------------------------------------------------------------------------------
def _register_equipment(subparsers: Any) -> None:
    group = add_group(subparsers, "equipment", help="assign equipment to checklists, or unassign it",
                      description="Equipment assignments: equipment counts for a window when it was assigned "
                                  "before the window started and not unassigned before it ended.")
    for name, verb in (("assign", "Assign"), ("unassign", "Unassign")):
        command = add_command(
            group, name, help=f"{name} equipment (many ids, or a file of them)",
            description=f"{verb} equipment {'to' if name == 'assign' else 'from'} a checklist, from --at (default "
                        "now) on. Ids come as arguments and/or from a file (one per line, or the first CSV column; "
                        "- reads standard input).",
            # assigned from 1 March and FL-001 kept: the check examples below are of assigned equipment
            examples=(f"  missed-checks equipment {name} --checklist forklift-daily "
                      + ("FL-001 FL-002 --at 2026-03-01T00:00:00+01:00" if name == "assign" else "FL-002")
                      + " --stack mc\n"
                      f"  missed-checks equipment {name} --checklist forklift-daily --file fleet.txt --stack mc"
                      + ("\n  missed-checks equipment assign --checklist forklift-pre-use FL-001 --stack mc"
                         if name == "assign" else "")),
            handler=equipment_change, formats=RESULT_FORMATS)
        command.add_argument("equipment", nargs="*", metavar="EQUIPMENT")
        command.add_argument("--checklist", required=True, metavar="ID")
        command.add_argument("--file", metavar="FILE")
        command.add_argument("--at", metavar="INSTANT", help="ISO 8601 instant with offset (default now)")
    listing = add_command(group, "list", help="equipment of a checklist",
                          description="List a checklist's equipment assignments (one Query).",
                          examples="  missed-checks equipment list --checklist forklift-daily --stack missed-checks\n"
                                   "  missed-checks equipment list --checklist forklift-daily --format csv "
                                   f"--output fleet.csv --endpoint {LOCAL_ENDPOINT}",
                          handler=equipment_list, formats=RECORD_FORMATS)
    listing.add_argument("--checklist", required=True, metavar="ID")
    register_out_of_service(group)  # out of service (issue #23 item 1): missed_checks_ops.cli.out_of_service
    register_readiness(group)  # cleared to operate (#33): missed_checks_ops.cli.defect


def equipment_change(args: argparse.Namespace) -> int:
    ids = equipment_ids(args.equipment, args.file)
    checklist_id = validate_checklist_id(args.checklist, "checklist")
    at = instant_arg(args.at, "at")
    target = target_of(args)
    caller = caller_of(args)
    named_checklist(target, caller, checklist_id)  # a typo in --checklist is said as such, before any write
    assign = args.equipment_command == "assign"
    with bulk_progress(f"{'assigning' if assign else 'unassigning'} equipment", "equipment ids", ids,
                       in_order=False) as advance:
        changed = change_assignments(target, caller, checklist_id, ids, at, assign=assign, progress=advance)
    document = {"checklist_id": checklist_id, "action": args.equipment_command, "at": to_utc_iso(at),
                "requested": len(ids), "changed": changed, "skipped": len(ids) - changed}
    out: Output = args.out
    if out.format == "json":
        out.json(document)
    else:
        verb = "assigned to" if assign else "unassigned from"
        why = (f"already assigned to {checklist_id}: nothing changed, each keeps the assignment it had"
               if assign else "not assigned, or already unassigned: nothing changed")
        out.say(f"{changed} equipment {verb} {checklist_id} from {document['at']}"
                + (f"; {document['skipped']} skipped ({why})" if document["skipped"] else ""))
    return 0


def equipment_list(args: argparse.Namespace) -> int:
    checklist, assignments = equipment_of(target_of(args), caller_of(args), validate_checklist_id(args.checklist))
    rows = [{"equipment_id": a.equipment_id, "assigned_at": to_utc_iso(a.assigned_at),
             "unassigned_at": to_utc_iso(a.unassigned_at) if a.unassigned_at else None} for a in assignments]
    args.out.records(rows, {"equipment_id": "equipment", "assigned_at": "assigned at",
                            "unassigned_at": "unassigned at"},
                     empty=f"no equipment was ever assigned to {checklist.checklist_id}")
    return 0


# -- performed checks -----------------------------------------------------------------------------
def _register_check(subparsers: Any) -> None:
    group = add_group(subparsers, "check", help="record performed checks (one, or a CSV import)",
                      description="Performed checks: on time inside the window, late inside the grace period.")
    record = add_command(
        group, "record", help="record one performed check",
        description="Record that a check was performed. Recording the same instant again changes nothing: "
                    "the check keeps who recorded it first and when, and the answer says so. "
                    "Refused when the equipment is not assigned to the checklist at that instant, or the "
                    "instant is more than 5 minutes ahead of now.",
        examples="  missed-checks check record --checklist forklift-daily --equipment FL-001 --stack missed-checks\n"
                 "  missed-checks check record --checklist forklift-daily --equipment FL-001 "
                 "--at 2026-03-02T07:12:00+01:00 --format json --stack missed-checks\n"
                 "  missed-checks check record --checklist forklift-pre-use --equipment FL-001 --answer brakes=fail "
                 "\\\n      --answer tyre_pressure=7.2 --answer fluid=ok --stack missed-checks",
        handler=check_record, formats=RESULT_FORMATS)
    record.add_argument("--checklist", required=True, metavar="ID")
    record.add_argument("--equipment", required=True, metavar="EQUIPMENT")
    record.add_argument("--at", metavar="INSTANT", help="when it was performed (default now)")
    record.add_argument("--by", metavar="WHO", help="who records it (default cli:<login name>, or the --as person)")
    record.add_argument("--answer", action="append", default=[], metavar="ITEM=VALUE",
                        help="the answer to one of the checklist's items (repeat for each): pass or fail, a number, "
                             "one of its choices, or text (#33; checklist show lists them)")
    imported = add_command(
        group, "import", help="import performed checks from a CSV file (those on record already are kept)",
        description="Import performed checks from CSV with a header: checklist_id,equipment_id,performed_at "
                    "(instants with an offset). Every row is checked before anything is written (each piece of "
                    "equipment must be assigned to its checklist at performed_at); every bad row is named.",
        examples="  missed-checks check import checks.csv --stack missed-checks\n"
                 "  printf 'checklist_id,equipment_id,performed_at\\n"
                 "forklift-daily,FL-001,2026-03-02T06:40:00Z\\n' \\\n"
                 f"      | missed-checks check import - --endpoint {LOCAL_ENDPOINT}",
        handler=check_import, formats=RESULT_FORMATS)
    imported.add_argument("path", metavar="FILE.csv", help="CSV file, or - for standard input")
    imported.add_argument("--by", metavar="WHO", help="who records them (default cli:<login name>)")


def _recorded_by(args: argparse.Namespace) -> str:
    """Who records: ``--by``, else ``cli:<login name>`` (kept on every performed check written)."""
    return str(args.by) if args.by else cli_principal()


def answers_of(given: Sequence[str]) -> dict[str, str] | None:
    """``--answer ITEM=VALUE`` options as a check's answers (None: none given); InvalidInput naming
    ``answer`` for one without ``=`` or an item id, or an item answered twice."""
    answers: dict[str, str] = {}
    for text in given:
        item, sep, value = text.partition("=")
        if not sep or not item.strip():
            raise InvalidInput("answer", f"{text!r} is not ITEM=VALUE: give the item's id, =, and its answer "
                                         "(--answer brakes=pass)")
        if item.strip() in answers:
            raise InvalidInput("answer", f"item {item.strip()!r} is answered twice: give each item once")
        answers[item.strip()] = value
    return answers or None


def findings_said(check: PerformedCheck, document: dict[str, Any]) -> str:
    """What a check's answers found, in words (empty for a checklist without items then)."""
    findings = document.get("findings") or {}
    if findings.get("result") in (None, "no_items"):
        return ""
    failed = findings.get("failed_items") or []
    said = "; every item passed" if not failed else "; failed: " + "; ".join(
        f"{f['label']}{' (critical)' if f['critical'] else ''}: {f['answer']}, expected {f['expected']}"
        for f in failed)
    opened = document.get("defects_opened") or []
    if opened:
        said += f". {check.equipment_id} is NOT cleared to operate: defect {', '.join(opened)} opened"
    closed = document.get("defects_closed") or []
    if closed:
        said += f". It cleared defect {', '.join(closed)}"
    return said


def check_record(args: argparse.Namespace) -> int:
    now = clock.now()
    check = PerformedCheck(validate_checklist_id(args.checklist, "checklist"),
                           validate_equipment_id(args.equipment, "equipment"), instant_arg(args.at, "at"),
                           answers=answers_of(args.answer))
    caller = caller_of(args)  # the operator (cli:<login name>), or the --as person with their roles
    recorded = record_check(target_of(args), check, now, str(args.by) if args.by else caller.principal, caller=caller)
    # a check on record already keeps who recorded it and when: the answer is that first record
    found = recorded.to_dict()["checks"][0]
    document = {"checklist_id": check.checklist_id, "equipment_id": check.equipment_id,
                "performed_at": to_utc_iso(check.performed_at), "recorded_at": to_utc_iso(recorded.recorded_at),
                "recorded_by": recorded.recorded_by, "already_recorded": recorded.replayed,
                "warnings": list(recorded.warnings),
                **{name: found[name] for name in ("findings", "defects_opened", "defects_closed") if name in found}}
    _warn(recorded.warnings)
    out: Output = args.out
    if out.format == "json":
        out.json(document)
    elif recorded.replayed:
        out.say(f"already recorded: {check.equipment_id} on {check.checklist_id} at {document['performed_at']}, "
                f"by {recorded.recorded_by or 'someone unnamed'} at {document['recorded_at']} (nothing changed)"
                + findings_said(check, document))
    else:
        out.say(f"recorded: {check.equipment_id} on {check.checklist_id} at {document['performed_at']}"
                + findings_said(check, document))
    return 0


WARNINGS_SHOWN = 10
"""Warnings printed one by one; past that a count (``--format json`` lists them all)."""


def _warn(warnings: Sequence[str]) -> None:
    """Checks written that will count in no report: said on standard error, the command succeeds."""
    for warning in warnings[:WARNINGS_SHOWN]:
        print(f"missed-checks: warning: {warning}", file=sys.stderr)
    if len(warnings) > WARNINGS_SHOWN:
        print(f"missed-checks: warning: and {len(warnings) - WARNINGS_SHOWN} more checks that count in no report "
              "(--format json lists every one)", file=sys.stderr)


def check_import(args: argparse.Namespace) -> int:
    parsed = performed_checks_csv(args.path)
    now = clock.now()
    target = target_of(args)
    if parsed.errors:  # every bad row at once: the unreadable ones and those the rules refuse
        line_of = {f"line {line}": line for line in parsed.lines}
        found = [*parsed.errors, *((line_of[str(p.row)], str(p))
                                   for p in refused_checks(target, parsed.labelled(), now))]
        raise bad_rows(args.path, [text for _, text in sorted(found)])
    labels = [f"{c.checklist_id}/{c.equipment_id}@{to_utc_iso(c.performed_at)}" for c in parsed.checks]
    try:
        with bulk_progress("importing performed checks", "performed checks", labels) as advance:
            imported = import_checks(target, parsed.labelled(), now, _recorded_by(args), progress=advance)
    except ChecksRefused as refused:  # every bad row, nothing written
        raise bad_rows(args.path, [str(problem) for problem in refused.problems]) from None
    written, kept = imported.written, imported.already_recorded
    _warn(imported.warnings)
    document = {"rows": parsed.rows, "written": written, "already_recorded": kept,
                "checklists": parsed.checklist_ids, "warnings": list(imported.warnings)}
    out: Output = args.out
    if out.format == "json":
        out.json(document)
    else:
        merged = parsed.rows - written - kept
        notes = [*([f"{kept} recorded already, kept as they were"] if kept else []),
                 *([f"{merged} duplicate rows merged"] if merged else [])]
        out.say(f"imported {written} performed checks for {len(parsed.checklist_ids)} checklist(s)"
                + (f" ({'; '.join(notes)})" if notes else ""))
    return 0
