"""Error types shared across the domain, the handlers and the command line.

Lambda reports an exception's class name as the error type Step Functions sees, so the names
here are part of the state machine's contract (its Retry and Catch rules name them).
"""

from __future__ import annotations


class MissedChecksError(Exception):
    """Base class for every error this package raises on purpose."""


class InvalidInput(MissedChecksError, ValueError):
    """Input a user gave is malformed; ``field`` names the offending field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class InvalidRecurrence(InvalidInput):
    """A checklist's recurrence, time zone, window or grace cannot be used."""


class TransientError(MissedChecksError):
    """A dependency was throttled or unavailable after botocore's own retries: retry later."""


class ScheduleRejected(MissedChecksError):
    """EventBridge Scheduler refused a schedule (ValidationException): retrying will not help."""


class NotFound(MissedChecksError):
    """The item the caller named does not exist."""


class Conflict(MissedChecksError):
    """The item changed or is in a state that forbids the change (e.g. dismissed twice)."""


class Forbidden(MissedChecksError):
    """The caller may see the object but their role at its site does not allow this (HTTP 403).
    A caller with no role at the object's site gets :class:`NotFound` instead (404), never this:
    another site's objects are never confirmed to exist."""


class PreconditionFailed(MissedChecksError):
    """An edit named the revision it read (``If-Match``) and the object has changed since (HTTP 412):
    read it again and redo the edit on what it is now."""

    def __init__(self, message: str, current_etag: str | None = None) -> None:
        super().__init__(message)
        self.current_etag = current_etag


def describe(value: object) -> str:
    """What a value of the wrong type is, for error messages: ``a number (5)``, ``a list ([1])``.

    DynamoDB hands numbers over as ``Decimal``, binary as ``Binary``/``bytes``, NULL as ``None``.
    """
    if value is None:
        return "missing (NULL)"
    if isinstance(value, bool):
        kind = "a boolean"
    elif isinstance(value, int | float) or type(value).__name__ == "Decimal":
        kind = "a number"
    elif isinstance(value, bytes | bytearray) or type(value).__name__ == "Binary":
        kind = "binary data"
    elif isinstance(value, set | frozenset):
        kind = "a set"
    elif isinstance(value, list | tuple):
        kind = "a list"
    elif isinstance(value, dict):
        kind = "a map"
    elif isinstance(value, str):
        kind = "a string"
    else:
        kind = f"a {type(value).__name__}"
    return f"{kind} ({shorten(value)})"


def shorten(value: object, limit: int = 60) -> str:
    """``repr(value)`` cut to at most ``limit`` characters, so that messages stay small."""
    try:
        text = repr(value)
    except Exception:  # huge ints refuse repr(); a message must never fail
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
