"""Configuration from the environment, read when needed (never at import time).

template.yaml sets every variable a function reads, from the stack's parameters, and holds their
defaults: the code has none of its own, so a default is defined once (where it is deployed)."""

from __future__ import annotations

import os

from missed_checks.errors import MissedChecksError


class MissingSetting(MissedChecksError):
    """A required environment variable is not set on the function."""


def required(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise MissingSetting(f"environment variable {name} is not set (see template.yaml)")
    return value


def required_int(name: str) -> int:
    value = required(name)
    try:
        return int(value)
    except ValueError as error:
        raise MissingSetting(f"environment variable {name} must be a whole number, got {value!r}") from error


def optional(name: str) -> str:
    """An environment variable a feature may leave empty (the notifications' sender, #18): "" when unset."""
    return os.environ.get(name, "").strip()
