"""Simulated clocks for the local runtime.

:class:`SimulatedClock` stands still until told to move (the scenario runner moves it event by
event and firing by firing); :class:`RealTimeClock` follows the wall clock from a start
instant, optionally faster (``local serve --speed``). Either can be :func:`installed` as the
process's clock: :func:`now` reads it (what the Lambda runtime hands each invocation), and so does
the application's own clock (:class:`missed_checks_local.application.Application`'s ``follow_clock``),
so handlers and adapters see the simulated time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

from missed_checks_local.application import registered
from missed_checks_local.endpoint import ClockAnchor

__all__ = ["RealTimeClock", "SimulatedClock", "installed", "now"]

_source: Callable[[], datetime] | None = None


def now() -> datetime:
    """The process's clock: the :func:`installed` one, else the registered application's own
    (:class:`~missed_checks_local.application.Application`'s ``now``), else the wall clock (UTC)."""
    source = _source or registered().now
    return _aware(source()) if source is not None else datetime.now(UTC)


def _aware(instant: datetime) -> datetime:
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError(f"naive datetime {instant.isoformat()} has no UTC offset")
    return instant.astimezone(UTC)


class SimulatedClock:
    """A clock that only moves forward, and only when told to."""

    def __init__(self, start: datetime) -> None:
        self._now = _aware(start)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance_to(self, instant: datetime) -> None:
        """Move to ``instant``; never backwards (an earlier instant is an error)."""
        instant = _aware(instant)
        with self._lock:
            if instant < self._now:
                raise ValueError(f"the clock cannot go back from {self._now.isoformat()} to {instant.isoformat()}")
            self._now = instant

    def advance(self, delta: timedelta) -> None:
        self.advance_to(self.now() + delta)

    def anchor(self) -> ClockAnchor:
        """This clock for another process: it stands still until the next anchor."""
        return ClockAnchor(self.now(), time.time(), 0.0)


class RealTimeClock:
    """``start`` plus the real time elapsed since creation, times ``speed``."""

    def __init__(self, start: datetime | None = None, speed: float = 1.0) -> None:
        if speed <= 0:
            raise ValueError("speed must be positive")
        self._start = _aware(start) if start else datetime.now(UTC)
        self._origin = time.monotonic()
        self.speed = speed

    def now(self) -> datetime:
        return self._start + timedelta(seconds=(time.monotonic() - self._origin) * self.speed)

    def jump_to(self, instant: datetime) -> None:
        """Run on from ``instant`` (``local advance``); never backwards: an instant the running clock
        has already passed leaves it as it is."""
        instant = _aware(instant)
        if instant > self.now():
            self._start, self._origin = instant, time.monotonic()

    def anchor(self) -> ClockAnchor:
        """This clock for another process (which follows it on its own wall clock)."""
        return ClockAnchor(self.now(), time.time(), self.speed)


@contextmanager
def installed(clock: SimulatedClock | RealTimeClock) -> Iterator[None]:
    """Make ``clock`` the process's clock inside the block: :func:`now` and the registered
    application's clock read it."""
    global _source  # noqa: PLW0603 - one process-wide clock, as the application's
    follow = registered().follow_clock
    _source = clock.now
    follow(clock.now)
    try:
        yield
    finally:
        _source = None
        follow(None)
