"""What the audit trail writes and reads through, as Protocols (the table adapter
:class:`missed_checks.aws.table.audit.AuditItems` serves both; ``tests/fakes.py`` has one in memory)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from missed_checks.audit_trails.audit_entry import AuditEntry
    from missed_checks.paging import Page


class AuditWriter(Protocol):
    def put_audit_entry(self, entry: AuditEntry) -> bool:
        """Write the entry unless one of the same stream record exists (then False): never updated."""
        ...


class AuditReader(Protocol):
    def object_trail(self, kind: str, object_id: str, after: str | None, limit: int) -> Page[AuditEntry]:
        """One object's entries, oldest first, from after position ``after`` (None: the first)."""
        ...

    def latest_audit_entry(self, kind: str, object_id: str) -> AuditEntry | None:
        """The object's newest entry (None: it has none)."""
        ...

    def site_trail(self, site_id: str | None, after: str | None, limit: int) -> Page[AuditEntry]:
        """The entries of every object at ``site_id`` (None: objects with no site), oldest first."""
        ...
