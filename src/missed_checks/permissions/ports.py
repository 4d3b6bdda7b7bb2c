"""What the permission use cases read and write (:mod:`.granting`, :mod:`missed_checks.api.callers`),
as Protocols: :class:`missed_checks.aws.table.grants.GrantItems` serves them, ``tests/fakes.py``'s
in-memory table too."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

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

    def put_grant(self, grant: Grant, *, expected_revision: int | None, by: str) -> Grant:
        """Write ``grant`` at revision ``expected_revision + 1`` (1 when None: it must not exist yet,
        else Conflict), conditional on the stored revision being ``expected_revision``
        (PreconditionFailed with the current ETag otherwise); stamps ``changed_by=by`` and
        ``changed_at``. Returns the grant as written."""
        ...

    def delete_grant(self, principal: str, *, expected_revision: int | None, by: str) -> None:
        """Stamp then delete the grant, conditional on its revision (any when None); NotFound when
        there is none, PreconditionFailed when the revision differs."""
        ...
