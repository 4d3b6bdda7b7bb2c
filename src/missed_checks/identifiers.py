"""Identifiers and names: one alphabet and one length per kind, checked by a full match, in one place.

Every id a user gives (a checklist's, a piece of equipment's, a closure calendar's, a digest
subscription's, a site's, a grant's principal, an HTTP client's idempotency key) and every time
zone name is checked here, by the command line, the HTTP API, the scenario format and, last, the
table adapter: what passes can be written, found again, named in a schedule and typed back. The check is a full match
(``re.fullmatch``): ``"forklift-daily\\n"`` is refused (``re.match`` with ``$`` let a final newline
through). The alphabets are ASCII, so an id is the same text in a key, a schedule name, a URL path
and a terminal.

:func:`markdown_table` is the table docs/http-api.md and docs/operations.md show
(``tests/unit/test_identifiers.py`` keeps them equal).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from missed_checks.errors import InvalidInput, describe, shorten

__all__ = ["KINDS", "MAX_AUTHOR_CHARS", "Kind", "markdown_table", "one_line", "small_map", "validate_timezone",
           "zone"]


@dataclass(frozen=True)
class Kind:
    """One kind of identifier: its alphabet (a regex character class for the first character and
    one for the rest), its longest length, and the words that describe it."""

    name: str
    first: str
    rest: str
    max_length: int
    alphabet: str
    """The alphabet in words, for messages and the documentation."""
    names: str
    """What it names, and why its alphabet is what it is (the documentation's last column)."""
    advice: str = ""
    """Appended to a refusal's message, in parentheses."""
    example: str = ""

    @functools.cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(f"[{self.first}][{self.rest}]{{0,{self.max_length - 1}}}")

    def describe(self) -> str:
        return f"use 1-{self.max_length} {self.alphabet}"

    def validate(self, value: object, field: str) -> str:
        """``value`` when it is a string of this kind (a full match), else InvalidInput naming
        ``field``: "<value> is not a valid <kind>: use ..."."""
        if not isinstance(value, str) or self.pattern.fullmatch(value) is None:
            shown = shorten(value) if isinstance(value, str) else describe(value)
            advice = f" ({self.advice})" if self.advice else ""
            raise InvalidInput(field, f"{shown} is not a valid {self.name}: {self.describe()}{advice}")
        return value


_ID_REST = "A-Za-z0-9._-"
KINDS: dict[str, Kind] = {kind.name: kind for kind in (
    Kind("checklist id", "A-Za-z0-9", _ID_REST, 64,
         "letters, digits, '.', '_' or '-', starting with a letter or digit",
         "a checklist; its EventBridge Scheduler schedule is named after it (`[0-9a-zA-Z-_.]{1,64}`)",
         "it names the checklist's schedule", "forklift-daily"),
    Kind("equipment id", "A-Za-z0-9", "A-Za-z0-9._:/@+-", 128,
         "letters, digits and . _ : / @ + -, starting with a letter or digit",
         "a piece of equipment (an asset tag, a serial, a VIN); in a URL path, `/` is sent as `%2F`",
         "", "FL-001"),
    Kind("calendar id", "A-Za-z0-9", _ID_REST, 64,
         "letters, digits, '.', '_' or '-', starting with a letter or digit",
         "a closure calendar (`closed_on` of a checklist)", "", "de-holidays"),
    Kind("subscription id", "A-Za-z0-9", _ID_REST, 61,
         "letters, digits, '.', '_' or '-', starting with a letter or digit",
         "a digest subscription; its schedule is `_d.<id>` (64 characters at most)",
         "it names the digest's schedule", "fleet-daily"),
    Kind("site id", "A-Za-z0-9", _ID_REST, 64,
         "letters, digits, '.', '_' or '-', starting with a letter or digit",
         "a site (its checklists, equipment and calendars; a person's Cognito group `<role>@<site id>`)",
         "", "north"),
    Kind("principal", "A-Za-z0-9", "A-Za-z0-9._:/@+-", 256,
         "letters, digits and . _ : / @ + -, starting with a letter or digit",
         "who a grant is for: a person's user name or an IAM caller's ARN; in a URL path, `/` is sent as `%2F`",
         "", "arn:aws:iam::123456789012:role/yard-app"),
    Kind("idempotency key", "A-Za-z0-9", "A-Za-z0-9._:-", 128,
         "letters, digits and . _ : -, starting with a letter or digit",
         "the HTTP API's `Idempotency-Key` header, one per request (a UUID fits)", "a UUID fits",
         "0b7e6c1a-4f0e-4f51-9d1e-2f6a3c9d8e11"),
    Kind("item id", "A-Za-z0-9", "A-Za-z0-9_-", 40,
         "letters, digits, '_' or '-', starting with a letter or digit",
         "an item (a question) of a checklist; a check's answers are keyed by it (`answers.<item id>`)",
         "", "brakes"),
    Kind("time zone", "A-Za-z", "A-Za-z0-9_+/-", 64,
         "letters, digits and _ + - /, starting with a letter: a zone of the IANA time zone database",
         "`--tz`, `--timezone`, `tz=`, a checklist's and a subscription's `timezone`: a zone, not a "
         "directory of the database (`Europe` is refused) nor a file beside it; never empty (no default is "
         "guessed from an empty value)", "", "Europe/Berlin"),
)}


def markdown_table() -> str:
    """The kinds as a Markdown table (the one in docs/http-api.md and docs/operations.md)."""
    lines = ["| identifier | alphabet (a full match, ASCII) | length | example | what it names |",
             "|---|---|---|---|---|"]
    for kind in KINDS.values():
        lines.append(f"| {kind.name} | {kind.alphabet} | 1-{kind.max_length} | `{kind.example}` | {kind.names} |")
    return "\n".join(lines) + "\n"


TIME_ZONE = KINDS["time zone"]


def validate_timezone(value: object, field: str) -> str:
    """An IANA zone's name (``Europe/Berlin``, ``UTC``), or InvalidInput naming ``field``: not a
    string, empty, outside the alphabet, too long, a directory of the zone database (``Europe``),
    a file that is not a zone, or no zone at all."""
    zone(value, field)
    return str(value)


def zone(value: object, field: str) -> ZoneInfo:
    """The zone ``value`` names (see :func:`validate_timezone`)."""
    if not isinstance(value, str) or TIME_ZONE.pattern.fullmatch(value) is None or "//" in value or \
            value.endswith("/"):
        shown = shorten(value) if isinstance(value, str) else describe(value)
        raise InvalidInput(field, f"{shown} is not an IANA time zone (1-{TIME_ZONE.max_length} letters, digits, "
                                  "_ + - /): give one such as Europe/Berlin or UTC")
    return _load(value, field)


@functools.lru_cache(maxsize=256)
def _loaded(name: str) -> ZoneInfo | None:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a directory (IsADirectoryError), a long name
        return None


def _load(name: str, field: str) -> ZoneInfo:
    found = _loaded(name)
    if found is None:
        raise InvalidInput(field, f"{shorten(name)} is not an IANA time zone: give one such as Europe/Berlin or UTC")
    return found


MAX_AUTHOR_CHARS = 128
"""Who records something (a calendar revision, an out-of-service period, its early ending): a name."""


def one_line(value: object, field: str, what: str, limit: int = MAX_AUTHOR_CHARS) -> str:
    """Text a person gives (who records something, why): stripped, 1-``limit`` characters, one line
    (no newline, tab or other control character); InvalidInput naming ``field`` otherwise, saying
    ``what`` to give when it is missing or blank."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(field, f"is {describe(value)}: give {what} (a non-empty text)")
    text = value.strip()
    if len(text) > limit:
        raise InvalidInput(field, f"is {len(text)} characters long; keep it to {limit}")
    if any(ord(char) < 32 for char in text):
        raise InvalidInput(field, "must be one line of text (no newlines or control characters)")
    return text


def small_map(value: object, field: str, *, most: int, entries: str, example: str) -> Mapping[object, object]:
    """``value`` when it is a map (a JSON object) of at most ``most`` ``entries``; InvalidInput naming
    ``field`` otherwise, showing ``example``. Its keys and values are the caller's to check."""
    if not isinstance(value, Mapping):
        raise InvalidInput(field, f"is {describe(value)}: give a map of {entries}, such as {example}")
    if len(value) > most:
        raise InvalidInput(field, f"has {len(value)} entries; give at most {most} {entries}")
    return value
