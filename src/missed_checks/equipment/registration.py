"""The equipment registry (#31): a piece of equipment registered once (id, name, kind, free
attributes) and at one site at a time, with the history of its sites.

``moves`` holds every placement, oldest first: the site it was registered at (since its
registration), then each move (the new site, since the move's instant). :meth:`site_at` answers
where it was at an instant (before its registration: the site it was registered at). A move or a
retirement ends the equipment's open assignments from that instant on; what was judged before stays
as it was judged (judged windows and missed checks are records, never rewritten).

Equipment assigned before the registry existed has no record: it is at no site.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from types import MappingProxyType
from typing import Any

from missed_checks import identifiers
from missed_checks.equipment.assignments import validate_equipment_id
from missed_checks.errors import Conflict, InvalidInput
from missed_checks.timefmt import to_utc_iso

__all__ = ["MAX_ATTRIBUTES", "MAX_ATTRIBUTE_CHARS", "MAX_NAME_CHARS", "RegisteredEquipment", "SiteMove",
           "validate_attributes", "validate_kind", "validate_name"]

MAX_NAME_CHARS = 200
MAX_KIND_CHARS = 100
MAX_ATTRIBUTES = 50
MAX_ATTRIBUTE_CHARS = 500
MAX_ATTRIBUTE_NAME_CHARS = 64
MAX_MOVES = 1000
"""Placements one record keeps (far under DynamoDB's 400 KB item)."""


def validate_name(value: object, field: str = "name") -> str:
    return identifiers.one_line(value, field, "the equipment's name", MAX_NAME_CHARS)


def validate_kind(value: object, field: str = "kind") -> str:
    return identifiers.one_line(value, field, "the kind of equipment (e.g. forklift)", MAX_KIND_CHARS)


def validate_attributes(value: object, field: str = "attributes") -> dict[str, str]:
    """Free attributes: a map of at most :data:`MAX_ATTRIBUTES` one-line names to one-line texts."""
    if value is None:
        return {}
    given = identifiers.small_map(value, field, most=MAX_ATTRIBUTES, entries="attribute names to texts",
                                  example='{"serial": "A-123"}')
    attributes: dict[str, str] = {}
    for name, text in given.items():
        key = identifiers.one_line(name, f"{field} (a name)", "an attribute name", MAX_ATTRIBUTE_NAME_CHARS)
        attributes[key] = identifiers.one_line(text, f"{field}.{key}", "a text", MAX_ATTRIBUTE_CHARS)
    return attributes


@dataclass(frozen=True)
class SiteMove:
    """The equipment is at ``site_id`` from ``since`` on (until the next move)."""

    site_id: str
    since: datetime

    def to_dict(self) -> dict[str, str]:
        return {"site_id": self.site_id, "since": to_utc_iso(self.since)}


@dataclass(frozen=True)
class RegisteredEquipment:
    equipment_id: str
    name: str
    kind: str
    site_id: str
    """Where it is now (the last of ``moves``)."""
    attributes: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    moves: tuple[SiteMove, ...] = ()
    retired_at: datetime | None = None
    revision: int = 0
    created_at: datetime | None = None
    updated_at: datetime | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "attributes", MappingProxyType(dict(self.attributes)))

    @classmethod
    def register(cls, equipment_id: object, *, name: object, kind: object, site_id: str,
                 attributes: object = None, now: datetime) -> RegisteredEquipment:
        """A new record (revision 1) at ``site_id`` (already checked), every field validated."""
        return cls(equipment_id=validate_equipment_id(equipment_id, "equipment_id"), name=validate_name(name),
                   kind=validate_kind(kind), site_id=site_id, attributes=validate_attributes(attributes),
                   moves=(SiteMove(site_id, now),), revision=1, created_at=now, updated_at=now)

    def site_at(self, instant: datetime) -> str:
        """The site it was at at ``instant`` (before its registration: the site it was registered at)."""
        where = self.moves[0].site_id if self.moves else self.site_id
        for move in self.moves:
            if move.since > instant:
                break
            where = move.site_id
        return where

    def _live(self) -> None:
        if self.retired_at is not None:
            raise Conflict(f"equipment {self.equipment_id!r} was retired at {to_utc_iso(self.retired_at)}: a retired "
                           "record is kept as it was")

    def edited(self, *, name: object = None, kind: object = None, attributes: object = None,
               now: datetime) -> RegisteredEquipment:
        """Another name, kind or attributes (None keeps each; attributes are replaced whole), next revision."""
        self._live()
        return replace(self, name=self.name if name is None else validate_name(name),
                       kind=self.kind if kind is None else validate_kind(kind),
                       attributes=self.attributes if attributes is None else validate_attributes(attributes),
                       revision=self.revision + 1, updated_at=now)

    def moved(self, site_id: str, at: datetime, *, now: datetime) -> RegisteredEquipment:
        """At ``site_id`` (already checked) from ``at`` on, next revision. ``at`` must not precede
        the last placement (InvalidInput ``at``): history is only ever added to."""
        self._live()
        if site_id == self.site_id:
            raise InvalidInput("site_id", f"equipment {self.equipment_id!r} is at site {site_id} already")
        last = self.moves[-1].since if self.moves else None
        if last is not None and at < last:
            raise InvalidInput("at", f"{to_utc_iso(at)} is before it came to site {self.site_id} "
                                     f"({to_utc_iso(last)}): a move is dated after the last one")
        if len(self.moves) >= MAX_MOVES:
            raise InvalidInput("site_id", f"equipment {self.equipment_id!r} has moved {len(self.moves)} times, "
                                          f"the most one record keeps ({MAX_MOVES})")
        return replace(self, site_id=site_id, moves=(*self.moves, SiteMove(site_id, at)),
                       revision=self.revision + 1, updated_at=now)

    def retired(self, at: datetime, *, now: datetime) -> RegisteredEquipment:
        """Retired from ``at`` on (kept, never deleted), next revision."""
        self._live()
        last = self.moves[-1].since if self.moves else None
        if last is not None and at < last:
            raise InvalidInput("at", f"{to_utc_iso(at)} is before it came to site {self.site_id} "
                                     f"({to_utc_iso(last)})")
        return replace(self, retired_at=at, revision=self.revision + 1, updated_at=now)

    def to_dict(self) -> dict[str, Any]:
        """As the API shows it."""
        return {"equipment_id": self.equipment_id, "name": self.name, "kind": self.kind, "site_id": self.site_id,
                "attributes": dict(sorted(self.attributes.items())),
                "moves": [move.to_dict() for move in self.moves],
                "retired_at": to_utc_iso(self.retired_at) if self.retired_at else None,
                "revision": self.revision,
                "created_at": to_utc_iso(self.created_at) if self.created_at else None,
                "updated_at": to_utc_iso(self.updated_at) if self.updated_at else None}
