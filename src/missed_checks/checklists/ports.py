"""What saving a checklist reads and writes (:mod:`missed_checks.checklists.saving`), as a Protocol:
the use case never names an adapter (:class:`missed_checks.aws.table.checklists.ChecklistItems` serves it,
``tests/fakes.py``'s in-memory table too)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Protocol

from missed_checks.sites.ports import SiteReader

if TYPE_CHECKING:
    from missed_checks.checklists.check_item import ItemList
    from missed_checks.checklists.checklist import Checklist
    from missed_checks.checklists.closure_calendar import ClosureCalendar
    from missed_checks.equipment.assignments import Assignment


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


class ChecklistListing(Protocol):
    """What reading checklists for a caller needs (:func:`missed_checks.checklists.managing.get_checklist`,
    :func:`~missed_checks.checklists.managing.scope_of`)."""

    def get_checklist(self, checklist_id: str) -> Checklist | None:
        ...

    def list_checklists(self) -> list[Checklist]:
        """Every checklist (with its closure calendars read)."""
        ...


class ChecklistManagement(ChecklistStore, ChecklistListing, Protocol):
    """What managing checklists reads and writes (:mod:`missed_checks.checklists.managing`, and
    assigning equipment, :mod:`missed_checks.equipment.assigning`)."""

    def delete_checklist(self, checklist_id: str, *, by: str, expected_revision: int | None = None) -> bool:
        """Delete the checklist (its assignments ended and kept); False when there was none. With
        ``expected_revision``, only at that revision (Conflict otherwise), checked by the first write."""
        ...

    def assignments(self, checklist_id: str, shard: int | None = None) -> list[Assignment]:
        """Every assignment the checklist ever had (all shards, or one)."""
        ...


class CalendarStore(Protocol):
    """What closing dates reads and writes (:mod:`missed_checks.checklists.closing`)."""

    def get_calendar(self, calendar_id: str) -> ClosureCalendar | None:
        ...

    def calendar_revision(self, calendar_id: str, revision: int) -> ClosureCalendar | None:
        """The calendar as revision ``revision`` defined it (kept after the calendar is deleted)."""
        ...

    def list_calendars(self) -> list[ClosureCalendar]:
        ...

    def put_calendar(self, calendar_id: str, dates: Sequence[date], *, now: datetime, description: str | None = None,
                     by: str, site_id: str | None = None, expected_revision: int | None = None) -> ClosureCalendar:
        """A new revision of the calendar (created at ``site_id`` when there is none); with
        ``expected_revision``, written only over it (Conflict otherwise)."""
        ...

    def delete_calendar(self, calendar_id: str, *, by: str, expected_revision: int | None = None) -> bool:
        """Delete the calendar (Conflict while checklists reference it, or when it is not at
        ``expected_revision``); False when there was none."""
        ...


class ItemLists(Protocol):
    """The revisions of a checklist's items (#33), as the store keeps them."""

    def item_lists(self, checklist_id: str) -> list[ItemList]:
        """Every revision of the checklist's items, oldest first (empty: it never had items)."""
        ...

    def item_list(self, checklist_id: str, revision: int) -> ItemList | None:
        """One revision (None: no such revision)."""
        ...
