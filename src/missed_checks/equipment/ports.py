"""What recording an out-of-service period reads and writes, as a Protocol (the operator's
``equipment out-of-service`` and the scenario player use it; :mod:`missed_checks.aws.table` serves it)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from missed_checks.checklists.ports import ChecklistManagement

if TYPE_CHECKING:
    from missed_checks.checklists.checklist import Checklist
    from missed_checks.equipment.assignments import Assignment
    from missed_checks.equipment.out_of_service import OutOfServicePeriod
    from missed_checks.equipment.registration import RegisteredEquipment
    from missed_checks.paging import Page
    from missed_checks.sites.site import Site


class OutOfServiceRecords(Protocol):
    def assignments_of_equipment(self, equipment_id: str) -> list[Assignment]:
        """The equipment's assignments to every checklist (none: the id names no equipment we know)."""
        ...

    def record_out_of_service(self, period: OutOfServicePeriod) -> tuple[OutOfServicePeriod, bool]:
        """Write the period unless the same one is on record (then that record and False); refused
        (InvalidInput naming ``from``) when it overlaps another period of the equipment."""
        ...


class OutOfServiceStore(OutOfServiceRecords, Protocol):
    """What the out-of-service use cases for a caller read and write
    (:mod:`missed_checks.equipment.taking_out_of_service`): the periods, and the registry for the
    equipment's site."""

    def registered_equipment(self, equipment_ids: Collection[str]) -> Mapping[str, RegisteredEquipment]:
        ...

    def out_of_service_of_equipment(self, equipment_id: str) -> list[OutOfServicePeriod]:
        """The equipment's periods, oldest first."""
        ...

    def out_of_service_periods(self, start: datetime, end: datetime | None = None,
                               equipment_ids: Collection[str] | None = None) -> list[OutOfServicePeriod]:
        """The periods sharing an instant with ``[start, end)`` (of ``equipment_ids`` when given)."""
        ...

    def end_out_of_service(self, equipment_id: str, at: datetime, *, by: str, now: datetime) -> OutOfServicePeriod:
        ...

    def cancel_out_of_service(self, equipment_id: str, start: datetime, now: datetime, *,
                              by: str) -> OutOfServicePeriod:
        ...


class AssignmentStore(ChecklistManagement, Protocol):
    """What assigning equipment reads and writes (:mod:`missed_checks.equipment.assigning`)."""

    def assign_equipment(self, checklist_id: str, equipment_ids: Iterable[str], at: datetime,
                         progress: Callable[[int], None] | None = None, *, by: str) -> int:
        """Attach equipment from ``at`` on (those attached keep their assignment); how many changed."""
        ...

    def unassign_equipment(self, checklist_id: str, equipment_ids: Iterable[str], at: datetime, *, by: str) -> int:
        """Detach equipment from ``at`` on; how many were attached."""
        ...

    def check_unassignment(self, checklist_id: str, equipment_ids: Iterable[str], at: datetime) -> list[dict[str, str]]:
        """Refuse (InvalidInput ``at``) an unassignment before its assignment began, nothing written."""
        ...


class RegistryReader(Protocol):
    def registered_equipment(self, equipment_ids: Collection[str]) -> Mapping[str, RegisteredEquipment]:
        """The registry's record of each of these ids that is registered (strongly consistent)."""
        ...


class RegistryStore(RegistryReader, Protocol):
    """What the equipment registry's use cases read and write (:mod:`missed_checks.equipment.registering`);
    a move and a retirement end assignments through :meth:`unassign_equipment`."""

    def get_registered(self, equipment_id: str) -> RegisteredEquipment | None:
        """The registry's record of the equipment, or None (strongly consistent)."""
        ...

    def list_registered(self, site_id: str, position: str | None, limit: int) -> Page[RegisteredEquipment]:
        """The equipment at ``site_id`` now (retired too), in id order after ``position``, at most ``limit``."""
        ...

    def write_registered(self, equipment: RegisteredEquipment, *, expected: int | None, by: str) -> None:
        """Write the record (at its own revision) only over revision ``expected`` (None: only when there
        is none, else Conflict; PreconditionFailed with the current ETag when the stored revision
        differs); listed at its site now; stamped ``changed_by=by`` and ``changed_at``."""
        ...

    def get_site(self, site_id: str) -> Site | None:
        ...

    def list_sites(self, position: str | None, limit: int) -> Page[Site]:
        ...

    def get_checklist(self, checklist_id: str) -> Checklist | None:
        ...

    def assignments_of_equipment(self, equipment_id: str) -> list[Assignment]:
        ...

    def unassign_equipment(self, checklist_id: str, equipment_ids: Iterable[str], at: datetime, *, by: str) -> int:
        ...
