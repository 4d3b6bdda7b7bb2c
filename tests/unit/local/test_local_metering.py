"""Metering the embedded AWS: request units as DynamoDB bills them, from item sizes and indexes."""

from __future__ import annotations

import boto3
import pytest

from missed_checks_local.embedded import embedded_aws
from missed_checks_local.testing.metering import Meter, item_size

pytestmark = pytest.mark.stack  # runs the embedded AWS (moto): not in the fast lane


def test_item_size_follows_dynamodb_rules():
    assert item_size({"pk": {"S": "abc"}}) == 5  # name + UTF-8 bytes
    assert item_size({"ü": {"S": "€"}}) == 2 + 3
    assert item_size({"n": {"N": "12345"}}) == 1 + 4  # 3 bytes for 5 digits, plus 1
    assert item_size({"b": {"BOOL": True}, "z": {"NULL": True}}) == 4
    assert item_size({"m": {"M": {"a": {"S": "xy"}}}}) == 1 + 3 + (1 + 2 + 1)
    assert item_size({"l": {"L": [{"S": "x"}, {"N": "1"}]}}) == 1 + 3 + (1 + 1) + (2 + 1)


@pytest.fixture
def table():
    with embedded_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName="t", BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "g")],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            GlobalSecondaryIndexes=[{"IndexName": "ByG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                     "Projection": {"ProjectionType": "ALL"}}],
        )
        try:
            yield client
        finally:  # moto keeps its backends while another mock is active (the session's shared stack)
            client.delete_table(TableName="t")


def test_writes_pay_per_started_kilobyte_and_again_for_each_index_copy(table):
    with Meter() as usage:
        table.put_item(TableName="t", Item={"pk": {"S": "a"}, "sk": {"S": "1"}, "x": {"S": "y" * 1500}})
        table.put_item(TableName="t", Item={"pk": {"S": "b"}, "sk": {"S": "1"}, "g": {"S": "in-index"}})
        with pytest.raises(table.exceptions.ConditionalCheckFailedException):  # a failed condition still pays
            table.put_item(TableName="t", Item={"pk": {"S": "b"}, "sk": {"S": "1"}},
                           ConditionExpression="attribute_not_exists(pk)")
    assert usage.write_units == {"PutItem t": 2 + 1 + 1, "PutItem t/index/ByG": 1}


def test_reads_pay_per_started_4_kb_half_when_eventually_consistent(table):
    for n in range(3):
        table.put_item(TableName="t", Item={"pk": {"S": "p"}, "sk": {"S": str(n)}, "x": {"S": "y" * 3000}})
    with Meter() as usage:
        table.query(TableName="t", KeyConditionExpression="pk = :p",
                    ExpressionAttributeValues={":p": {"S": "p"}}, ProjectionExpression="sk")
        table.get_item(TableName="t", Key={"pk": {"S": "p"}, "sk": {"S": "0"}}, ConsistentRead=True)
        table.batch_get_item(RequestItems={"t": {"Keys": [{"pk": {"S": "p"}, "sk": {"S": str(n)}} for n in (0, 1)]}})
    # 9 KB read by the Query (projection does not change what is read): 3 units, halved
    assert usage.read_units == {"Query t": 1.5, "GetItem t": 1.0, "BatchGetItem t": 1.0}
