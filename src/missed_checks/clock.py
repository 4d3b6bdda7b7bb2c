"""The one place code asks for "now".

Domain code never reads the wall clock: it takes instants as arguments. Handlers and adapters
call :func:`now`, which the local runtime points at its simulated clock.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

_source: Callable[[], datetime] | None = None


def now() -> datetime:
    """The current instant, timezone-aware (UTC)."""
    if _source is not None:
        return _source()
    return datetime.now(UTC)


def set_source(source: Callable[[], datetime] | None) -> None:
    """Point :func:`now` at another clock (the local runtime's simulated one); ``None`` resets."""
    global _source  # noqa: PLW0603 - one process-wide clock, by design
    _source = source


def source() -> Callable[[], datetime] | None:
    """The clock :func:`now` reads (``None``: the wall clock)."""
    return _source
