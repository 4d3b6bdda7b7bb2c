"""The ``digest`` commands against the local stack (moto): validated before anything is written,
one item per subscription, listed by Query, replaced in place, removed; the preview is the
digest of the period just ended."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from missed_checks.aws.table.subscriptions import SubscriptionItems
from missed_checks.notifications.digest import digest_id
from missed_checks_local.runtime import LocalRuntime
from tests.integration.ops.ops_support import BERLIN_WORKDAYS, Cli

SUBSCRIBE = ["digest", "subscribe", "fleet-daily", "--to", "fleet@example.com", "--period", "daily",
             "--time", "07:00", "--timezone", "Europe/Berlin"]


def put_forklift(cli: Cli) -> None:
    args = ["checklist", "put", "forklift-daily", "--window", "PT8H", "--grace", "PT30M"]
    for line in BERLIN_WORKDAYS:
        args += ["--recurrence", line]
    cli.ok(*args)


def test_subscribe_list_replace_unsubscribe(runtime: LocalRuntime, cli: Cli) -> None:
    put_forklift(cli)
    created = cli.ok(*SUBSCRIBE, "--checklist", "forklift-daily")
    assert created["action"] == "created"
    assert created["subscription"]["checklists"] == ["forklift-daily"]
    assert created["subscription"]["schedule"] == {"expression": "cron(0 7 * * ? *)", "timezone": "Europe/Berlin"}
    # The runtime's clock is Sunday 1 March 09:00Z: the next digest is Monday 07:00, covering Sunday.
    assert created["next_digest"] == {"at": "2026-03-02T07:00:00+01:00", "from": "2026-03-01T00:00:00+01:00",
                                      "to": "2026-03-02T00:00:00+01:00",
                                      "id": digest_id("fleet-daily", "fleet@example.com",
                                                      datetime(2026, 2, 28, 23, tzinfo=UTC))}

    weekly = cli.ok("digest", "subscribe", "lead-weekly", "--to", "lead@example.com", "--period", "weekly",
                    "--day", "FR", "--time", "16:00", "--timezone", "America/New_York")
    assert weekly["subscription"]["day"] == "FR" and weekly["subscription"]["checklists"] == []

    listed = cli.ok("digest", "list")
    assert [s["subscription_id"] for s in listed] == ["fleet-daily", "lead-weekly"]
    table = cli("digest", "list")
    assert table.code == 0 and "daily at 07:00 Europe/Berlin" in table.out and "(all)" in table.out

    replaced = cli.ok(*SUBSCRIBE[:-4], "--time", "06:00", "--timezone", "Europe/Berlin")
    assert replaced["action"] == "updated"
    item = SubscriptionItems(runtime.stack.table_name).get_subscription("fleet-daily")
    assert item is not None and item.checklists == () and f"{item.at:%H:%M}" == "06:00"
    assert item.created_at is not None and item.created_at == item.updated_at  # the clock did not move

    gone = cli.ok("digest", "unsubscribe", "fleet-daily")
    assert gone == {"action": "deleted", "subscription_id": "fleet-daily", "addresses": ["fleet@example.com"]}
    assert [s["subscription_id"] for s in cli.ok("digest", "list")] == ["lead-weekly"]
    again = cli("digest", "unsubscribe", "fleet-daily")
    assert again.code == 1 and "does not exist" in again.err


def test_bad_input_is_refused_naming_the_field_and_nothing_is_written(runtime: LocalRuntime, cli: Cli) -> None:
    cases = [
        (["--to", "not-an-address"], "to:"),
        (["--time", "7 o'clock"], "time:"),
        (["--time", "02:30"], "time:"),  # skipped by the clocks on 29 March 2026
        (["--timezone", "Berlin"], "timezone:"),
        (["--checklist", "no-such-checklist"], "checklist:"),
        (["--day", "MO"], "day:"),  # a daily digest has no day
    ]
    for change, field in cases:
        args = list(SUBSCRIBE)
        flag = change[0]
        if flag in args:
            args[args.index(flag) + 1] = change[1]
        else:
            args += change
        result = cli(*args)
        assert result.code == 2, (change, result.err)
        assert result.err.startswith(f"missed-checks: error: {field}"), (change, result.err)
    bad_period = cli(*SUBSCRIBE[:6], "monthly", *SUBSCRIBE[7:])
    assert bad_period.code == 2 and "period" in bad_period.err
    assert cli.ok("digest", "list") == []


def test_a_hand_edited_item_is_reported_not_hidden(runtime: LocalRuntime, cli: Cli) -> None:
    cli.ok(*SUBSCRIBE)
    items = SubscriptionItems(runtime.stack.table_name)
    items.client.update_item(TableName=items.name, Key={"pk": {"S": "SUBSCRIPTION#fleet-daily"},
                                                          "sk": {"S": "SUBSCRIPTION"}},
                             UpdateExpression="SET #p = :p", ExpressionAttributeNames={"#p": "period"},
                             ExpressionAttributeValues={":p": {"S": "hourly"}})
    result = cli("digest", "list", "--format", "json")
    assert result.code == 0 and result.json == []
    assert "SUBSCRIPTION#fleet-daily" in result.err and "period" in result.err


def test_preview_writes_the_digest_of_the_period_just_ended(runtime: LocalRuntime, cli: Cli, tmp_path: Path) -> None:
    put_forklift(cli)
    cli.ok("equipment", "assign", "--checklist", "forklift-daily", "FL-001", "FL-002")
    cli.ok(*SUBSCRIBE)
    runtime.settle()  # schedule-sync gives the checklist its schedule
    runtime.advance_to(runtime.clock.now().replace(day=3, hour=7))  # Tuesday 3 March 08:00 Berlin
    cli.ok("check", "record", "--checklist", "forklift-daily", "--equipment", "FL-001",
           "--at", "2026-03-03T07:00:00+01:00")
    runtime.advance_to(runtime.clock.now().replace(day=4, hour=7))  # Wednesday: Tuesday's window judged
    runtime.settle()
    html = tmp_path / "digest.html"
    shown = cli.ok("digest", "preview", "fleet-daily", "--at", "2026-03-04T07:00:00+01:00",
                   "--html-output", str(html))
    # Tuesday 3 March, Berlin: FL-001 on time, FL-002 missed.
    assert shown["id"] == digest_id("fleet-daily", "fleet@example.com", datetime(2026, 3, 2, 23, tzinfo=UTC))
    assert (shown["period_from"], shown["period_to"]) == ("2026-03-02T23:00:00Z", "2026-03-03T23:00:00Z")
    assert shown["total"]["on_time"] == 1 and shown["total"]["missed"] == 1
    text = html.read_text(encoding="utf-8")
    assert text.index('data-id="FL-002"') < text.index('data-id="FL-001"')  # worst first
    assert "<script" not in text
    table = cli("digest", "preview", "fleet-daily", "--at", "2026-03-04T07:00:00+01:00")
    assert table.code == 0 and "Daily missed-checks digest, Tuesday 03 March 2026: 50.0 % done, 1 missed" in table.out
    missing = cli("digest", "preview", "nobody", "--at", "2026-03-04T07:00:00+01:00")
    assert missing.code == 1 and "does not exist" in missing.err


def test_a_repeated_to_accumulates_every_address_none_is_dropped(runtime: LocalRuntime, cli: Cli) -> None:
    """Found by an adversarial user: ``--to a --to b`` kept only b (exit 0). Each --to is kept, in
    order (a repeat of the same address once), and each address gets its own digest."""
    created = cli.ok(*SUBSCRIBE, "--to", "lead@example.com", "--to", "FLEET@example.com")
    assert created["subscription"]["addresses"] == ["fleet@example.com", "lead@example.com"]
    start = datetime(2026, 2, 28, 23, tzinfo=UTC)
    assert created["next_digest"]["ids"] == {a: digest_id("fleet-daily", a, start)
                                             for a in ("fleet@example.com", "lead@example.com")}
    item = SubscriptionItems(runtime.stack.table_name).get_subscription("fleet-daily")
    assert item is not None and item.addresses == ("fleet@example.com", "lead@example.com")
    shown = cli("digest", "list")
    assert "fleet@example.com, lead@example.com" in shown.out
    too_many = cli(*SUBSCRIBE, *(arg for n in range(21) for arg in ("--to", f"crew-{n}@example.com")))
    assert too_many.code == 2 and too_many.err.startswith("missed-checks: error: to: has 22 addresses; at most 20")
    bad = cli(*SUBSCRIBE, "--to", "not-an-address")
    assert bad.code == 2 and bad.err.startswith("missed-checks: error: to[1]: "), bad.err
