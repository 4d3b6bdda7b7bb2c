"""What the defect use cases read and write (:mod:`.opening`, :mod:`.resolving`, :mod:`.listing`),
as Protocols: :class:`missed_checks.aws.table.defects.DefectItems` serves them, ``tests/fakes.py``'s
in-memory table too."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from missed_checks.defects.defect import Defect, DefectStatus
    from missed_checks.paging import Page


class DefectReader(Protocol):
    def get_defect(self, defect_id: str) -> Defect | None:
        """The defect, or None (strongly consistent)."""
        ...

    def defects_of_equipment(self, equipment_id: str, status: DefectStatus | None = None) -> list[Defect]:
        """The equipment's defects (only those of ``status``, when given), oldest found first."""
        ...

    def defects_of_site(self, site_id: str | None, status: DefectStatus | None = None,
                        position: str | None = None, limit: int = 100) -> Page[Defect]:
        """A page of the site's defects (None: those of equipment at no site), oldest found first,
        after ``position`` (the page before's ``next_position``), at most ``limit``."""
        ...


class DefectStore(DefectReader, Protocol):
    def put_defect(self, defect: Defect, *, by: str) -> bool:
        """Write a new defect, stamped by ``by``, only when none has its id: False when one is on
        record already (it is left as it is)."""
        ...

    def resolve_defect_item(self, defect: Defect, *, expected: int, by: str) -> None:
        """Write ``defect`` (resolved, at its own revision) over stored revision ``expected``,
        stamped by ``by``: PreconditionFailed (with the current ETag) when it changed since, NotFound
        when it is gone."""
        ...
