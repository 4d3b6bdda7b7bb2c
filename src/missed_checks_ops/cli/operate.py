"""``rerun`` and ``dlq`` commands: re-running an evaluation, seeing and replaying what failed."""

from __future__ import annotations

import argparse
import json
from datetime import timedelta
from typing import Any

from missed_checks import clock
from missed_checks.checklists.checklist import validate_checklist_id
from missed_checks.errors import InvalidInput
from missed_checks.timefmt import to_utc_iso
from missed_checks_ops.cli.common import (
    RECORD_FORMATS,
    RESULT_FORMATS,
    Output,
    add_command,
    add_group,
    instant_arg,
    target_of,
)
from missed_checks_ops.dlq import list_dead_letters, replay_queues
from missed_checks_ops.rerun import execution_name, rerun
from missed_checks_ops.target import LOCAL_ENDPOINT, QUEUE_OUTPUTS

QUEUE_CHOICES = (*QUEUE_OUTPUTS, "all")


def register(subparsers: Any) -> None:
    rerun = add_command(
        subparsers, "rerun", help="start an evaluation by hand, as the schedule would",
        description="Start the evaluation state machine with {checklist_id, instant}, as a schedule firing "
                    "does. It judges every window whose end + grace is at or before INSTANT and whose end is "
                    "after the checklist's watermark; missed checks are written idempotently, so re-running "
                    "never records anything twice. Prints the execution ARN and its console link.",
        examples="  missed-checks rerun --checklist forklift-daily --at 2026-03-02T14:30:00Z --stack missed-checks\n"
                 "  missed-checks rerun --checklist forklift-daily --at now --wait --format json "
                 f"--endpoint {LOCAL_ENDPOINT}",
        handler=rerun_command, formats=RESULT_FORMATS)
    rerun.add_argument("--checklist", required=True, metavar="ID")
    rerun.add_argument("--at", required=True, metavar="INSTANT|now",
                       help="evaluation instant (ISO 8601 with offset), not in the future")
    rerun.add_argument("--name", metavar="NAME", help="execution name (default rerun-<checklist>-<instant>-<random>)")
    rerun.add_argument("--wait", action="store_true", help="wait for the execution to finish and show its outcome")

    group = add_group(subparsers, "dlq", help="list or replay the dead-letter queues",
                      description="The stack's three dead-letter queues: schedule-sync (checklists that could "
                                  "not be scheduled, stream batches that kept failing), scheduler (firings "
                                  "that could not start an evaluation), evaluation (failed windows and runs).")
    listing = add_command(
        group, "list", help="show each queue's messages, decoded",
        description="Show every message of the dead-letter queues: what failed, for which checklist and window, "
                    "and why. Messages stay in their queue.",
        examples="  missed-checks dlq list --stack missed-checks\n"
                 "  missed-checks dlq list --queue evaluation --format json --stack missed-checks\n"
                 f"  missed-checks dlq list --format csv --output dead-letters.csv --endpoint {LOCAL_ENDPOINT}",
        handler=dlq_list, formats=RECORD_FORMATS)
    listing.add_argument("--queue", choices=QUEUE_CHOICES, default="all")
    replay = add_command(
        group, "replay", help="re-drive each message to the right place, deleting it once replayed",
        description="Replay dead letters: schedule-sync messages re-sync their checklist (a failed stream batch "
                    "re-syncs every checklist); evaluation and scheduler messages start the evaluation again. "
                    "An evaluation message is judged as of now (everything due, in as many runs as needed). "
                    "A message is deleted only after its replay succeeded, or when the replayed evaluation failed "
                    "again (its own new dead letter replaces it). Exit 1 when any replay failed.",
        examples="  missed-checks dlq replay --stack missed-checks\n"
                 f"  missed-checks dlq replay --queue scheduler --endpoint {LOCAL_ENDPOINT}",
        handler=dlq_replay, formats=RESULT_FORMATS)
    replay.add_argument("--queue", choices=QUEUE_CHOICES, default="all")


def rerun_command(args: argparse.Namespace) -> int:
    checklist_id = validate_checklist_id(args.checklist, "checklist")
    now = clock.now()
    instant = instant_arg(args.at, "at")
    if instant > now + timedelta(minutes=1):
        raise InvalidInput("at", f"{to_utc_iso(instant)} is in the future: windows that have not closed cannot "
                                 "be judged")
    target = target_of(args)
    name = args.name or execution_name("rerun", checklist_id, instant)
    started, described = rerun(target, checklist_id, instant, name, wait=args.wait)
    document: dict[str, Any] = {**started.to_dict(), "console_url": target.console_url(started.execution_arn)}
    if described is not None:
        document["status"] = described["status"]
        document["output"] = _json_or_text(described.get("output"))
        document["error"] = described.get("error")
        document["cause"] = described.get("cause")
    out: Output = args.out
    if out.format == "json":
        out.json(document)
    else:
        out.say(f"started {name}")
        out.say(f"  execution: {started.execution_arn}")
        out.say(f"  console:   {document['console_url']}")
        if args.wait:
            out.say(f"  status:    {document['status']}", "green" if document["status"] == "SUCCEEDED" else "red")
            if isinstance(document["output"], dict) and "reason" in document["output"]:
                out.say(f"  outcome:   {document['output'].get('reason')}")
    return 0 if not args.wait or document["status"] == "SUCCEEDED" else 1


def _json_or_text(text: str | None) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


DEAD_LETTER_COLUMNS = ("queue", "message_id", "sent_at", "kind", "checklist_id", "window_start", "instant",
                       "execution", "error", "cause", "summary", "receive_count")


def dlq_list(args: argparse.Namespace) -> int:
    found = list_dead_letters(target_of(args), args.queue)
    out: Output = args.out
    if out.format != "table":
        rows = [{**letter.to_dict(), "window_start": (letter.window or {}).get("start")}
                for letters in found.values() for letter in letters]
        out.records(rows, DEAD_LETTER_COLUMNS,
                    document={queue: [letter.to_dict() for letter in letters] for queue, letters in found.items()})
        return 0
    for queue, letters in found.items():
        out.say(f"{queue}: " + (f"{len(letters)} message(s)" if letters else "empty"), "bold")
        for letter in letters:
            when = (letter.window or {}).get("start") or letter.instant or ""
            out.say(f"  {letter.sent_at or '-'}  {letter.kind}  {letter.checklist_id or '-'}  {when}  "
                    f"(received {letter.receive_count}x, id {letter.message_id})")
            out.say(f"    what:  {letter.summary}")
            if letter.error or letter.cause:
                out.say(f"    error: {letter.error}" + (f": {_short(letter.cause)}" if letter.cause else ""), "red")
            if letter.execution:
                out.say(f"    execution: {letter.execution}")
    return 0


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def dlq_replay(args: argparse.Namespace) -> int:
    target = target_of(args)
    out: Output = args.out

    def show(result: Any) -> None:
        if out.format == "table":
            mark, style = (("replayed", "green") if result.ok else ("failed again", "red") if result.deleted
                           else ("kept", "red"))
            out.say(f"{mark}: {result.letter.queue} {result.letter.message_id} "
                    f"[{result.letter.kind}{' ' + result.letter.checklist_id if result.letter.checklist_id else ''}] "
                    f"{result.detail}", style)

    results = replay_queues(target, clock.now(), args.queue, on_each=show)
    failed = [r for r in results if not r.ok]
    again = [r for r in failed if r.deleted]
    if out.format == "json":
        out.json({"replayed": sum(1 for r in results if r.ok), "failed": len(failed),
                  "results": [r.to_dict() for r in results]})
    elif not results:
        out.say("nothing to replay: the queue(s) are empty")
    else:
        out.say(f"{len(results) - len(failed)} replayed and deleted, "
                + (f"{len(again)} failed again (each replaced by its new dead letter), " if again else "")
                + f"{len(failed) - len(again)} kept")
    return 1 if failed else 0
