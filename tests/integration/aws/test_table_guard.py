"""The table adapter's last guard (``missed_checks.aws.table.base.guard_keys``): whichever use case
writes, and however it built its item, nothing is put or updated whose keys hold what no id, name or
instant can (a newline, a space, a character outside the alphabets), so every item written can be
addressed by a later step. Deletes stay possible (what was written before the guard can go)."""

from __future__ import annotations

from datetime import UTC, datetime, time
from typing import Any

import pytest

from missed_checks.aws.table import keys
from missed_checks.aws.table.base import serialize
from missed_checks.aws.table.subscriptions import DigestTable
from missed_checks.errors import InvalidInput
from missed_checks.notifications.digest import Period, Subscription

NOW = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def table(local_stack: Any) -> DigestTable:
    return DigestTable(local_stack.table_name)


def test_a_subscription_built_around_validation_is_not_written(table: DigestTable) -> None:
    bad = Subscription("fleet-daily\n", "lead@example.com", Period.DAILY, time(7), "UTC")
    with pytest.raises(InvalidInput) as refused:
        table.put_subscription(bad, NOW, by="tests")
    assert refused.value.field == "id"
    assert table.digest_subscriptions() == ([], [])
    good = Subscription("fleet-daily", "lead@example.com", Period.DAILY, time(7), "UTC")
    assert table.put_subscription(good, NOW, by="tests") is True


@pytest.mark.parametrize("key", ["CHECKLIST#a\n", "CHECKLIST#a b", "MISSED#caf\u00e9", "CHECKLIST#a\x00"])
def test_no_put_batch_or_transaction_writes_a_key_no_step_can_address(table: DigestTable, key: str) -> None:
    item = serialize({"pk": key, "sk": "CHECKLIST", "type": "checklist"})
    with pytest.raises(InvalidInput):
        table._request("put_item", Item=item)
    with pytest.raises(InvalidInput):
        table.batch_write([{"PutRequest": {"Item": item}}])
    with pytest.raises(InvalidInput):
        table._transact([{"Put": {"TableName": table.name, "Item": item}}], "conflict")
    with pytest.raises(InvalidInput):
        table._request("update_item", Key=serialize({"pk": key, "sk": "CHECKLIST"}),
                       UpdateExpression="SET #t = :t", ExpressionAttributeNames={"#t": "type"},
                       ExpressionAttributeValues=serialize({":t": "x"}))
    assert table._get({"pk": key, "sk": "CHECKLIST"}) is None


def test_ids_instants_and_a_callers_key_pass_the_guard(table: DigestTable) -> None:
    table._request("put_item", Item=serialize({
        **keys.performed_key("forklift-daily", "FL-001/a@b+c:d", "2026-03-02T05:00:00Z"),
        "gsi1pk": keys.equipment_pk("FL-001/a@b+c:d"), "gsi1sk": keys.performed_index_sk("2026-03-02T05:00:00Z", "f")}))
    table._request("put_item", Item=serialize(keys.client_request_key("https://issuer.example#user 7", "key-1")))
    assert table._get(keys.client_request_key("https://issuer.example#user 7", "key-1")) is not None


def test_what_was_written_before_the_guard_can_still_be_deleted(table: DigestTable) -> None:
    table.client.put_item(TableName=table.name, Item=serialize({"pk": "CHECKLIST#a\n", "sk": "CHECKLIST"}))
    table.batch_write([{"DeleteRequest": {"Key": serialize({"pk": "CHECKLIST#a\n", "sk": "CHECKLIST"})}}])
    assert table._get({"pk": "CHECKLIST#a\n", "sk": "CHECKLIST"}) is None
