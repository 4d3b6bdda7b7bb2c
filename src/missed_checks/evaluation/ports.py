"""What the evaluation core reads and writes, as small Protocols: the core never names an adapter.

Planning (:mod:`missed_checks.evaluation.planning`) and judging and closing (:mod:`missed_checks.evaluation.judging`)
take these; the Lambda handlers (``functions/*/app.py``) hand them the concrete adapters
(:class:`missed_checks.aws.table.ChecklistTable`, :class:`missed_checks.aws.events.EventBusAnnouncer`),
and the fast tests one shared in-memory fake (``tests/fakes.py``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from missed_checks.checklists.ports import ChecklistListing, ItemLists
from missed_checks.defects.ports import DefectStore
from missed_checks.timefmt import to_utc_iso

if TYPE_CHECKING:
    from missed_checks.checklists.checklist import Checklist, JudgedBy
    from missed_checks.checklists.recurrence import OccurrenceWindow
    from missed_checks.contracts import JudgedWindowDetail
    from missed_checks.equipment.assignments import Assignment
    from missed_checks.equipment.out_of_service import OutOfServicePeriod
    from missed_checks.evaluation.missed_check import MissedCheck
    from missed_checks.notifications.notification import Notification
    from missed_checks.performed_checks.answers import Findings
    from missed_checks.performed_checks.performed_check import PerformedCheck


@dataclass(frozen=True)
class WindowClaim:
    """What claiming a judged window (:meth:`WindowRecords.claim_window`) found."""

    won: bool
    """The execution holds the claim: it judged the window first, is a retry or redrive of the one
    that did, or was handed the claim (a dead-letter replay)."""
    announced: bool
    """The window's event has gone out already."""
    holder: str
    """The execution holding the claim."""

    @property
    def must_announce(self) -> bool:
        """Publish the window's event now: this execution holds the claim and nobody announced it yet."""
        return self.won and not self.announced


@dataclass(frozen=True)
class JudgedWindow:
    """A window's judgement: its totals over the batches judged (:class:`missed_checks.contracts.BatchCounts`)
    and when they were added up; claiming the window (:meth:`WindowRecords.claim_window`) records it."""

    window: OccurrenceWindow
    equipment_counted: int
    """Equipment counted for the window (assigned at its start)."""
    performed: int
    """Counted equipment with a check that counted."""
    missed: int
    """Counted equipment with no check that counted and not out of service."""
    newly_recorded: int
    """Missed checks written by this judgement (not by an earlier run)."""
    excused: int
    """Counted equipment out of service during the window (no missed check)."""
    judged_at: datetime


@dataclass(frozen=True)
class ClaimHolder:
    """Who holds a judged window's claim (:meth:`WindowRecords.claim_holder`)."""

    execution: str
    announced: bool
    """The window's event has gone out."""


class ChecklistReader(Protocol):
    def get_checklist(self, checklist_id: str) -> Checklist | None:
        """The checklist with its evaluated-until watermark, or None when it is gone."""
        ...


class EquipmentReader(Protocol):
    def count_assignments(self, checklist_id: str) -> int:
        """Pieces of equipment ever assigned to the checklist."""
        ...

    def assignments(self, checklist_id: str, shard: int | None = None) -> list[Assignment]:
        """The checklist's assignments (of one shard when given)."""
        ...

    def performed_checks(self, checklist_id: str, shard: int, start: datetime, end: datetime) -> list[PerformedCheck]:
        """Performed checks of one shard with ``start <= performed_at < end``."""
        ...


class WindowRecords(Protocol):
    """The judged-window record (the window's claim), its missed checks and the watermark."""

    def open_window(self, checklist_id: str, window: OccurrenceWindow, judged_by: JudgedBy) -> None:
        """Start the window's record (the window and the rule it is judged by; the first rule stays)."""
        ...

    def put_missed_check(self, check: MissedCheck) -> bool:
        """Write a missed check unless it exists: True when written now."""
        ...

    def claim_window(self, checklist_id: str, judged: JudgedWindow, execution: str) -> WindowClaim:
        """Record the window's judgement and claim it; exactly one execution wins per window (the
        winner's totals stay, and a retry of the winner keeps what it first recorded new)."""
        ...

    def claim_holder(self, checklist_id: str, window_start: datetime) -> ClaimHolder | None:
        """Who holds the claim of the window starting at ``window_start``; None when nobody claimed it."""
        ...

    def missed_equipment_of_window(self, checklist_id: str, window_start: datetime) -> list[str]:
        """Equipment with a missed check for the window, sorted."""
        ...

    def mark_window_announced(self, checklist_id: str, window_start: str) -> None:
        """Note that the window's event went out."""
        ...

    def advance_watermark(self, checklist_id: str, to: datetime) -> bool:
        """Move the evaluated-until watermark forward to ``to``, never back: True when it moved."""
        ...


# Out of service (issue #23 item 1): what judging reads to excuse equipment.
class OutOfServiceReader(Protocol):
    def out_of_service_periods(self, start: datetime, end: datetime | None = None,
                               equipment_ids: Iterable[str] | None = None) -> list[OutOfServicePeriod]:
        """Out-of-service periods sharing an instant with ``[start, end)`` (of ``equipment_ids`` when
        given), by ``from``: one Query whatever the number of equipment."""
        ...


class EvaluationStore(ChecklistReader, EquipmentReader, WindowRecords, OutOfServiceReader, Protocol):
    """Everything the evaluation reads and writes in the table."""


class Announcer(Protocol):
    def window_judged(self, detail: JudgedWindowDetail) -> None:
        """Publish one ``Occurrence window judged`` event."""
        ...


# -- notifications (#18, people in the loop): the once-only record and the channels ------------------
@dataclass(frozen=True)
class NotificationClaim:
    """What claiming a notification's record (:meth:`NotificationRecords.claim_notification`) found."""

    won: bool
    """This caller sends it now (it created the record, or took over a failed or abandoned one)."""
    sent: bool
    """It was sent already (nothing to do)."""
    channels_done: tuple[str, ...] = ()
    """Channels that delivered it on an earlier attempt (not used again)."""


class NotificationRecords(Protocol):
    def claim_notification(self, notification: Notification, now: datetime, lease: timedelta) -> NotificationClaim:
        """Create the record unless it exists (conditional put), or take over one whose last attempt
        failed or was abandoned ``lease`` ago; exactly one caller wins."""
        ...

    def mark_channel_sent(self, notification_id: str, channel: str, at: datetime, message_id: str) -> None:
        """Note that ``channel`` delivered it (a retry skips that channel)."""
        ...

    def mark_notification_sent(self, notification_id: str, at: datetime) -> None:
        ...

    def mark_notification_failed(self, notification_id: str, at: datetime, error: str) -> None:
        ...


class NotificationChannel(Protocol):
    """One way a notification goes out (SES e-mail, an EventBridge event)."""

    name: str

    def send(self, notification: Notification) -> str:
        """Deliver it; returns the channel's message id. Raises NotificationRejected when retrying
        cannot help (a rejected address), TransientError when it can."""
        ...


# -- recording performed checks (issue #19, the record-a-check use case in missed_checks.performed_checks.recording) --
@dataclass(frozen=True)
class ClientRequest:
    """What the table holds for one (caller, idempotency key): written before the checks are."""

    fingerprint: str
    """A hash of the request's checks: the same key with another fingerprint is a conflict."""
    recorded_at: str
    """UTC ISO instant the first attempt recorded them at (a retry records them at the same one)."""
    written: int | None
    """How many checks the request wrote; None while the first attempt has not finished."""


CheckKey = tuple[str, str, str]
"""(checklist, equipment, performed_at as UTC ISO): what makes two performed checks one."""


def check_key(check: PerformedCheck) -> CheckKey:
    return check.checklist_id, check.equipment_id, to_utc_iso(check.performed_at)


@dataclass(frozen=True)
class CheckRecord:
    """Who recorded a performed check and when: the first writer's, never rewritten."""

    recorded_at: str
    """UTC ISO instant."""
    recorded_by: str | None
    """None: an item written without its author (fixtures, or before authors were kept)."""


@dataclass(frozen=True)
class ChecksWritten:
    """What :meth:`RecordingStore.record_performed_checks` did."""

    written: int
    """Distinct checks written now."""
    kept: Mapping[CheckKey, CheckRecord]
    """Checks that were on record already, left exactly as they were, with who recorded them and when."""
    kept_findings: Mapping[CheckKey, Findings] = field(default_factory=dict)
    """What those checks found, as their records hold it (#33; a record from before items: no items)."""


class RecordingStore(ChecklistReader, ItemLists, DefectStore, Protocol):
    """What recording performed checks reads and writes: with the items' revisions it validates
    answers against and the defects the checks open and clear (#33)."""

    def assignments_of_pairs(self, pairs: Collection[tuple[str, str]]) -> dict[tuple[str, str], Assignment]:
        """The assignments of these (checklist, equipment) pairs that exist, by pair."""
        ...

    def record_performed_checks(self, checks: Iterable[PerformedCheck], recorded_at: datetime,
                                recorded_by: str | None = None,
                                findings: Mapping[CheckKey, Findings] | None = None) -> ChecksWritten:
        """Write each performed check unless it is on record already (a conditional write: the same
        checklist, equipment and instant is one check, and who recorded it and when are never
        rewritten), with its answers and what they found (``findings``, #33); the ones on record
        already are answered with their record and what it found."""
        ...

    def performed_check_records(self, checks: Iterable[PerformedCheck]) -> dict[CheckKey, CheckRecord]:
        """Who recorded each of these checks and when (strongly consistent), for those on record."""
        ...

    def client_request(self, caller: str, idempotency_key: str) -> ClientRequest | None:
        """The request's item, None when the key was never claimed."""
        ...

    def claim_client_request(self, caller: str, idempotency_key: str, fingerprint: str,
                             recorded_at: datetime) -> ClientRequest:
        """Create the request's item unless one exists; the item as it now is (the earlier one if any)."""
        ...

    def finish_client_request(self, caller: str, idempotency_key: str, written: int) -> None:
        """Note how many checks the request wrote."""
        ...


class Dismissals(ChecklistListing, Protocol):
    def dismiss_missed_check(self, checklist_id: str, window_start: datetime, equipment_id: str, *,
                             reason: str, by: str, at: datetime) -> dict[str, Any]:
        """Mark the missed check dismissed (stamped by ``by``); Conflict when it was, NotFound when none."""
        ...
