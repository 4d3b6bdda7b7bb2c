"""Items on a checklist through the checklist document and the table (#33), on the table adapter on
moto: a put that changes the items raises ``items_revision`` and writes the revision record in the
same transaction, in force from the put's instant; one that keeps them writes none; the revisions
stay readable as they were; a judged window keeps the items' revision it was judged under; a bad
item is refused naming ``items[i].field`` and nothing is written."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest

from missed_checks.aws.table import ManagementTable, keys
from missed_checks.aws.table.base import serialize
from missed_checks.aws.table.windows import judged_window_fields
from missed_checks.checklists import managing
from missed_checks.checklists.check_item import ItemList, parse_items
from missed_checks.checklists.checklist import Checklist
from missed_checks.errors import InvalidInput, NotFound
from tests.unit.two_sites import (  # noqa: F401  (dynamodb: a fixture)
    MANAGER,
    NOW,
    OPERATOR,
    dynamodb,
    register,
    two_sites,
)

RULE = "DTSTART:20260302T060000\nRRULE:FREQ=DAILY"
BRAKES = {"id": "brakes", "label": "Brakes work", "kind": "pass_fail", "critical": True}
TYRES = {"id": "tyre_pressure", "label": "Tyre pressure", "kind": "number", "unit": "bar", "minimum": 2,
         "maximum": 3.5}


@pytest.fixture
def table(dynamodb: Any) -> Iterator[ManagementTable]:  # noqa: F811
    with two_sites(dynamodb) as store:
        register(store, ("FL-1", "north"))
        yield store


def put(table: ManagementTable, at_hours: float = 0, **changes: Any) -> Checklist:
    spec = {"id": "forklift-daily", "recurrence": RULE, "site_id": "north", "window": "PT8H", **changes}
    return managing.put_checklist(table, MANAGER, spec, NOW + timedelta(hours=at_hours))


def revision_items(table: ManagementTable) -> list[dict[str, Any]]:
    return [item for item in table.query(KeyConditionExpression="pk = :pk AND begins_with(sk, :items)",
                                         ExpressionAttributeValues=serialize({
                                             ":pk": keys.checklist_pk("forklift-daily"), ":items": "ITEMS#"}))]


def test_items_and_flags_round_trip_through_the_document_and_the_table(table: ManagementTable) -> None:
    written = put(table, items=[BRAKES, TYRES], pre_use=True, clear_on_pass=True)
    assert (written.items_revision, written.pre_use, written.clear_on_pass) == (1, True, True)
    read = table.get_checklist("forklift-daily")
    assert read is not None
    assert read.items == parse_items([BRAKES, TYRES]) and read.items_revision == 1
    assert read.pre_use and read.clear_on_pass
    document = read.to_dict()
    assert document["items"] == [BRAKES, TYRES]  # 3.5 stays a JSON number (stored as a DynamoDB number)
    assert (document["items_revision"], document["pre_use"], document["clear_on_pass"]) == (1, True, True)
    [record] = revision_items(table)
    assert record["sk"] == "ITEMS#000000000001" and record["revision"] == 1
    assert record["effective_from"] == "2026-03-02T12:00:00Z" and record["items"][1]["maximum"] == Decimal("3.5")
    assert record["changed_by"] == MANAGER.principal


def test_a_checklist_without_items_shows_none() -> None:
    document = Checklist("daily", RULE).to_dict()
    assert not {"items", "items_revision", "pre_use", "clear_on_pass"} & set(document)


def test_only_a_put_that_changes_the_items_makes_a_revision(table: ManagementTable) -> None:
    put(table, items=[BRAKES])
    again = put(table, 1, items=[BRAKES], name="Forklift daily")  # the same items: no new revision
    assert again.items_revision == 1 and again.revision == 2
    kept = put(table, 2, name="Forklift, daily")  # no items given: kept as they are
    assert kept.items == parse_items([BRAKES]) and kept.items_revision == 1
    edited = put(table, 3, items=[{**BRAKES, "label": "Brakes hold on the ramp"}, TYRES])
    assert edited.items_revision == 2
    dropped = put(table, 4, items=[])
    assert dropped.items == () and dropped.items_revision == 3
    assert [item["sk"] for item in revision_items(table)] == [
        "ITEMS#000000000001", "ITEMS#000000000002", "ITEMS#000000000003"]
    lists = table.item_lists("forklift-daily")
    assert lists == [ItemList(1, NOW, parse_items([BRAKES])),
                     ItemList(2, NOW + timedelta(hours=3), parse_items([{**BRAKES, "label": "Brakes hold on the ramp"},
                                                                        TYRES])),
                     ItemList(3, NOW + timedelta(hours=4), ())]
    assert table.item_list("forklift-daily", 1) == lists[0]  # the first revision reads as it was
    assert table.item_list("forklift-daily", 9) is None


def test_the_items_of_a_revision_for_a_reader(table: ManagementTable) -> None:
    put(table, items=[BRAKES])
    put(table, 1, items=[BRAKES, TYRES])
    assert managing.checklist_items(table, MANAGER, "forklift-daily") == ItemList(
        2, NOW + timedelta(hours=1), parse_items([BRAKES, TYRES]))
    assert managing.checklist_items(table, MANAGER, "forklift-daily", 1) == ItemList(1, NOW, parse_items([BRAKES]))
    with pytest.raises(NotFound, match="has no revision 5 of its items"):
        managing.checklist_items(table, MANAGER, "forklift-daily", 5)
    put(table, 2, items=[], name="no items")  # dropped: the current revision has none
    assert managing.checklist_items(table, MANAGER, "forklift-daily") == ItemList(3, NOW + timedelta(hours=2), ())


def test_a_bad_item_is_refused_naming_it_and_nothing_is_written(table: ManagementTable) -> None:
    put(table, items=[BRAKES])
    with pytest.raises(InvalidInput) as refused:
        put(table, 1, items=[BRAKES, {**TYRES, "minimum": 4}], name="renamed")
    assert refused.value.field == "items[1].minimum"
    with pytest.raises(InvalidInput) as flag:
        put(table, 1, pre_use="yes")
    assert flag.value.field == "pre_use"
    read = table.get_checklist("forklift-daily")
    assert read is not None and read.revision == 1 and read.items_revision == 1 and read.name == ""
    assert len(revision_items(table)) == 1


def test_an_edit_of_the_items_never_changes_how_an_earlier_window_reads(table: ManagementTable) -> None:
    first = put(table, items=[BRAKES])
    assert first.judged_by().items_revision == 1
    window = first.parsed().windows(NOW - timedelta(days=1), NOW)[0]
    table.open_window("forklift-daily", window, first.judged_by())
    edited = put(table, 1, items=[BRAKES, TYRES])
    table.open_window("forklift-daily", window, edited.judged_by())  # a re-run after the edit
    record = table._get(keys.judged_window_key("forklift-daily", judged_window_fields(
        "forklift-daily", window, edited.judged_by())["window_start"]))
    assert record is not None and record["judged_by"]["items_revision"] == 1
    assert table.item_list("forklift-daily", 1) == ItemList(1, NOW, parse_items([BRAKES]))
    assert Checklist("legacy", RULE).judged_by().items_revision is None  # never had items


def test_the_operator_puts_items_too(table: ManagementTable) -> None:
    written = managing.put_checklist(table, OPERATOR, {"id": "legacy", "recurrence": RULE, "timezone": "UTC",
                                                     "items": [TYRES]}, NOW)
    assert written.items_revision == 1 and table.item_list("legacy", 1) == ItemList(1, NOW, parse_items([TYRES]))


def test_the_command_lines_checklist_file_takes_items_naming_a_bad_one(tmp_path: Any) -> None:
    from missed_checks_ops.inputs import checklist_specs

    one = tmp_path / "one.yaml"
    one.write_text("id: forklift-daily\nrecurrence: x\nitems:\n  - {id: brakes, label: Brakes work, kind: pass_fail, "
                   "critical: true}\npre_use: true\nclear_on_pass: false\n")
    [spec] = checklist_specs(str(one))
    assert spec["items"] == parse_items([BRAKES]) and spec["pre_use"] is True and spec["clear_on_pass"] is False
    many = tmp_path / "many.yaml"
    many.write_text("- {id: a, recurrence: x}\n"
                    "- {id: b, recurrence: x, items: [{id: brakes, label: B, kind: yes_no}]}\n")
    with pytest.raises(InvalidInput) as refused:
        checklist_specs(str(many))
    assert refused.value.field == "entries[1].items[0].kind"
