"""Digest subscriptions: who gets the fleet report of the period just ended, and when.

A subscription names one or more e-mail addresses (each gets its own e-mail), a period (``daily``
or ``weekly``, on a day of the week), a local time and an IANA zone, and optionally the checklists
it covers (none: the whole fleet). It
fires at that local time in that zone (one EventBridge Scheduler schedule per subscription, whose
``cron`` this module writes) and gets the report of **the period just ended**, in its own zone:

* ``daily``: the local day before the firing's local date, ``[D-1 00:00, D 00:00)``. A daily
  digest at 07:00 Europe/Berlin on Monday 30 March 2026 covers Sunday 29 March, 00:00+01:00 to
  24:00+02:00: 23 hours, because the clocks went forward that night. Days are nominal (as in
  RFC 5545 §3.3.6), never 24 h of elapsed time.
* ``weekly``: the seven local days ending at the last local midnight that began the
  subscription's day (Monday by default): on a Monday, the Monday-to-Sunday week before.

The period comes from the firing's *scheduled* time, so a retried or late firing (the same local
day, or for a weekly digest any day before the next one) reports the same period, and the digest's
deterministic id (:func:`digest_id`: subscription and period start) lets it be sent once.

Pure domain: no AWS, no clock; every instant is an argument.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum
from typing import Any
from zoneinfo import ZoneInfo

from missed_checks import identifiers
from missed_checks.checklists.checklist import validate_checklist_id
from missed_checks.checklists.schedule import DesiredSchedule
from missed_checks.errors import InvalidInput, describe, shorten
from missed_checks.notifications.notification import Kind, notification_id
from missed_checks.notifications.notification import validate_address as validate_notify_address
from missed_checks.notifications.notification import validate_addresses as validate_notify_addresses
from missed_checks.reporting.report import TOTAL
from missed_checks.timefmt import to_utc_iso

__all__ = [
    "DAYS",
    "MAX_CHECKLISTS",
    "Period",
    "Subscription",
    "digest_id",
    "period_ending",
    "schedule_name",
    "validate_address",
    "validate_addresses",
    "validate_subscription_id",
]

_TIME = re.compile(r"(?P<hour>[01]\d|2[0-3]):(?P<minute>[0-5]\d)")

MAX_CHECKLISTS = 100
"""Most checklists one subscription may name (more: subscribe to the whole fleet)."""

DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
"""Weekdays as RFC 5545 spells them, Monday first (``date.weekday()`` order)."""
_CRON_DAYS = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")

GAP_HORIZON_DAYS = 3 * 366
"""How far ahead :meth:`Subscription.validate` looks for a day on which the local time does not
exist (EventBridge Scheduler skips a cron time in a spring-forward gap: that day's digest would
never be sent)."""


class Period(StrEnum):
    DAILY = "daily"
    WEEKLY = "weekly"


def validate_subscription_id(value: object, field: str = "id") -> str:
    """Schedule names allow ``[0-9a-zA-Z-_.]{1,64}``; the digest's schedule is ``_d.<id>`` (:func:`schedule_name`)."""
    return identifiers.KINDS["subscription id"].validate(value, field)


DIGEST_INPUT_TEMPLATE = ('{{"kind": "digest", "subscription_id": "{subscription_id}", '
                         '"instant": "<aws.scheduler.scheduled-time>"}}')
"""The digest function's input from a subscription's schedule (and so the body of its dead letter)."""
SCHEDULE_PREFIX = "_d."


def schedule_name(subscription_id: str) -> str:
    """``_d.<id>``: in the stack's schedule group beside the checklists' schedules (named by checklist
    id, which never starts with ``_``) and the reminders' (``_r<n>.``), so no name collides."""
    return SCHEDULE_PREFIX + subscription_id


def validate_address(value: object, field: str = "to") -> str:
    """One e-mail address, as the notifications validate them, or InvalidInput naming ``field``."""
    return validate_notify_address(value, field)


def validate_addresses(value: object, field: str = "to") -> tuple[str, ...]:
    """A digest's recipients: one address (a string) or a list of at least one (``to[2]`` names a
    bad one), as the notifications read them (:func:`missed_checks.notifications.notification.validate_addresses`)."""
    return validate_notify_addresses(value, field, required=True)


def _period(value: object) -> Period:
    try:
        return Period(value.strip().lower() if isinstance(value, str) else str(value))
    except ValueError:
        raise InvalidInput("period", f"{shorten(value)} is not daily or weekly") from None


def _local_time(value: object) -> time:
    if isinstance(value, time):
        if value.tzinfo is not None or value.second or value.microsecond:
            raise InvalidInput("time", f"{value.isoformat()} must be a local time in whole minutes, HH:MM")
        return value
    text = value.strip() if isinstance(value, str) else value
    found = _TIME.fullmatch(text) if isinstance(text, str) else None
    if found is None:
        raise InvalidInput("time", f"{shorten(value)} is not a local time: give HH:MM on a 24-hour clock, "
                                   "such as 07:00")
    return time(int(found["hour"]), int(found["minute"]))


def _zone(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput("timezone", f"is {describe(value)}, not an IANA time zone such as Europe/Berlin")
    return identifiers.validate_timezone(value.strip(), "timezone")


def _day(value: object, period: Period) -> str | None:
    if value is None or value == "":
        return DAYS[0] if period is Period.WEEKLY else None
    if period is Period.DAILY:
        raise InvalidInput("day", "only a weekly digest has a day; leave it out for a daily one")
    names = {**{d: d for d in DAYS}, **dict(zip(_CRON_DAYS, DAYS, strict=True))}
    key = value.strip().upper() if isinstance(value, str) else None
    if key not in names:
        raise InvalidInput("day", f"{shorten(value)} is not a weekday: give one of {', '.join(DAYS)}")
    return names[key]


def _checklists(values: object) -> tuple[str, ...]:
    if values is None:
        return ()
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise InvalidInput("checklists", f"is {describe(values)}, not a list of checklist ids")
    found = [validate_checklist_id(v, "checklists") for v in values]
    if len(set(found)) > MAX_CHECKLISTS:
        raise InvalidInput("checklists", f"names {len(set(found))} checklists; at most {MAX_CHECKLISTS} "
                                         "(leave them out for the whole fleet)")
    return tuple(sorted(set(found)))


def _midnight(day: date, zone: ZoneInfo) -> datetime:
    """The start of ``day`` in ``zone`` (a midnight in a spring-forward gap is read with the offset
    before the gap, RFC 5545 §3.3.5, so it lands on the first instant of the day)."""
    return datetime.combine(day, time(0), tzinfo=zone).astimezone(UTC).astimezone(zone)


def _exists(day: date, local_time: time, zone: ZoneInfo) -> bool:
    """Whether ``local_time`` happens on ``day`` in ``zone`` (False in a spring-forward gap)."""
    wall = datetime.combine(day, local_time, tzinfo=zone)
    return wall.astimezone(UTC).astimezone(zone).replace(tzinfo=None) == wall.replace(tzinfo=None)


def _skipped_on(local_time: time, zone: ZoneInfo, start: date, days: int) -> date | None:
    """The first day in ``[start, start + days)`` on which ``local_time`` does not exist in ``zone``."""
    return next((start + timedelta(days=n) for n in range(days)
                 if not _exists(start + timedelta(days=n), local_time, zone)), None)


@dataclass(frozen=True)
class Subscription:
    """A validated digest subscription (build it with :meth:`create`, which the table adapter reads
    stored ones back with too)."""

    subscription_id: str
    addresses: tuple[str, ...]
    """Who gets it: each address its own e-mail, sent once (1 to :data:`MAX_RECIPIENTS`)."""
    period: Period
    at: time
    """The local time the digest is sent, in :attr:`timezone`."""
    timezone: str
    day: str | None = None
    """Weekly digests: the day it is sent (``MO``..``SU``); ``None`` for a daily one."""
    checklists: tuple[str, ...] = ()
    """The checklists it reports on, sorted; empty: the whole fleet."""
    created_at: datetime | None = None
    updated_at: datetime | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    site_id: str | None = None
    """The site whose checklists it reports on (#31): its named ones are there, and without any it is
    the site's whole fleet. None: a subscription made before sites (the whole fleet, every site)."""

    @classmethod
    def create(cls, subscription_id: object, *, address: object, period: object, at: object, timezone: object,
               day: object = None, checklists: object = None, now: datetime | None = None,
               site_id: object = None) -> Subscription:
        """Validate every field (InvalidInput naming the first bad one); ``address`` is one address or
        a list of them (:func:`validate_addresses`). With ``now``, also refuse a local time that some
        day of the next three years skips (a spring-forward gap)."""
        parsed_period = _period(period)
        subscription = cls(
            subscription_id=validate_subscription_id(subscription_id),
            addresses=validate_addresses(address),
            period=parsed_period,
            at=_local_time(at),
            timezone=_zone(timezone),
            day=_day(day, parsed_period),
            checklists=_checklists(checklists),
            created_at=now,
            updated_at=now,
            site_id=None if site_id is None else identifiers.KINDS["site id"].validate(site_id, "site_id"),
        )
        if now is not None:
            skipped = _skipped_on(subscription.at, subscription.zone, now.astimezone(subscription.zone).date(),
                                  GAP_HORIZON_DAYS)
            if skipped is not None:
                raise InvalidInput("time", f"{subscription.at:%H:%M} does not exist in {subscription.timezone} on "
                                           f"{skipped.isoformat()} (the clocks skip it), and EventBridge Scheduler "
                                           "would skip that day's digest: choose a time outside the change")
        return subscription

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    @property
    def address(self) -> str:
        """The first address (a subscription's only one, unless it names several: :attr:`addresses`)."""
        return self.addresses[0]

    @property
    def whole_fleet(self) -> bool:
        return not self.checklists

    # -- the schedule -----------------------------------------------------------------------
    @property
    def schedule_expression(self) -> str:
        """The AWS cron of the firings, read in :attr:`timezone` (``ScheduleExpressionTimezone``)."""
        if self.period is Period.DAILY:
            return f"cron({self.at.minute} {self.at.hour} * * ? *)"
        return f"cron({self.at.minute} {self.at.hour} ? * {_CRON_DAYS[DAYS.index(self.day or DAYS[0])]} *)"

    def desired_schedule(self, group_name: str) -> DesiredSchedule:
        """The EventBridge Scheduler schedule that fires this digest (always enabled, no end)."""
        return DesiredSchedule(
            name=schedule_name(self.subscription_id), group_name=group_name, expression=self.schedule_expression,
            timezone=self.timezone, start_date=None, end_date=None, enabled=True, exact=True,
            target_input=DIGEST_INPUT_TEMPLATE.format(subscription_id=self.subscription_id),
            purpose=f"missed-checks: digest {self.subscription_id}, {self.describe_when()}")

    def describe_when(self) -> str:
        """``daily at 07:00 Europe/Berlin`` / ``weekly on MO at 07:00 Europe/Berlin``."""
        on = f" on {self.day}" if self.period is Period.WEEKLY else ""
        return f"{self.period.value}{on} at {self.at:%H:%M} {self.timezone}"

    def next_firing(self, after: datetime) -> datetime:
        """The first firing strictly after ``after`` (aware, in :attr:`timezone`), as Scheduler's cron
        fires it: the local time on each day (weekly: on :attr:`day`); a day on which that time does
        not exist is skipped, as Scheduler skips it."""
        zone = self.zone
        day = after.astimezone(zone).date()
        for n in range(15):
            candidate = day + timedelta(days=n)
            if self.period is Period.WEEKLY and DAYS[candidate.weekday()] != self.day:
                continue
            if not _exists(candidate, self.at, zone):
                continue  # in a spring-forward gap: Scheduler skips it
            wall = datetime.combine(candidate, self.at, tzinfo=zone)
            if wall > after:
                return wall
        raise ValueError(f"no firing of {self.describe_when()} within two weeks of {after.isoformat()}")

    # -- the period -------------------------------------------------------------------------
    def period_ending(self, instant: datetime) -> tuple[datetime, datetime]:
        """:func:`period_ending` for this subscription."""
        return period_ending(self.period, self.zone, instant, self.day)

    def digest_id(self, instant: datetime, address: str | None = None) -> str:
        """The id of the digest a firing at ``instant`` sends to ``address`` (default the first:
        :func:`digest_id`)."""
        return digest_id(self.subscription_id, address or self.address, self.period_ending(instant)[0])

    # -- table item -------------------------------------------------------------------------
    def to_fields(self) -> dict[str, Any]:
        """The item's attributes (without keys): what the table stores and ``digest list`` shows."""
        data: dict[str, Any] = {
            "subscription_id": self.subscription_id,
            "addresses": list(self.addresses),
            "period": self.period.value,
            "time": f"{self.at:%H:%M}",
            "timezone": self.timezone,
            "day": self.day,
            "checklists": list(self.checklists),
        }
        if self.site_id is not None:  # sites (#31); a subscription made before them has none
            data["site_id"] = self.site_id
        for name in ("created_at", "updated_at"):
            value = getattr(self, name)
            if value is not None:
                data[name] = to_utc_iso(value)
        return data

    def to_dict(self) -> dict[str, Any]:
        return {**self.to_fields(), "schedule": {"expression": self.schedule_expression, "timezone": self.timezone}}


def period_ending(period: Period, zone: ZoneInfo, instant: datetime,
                  day: str | None = None) -> tuple[datetime, datetime]:
    """The period just ended at ``instant`` (aware), as ``[start, end)`` in ``zone``: the previous
    local day (daily), or the seven local days ending at the last midnight that began ``day``
    (weekly, Monday by default). Days are nominal: across a DST change a day lasts 23 or 25 hours."""
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError(f"naive datetime {instant.isoformat()} has no UTC offset")
    today = instant.astimezone(zone).date()
    if period is Period.DAILY:
        end_day, length = today, 1
    else:
        weekday = DAYS.index(day or DAYS[0])
        end_day, length = today - timedelta(days=(today.weekday() - weekday) % 7), 7
    return _midnight(end_day - timedelta(days=length), zone), _midnight(end_day, zone)


def digest_id(subscription_id: str, address: str, period_start: datetime) -> str:
    """The digest's deterministic id, its notification's
    (:func:`missed_checks.notifications.notification.notification_id`:
    kind ``digest``, the whole fleet, the period's start in UTC, the subscription, the address), so
    every firing, retry or replay for one period names the same digest."""
    return notification_id(Kind.DIGEST, TOTAL, to_utc_iso(period_start), subscription_id, address)
