"""Defects on the table adapter on moto (#33): a check with a failed critical item opens its defect
once (a retry, a second writer and a replay find it), the check's record keeps what it found under
its own revision after the items are edited, a supervisor resolves it once (If-Match, another site
404, a role without supervise 403), a passing check clears it when the checklist says so, the lists
by equipment and by site page in found order, and the audit trail reads every defect write as kind
``defect`` at its site."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest

from missed_checks.audit_trails.auditing import audit_entry
from missed_checks.aws.table import ManagementTable, keys
from missed_checks.checklists import managing
from missed_checks.defects import listing, resolving
from missed_checks.defects.defect import DefectStatus, ResolvedHow, defect_id_of
from missed_checks.errors import Conflict, Forbidden, InvalidInput, NotFound, PreconditionFailed
from missed_checks.performed_checks.answers import FailedItem, Findings
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks.performed_checks.recording import Row, record_checks
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Role
from tests.unit.two_sites import (  # noqa: F401  (dynamodb: a fixture)
    MANAGER,
    NOW,
    OPERATOR,
    SUPERVISOR,
    SUPERVISOR_SOUTH,
    add_checklist,
    dynamodb,
    register,
    two_sites,
)

BRAKES = {"id": "brakes", "label": "Brakes work", "kind": "pass_fail", "critical": True}
TYRES = {"id": "tyres", "label": "Tyre pressure", "kind": "number", "unit": "bar", "minimum": 2, "maximum": 3.5}
START = NOW - timedelta(days=3)
WORKER = Caller("worker-north", {"north": Role.operator})


@pytest.fixture
def table(dynamodb: Any) -> Iterator[ManagementTable]:  # noqa: F811
    """north: FL-1, FL-2 on ``pre-use`` (brakes critical, tyres); south: FL-9 on ``south-pre-use``."""
    with two_sites(dynamodb) as store:
        register(store, ("FL-1", "north"), ("FL-2", "north"), ("FL-9", "south"))
        add_checklist(store, "pre-use", "north", ["FL-1", "FL-2"], assigned_at=START, created_at=START,
                      items=[BRAKES, TYRES], pre_use=True)
        add_checklist(store, "south-pre-use", "south", ["FL-9"], assigned_at=START, created_at=START,
                      items=[BRAKES])
        yield store


def row(at_hours: float, answers: dict[str, Any], equipment: str = "FL-1", checklist: str = "pre-use") -> Row:
    return Row(PerformedCheck(checklist, equipment, START + timedelta(hours=at_hours), answers))


def record(table: ManagementTable, *rows: Row, by: str = "ann", key: str | None = None) -> Any:
    return record_checks(table, list(rows), now=NOW, recorded_by=by, idempotency_key=key)


def test_the_record_keeps_its_answers_and_findings_under_its_revision(table: ManagementTable) -> None:
    record(table, row(7, {"brakes": "fail", "tyres": 1.8}))
    item = table._get(keys.performed_key("pre-use", "FL-1", "2026-02-27T19:00:00Z"))
    assert item is not None
    assert item["answers"] == {"brakes": "fail", "tyres": Decimal("1.8")}
    assert (item["items_revision"], item["result"]) == (1, "failed")
    assert [f["label"] for f in item["failed_items"]] == ["Brakes work", "Tyre pressure"]
    managing.put_checklist(table, MANAGER, {"id": "pre-use", "recurrence": "DTSTART:20260302T060000\nRRULE:FREQ=DAILY",
                                            "timezone": "UTC", "items": [{**BRAKES, "label": "Brakes hold"}]},
                           NOW - timedelta(hours=1))
    again = record(table, row(7, {"brakes": "fail", "tyres": 1.8}), by="bob")  # posted again after the edit
    assert again.replayed and again.findings == (Findings(1, (
        FailedItem("brakes", "Brakes work", True, "fail", "pass"),
        FailedItem("tyres", "Tyre pressure", False, Decimal("1.8"), "between 2 and 3.5 bar"))),)


def test_a_failed_critical_item_opens_one_defect_whoever_retries(table: ManagementTable) -> None:
    first = record(table, row(7, {"brakes": "fail", "tyres": 2.5}), key="k-1")
    defect_id = defect_id_of("pre-use", "FL-1", START + timedelta(hours=7))
    assert first.defects_opened == ((defect_id,),)
    item = table._get(keys.defect_key(defect_id))
    assert item is not None and item["gsi1pk"] == "EQUIPMENT#FL-1" and item["gsi2pk"] == "SITE#north#DEFECTS"
    assert item["changed_by"] == "ann"
    for attempt in (dict(key="k-1"), dict(by="bob"), dict(by="ann")):  # a replay, another writer, a retry
        assert record(table, row(7, {"brakes": "fail", "tyres": 2.5}), **attempt).defects_opened == ((defect_id,),)
    assert table._get(keys.defect_key(defect_id)) == item  # never rewritten
    defect = table.get_defect(defect_id)
    assert defect is not None and defect.found_by == "ann" and defect.site_id == "north"
    assert defect.failed_items == (FailedItem("brakes", "Brakes work", True, "fail", "pass"),)


def test_a_supervisor_resolves_a_defect_once(table: ManagementTable) -> None:
    [defect_id] = record(table, row(7, {"brakes": "fail", "tyres": 2.5})).defects_opened[0]
    with pytest.raises(NotFound):  # another site's defect: as a missing one
        resolving.resolve_defect(table, defect_id, "fixed", caller=SUPERVISOR_SOUTH, now=NOW)
    with pytest.raises(Forbidden):
        resolving.resolve_defect(table, defect_id, "fixed", caller=WORKER, now=NOW)
    with pytest.raises(InvalidInput) as no_note:
        resolving.resolve_defect(table, defect_id, "  ", caller=SUPERVISOR, now=NOW)
    assert no_note.value.field == "note"
    with pytest.raises(PreconditionFailed) as stale:
        resolving.resolve_defect(table, defect_id, "fixed", caller=SUPERVISOR, now=NOW, if_match=2)
    assert stale.value.current_etag == '"1"'
    resolved = resolving.resolve_defect(table, defect_id, "brake pads replaced", caller=SUPERVISOR, now=NOW,
                                        if_match=1)
    assert (resolved.status, resolved.resolved_how, resolved.resolved_by, resolved.revision) == (
        DefectStatus.RESOLVED, ResolvedHow.SUPERVISOR, SUPERVISOR.principal, 2)
    assert table.get_defect(defect_id) == resolved
    with pytest.raises(Conflict, match="was resolved already"):
        resolving.resolve_defect(table, defect_id, "again", caller=SUPERVISOR, now=NOW)
    with pytest.raises(PreconditionFailed):  # the write itself is conditional on the revision read
        table.resolve_defect_item(resolved, expected=1, by="x")


def test_a_passing_check_clears_it_when_the_checklist_says_so(table: ManagementTable) -> None:
    [defect_id] = record(table, row(7, {"brakes": "fail", "tyres": 2.5})).defects_opened[0]
    managing.put_checklist(table, MANAGER, {"id": "pre-use", "recurrence": "DTSTART:20260302T060000\nRRULE:FREQ=DAILY",
                                            "timezone": "UTC", "clear_on_pass": True}, START + timedelta(hours=8))
    cleared = record(table, row(9, {"brakes": "pass", "tyres": 4}), by="bob")
    assert cleared.defects_closed == ((defect_id,),)
    defect = table.get_defect(defect_id)
    assert defect is not None and defect.resolved_how is ResolvedHow.PASSING_CHECK and defect.resolved_by == "bob"
    assert defect.resolution == "cleared by a passing check at 2026-02-27 21:00 UTC"
    assert record(table, row(9, {"brakes": "pass", "tyres": 4}), by="bob").defects_closed == ((defect_id,),)
    assert table.get_defect(defect_id) == defect


def test_defects_are_listed_by_equipment_and_by_site_in_found_order(table: ManagementTable) -> None:
    opened = [record(table, row(hours, {"brakes": "fail", "tyres": 2.5}, equipment)).defects_opened[0][0]
              for hours, equipment in ((7, "FL-1"), (8, "FL-2"), (9, "FL-1"))]
    south = record(table, row(7, {"brakes": "fail"}, "FL-9", "south-pre-use")).defects_opened[0][0]
    resolving.resolve_defect(table, opened[0], "fixed", caller=SUPERVISOR, now=NOW)
    assert [d.defect_id for d in table.defects_of_equipment("FL-1")] == [opened[0], opened[2]]
    assert [d.defect_id for d in table.defects_of_equipment("FL-1", DefectStatus.OPEN)] == [opened[2]]
    first = listing.list_defects(table, MANAGER, site_id="north", limit=2)
    assert [d.defect_id for d in first.items] == opened[:2] and first.next_position is not None
    rest = listing.list_defects(table, MANAGER, site_id="north", limit=2, position=first.next_position)
    assert [d.defect_id for d in rest.items] == opened[2:] and rest.next_position is None
    assert [d.defect_id for d in listing.list_defects(table, MANAGER, status=DefectStatus.OPEN).items] == opened[1:]
    everything = listing.list_defects(table, OPERATOR, limit=3)  # every site, site by site
    assert [d.defect_id for d in everything.items] == opened
    assert [d.defect_id for d in listing.list_defects(table, OPERATOR, position=everything.next_position).items] == [
        south]
    assert [d.defect_id for d in listing.list_defects(table, SUPERVISOR_SOUTH, equipment_id="FL-1").items] == []
    with pytest.raises(NotFound):
        listing.get_defect(table, SUPERVISOR_SOUTH, opened[1])
    with pytest.raises(InvalidInput, match="is not a defect id"):
        listing.get_defect(table, MANAGER, "D-nothex")


def test_the_audit_trail_reads_a_defect_write_as_kind_defect(table: ManagementTable) -> None:
    [defect_id] = record(table, row(7, {"brakes": "fail", "tyres": 2.5})).defects_opened[0]
    opened = table._get(keys.defect_key(defect_id))
    resolving.resolve_defect(table, defect_id, "fixed", caller=SUPERVISOR, now=NOW)
    resolved = table._get(keys.defect_key(defect_id))
    change = table.object_change(keys.defect_key(defect_id), opened, resolved, event_id="e1", sequence="1",
                                 observed_at=NOW)
    assert change is not None and (change.kind, change.object_id, change.site_id) == ("defect", defect_id, "north")
    entry = audit_entry(change)
    assert entry is not None and entry.changed_by == SUPERVISOR.principal and entry.action.value == "changed"
    assert {"status", "resolution", "resolved_by", "resolved_at", "resolved_how", "revision"} <= set(
        entry.changed_fields)
    creation = table.object_change(keys.defect_key(defect_id), None, opened, event_id="e0", sequence="0",
                                   observed_at=NOW)
    assert creation is not None
    created = audit_entry(creation)
    assert created is not None and created.action.value == "created" and created.changed_by == "ann"
