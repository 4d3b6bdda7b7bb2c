"""A page of a list read in key order: its items and where the next page starts (None: the last page)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from missed_checks.errors import InvalidInput, describe

__all__ = ["MAX_PAGE", "Page", "every_item", "page_after", "page_limit"]

T = TypeVar("T")

MAX_PAGE = 1000
"""The most items one page holds."""


@dataclass(frozen=True)
class Page(Generic[T]):
    items: Sequence[T]
    next_position: str | None
    """The key the next page starts after (hand it back as ``position``); None when this is the last page."""


def page_limit(limit: object, field: str = "limit") -> int:
    """``limit`` as a page size (1-:data:`MAX_PAGE`); InvalidInput naming ``field`` otherwise."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(field, f"is {describe(limit)}: give a whole number from 1 to {MAX_PAGE}")
    return limit


def page_after(items: Iterable[T], key: Callable[[T], str], position: str | None, limit: int) -> Page[T]:
    """The page of ``items`` (in ``key`` order) after ``position`` (the key of the last item of the page
    before; None: the first page), at most ``limit`` (1-:data:`MAX_PAGE`, InvalidInput naming ``limit``)."""
    limit = page_limit(limit)
    after = [item for item in items if position is None or key(item) > position]
    page = after[:limit]
    return Page(page, key(page[-1]) if len(after) > limit else None)


def every_item(read: Callable[[str | None, int], Page[T]]) -> list[T]:
    """Every item of a list read a page (of :data:`MAX_PAGE`) at a time: ``read(position, limit)``
    until a page says it is the last."""
    items: list[T] = []
    position: str | None = None
    while True:
        page = read(position, MAX_PAGE)
        items.extend(page.items)
        if page.next_position is None:
            return items
        position = page.next_position
