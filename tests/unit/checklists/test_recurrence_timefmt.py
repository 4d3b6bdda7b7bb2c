"""Shared instant helpers: UTC ISO strings with second precision, offsets required."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from missed_checks.errors import InvalidInput
from missed_checks.timefmt import parse_instant, to_utc_iso


def test_to_utc_iso_converts_to_utc_and_drops_microseconds() -> None:
    berlin = datetime(2026, 3, 2, 6, 0, 0, 999_999, tzinfo=ZoneInfo("Europe/Berlin"))
    assert to_utc_iso(berlin) == "2026-03-02T05:00:00Z"


def test_to_utc_iso_rejects_naive() -> None:
    with pytest.raises(ValueError, match="naive"):
        to_utc_iso(datetime(2026, 3, 2, 6))


@pytest.mark.parametrize(
    ("text", "expected_utc", "expected_offset"),
    [
        ("2026-03-02T05:00:00Z", datetime(2026, 3, 2, 5, tzinfo=UTC), timedelta(0)),
        ("2026-03-02T06:00:00+01:00", datetime(2026, 3, 2, 5, tzinfo=UTC), timedelta(hours=1)),
        ("2026-03-02T10:30:00+05:30", datetime(2026, 3, 2, 5, tzinfo=UTC), timedelta(hours=5, minutes=30)),
    ],
)
def test_parse_instant_keeps_offset(text: str, expected_utc: datetime, expected_offset: timedelta) -> None:
    parsed = parse_instant(text, "from")
    assert parsed == expected_utc
    assert parsed.utcoffset() == expected_offset


def test_round_trip() -> None:
    instant = datetime(2026, 10, 25, 0, 30, tzinfo=timezone(timedelta(hours=2)))
    assert parse_instant(to_utc_iso(instant), "x") == instant


@pytest.mark.parametrize("text", ["2026-03-02T05:00:00", "2026-03-02", "yesterday", "", "  "])
def test_parse_instant_rejects_naive_or_garbage_naming_the_field(text: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_instant(text, "watermark")
    assert caught.value.field == "watermark"
    assert "2026-03-02T05:00:00Z" in caught.value.message


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("0001-01-01T00:00:00Z", "outside the years 1970 to 2299"),
        ("0001-01-01T00:00:00+01:00", "outside the years 1970 to 2299"),  # would overflow converted to UTC
        ("9999-12-31T23:59:59-05:00", "outside the years 1970 to 2299"),
        ("1969-12-31T23:59:59Z", "outside the years 1970 to 2299"),
        ("2300-01-01T00:00:00Z", "outside the years 1970 to 2299"),
        (5, "is a number (5), not an ISO 8601 instant"),
        (None, "is missing (NULL), not an ISO 8601 instant"),
        ("2026-03-02T05:00:00Z" * 10, "too long"),
    ],
)
def test_parse_instant_refuses_what_no_instant_of_the_system_can_be(value: object, fragment: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_instant(value, "from")  # type: ignore[arg-type]  # not a str on purpose: the refusal is tested
    assert caught.value.field == "from"
    assert fragment in caught.value.message


@pytest.mark.parametrize("text", ["1970-01-01T00:00:00Z", "2299-12-31T23:59:59Z", "2199-12-31T23:59:59+14:00"])
def test_parse_instant_accepts_the_bounds(text: str) -> None:
    assert parse_instant(text, "to").isoformat().startswith(text[:19])
