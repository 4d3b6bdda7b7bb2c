"""The HTTP API's query parameters, and the command-line options that mean the same: one function per
kind, so that ``tz=Europe`` (``GET /report``) and ``--tz Europe`` (``missed-checks report``) are
refused alike, naming the field.

* a time zone: :func:`timezone` (:func:`missed_checks.identifiers.zone`; absent means UTC, an empty
  value is refused, never read as UTC);
* a range bound: :func:`period_bound` (a date, its midnight in the zone, or an instant with an offset)
  or :func:`instant`;
* a range: :func:`time_range` (``to`` after ``from``, and at most ``max_days`` calendar days in the
  zone: 366 days means 366, whatever the clocks do in between);
* a list of ids: :func:`id_list` (each of its kind, :mod:`missed_checks.identifiers`);
* a choice: :func:`choice`; a whole number: :func:`whole_number`;
* a page of a list: :func:`page_size` (``limit``, with a default and a maximum) and :func:`cursor`
  (``cursor``: where the previous page ended, opaque to the client, refused when tampered with or
  handed to another query); :func:`next_cursor` writes it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, time, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from missed_checks import identifiers
from missed_checks.errors import InvalidInput, describe, shorten
from missed_checks.timefmt import parse_instant, to_utc_iso

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
MAX_PARAMETER_CHARS = 4096
"""A query parameter longer than this is refused before it is read (a list of 50 ids fits)."""


def timezone(value: object, field: str = "tz") -> ZoneInfo:
    """The zone a ``tz`` names; UTC when it is absent (None); refused naming ``field`` when it is
    empty, too long, outside the alphabet, or names no zone (``Europe`` is a directory of the
    database, not a zone)."""
    if value is None:
        return ZoneInfo("UTC")
    return identifiers.zone(value, field)


def instant(value: object, field: str) -> datetime:
    """A required instant with an offset (``2026-03-02T05:00:00Z``)."""
    if value is None:
        raise InvalidInput(field, f"give {field}, an ISO 8601 instant with an offset such as 2026-03-02T00:00:00Z")
    return parse_instant(value, field)  # type: ignore[arg-type]  # parse_instant refuses what is not text


def period_bound(text: object, field: str, zone_name: object) -> datetime:
    """A date (``YYYY-MM-DD``: its midnight in ``zone_name``) or an instant with an offset; the zone
    is checked first, whichever is given."""
    zone = identifiers.zone(zone_name, "tz")
    if not isinstance(text, str):
        raise InvalidInput(field, f"is {describe(text)}, not a date (YYYY-MM-DD) or an instant")
    if _DATE.fullmatch(text.strip()):
        try:
            day = datetime.strptime(text.strip(), "%Y-%m-%d").date()
        except ValueError:
            raise InvalidInput(field, f"{shorten(text)} is not a date (YYYY-MM-DD) or an instant") from None
        return datetime.combine(day, time(0), tzinfo=zone).astimezone(UTC)
    return parse_instant(text, field)


def time_range(start: datetime, end: datetime, *, max_days: int, zone: tzinfo = UTC, field: str = "to") -> None:
    """``[start, end)`` is a range the API answers: ``end`` after ``start``, and at most ``max_days``
    calendar days after it in ``zone`` (a range of dates across a spring-forward spans an hour less
    than ``max_days`` times 24 hours, and is still ``max_days`` days: the day after is refused)."""
    if end <= start:
        raise InvalidInput(field, f"{to_utc_iso(end)} must be after from ({to_utc_iso(start)})")
    local = start.astimezone(zone)
    latest = (local + timedelta(days=max_days)).astimezone(UTC)  # wall-clock days in the zone
    if end.astimezone(UTC) > latest:
        raise InvalidInput(field, f"a range spans at most {max_days} days (from {to_utc_iso(start)}, to may be "
                                  f"{to_utc_iso(latest)} at the latest): ask for shorter ranges")


def id_list(value: str | None, field: str, kind: str, max_ids: int) -> list[str]:
    """``a,b`` as a list of ids of ``kind`` (each checked, duplicates dropped, order kept); at most
    ``max_ids``. API Gateway's payload 2.0 joins a repeated parameter with commas; no id holds one."""
    if value is None:
        return []
    if len(value) > MAX_PARAMETER_CHARS:
        raise InvalidInput(field, f"is {len(value)} characters long: name at most {max_ids} ids")
    parts = value.split(",")
    if len(parts) > max_ids:
        raise InvalidInput(field, f"{len(parts)} ids; name at most {max_ids}, or leave {field} out for the fleet")
    spec = identifiers.KINDS[kind]
    return list(dict.fromkeys(spec.validate(part, field) for part in parts))


def choice(value: object, field: str, choices: Sequence[str]) -> str:
    """One of ``choices``, exactly as spelled."""
    if not isinstance(value, str) or value not in choices:
        shown = shorten(value) if isinstance(value, str) else describe(value)
        raise InvalidInput(field, f"{shown} is not one of {', '.join(choices)}")
    return value


def whole_number(value: object, field: str, *, minimum: int = 0, maximum: int = 10**9) -> int:
    """A whole number from ``minimum`` to ``maximum`` written in decimal digits (``revision=3``);
    refused naming ``field`` otherwise."""
    text = value.strip() if isinstance(value, str) else None
    if text is None or not text.isascii() or not text.isdigit() or len(text) > 10 \
            or not minimum <= int(text) <= maximum:
        shown = shorten(value) if isinstance(value, str) else describe(value)
        raise InvalidInput(field, f"{shown} is not a whole number from {minimum} to {maximum}")
    return int(text)


MAX_CURSOR_CHARS = 1024
"""A cursor longer than this was not written by :func:`next_cursor` (one holds a position of ids and
an instant, a few hundred characters at most)."""
_CURSOR = re.compile(r"[A-Za-z0-9_-]+")
_CURSOR_VERSION = 1


def page_size(value: object, field: str = "limit", *, default: int, maximum: int) -> int:
    """How many items a page holds: ``default`` when absent (None), else a whole number from 1 to
    ``maximum``; refused naming ``field`` otherwise (a larger page would not fit an answer)."""
    if value is None:
        return default
    text = str(value).strip() if isinstance(value, (str, int)) and not isinstance(value, bool) else None
    if text is None or not text.isascii() or not text.isdigit() or len(text) > 9:
        shown = shorten(value) if isinstance(value, str) else describe(value)
        raise InvalidInput(field, f"{shown} is not a number of items: give a whole number from 1 to {maximum}")
    size = int(text)
    if not 1 <= size <= maximum:
        raise InvalidInput(field, f"{size} items in one page: give a whole number from 1 to {maximum} (the default "
                                  f"is {default}); follow next_cursor for the rest")
    return size


def _query_digest(query: Mapping[str, object]) -> str:
    """The query a cursor belongs to, as a short digest (its parameters but the page's own)."""
    text = json.dumps({name: query[name] for name in sorted(query)}, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def next_cursor(position: Mapping[str, Any], query: Mapping[str, object]) -> str:
    """The cursor of the page after ``position`` of the list ``query`` asks for: base64url (no
    padding) of a small JSON document, the position and a digest of the query."""
    document = {"v": _CURSOR_VERSION, "q": _query_digest(query), "p": dict(position)}
    raw = json.dumps(document, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def cursor(value: object, query: Mapping[str, object], field: str = "cursor") -> Any:
    """The position a cursor of :func:`next_cursor` holds (None when absent), for the list ``query``
    asks for; refused naming ``field`` when it is not one (edited, truncated, made up) or was written
    for another query (other ``from``, ``to`` or filter). The caller checks the position itself."""
    if value is None:
        return None
    advice = "pass next_cursor exactly as the previous page answered it"
    if not isinstance(value, str) or not value or len(value) > MAX_CURSOR_CHARS or not _CURSOR.fullmatch(value):
        shown = shorten(value) if isinstance(value, str) else describe(value)
        raise InvalidInput(field, f"{shown} is not a cursor of this API: {advice}")
    try:
        document = json.loads(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).decode("utf-8"))
    except (binascii.Error, ValueError):
        raise InvalidInput(field, f"{shorten(value)} is not a cursor of this API: {advice}") from None
    if not isinstance(document, dict) or set(document) != {"v", "q", "p"} or document["v"] != _CURSOR_VERSION:
        raise InvalidInput(field, f"{shorten(value)} is not a cursor of this API: {advice}")
    if document["q"] != _query_digest(query):
        raise InvalidInput(field, "was given for another query: keep from, to and the filters of the first page "
                                  "while following next_cursor, or leave cursor out to start again")
    return document["p"]
