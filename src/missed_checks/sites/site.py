"""A site (#31): an id, a name and the time zone its new checklists take when they name none."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from missed_checks import identifiers
from missed_checks.timefmt import to_utc_iso

__all__ = ["MAX_NAME_CHARS", "Site", "validate_name", "validate_site_id", "validate_site_timezone"]

MAX_NAME_CHARS = 200


def validate_site_id(value: object, field: str = "site_id") -> str:
    return identifiers.KINDS["site id"].validate(value, field)


def validate_name(value: object, field: str = "name") -> str:
    return identifiers.one_line(value, field, "the site's name", MAX_NAME_CHARS)


def validate_site_timezone(value: object, field: str = "timezone") -> str:
    """An IANA zone (the recurrence's own check: :func:`missed_checks.identifiers.validate_timezone`)."""
    return identifiers.validate_timezone(value, field)


@dataclass(frozen=True)
class Site:
    site_id: str
    name: str
    timezone: str
    revision: int = 0
    created_at: datetime | None = None
    updated_at: datetime | None = None

    @classmethod
    def create(cls, site_id: object, name: object, timezone: object, *, now: datetime) -> Site:
        """A new site (revision 1), every field validated (InvalidInput naming it)."""
        return cls(site_id=validate_site_id(site_id), name=validate_name(name),
                   timezone=validate_site_timezone(timezone), revision=1, created_at=now, updated_at=now)

    def edited(self, *, name: object = None, timezone: object = None, now: datetime) -> Site:
        """The site with a new name and/or time zone (None keeps it), at the next revision."""
        return replace(self, name=self.name if name is None else validate_name(name),
                       timezone=self.timezone if timezone is None else validate_site_timezone(timezone),
                       revision=self.revision + 1, updated_at=now)

    def to_dict(self) -> dict[str, Any]:
        """As the API shows it."""
        return {"site_id": self.site_id, "name": self.name, "timezone": self.timezone, "revision": self.revision,
                "created_at": to_utc_iso(self.created_at) if self.created_at else None,
                "updated_at": to_utc_iso(self.updated_at) if self.updated_at else None}
