"""Deciding the audit entry of one change the table's stream reports (the audit function's use case).

The adapter reads each side of a stream record into the object as the API shows it and the stamp
every writer of the product puts on it (``changed_by``, ``changed_at``, and ``deleting`` just before
a delete); this module decides whether it is a change worth an entry, which action it was, who made
it and when. Written through :class:`~missed_checks.audit_trails.ports.AuditWriter`, once per
stream record: a replayed record finds its entry and writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from missed_checks.audit_trails.audit_entry import UNKNOWN_WRITER, AuditEntry, ChangeAction
from missed_checks.audit_trails.ports import AuditWriter


@dataclass(frozen=True)
class Stamp:
    """What a write of the product stamps on an item: who, when, and whether a delete follows."""

    by: str
    at: datetime
    deleting: bool = False
    change_id: str = ""
    """New on every write (two writes in one instant by one person are two changes)."""


@dataclass(frozen=True)
class ObjectChange:
    """One stream record of a managed item, read: the object before and after (None: absent), the
    stamp of each side (None: none, or unreadable), the site, the record's id and when the stream
    says the change happened (for a change nobody stamped)."""

    kind: str
    object_id: str
    site_id: str | None
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    stamp_before: Stamp | None
    stamp_after: Stamp | None
    event_id: str
    observed_at: datetime
    sequence: str = ""


def audit_entry(change: ObjectChange) -> AuditEntry | None:
    """The entry ``change`` makes, or None when nothing a reader would see changed (the deletion
    stamp, a note schedule-sync keeps on the item, the evaluation's bookkeeping, a no-op write)."""
    before, after = change.before, change.after
    if before is None and after is None:
        return None
    if before is not None and after is not None and dict(before) == dict(after):
        return None
    action = ChangeAction.created if before is None else ChangeAction.deleted if after is None \
        else ChangeAction.changed
    stamp = _author(action, change.stamp_before, change.stamp_after)
    return AuditEntry(kind=change.kind, object_id=change.object_id, site_id=change.site_id,
                      changed_at=stamp.at if stamp else change.observed_at,
                      changed_by=stamp.by if stamp else UNKNOWN_WRITER, action=action,
                      before=before, after=after, event_id=change.event_id, sequence=change.sequence)


def _author(action: ChangeAction, before: Stamp | None, after: Stamp | None) -> Stamp | None:
    """The stamp this change itself wrote, None when it wrote none (its writer is unknown): a
    deletion names who stamped it ``deleting``; another change, the stamp it moved."""
    if action is ChangeAction.deleted:
        return before if before is not None and before.deleting else None
    if after is None or (before is not None and (before.at, before.by, before.change_id)
                         == (after.at, after.by, after.change_id)):
        return None
    return after


def record_change(writer: AuditWriter, change: ObjectChange) -> AuditEntry | None:
    """Write the entry of ``change`` once (its stream record's id makes it once-only); the entry when
    one was written now, None when there was none to write or it was written already (a replay)."""
    entry = audit_entry(change)
    if entry is None or not writer.put_audit_entry(entry):
        return None
    return entry
