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
