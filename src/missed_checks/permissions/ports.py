"""What the permission use cases read and write (:mod:`.granting`, :mod:`missed_checks.api.callers`),
as Protocols: :class:`missed_checks.aws.table.grants.GrantItems` serves them, ``tests/fakes.py``'s
in-memory table too."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from missed_checks.sites.ports import SiteReader

if TYPE_CHECKING:
    from missed_checks.paging import Page
    from missed_checks.permissions.grant import Grant


class GrantReader(Protocol):
    def get_grant(self, principal: str) -> Grant | None:
        """The grant record of ``principal``, or None."""
        ...


class GrantStore(GrantReader, Protocol):
    def list_grants(self, position: str | None, limit: int) -> Page[Grant]:
        """Grants in principal order, after ``position`` (a principal), at most ``limit``."""
        ...

    def write_grant(self, grant: Grant, *, expected: int | None, by: str) -> None:
        """Write ``grant`` (at its own revision) only over revision ``expected`` (None: only when
        there is no grant of its principal, else Conflict; PreconditionFailed with the current ETag
        when the stored revision differs, NotFound when it vanished); stamped ``changed_by=by`` and
        ``changed_at``."""
        ...

    def remove_grant(self, principal: str, *, expected: int | None, by: str) -> None:
        """Stamp (``changed_by=by``, ``deleting``) then delete the grant, only at revision ``expected``
        (None: any); NotFound when there is none, PreconditionFailed when at another revision."""
        ...


class GrantManagement(GrantStore, SiteReader, Protocol):
    """Putting a grant reads the sites it names."""
