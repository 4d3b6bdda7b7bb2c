"""Where ``missed-checks local serve`` answers and what it publishes there: the one module the
operator's tools share with the emulator (they import it; it imports nothing of either).

A client of a local stack (the operator's commands, ``local advance``) finds the stack by
:data:`LOCAL_STACK_NAME` behind :data:`LOCAL_ENDPOINT`, and takes "now" from the stack's
:data:`CLOCK_TAG` (:class:`ClockAnchor`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

__all__ = ["CLOCK_TAG", "LOCAL_API_PORT", "LOCAL_API_URL", "LOCAL_ENDPOINT", "LOCAL_SERVE_PORT", "LOCAL_STACK_NAME",
           "ClockAnchor", "NotAClock"]

LOCAL_STACK_NAME = "missed-checks-local"
"""The stack name ``missed-checks local serve`` publishes its outputs under."""
LOCAL_SERVE_PORT = 5000
"""``missed-checks local serve``'s default port."""
LOCAL_ENDPOINT = f"http://127.0.0.1:{LOCAL_SERVE_PORT}"
"""Where ``missed-checks local serve`` answers by default."""
# the stack's HTTP API under local serve (issue #19): its own port, next to the AWS endpoint's
LOCAL_API_PORT = LOCAL_SERVE_PORT + 1
LOCAL_API_URL = f"http://127.0.0.1:{LOCAL_API_PORT}"
CLOCK_TAG = "missed-checks:clock"
"""The stack tag under which ``missed-checks local serve`` publishes its simulated clock
(:class:`ClockAnchor`): whatever talks to a local stack takes "now" from it."""


class NotAClock(ValueError):
    """A stack's :data:`CLOCK_TAG` tag that is not a clock."""


@dataclass(frozen=True)
class ClockAnchor:
    """A running clock as another process can follow it: it read ``instant`` at wall-clock time
    ``wall`` (seconds since the epoch) and moves ``speed`` simulated seconds per real second (0: it
    stands still until the next anchor is published)."""

    instant: datetime
    wall: float
    speed: float

    def now(self) -> datetime:
        return self.instant + timedelta(seconds=max(0.0, time.time() - self.wall) * self.speed)

    def to_tag(self) -> str:
        return json.dumps({"now": self.instant.astimezone(UTC).isoformat(), "wall": self.wall, "speed": self.speed})

    @classmethod
    def from_tag(cls, text: str) -> ClockAnchor:
        try:
            data = json.loads(text)
            instant = datetime.fromisoformat(data["now"])
            wall, speed = float(data["wall"]), float(data["speed"])
        except (ValueError, TypeError, KeyError) as error:
            raise NotAClock(f"the stack's {CLOCK_TAG} tag is not a clock: {text[:80]!r}") from error
        if instant.tzinfo is None or speed < 0:
            raise NotAClock(f"the stack's {CLOCK_TAG} tag is not a clock: {text[:80]!r}")
        return cls(instant.astimezone(UTC), wall, speed)
