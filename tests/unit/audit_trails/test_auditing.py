"""Deciding the audit entry of one stream record (#31): created / changed / deleted, who and when
from the stamps, the unknown writer of a hand edit, nothing for a no-op or the deletion stamp, and
once per record."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from missed_checks.audit_trails.audit_entry import UNKNOWN_WRITER, ChangeAction
from missed_checks.audit_trails.auditing import ObjectChange, Stamp, audit_entry, record_change
from tests.fakes import InMemoryAuditTrail

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
SEEN = T0 + timedelta(seconds=3)
OLD = {"checklist_id": "forklift", "name": "Forklift", "revision": 1}
NEW = {"checklist_id": "forklift", "name": "Forklift daily", "revision": 2}


def change(before, after, stamp_before=None, stamp_after=None, event_id="e1", sequence="1"):
    return ObjectChange(kind="checklist", object_id="forklift", site_id="north", before=before, after=after,
                        stamp_before=stamp_before, stamp_after=stamp_after, event_id=event_id, observed_at=SEEN,
                        sequence=sequence)


def test_a_creation_names_who_stamped_it_and_when():
    entry = audit_entry(change(None, OLD, stamp_after=Stamp("alice", T0)))
    assert entry is not None
    assert (entry.action, entry.changed_by, entry.changed_at, entry.before, entry.after) == (
        ChangeAction.created, "alice", T0, None, OLD)
    assert entry.to_dict() == {
        "kind": "checklist", "object_id": "forklift", "site_id": "north", "changed_at": "2026-03-02T08:00:00.000000Z",
        "changed_by": "alice", "action": "created", "changed_fields": ["checklist_id", "name", "revision"],
        "before": None, "after": OLD, "event_id": "e1"}


def test_an_edit_names_the_stamp_it_moved_and_the_fields_it_changed():
    entry = audit_entry(change(OLD, NEW, Stamp("alice", T0), Stamp("bob", T0 + timedelta(minutes=5))))
    assert entry is not None
    assert (entry.action, entry.changed_by, entry.changed_at) == (
        ChangeAction.changed, "bob", T0 + timedelta(minutes=5))
    assert entry.changed_fields == ["name", "revision"]


def test_a_change_whose_stamp_did_not_move_was_written_without_missed_checks():
    """A hand edit in the console keeps the stamp of the write before it: its writer is unknown, and
    it happened when the stream saw it."""
    same = Stamp("alice", T0)
    entry = audit_entry(change(OLD, NEW, same, same))
    assert entry is not None and (entry.changed_by, entry.changed_at) == (UNKNOWN_WRITER, SEEN)
    unstamped = audit_entry(change(None, OLD))
    assert unstamped is not None and (unstamped.action, unstamped.changed_by) == (ChangeAction.created, UNKNOWN_WRITER)


def test_two_writes_in_one_instant_by_one_person_are_each_theirs():
    """Under a clock that stands still (the local runtime's), the write's own id tells them apart."""
    entry = audit_entry(change(OLD, NEW, Stamp("alice", T0, change_id="a1"), Stamp("alice", T0, change_id="b2")))
    assert entry is not None and (entry.changed_by, entry.changed_at) == ("alice", T0)


def test_a_deletion_names_who_stamped_it_deleting_and_an_unstamped_one_is_unknown():
    stamped = audit_entry(change(OLD, None, Stamp("carol", T0 + timedelta(hours=1), deleting=True)))
    assert stamped is not None
    assert (stamped.action, stamped.changed_by, stamped.changed_at, stamped.after) == (
        ChangeAction.deleted, "carol", T0 + timedelta(hours=1), None)
    by_hand = audit_entry(change(OLD, None, Stamp("alice", T0)))  # deleted in the console: last stamp not deleting
    assert by_hand is not None and (by_hand.changed_by, by_hand.changed_at) == (UNKNOWN_WRITER, SEEN)


def test_nothing_a_reader_sees_changed_makes_no_entry():
    """The deletion stamp, schedule-sync's notes, a write of the same object: no entry."""
    assert audit_entry(change(OLD, dict(OLD), Stamp("alice", T0), Stamp("carol", T0, deleting=True))) is None
    assert audit_entry(change(OLD, dict(OLD), Stamp("alice", T0), Stamp("alice", T0))) is None
    assert audit_entry(change(None, None)) is None


def test_each_record_is_written_once_and_a_replay_writes_nothing():
    trail = InMemoryAuditTrail()
    record = change(None, OLD, stamp_after=Stamp("alice", T0))
    assert record_change(trail, record) is not None
    assert record_change(trail, record) is None  # the same stream record again
    assert record_change(trail, change(OLD, dict(OLD), Stamp("alice", T0), Stamp("alice", T0), event_id="e2")) is None
    assert len(trail.entries) == 1
