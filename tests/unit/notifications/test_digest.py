"""Digest subscriptions: validation naming the field, and the period just ended, DST-correct."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from missed_checks.aws.table.subscriptions import subscription_of
from missed_checks.errors import InvalidInput
from missed_checks.notifications.digest import MAX_CHECKLISTS, Period, Subscription, digest_id, period_ending
from missed_checks.notifications.notification import Kind, notification_id

BERLIN = ZoneInfo("Europe/Berlin")
BRISBANE = ZoneInfo("Australia/Brisbane")  # no DST
NOW = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def daily(**changes: object) -> Subscription:
    fields: dict[str, object] = {"address": "fleet@example.com", "period": "daily", "at": "07:00",
                                 "timezone": "Europe/Berlin", **changes}
    return Subscription.create(fields.pop("subscription_id", "fleet-daily"), now=NOW, **fields)  # type: ignore[arg-type]


def elapsed(start: datetime, end: datetime) -> timedelta:
    """Real time between two instants (Python subtracts aware datetimes of one zone as wall times)."""
    return end.astimezone(UTC) - start.astimezone(UTC)


# -- validation -------------------------------------------------------------------------------------
@pytest.mark.parametrize(("changes", "field", "words"), [
    ({"subscription_id": "bad id"}, "id", "subscription id"),
    ({"subscription_id": ""}, "id", "subscription id"),
    ({"address": "fleet"}, "to", "not an e-mail address"),
    ({"address": "Fleet <fleet@example.com>"}, "to", "not an e-mail address"),
    ({"address": "a@example.com, b@example.com"}, "to", "not an e-mail address"),
    ({"address": "fleet@localhost"}, "to", "not an e-mail address"),
    ({"address": "a@" + "b" * 250 + ".com"}, "to", "not an e-mail address"),
    ({"address": 42}, "to", "a number"),
    ({"period": "monthly"}, "period", "daily or weekly"),
    ({"at": "7am"}, "time", "HH:MM"),
    ({"at": "24:00"}, "time", "HH:MM"),
    ({"at": "07:60"}, "time", "HH:MM"),
    ({"timezone": "Mars/Olympus"}, "timezone", "IANA"),
    ({"timezone": "+01:00"}, "timezone", "IANA"),
    ({"timezone": ""}, "timezone", "IANA"),
    ({"day": "MO"}, "day", "only a weekly digest"),
    ({"period": "weekly", "day": "Funday"}, "day", "not a weekday"),
    ({"checklists": ["ok", "not ok"]}, "checklists", "checklist id"),
    ({"checklists": "forklift"}, "checklists", "not a list"),
    ({"checklists": [f"c{n}" for n in range(MAX_CHECKLISTS + 1)]}, "checklists", f"at most {MAX_CHECKLISTS}"),
])
def test_bad_input_names_the_field(changes: dict[str, object], field: str, words: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        daily(**changes)
    assert caught.value.field == field
    assert words in caught.value.message


def test_a_time_the_clocks_skip_is_refused_naming_the_day() -> None:
    # 02:30 does not exist in Berlin on the last Sunday of March: Scheduler would skip that digest.
    with pytest.raises(InvalidInput) as caught:
        daily(at="02:30")
    assert caught.value.field == "time"
    assert "2026-03-29" in caught.value.message
    # The repeated autumn hour exists (Scheduler fires it once), and Brisbane has no change at all.
    assert daily(at="02:30", timezone="Australia/Brisbane").at == time(2, 30)
    assert daily(at="03:00").at == time(3, 0)  # the first minute after the gap exists
    with pytest.raises(InvalidInput, match="America/New_York on 2026-03-08"):
        daily(at="02:00", timezone="America/New_York")


def test_a_valid_subscription_is_normalised() -> None:
    sub = Subscription.create("lead-weekly", address="  lead@example.com ", period="Weekly", at="06:30",
                              timezone="America/New_York", day="fri", checklists=["b", "a", "b"], now=NOW)
    assert sub.address == "lead@example.com"
    assert sub.period is Period.WEEKLY and sub.day == "FR" and sub.at == time(6, 30)
    assert sub.checklists == ("a", "b")
    assert sub.schedule_expression == "cron(30 6 ? * FRI *)"
    assert daily().schedule_expression == "cron(0 7 * * ? *)"
    assert daily().day is None and daily().whole_fleet
    assert Subscription.create("w", address="a@example.com", period="weekly", at="07:00",
                               timezone="UTC").day == "MO"


def test_an_item_round_trips_and_a_hand_edited_one_names_its_attribute() -> None:
    sub = daily(checklists=["forklift-daily"])
    item = {"pk": "SUBSCRIPTION#fleet-daily", "sk": "SUBSCRIPTION", "note": "kept", **sub.to_fields()}
    read = subscription_of(item)
    assert read == sub and read.extra == {"note": "kept"}
    with pytest.raises(InvalidInput) as caught:
        subscription_of({**item, "timezone": "Berlin"})
    assert caught.value.field == "timezone"


# -- the period just ended --------------------------------------------------------------------------
def test_a_daily_digest_covers_the_previous_local_day_even_across_spring_forward() -> None:
    # Monday 30 March 2026 07:00 Berlin (CEST): Sunday 29 March lasted 23 hours.
    start, end = daily().period_ending(datetime(2026, 3, 30, 7, 0, tzinfo=BERLIN))
    assert start == datetime(2026, 3, 29, 0, 0, tzinfo=BERLIN) and start.utcoffset() == timedelta(hours=1)
    assert end == datetime(2026, 3, 30, 0, 0, tzinfo=BERLIN) and end.utcoffset() == timedelta(hours=2)
    assert elapsed(start, end) == timedelta(hours=23)
    assert (start.astimezone(UTC), end.astimezone(UTC)) == (datetime(2026, 3, 28, 23, tzinfo=UTC),
                                                           datetime(2026, 3, 29, 22, tzinfo=UTC))


def test_a_daily_digest_after_fall_back_covers_a_25_hour_day() -> None:
    start, end = daily().period_ending(datetime(2026, 10, 26, 6, 0, tzinfo=UTC))  # 07:00 CET
    assert start == datetime(2026, 10, 25, 0, 0, tzinfo=BERLIN)
    assert elapsed(start, end) == timedelta(hours=25)


def test_a_late_or_retried_firing_reports_the_same_period_and_id() -> None:
    sub = daily()
    on_time = datetime(2026, 3, 30, 7, 0, tzinfo=BERLIN)
    late = datetime(2026, 3, 30, 23, 59, tzinfo=BERLIN)
    assert sub.period_ending(on_time) == sub.period_ending(late)
    assert sub.digest_id(on_time) == sub.digest_id(late) == digest_id("fleet-daily", "fleet@example.com",
                                                                       datetime(2026, 3, 28, 23, tzinfo=UTC))
    assert sub.digest_id(on_time + timedelta(days=1)) != sub.digest_id(on_time)


def test_a_weekly_digest_covers_the_seven_days_before_its_day() -> None:
    sub = Subscription.create("w", address="a@example.com", period="weekly", at="07:00", timezone="Europe/Berlin",
                              day="MO")
    monday = datetime(2026, 3, 30, 7, 0, tzinfo=BERLIN)
    start, end = sub.period_ending(monday)
    assert (start, end) == (datetime(2026, 3, 23, tzinfo=BERLIN), datetime(2026, 3, 30, tzinfo=BERLIN))
    assert elapsed(start, end) == timedelta(days=7) - timedelta(hours=1)  # the week the clocks went forward
    # A retry a day late still reports the week that ended on Monday.
    assert sub.period_ending(monday + timedelta(days=1)) == (start, end)
    assert sub.period_ending(monday + timedelta(days=6, hours=16)) == (start, end)
    assert sub.period_ending(monday + timedelta(days=7)) == (end, datetime(2026, 4, 6, tzinfo=BERLIN))


def test_the_period_is_read_in_the_subscription_zone_not_utc() -> None:
    instant = datetime(2026, 3, 1, 22, 30, tzinfo=UTC)  # already Monday 2 March 08:30 in Brisbane
    start, end = period_ending(Period.DAILY, BRISBANE, instant)
    assert (start, end) == (datetime(2026, 3, 1, tzinfo=BRISBANE), datetime(2026, 3, 2, tzinfo=BRISBANE))
    with pytest.raises(ValueError, match="naive"):
        period_ending(Period.DAILY, BRISBANE, datetime(2026, 3, 1))


def test_a_midnight_the_clocks_skip_starts_the_day_at_its_first_instant() -> None:
    # America/Santiago springs forward at 00:00 (to 01:00) on Sunday 6 September 2026.
    santiago = ZoneInfo("America/Santiago")
    start, end = period_ending(Period.DAILY, santiago, datetime(2026, 9, 7, 12, 0, tzinfo=santiago))
    assert start.astimezone(santiago).replace(tzinfo=None) == datetime(2026, 9, 6, 1, 0)
    assert end == datetime(2026, 9, 7, tzinfo=santiago)
    assert elapsed(start, end) == timedelta(hours=23)


def test_next_firing_follows_the_local_time_and_day() -> None:
    sub = daily()
    assert sub.next_firing(datetime(2026, 3, 29, 4, 59, tzinfo=UTC)) == datetime(2026, 3, 29, 7, tzinfo=BERLIN)
    assert sub.next_firing(datetime(2026, 3, 29, 5, 0, tzinfo=UTC)) == datetime(2026, 3, 30, 7, tzinfo=BERLIN)
    weekly = Subscription.create("w", address="a@example.com", period="weekly", at="07:00",
                                 timezone="Europe/Berlin", day="WE")
    assert weekly.next_firing(NOW) == datetime(2026, 3, 4, 7, tzinfo=BERLIN)


def test_digest_ids_are_the_notification_ids_of_subscription_address_and_period() -> None:
    start = datetime(2026, 3, 29, tzinfo=BERLIN)
    assert digest_id("s", "a@example.com", start) == notification_id(Kind.DIGEST, "*", "2026-03-28T23:00:00Z", "s",
                                                                      "a@example.com")
    assert digest_id("s", "a@example.com", start) == digest_id("s", "A@example.com", start.astimezone(UTC))
    others = {digest_id("t", "a@example.com", start), digest_id("s", "b@example.com", start),
              digest_id("s", "a@example.com", start + timedelta(days=1))}
    assert digest_id("s", "a@example.com", start) not in others and len(others) == 3


def test_several_addresses_are_kept_in_order_each_validated_and_repeats_folded() -> None:
    """``digest subscribe --to a --to b`` kept only b: a subscription now names every address given."""
    sub = daily(address=["fleet@example.com", "lead@example.com", "FLEET@example.com"])
    assert sub.addresses == ("fleet@example.com", "lead@example.com") and sub.address == "fleet@example.com"
    assert sub.to_fields()["addresses"] == ["fleet@example.com", "lead@example.com"]
    assert {sub.digest_id(NOW, a) for a in sub.addresses} == {
        digest_id("fleet-daily", a, sub.period_ending(NOW)[0]) for a in sub.addresses}
    for value, field in ((["fleet@example.com", "nope"], "to[1]"), ([], "to"), (["x@example.com"] * 21, "to")):
        with pytest.raises(InvalidInput) as refused:
            daily(address=value)
        assert refused.value.field == field
    # an item an earlier version wrote, with one "address": read as it was, nothing left in extra
    legacy = {**{k: v for k, v in sub.to_fields().items() if k != "addresses"}, "address": "old@example.com"}
    read = subscription_of(legacy)
    assert read.addresses == ("old@example.com",) and read.extra == {}
    assert subscription_of(sub.to_fields()).addresses == sub.addresses
