"""The digest end to end on the local stack: ``digest subscribe`` writes the subscription and its
schedule; the simulated Scheduler fires the digest function at 07:00 Berlin each day; it sends the
report of the previous local day once (SES captures the e-mail, with its HTML part; the record
says who was told what, when); a duplicated or replayed firing sends nothing more; every call the
function makes is allowed by its role, down to the resource; ``unsubscribe`` removes the schedule.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from missed_checks.aws.table.notifications import SENT, NotificationItems
from missed_checks.notifications.digest import digest_id
from missed_checks_local.iam.enforcement import RoleCall, observed
from missed_checks_local.product.notifications import captured_notifications
from missed_checks_local.runtime import LocalRuntime
from tests.integration.notifications.ses_sandbox import act_as_the_ses_sandbox
from tests.integration.ops.ops_support import BERLIN_WORKDAYS, START, Cli, utc
from tests.integration.test_permissions import allowed, resource_of, statements

SUBSCRIBE = ["digest", "subscribe", "fleet-daily", "--to", "fleet@example.com", "--period", "daily",
             "--time", "07:00", "--timezone", "Europe/Berlin"]


def sent_html(runtime: LocalRuntime, since: int = 0) -> list[tuple[str, str]]:
    """(subject, HTML part) of every digest e-mail the embedded SES kept (the session's stack keeps
    them across tests: ``since`` skips the first ones)."""
    from moto.ses.models import ses_backends

    stack = runtime.stack
    return [(m.subject, m.body) for m in ses_backends[stack.account_id][stack.region].sent_messages
            if "digest" in str(m.subject)][since:]


def test_a_daily_digest_goes_out_once_per_local_day_with_the_report_of_that_day(runtime: LocalRuntime,
                                                                                   cli: Cli) -> None:
    args = ["checklist", "put", "forklift-daily", "--window", "PT8H", "--grace", "PT30M"]
    for line in BERLIN_WORKDAYS:
        args += ["--recurrence", line]
    cli.ok(*args)
    cli.ok("equipment", "assign", "--checklist", "forklift-daily", "FL-001", "FL-002")
    before = len(sent_html(runtime))
    cli.ok(*SUBSCRIBE)
    runtime.settle()
    scheduler = runtime.stack.client("scheduler")
    schedule = scheduler.get_schedule(Name="_d.fleet-daily", GroupName=runtime.stack.schedule_group)
    assert (schedule["ScheduleExpression"], schedule["ScheduleExpressionTimezone"]) == ("cron(0 7 * * ? *)",
                                                                                          "Europe/Berlin")
    assert schedule["Target"]["Arn"] == runtime.stack.outputs["DigestFunctionArn"]
    assert json.loads(schedule["Target"]["Input"].replace("<aws.scheduler.scheduled-time>", "T")) == {
        "kind": "digest", "subscription_id": "fleet-daily", "instant": "T"}

    calls: list[RoleCall] = []
    with observed(calls.append):
        runtime.advance_to(utc("2026-03-02T06:00:00Z"))  # Monday 07:00 Berlin: Sunday's digest, nothing due
        cli.ok("check", "record", "--checklist", "forklift-daily", "--equipment", "FL-001",
               "--at", "2026-03-02T07:00:00+01:00")
        runtime.advance_to(utc("2026-03-03T06:30:00Z"))  # Monday judged at 14:30; Tuesday 07:00: Monday's digest
        runtime.settle()

    assert runtime.failed_invocations == []
    until = runtime.clock.now() + timedelta(seconds=1)
    notifications = [n for n in captured_notifications(runtime.stack, runtime.stack.table_name, START, until)
                     if n["kind"] == "digest"]
    # Sent within the minute of 07:00 Berlin (Scheduler fires inside its minute).
    assert [(n["window_start"], n["to"], n["equipment"], n["sent_at"][:16]) for n in notifications] == [
        ("2026-02-28T23:00:00Z", "fleet@example.com", [], "2026-03-02T06:00"),
        ("2026-03-01T23:00:00Z", "fleet@example.com", ["FL-002"], "2026-03-03T06:00"),
    ]
    (sunday, _sunday_html), (monday, monday_html) = sent_html(runtime, before)
    assert sunday.startswith("Daily missed-checks digest, Sunday 01 March 2026: no windows judged")
    assert monday == "Daily missed-checks digest, Monday 02 March 2026: 50.0 % done, 1 missed"
    assert monday_html.startswith("<!DOCTYPE html>") and "<script" not in monday_html
    assert monday_html.index('data-id="FL-002"') < monday_html.index('data-id="FL-001"')  # worst first

    monday_id = digest_id("fleet-daily", "fleet@example.com", datetime(2026, 3, 1, 23, tzinfo=UTC))
    assert f"missed-checks notification {monday_id}" in monday_html  # the record it can be found by
    record = NotificationItems(runtime.stack.table_name).get_notification(monday_id)
    assert record is not None and record["status"] == SENT and record["kind"] == "digest"
    assert record["occasion"] == "fleet-daily" and record["details"]["period_to"] == "2026-03-02T23:00:00Z"

    # A duplicated firing, and a replay a day late, of Tuesday's: the same period, nothing sent again.
    for instant in ("2026-03-03T06:00:00Z", "2026-03-03T20:00:00Z"):
        result = runtime.lambda_runtime.invoke("DigestFunction", {"kind": "digest", "subscription_id": "fleet-daily",
                                                                  "instant": instant})
        assert result.ok and result.result["delivery"] == "already_sent", result
    assert len(sent_html(runtime, before)) == 2

    roles = runtime.lambda_runtime.roles
    digest_role = runtime.stack.functions["DigestFunction"].role_arn
    made = set()
    for call in calls:
        if roles.role_of(call.access_key_id) != digest_role:
            continue
        made.add(call.action)
        resource = resource_of(call, runtime.stack)
        assert allowed(call, resource, statements(runtime.stack, digest_role)), (
            f"DigestFunction calls {call.action} on {resource} but its role does not allow it")
    assert {"dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem", "ses:SendEmail", "events:PutEvents"} <= made

    gone = cli.ok("digest", "unsubscribe", "fleet-daily")
    assert gone["action"] == "deleted"
    assert "_d.fleet-daily" not in [s["Name"] for s in scheduler.list_schedules(
        GroupName=runtime.stack.schedule_group)["Schedules"]]
    # A firing after the subscription is gone (a schedule deleted late) sends nothing.
    result = runtime.lambda_runtime.invoke("DigestFunction", {"kind": "digest", "subscription_id": "fleet-daily",
                                                              "instant": "2026-03-04T06:00:00Z"})
    assert result.ok and result.result == {"subscription_id": "fleet-daily", "delivery": "no-subscription"}


def test_a_digest_ses_refuses_is_marked_failed_then_replayed_from_the_dlq_once(runtime: LocalRuntime,
                                                                                 cli: Cli) -> None:
    from missed_checks_local.stack import LOCAL_NOTIFICATION_SENDER

    before = len(sent_html(runtime))
    # An id of its own: the session's SES keeps the other test's e-mails, found by notification id.
    cli.ok(*SUBSCRIBE[:2], "refused-daily", *SUBSCRIBE[3:])
    runtime.scheduler.refresh()  # nothing else changed: the in-process runtime looks at schedules when told
    ses = runtime.stack.client("ses")
    ses.delete_identity(Identity=LOCAL_NOTIFICATION_SENDER)  # the sender is no longer verified: SES refuses
    try:
        runtime.advance_to(utc("2026-03-02T06:10:00Z"))  # Monday 07:00 Berlin fires Sunday's digest
        runtime.settle()
    finally:
        ses.verify_email_identity(EmailAddress=LOCAL_NOTIFICATION_SENDER)
    failures = [f.error["errorType"] for f in runtime.failed_invocations if f.function == "DigestFunction"]
    assert failures == ["NotificationRejected"] * 3  # the firing and Lambda's two retries
    firing = {"kind": "digest", "subscription_id": "refused-daily", "instant": "2026-03-02T06:00:00Z"}
    record = NotificationItems(runtime.stack.table_name).get_notification(
        digest_id("refused-daily", "fleet@example.com", datetime(2026, 2, 28, 23, tzinfo=UTC)))
    assert record is not None and record["status"] == "FAILED" and "MessageRejected" in record["error"]
    assert sent_html(runtime, before) == []

    # Lambda then puts the firing in the function's dead-letter queue (its DeadLetterConfig), once.
    letters = cli.ok("dlq", "list", "--queue", "notification")["notification"]
    assert [d["kind"] for d in letters] == ["notification"]
    assert letters[0]["summary"].startswith(
        "digest refused-daily fired at 2026-03-02T06:00:00Z not sent: NotificationRejected: ")
    assert "MessageRejected" in letters[0]["summary"]

    replayed = cli("dlq", "replay", "--queue", "notification")
    assert replayed.code == 0, replayed.err
    assert cli.ok("dlq", "list", "--queue", "notification") == {"notification": []}
    ((subject, _html),) = sent_html(runtime, before)
    assert subject.startswith("Daily missed-checks digest, Sunday 01 March 2026")
    # The same firing again (a duplicate letter): nothing more is sent.
    again = runtime.lambda_runtime.invoke("DigestFunction", firing)
    assert again.ok and again.result["delivery"] == "already_sent"


def test_each_address_of_a_subscription_gets_its_own_digest_once(runtime: LocalRuntime, cli: Cli) -> None:
    """A subscription with several --to: every address gets the digest, each under its own
    once-only record; a duplicated firing sends none again."""
    cli.ok(*SUBSCRIBE, "--to", "lead@example.com")
    runtime.scheduler.refresh()  # written by the command, not schedule-sync: the simulated Scheduler looks now
    runtime.advance_to(utc("2026-03-02T06:00:30Z"))  # Monday 07:00 Berlin: Sunday's digest
    runtime.settle()
    assert runtime.failed_invocations == []
    until = runtime.clock.now() + timedelta(seconds=1)
    sent = sorted(n["to"] for n in captured_notifications(runtime.stack, runtime.stack.table_name, START, until)
                  if n["kind"] == "digest")
    assert sent == ["fleet@example.com", "lead@example.com"]
    firing = {"kind": "digest", "subscription_id": "fleet-daily", "instant": "2026-03-02T06:00:00Z"}
    again = runtime.lambda_runtime.invoke("DigestFunction", firing)
    assert again.ok and again.result["delivery"] == "already_sent", again
    assert [d["delivery"] for d in again.result["deliveries"]] == ["already_sent", "already_sent"]


def test_an_address_the_ses_sandbox_refuses_is_named_not_retried_and_the_others_get_theirs(
        runtime: LocalRuntime, cli: Cli, monkeypatch) -> None:
    """#30 item 4: in the SES sandbox only verified recipients get mail; moto's SES checks only the
    sender, so it is told to check recipients as the sandbox does."""
    act_as_the_ses_sandbox(monkeypatch)
    ses = runtime.stack.client("ses")
    ses.verify_email_identity(EmailAddress="fleet@example.com")  # lead@ is not verified
    before = len(sent_html(runtime))
    cli.ok(*SUBSCRIBE[:2], "sandbox-daily", *SUBSCRIBE[3:], "--to", "lead@example.com")
    runtime.scheduler.refresh()
    runtime.advance_to(utc("2026-03-02T06:10:00Z"))  # Monday 07:00 Berlin fires Sunday's digest
    runtime.settle()

    assert [f for f in runtime.failed_invocations if f.function == "DigestFunction"] == []  # not retried
    assert len(sent_html(runtime, before)) == 1  # fleet@ got its digest
    said = ("SES refused recipient lead@example.com: Email address is not verified. The following identities "
            "failed the check in region US-EAST-1: lead@example.com; in the SES sandbox every recipient must be "
            "verified")
    record = NotificationItems(runtime.stack.table_name).get_notification(
        digest_id("sandbox-daily", "lead@example.com", datetime(2026, 2, 28, 23, tzinfo=UTC)))
    assert record is not None and record["status"] == "FAILED" and said in record["error"]
    [letter] = cli.ok("dlq", "list", "--queue", "notification")["notification"]
    assert letter["summary"].startswith("digest sandbox-daily fired at 2026-03-02T06:00:00Z not sent: SES refused "
                                        "recipient lead@example.com")
    assert letter["error"] == "RecipientRefused" and said in letter["cause"]

    ses.verify_email_identity(EmailAddress="lead@example.com")  # verified: the replay sends lead@'s only
    replayed = cli("dlq", "replay", "--queue", "notification")
    assert replayed.code == 0, replayed.err
    assert len(sent_html(runtime, before)) == 2
