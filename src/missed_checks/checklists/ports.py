"""What saving a checklist reads and writes (:mod:`missed_checks.checklists.saving`), as a Protocol:
the use case never names an adapter (:class:`missed_checks.aws.table.checklists.ChecklistItems` serves it,
``tests/fakes.py``'s in-memory table too)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Protocol

from missed_checks.sites.ports import SiteReader

if TYPE_CHECKING:
    from missed_checks.checklists.checklist import Checklist
    from missed_checks.checklists.closure_calendar import ClosureCalendar


class ChecklistStore(SiteReader, Protocol):
    """Saving reads the site a checklist names (#31: :class:`missed_checks.sites.ports.SiteReader`)."""
    def get_checklist(self, checklist_id: str) -> Checklist | None:
        """The checklist (with its closure calendars read), or None."""
        ...

    def get_calendars(self, calendar_ids: Iterable[str]) -> dict[str, ClosureCalendar | None]:
        """Each calendar by id (None when it does not exist), strongly consistent."""
        ...

    def write_checklist(self, checklist: Checklist, current: Checklist | None,
                        calendars: Mapping[str, ClosureCalendar | None], *, by: str) -> None:
        """Create ``checklist`` (``current`` None) or update it from ``current`` (Conflict when either
        changed meanwhile); with ``calendars``, its calendar references are written in the same
        transaction, each conditional on its calendar existing; every item written is stamped by
        ``by`` (``changed_by``/``changed_at``, the audit trail)."""
        ...
