"""Revised objects (sites, registered equipment, grants; #31): every write raises an object's
``revision`` by one, and an edit made on a revision read earlier (``If-Match``) is written only
over that revision. The use cases read first for a clear answer; the adapter's write is conditional
on the revision too, so a change between the read and the write is refused the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from missed_checks.errors import Conflict, NotFound, PreconditionFailed

__all__ = ["ANY", "Revised", "at_revision", "expected_revision", "stale"]

T = TypeVar("T")

ANY = None
"""``if_match`` for an edit of whatever revision is current (``If-Match: *``)."""


class Revised(Protocol):
    @property
    def revision(self) -> int: ...


def stale(what: str, revision: int, expected: int) -> PreconditionFailed:
    """The refusal of an edit made on revision ``expected`` of ``what``, now at ``revision`` (412,
    carrying the current ETag)."""
    return PreconditionFailed(f"{what} is at revision {revision}, not {expected}: it changed since you read it; "
                              "read it again and redo the change", current_etag=f'"{revision}"')


def expected_revision(what: str, current: Revised | None, *, if_match: int | None = ANY,
                      create: bool | None = None) -> int | None:
    """The revision a write of ``what`` must find (None: the object must not exist yet), given the
    object as read (``current``), the revision the edit was made on (``if_match``; :data:`ANY` for
    whatever it is now) and ``create`` (True: a new object only, Conflict when it exists; False: an
    existing one only, NotFound when missing; None: either). NotFound when ``if_match`` names a
    revision of a missing object, PreconditionFailed when the object is at another revision."""
    if current is None:
        if create is False or if_match is not ANY:
            raise NotFound(f"{what} does not exist")
        return None
    if create is True:
        raise Conflict(f"{what} already exists: to change it, send If-Match with the ETag you read it with")
    if if_match is not ANY and current.revision != if_match:
        raise stale(what, current.revision, if_match)
    return current.revision


def at_revision(what: str, if_match: int | None, revision_now: Callable[[], int | None], write: Callable[[], T]) -> T:
    """Run a ``write`` conditional on the revision read; with ``if_match``, a write refused because the
    object moved on meanwhile (Conflict) is :func:`stale` with its revision now (``revision_now()``;
    None: it is gone, NotFound). For adapters whose conditional write says Conflict (checklists,
    calendars: helper E, #31)."""
    try:
        return write()
    except Conflict:
        if if_match is ANY:
            raise
        now = revision_now()
        if now is None:
            raise NotFound(f"{what} does not exist") from None
        if now == if_match:
            raise
        raise stale(what, now, if_match) from None
