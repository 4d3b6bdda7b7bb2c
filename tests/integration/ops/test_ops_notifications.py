"""Notifications through the operator's commands (#18): who is told in `checklist put/show`, the
records in `notifications list`, a refused e-mail in the notification DLQ and its replay, sent once."""

from __future__ import annotations

import json
from datetime import timedelta

from missed_checks.checklists.saving import save_checklist
from missed_checks_local.runtime import LocalRuntime
from missed_checks_local.stack import LOCAL_NOTIFICATION_SENDER
from tests.integration.notifications.ses_sandbox import act_as_the_ses_sandbox
from tests.integration.ops.ops_support import BERLIN_WORKDAYS, START, Cli, utc

NOTIFY = ["--notify-to", "crew@example.com", "--remind-before", "PT2H", "--escalate-to", "lead@example.com",
          "--escalate-after", "2"]


def put(cli: Cli, *extra: str) -> dict:
    args = ["checklist", "put", "forklift-daily", "--window", "PT8H", "--grace", "PT30M"]
    for line in BERLIN_WORKDAYS:
        args += ["--recurrence", line]
    return cli.ok(*args, *extra)


def test_put_and_show_tell_who_is_told_and_a_put_without_flags_keeps_them(runtime: LocalRuntime, cli: Cli) -> None:
    written = put(cli, *NOTIFY)
    assert written["notify"] == {"to": ["crew@example.com"], "remind_before": ["PT2H"],
                                 "escalate_to": ["lead@example.com"], "escalate_after": 2}
    put(cli, "--name", "Forklift")  # an edit without notify flags
    shown = cli.ok("checklist", "show", "forklift-daily")
    assert shown["notify"] == written["notify"]
    text = cli("checklist", "show", "forklift-daily").out
    assert "crew@example.com; reminders PT2H before a window closes" in text
    assert "lead@example.com after 2 consecutive misses" in text
    runtime.settle()
    schedules = runtime.stack.client("scheduler").list_schedules(GroupName=runtime.stack.schedule_group)["Schedules"]
    assert {s["Name"] for s in schedules} == {"forklift-daily", "_r0.forklift-daily", "_s0.forklift-daily"}
    assert put(cli, "--no-notify")["notify"] == {"to": [], "remind_before": [], "escalate_to": [],
                                                  "escalate_after": None}
    assert cli.ok("checklist", "show", "forklift-daily").get("notify") is None
    runtime.settle()
    schedules = runtime.stack.client("scheduler").list_schedules(GroupName=runtime.stack.schedule_group)["Schedules"]
    assert {s["Name"] for s in schedules} == {"forklift-daily"}


def test_bad_notify_flags_name_the_field(runtime: LocalRuntime, cli: Cli) -> None:
    for flags, field in ((["--notify-to", "crew@"], "notify.to[0]"),
                         (["--notify-to", "a@example.com", "--remind-before", "PT9H"], "notify.remind_before[0]"),
                         (["--escalate-to", "b@example.com", "--escalate-after", "0"], "notify.escalate_after")):
        args = ["checklist", "put", "forklift-daily", "--window", "PT8H"]
        for line in BERLIN_WORKDAYS:
            args += ["--recurrence", line]
        refused = cli(*args, *flags)
        assert refused.code == 2 and refused.err.startswith(f"missed-checks: error: {field}: "), refused.err


def test_a_lead_the_reminder_schedule_cannot_honour_is_refused_in_flags_files_and_the_table(
        runtime: LocalRuntime, cli: Cli, tmp_path) -> None:
    """Found by an adversarial user: --remind-before PT30S was accepted, and the reminder "before
    14:00" went out at 14:00 or later. Refused with the earliest lead that can fire in time, by
    the flags, by --file and by the table adapter itself (one rule: notification.earliest_lead)."""
    args = ["checklist", "put", "forklift-daily", "--window", "PT8H"]
    for line in BERLIN_WORKDAYS:
        args += ["--recurrence", line]
    refused = cli(*args, "--notify-to", "crew@example.com", "--remind-before", "PT30S")
    assert refused.code == 2 and refused.err.startswith(
        "missed-checks: error: notify.remind_before[0]: 'PT30S' is too short"), refused.err
    assert "the earliest lead that fires in time is PT1M" in refused.err
    path = tmp_path / "checklist.json"
    path.write_text(json.dumps({"id": "forklift-daily", "recurrence": "\n".join(BERLIN_WORKDAYS), "window": "PT8H",
                                "notify": {"to": ["crew@example.com"], "remind_before": ["PT1H", "PT45S"]}}))
    from_file = cli("checklist", "put", "--file", str(path))
    assert from_file.code == 2 and from_file.err.startswith("missed-checks: error: notify.remind_before[1]: "), (
        from_file.err)
    assert cli("checklist", "show", "forklift-daily").code == 1  # nothing written

    from missed_checks.aws.table import ChecklistTable
    from missed_checks.errors import InvalidInput
    from missed_checks.notifications.notification import NotifySettings
    table = ChecklistTable(runtime.stack.table_name)
    try:
        save_checklist(table, "forklift-daily", recurrence="\n".join(BERLIN_WORKDAYS), window="PT8H", now=START,
                            notify=NotifySettings(to=("crew@example.com",), remind_before=("PT30S",)), by="tests")
    except InvalidInput as error:
        assert error.field == "notify.remind_before[0]" and "PT1M" in error.message
    else:
        raise AssertionError("the table adapter wrote a lead its reminders cannot honour")
    assert table.get_checklist("forklift-daily") is None
    assert put(cli, "--notify-to", "crew@example.com", "--remind-before", "PT1M")["notify"]["remind_before"] == [
        "PT1M"]


def test_a_refused_email_is_dead_lettered_then_replayed_once(runtime: LocalRuntime, cli: Cli) -> None:
    put(cli, *NOTIFY)
    cli.ok("equipment", "assign", "--checklist", "forklift-daily", "FL-1", "FL-2")
    runtime.settle()
    ses = runtime.stack.client("ses")
    ses.delete_identity(Identity=LOCAL_NOTIFICATION_SENDER)  # as if the sender's verification lapsed
    runtime.advance_to(utc("2026-03-02T11:00:00Z"))  # the reminder: refused
    letters = cli.ok("dlq", "list", "--queue", "notification")["notification"]
    assert [(letter["kind"], letter["checklist_id"]) for letter in letters] == [("notification", "forklift-daily")]
    assert "reminder of forklift-daily to crew@example.com" in letters[0]["summary"]
    assert "NotificationRejected" in letters[0]["error"]
    (record,) = cli.ok("notifications", "list", "--from", "2026-03-01", "--to", "2026-03-03")
    assert (record["kind"], record["status"], record["equipment"]) == ("reminder", "FAILED", ["FL-1", "FL-2"])

    ses.verify_email_identity(EmailAddress=LOCAL_NOTIFICATION_SENDER)  # fixed
    replayed = cli.ok("dlq", "replay", "--queue", "notification")
    assert (replayed["replayed"], replayed["failed"]) == (1, 0), replayed
    assert cli.ok("dlq", "list", "--queue", "notification")["notification"] == []  # deleted once replayed
    runtime.advance_to(utc("2026-03-02T14:00:00Z"))  # judged: a missed alert for both
    records = cli.ok("notifications", "list", "--from", "2026-03-01", "--to", "2026-03-03")
    assert [(r["kind"], r["to"], r["status"], r["attempts"]) for r in records] == [
        ("reminder", "crew@example.com", "SENT", 2), ("missed", "crew@example.com", "SENT", 1)]
    assert set(records[0]["channels"]) == {"email", "eventbridge"}
    sent = [n for n in runtime_notifications(runtime) if n["kind"] == "reminder"]
    assert len(sent) == 1  # the replay sent it once; the refused attempt sent nothing
    only_missed = cli.ok("notifications", "list", "--from", "2026-03-01", "--to", "2026-03-03", "--kind", "missed",
                         "--checklist", "forklift-daily")
    assert [r["kind"] for r in only_missed] == ["missed"]


def runtime_notifications(runtime: LocalRuntime) -> list[dict]:
    from missed_checks_local.product.notifications import captured_notifications

    until = runtime.clock.now() + timedelta(seconds=1)
    return json.loads(json.dumps(captured_notifications(runtime.stack, runtime.stack.table_name, START, until)))


def test_an_event_the_notifier_cannot_handle_lands_in_its_dead_letter_queue(runtime: LocalRuntime) -> None:
    """Lambda's asynchronous invocation, as the notifier's rule and the reminder schedules use it:
    two retries, then the event in the function's DeadLetterConfig queue (the template's
    DeadLetterQueue; moto's Lambda keeps none, the emulator reads it from the deployed template)."""
    notifier = runtime.stack.function_by_name(runtime.stack.outputs["NotifyFunctionName"])
    assert notifier is not None
    event = {"detail-type": "not a notifier input", "detail": {}}
    assert runtime.async_invocations.submit(notifier.arn, event, "events")
    before = runtime.async_invocations.dead_lettered
    runtime.async_invocations.drain()
    assert runtime.async_invocations.dead_lettered == before + 1
    sqs = runtime.stack.client("sqs")
    messages = sqs.receive_message(QueueUrl=runtime.stack.outputs["NotificationDeadLetterQueueUrl"],
                                   MaxNumberOfMessages=10, MessageAttributeNames=["All"]).get("Messages", [])
    assert [json.loads(m["Body"]) for m in messages] == [event]
    assert messages[0]["MessageAttributes"]["ErrorMessage"]["StringValue"]


def test_a_recipient_the_ses_sandbox_refuses_is_named_not_retried_and_the_others_are_sent(
        runtime: LocalRuntime, cli: Cli, monkeypatch) -> None:
    """#30 item 4: in the SES sandbox SES sends only to verified recipients ("Moving out of the
    Amazon SES sandbox"); moto's SES checks only the sender, so it is told to check recipients too."""
    act_as_the_ses_sandbox(monkeypatch)
    put(cli, "--notify-to", "crew@example.com", "--notify-to", "boss@example.com", "--remind-before", "PT2H")
    cli.ok("equipment", "assign", "--checklist", "forklift-daily", "FL-1")
    runtime.stack.client("ses").verify_email_identity(EmailAddress="crew@example.com")  # boss@ is not verified
    runtime.settle()
    runtime.advance_to(utc("2026-03-02T11:00:00Z"))  # the reminder, to both

    records = cli.ok("notifications", "list", "--from", "2026-03-01", "--to", "2026-03-03")
    assert sorted((r["to"], r["status"], r["attempts"]) for r in records) == [
        ("boss@example.com", "FAILED", 1), ("crew@example.com", "SENT", 1)]
    [letter] = cli.ok("dlq", "list", "--queue", "notification")["notification"]
    said = ("SES refused recipient boss@example.com: Email address is not verified. The following identities "
            "failed the check in region US-EAST-1: boss@example.com; in the SES sandbox every recipient must be "
            "verified")
    assert said in letter["error"] and "boss@example.com" in letter["summary"]
    [refused] = [r for r in records if r["to"] == "boss@example.com"]
    assert said in json.dumps(refused)  # the record says why
