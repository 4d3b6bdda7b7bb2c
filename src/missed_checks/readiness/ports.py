"""What readiness reads and writes (:mod:`.watching`, :mod:`.listing`), as Protocols:
:class:`missed_checks.aws.table.readiness.ReadinessTable` serves them, the fast tests an in-memory
fake; the event goes out through :class:`ReadinessAnnouncer` (``missed_checks.aws.events``), the
recheck through :class:`RecheckScheduler` (``missed_checks.aws.scheduler``)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from missed_checks.checklists.checklist import Checklist
    from missed_checks.contracts import ReadinessChangedDetail
    from missed_checks.defects.defect import Defect, DefectStatus
    from missed_checks.equipment.assignments import Assignment
    from missed_checks.equipment.out_of_service import OutOfServicePeriod
    from missed_checks.equipment.registration import RegisteredEquipment
    from missed_checks.paging import Page
    from missed_checks.readiness.readiness import CheckSeen, ReadinessRecord
    from missed_checks.sites.site import Site


class ReadinessReader(Protocol):
    """What an equipment's readiness is computed from."""

    def assignments_of_equipment(self, equipment_id: str) -> list[Assignment]: ...

    def get_checklist(self, checklist_id: str) -> Checklist | None: ...

    def out_of_service_of_equipment(self, equipment_id: str) -> list[OutOfServicePeriod]: ...

    def defects_of_equipment(self, equipment_id: str, status: DefectStatus | None = None) -> list[Defect]: ...

    def get_registered(self, equipment_id: str) -> RegisteredEquipment | None: ...

    def get_site(self, site_id: str) -> Site | None: ...

    def checks_seen(self, equipment_id: str, low: datetime, until: datetime) -> list[CheckSeen]:
        """The equipment's performed checks with ``low <= performed_at <= until``, on every checklist,
        each passing unless it failed a critical item."""
        ...


class ReadinessRecords(Protocol):
    """The stored readiness of each piece of equipment: what was last announced."""

    def readiness_record(self, equipment_id: str) -> ReadinessRecord | None:
        """The stored state (strongly consistent), None before the first."""
        ...

    def write_readiness(self, record: ReadinessRecord, *, expected_sequence: int | None) -> bool:
        """Write ``record`` only when the stored one is at ``expected_sequence`` (None: there is none):
        False when another writer got there first."""
        ...

    def mark_announced(self, equipment_id: str, sequence: int) -> bool:
        """Set ``announced`` on the stored record when it is still at ``sequence``."""
        ...

    def note_recheck(self, equipment_id: str, at: datetime | None) -> None:
        """Remember when the recheck schedule fires (so an unchanged plan costs no Scheduler call)."""
        ...

    def readiness_of_site(self, site_id: str, position: str | None, limit: int) -> Page[ReadinessRecord]:
        """A page of the stored readiness of the site's equipment, by equipment id."""
        ...


class ReadinessStore(ReadinessReader, ReadinessRecords, Protocol):
    """Everything :func:`missed_checks.readiness.watching.recheck` needs of the table."""


class ReadinessAnnouncer(Protocol):
    def readiness_changed(self, detail: ReadinessChangedDetail) -> None:
        """Publish one ``Equipment readiness changed`` event."""
        ...


class RecheckScheduler(Protocol):
    def plan_recheck(self, equipment_id: str, at: datetime | None) -> None:
        """The equipment's one-time recheck schedule fires at ``at`` (None: no schedule)."""
        ...


class WatchStore(ReadinessStore, Protocol):
    """:func:`missed_checks.readiness.watching.on_table_change`'s: the defect just opened, a checklist's fleet."""

    def get_defect(self, defect_id: str) -> Defect | None: ...

    def assignments(self, checklist_id: str, shard: int | None = None) -> list[Assignment]: ...
