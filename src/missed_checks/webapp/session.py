"""A signed-in person's session, held server-side in the table (the browser holds only a random id).

The item's key is the SHA-256 of the id (a read of the table does not give away a cookie). A session
ends :data:`IDLE` after its last request or :data:`ABSOLUTE` after sign-in, whichever comes first;
``expires_at`` (epoch seconds) is that instant, the table's TTL attribute, so DynamoDB removes the
item once it is over (TTL deletes late: every read checks the instants itself). Sessions run on the
wall clock, not on the product's clock (the local runtime's simulated clock may leap weeks ahead).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

__all__ = ["ABSOLUTE", "IDLE", "TOUCH_EVERY", "Session", "hash_of", "new_secret"]

IDLE = timedelta(minutes=30)
ABSOLUTE = timedelta(hours=12)
TOUCH_EVERY = timedelta(minutes=1)
"""The last-seen instant is written again only when older than this (one write a minute at most)."""


def new_secret() -> str:
    """A random, URL-safe secret of 256 bits (a session id, a CSRF token)."""
    return secrets.token_urlsafe(32)


def hash_of(session_id: str) -> str:
    """The hex SHA-256 of a session id: the session item's key."""
    return hashlib.sha256(session_id.encode()).hexdigest()


@dataclass(frozen=True)
class Session:
    """``key`` is :func:`hash_of` the cookie's id; ``principal`` the person's user name; ``groups``
    the user pool's groups at sign-in (their roles by site are merged with the grant record on every
    request); ``csrf`` the token every form carries."""

    key: str
    principal: str
    name: str
    groups: tuple[str, ...]
    csrf: str
    created_at: datetime
    last_seen: datetime

    @property
    def expires_at(self) -> datetime:
        return min(self.last_seen + IDLE, self.created_at + ABSOLUTE)

    def over(self, now: datetime) -> bool:
        """Whether the session ended (idle too long, or too old) by ``now``."""
        return now >= self.expires_at

    def seen(self, now: datetime) -> Session:
        return replace(self, last_seen=now)

    def needs_touch(self, now: datetime) -> bool:
        return now - self.last_seen >= TOUCH_EVERY
