"""DynamoDB stream records delivered to a function as Lambda's event source mapping does."""

from __future__ import annotations

import json
import textwrap
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

from missed_checks_local.awslambda.runtime import LambdaRuntime
from missed_checks_local.clock import SimulatedClock
from missed_checks_local.stack import EmbeddedStack
from missed_checks_local.streams.poller import StreamPoller

NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)

HANDLER = """
import os

SEEN = []


def handler(event, context):
    records = event["Records"]
    poisoned = [r for r in records if "poison" in r["dynamodb"].get("NewImage", {})]
    if poisoned and os.environ["MODE"] == "raise":
        raise RuntimeError("poison in batch")
    failures = []
    for record in records:
        if record in poisoned:
            failures.append({"itemIdentifier": record["dynamodb"]["SequenceNumber"]})
        else:
            SEEN.append(record["dynamodb"]["Keys"]["pk"]["S"])
    return {"batchItemFailures": failures, "seen": list(SEEN)}
"""


def template(package: str) -> str:
    return textwrap.dedent(
        f"""\
        Transform: AWS::Serverless-2016-10-31
        Parameters:
          Mode:
            Type: String
            Default: report
        Resources:
          Table:
            Type: AWS::DynamoDB::Table
            Properties:
              BillingMode: PAY_PER_REQUEST
              AttributeDefinitions:
                - {{AttributeName: pk, AttributeType: S}}
                - {{AttributeName: sk, AttributeType: S}}
              KeySchema:
                - {{AttributeName: pk, KeyType: HASH}}
                - {{AttributeName: sk, KeyType: RANGE}}
              StreamSpecification:
                StreamViewType: NEW_AND_OLD_IMAGES
          Failures:
            Type: AWS::SQS::Queue
          Consumer:
            Type: AWS::Serverless::Function
            Properties:
              CodeUri: {package}/consumer/
              Handler: app.handler
              Runtime: python3.13
              Environment:
                Variables:
                  MODE: !Ref Mode
              Events:
                Changes:
                  Type: DynamoDB
                  Properties:
                    Stream: !GetAtt Table.StreamArn
                    StartingPosition: TRIM_HORIZON
                    BatchSize: 2
                    MaximumRetryAttempts: 2
                    BisectBatchOnFunctionError: true
                    FunctionResponseTypes: [ReportBatchItemFailures]
                    FilterCriteria:
                      Filters:
                        - Pattern: '{{"dynamodb": {{"Keys": {{"sk": {{"S": ["CHECKLIST"]}}}}}}}}'
                    DestinationConfig:
                      OnFailure:
                        Type: SQS
                        Destination: !GetAtt Failures.Arn
        """
    )


@pytest.fixture
def stream_setup(embedded: None, tmp_path: Path, request: pytest.FixtureRequest):
    package = f"fake_stream_{uuid.uuid4().hex[:8]}"
    (tmp_path / package / "consumer").mkdir(parents=True)
    (tmp_path / package / "consumer" / "app.py").write_text(HANDLER)
    (tmp_path / "template.yaml").write_text(template(package))
    stack = EmbeddedStack.provision(tmp_path / "template.yaml", parameters={"Mode": request.param})
    clock = SimulatedClock(NOW)
    with LambdaRuntime(stack) as runtime:
        poller = StreamPoller(stack, runtime, stack.stream_mappings[0], clock.now)

        def seen() -> list[str]:  # what the warm worker has taken in so far (it reports it)
            results = [i.result for i in runtime.invocations if i.ok]
            return results[-1]["seen"] if results else []

        yield stack, runtime, poller, seen


def put(stack: EmbeddedStack, pk: str, sk: str = "CHECKLIST", **attributes: str) -> None:
    item = {"pk": {"S": pk}, "sk": {"S": sk}, **{k: {"S": v} for k, v in attributes.items()}}
    stack.client("dynamodb").put_item(TableName=stack.table_name, Item=item)


def on_failure_messages(stack: EmbeddedStack) -> list[dict]:
    response = stack.client("sqs").receive_message(QueueUrl=stack.queue_urls["Failures"], MaxNumberOfMessages=10)
    return [json.loads(m["Body"]) for m in response.get("Messages", [])]


@pytest.mark.parametrize("stream_setup", ["report"], indirect=True)
def test_records_arrive_in_lambda_event_shape_filtered_and_batched(stream_setup) -> None:
    stack, runtime, poller, seen = stream_setup
    put(stack, "a", name="first")
    put(stack, "a", "EQUIPMENT#01#fl-1")  # filtered out: not a checklist item
    put(stack, "a", name="first")  # moto emits a MODIFY for this no-op put; DynamoDB would not
    put(stack, "b")
    put(stack, "c")
    stats = poller.drain()
    assert seen() == ["a", "b", "c"]
    assert stats.read == 5 and stats.filtered_out == 1 and stats.unchanged_dropped == 1
    assert [len(i.event["Records"]) for i in runtime.invocations] == [2, 1]  # BatchSize 2
    record = runtime.invocations[0].event["Records"][0]
    assert set(record) == {
        "eventID",
        "eventName",
        "eventVersion",
        "eventSource",
        "awsRegion",
        "dynamodb",
        "eventSourceARN",
    }
    assert record["eventName"] == "INSERT" and record["eventSource"] == "aws:dynamodb"
    assert record["eventSourceARN"] == stack.stream_mappings[0].stream_arn
    assert record["awsRegion"] == "us-east-1"
    assert set(record["dynamodb"]) == {
        "ApproximateCreationDateTime",
        "Keys",
        "NewImage",
        "SequenceNumber",
        "SizeBytes",
        "StreamViewType",
    }
    assert record["dynamodb"]["ApproximateCreationDateTime"] == int(NOW.timestamp())  # simulated clock
    assert record["dynamodb"]["Keys"] == {"pk": {"S": "a"}, "sk": {"S": "CHECKLIST"}}
    assert poller.drain().invocations == 2  # nothing new: nothing delivered again


@pytest.mark.parametrize("stream_setup", ["report"], indirect=True)
def test_partial_failure_retries_from_the_failed_record_then_goes_to_on_failure(stream_setup) -> None:
    stack, runtime, poller, seen = stream_setup
    put(stack, "a")
    put(stack, "b", poison="yes")
    put(stack, "c")
    put(stack, "d")
    poller.drain()
    assert seen() == ["a", "c", "d"]  # "a" is not redelivered: retries start at the failed record
    batches = [[r["dynamodb"]["Keys"]["pk"]["S"] for r in i.event["Records"]] for i in runtime.invocations]
    assert batches == [["a", "b"], ["b"], ["b"], ["c", "d"]]  # MaximumRetryAttempts 2
    (message,) = on_failure_messages(stack)
    poison_sequence = runtime.invocations[1].event["Records"][0]["dynamodb"]["SequenceNumber"]
    assert message["requestContext"]["condition"] == "RetryAttemptsExhausted"
    assert message["requestContext"]["approximateInvokeCount"] == 3
    assert message["requestContext"]["functionArn"] == stack.functions["Consumer"].arn
    assert message["responseContext"] == {"statusCode": 200, "executedVersion": "$LATEST"}
    info = message["DDBStreamBatchInfo"]
    assert info["startSequenceNumber"] == info["endSequenceNumber"] == poison_sequence
    assert info["batchSize"] == 1
    assert info["streamArn"] == stack.stream_mappings[0].stream_arn
    assert info["shardId"].startswith("shardId-")


@pytest.mark.parametrize("stream_setup", ["raise"], indirect=True)
def test_function_error_bisects_the_batch_and_isolates_the_poison_record(stream_setup) -> None:
    stack, runtime, poller, seen = stream_setup
    put(stack, "a")
    put(stack, "b", poison="yes")
    poller.drain()
    assert seen() == ["a"]
    batches = [[r["dynamodb"]["Keys"]["pk"]["S"] for r in i.event["Records"]] for i in runtime.invocations]
    assert batches == [["a", "b"], ["a"], ["b"], ["b"]]
    (message,) = on_failure_messages(stack)
    assert message["responseContext"]["functionError"] == "Unhandled"
    assert message["DDBStreamBatchInfo"]["batchSize"] == 1


@pytest.mark.parametrize("stream_setup", ["report"], indirect=True)
def test_an_update_creating_an_item_arrives_as_one_insert_of_the_item(stream_setup) -> None:
    """moto's UpdateItem (and a transaction's Update) of a new item first puts its bare key (an INSERT
    whose new image is only the key, as a digest subscription's or a calendar's first write did: the
    audit function could not read it and sent it to its DLQ); DynamoDB emits one INSERT, of the item."""
    stack, runtime, poller, seen = stream_setup
    dynamodb = stack.client("dynamodb")

    def key(pk: str) -> dict:
        return {"pk": {"S": pk}, "sk": {"S": "CHECKLIST"}}

    dynamodb.update_item(TableName=stack.table_name, Key=key("subscription"), UpdateExpression="SET period = :p",
                         ExpressionAttributeValues={":p": {"S": "daily"}})
    dynamodb.transact_write_items(TransactItems=[{"Update": {
        "TableName": stack.table_name, "Key": key("calendar"), "UpdateExpression": "SET calendar_id = :c",
        "ConditionExpression": "attribute_not_exists(pk)", "ExpressionAttributeValues": {":c": {"S": "holidays"}}}}])
    dynamodb.update_item(TableName=stack.table_name, Key=key("subscription"), UpdateExpression="SET period = :p",
                         ExpressionAttributeValues={":p": {"S": "weekly"}})
    put(stack, "bare")  # an item that is only its key: DynamoDB emits its INSERT, so does the emulator
    stats = poller.drain()
    records = [r for i in runtime.invocations for r in i.event["Records"]]
    assert [(r["eventName"], r["dynamodb"]["Keys"]["pk"]["S"], r["dynamodb"]["NewImage"]) for r in records] == [
        ("INSERT", "subscription", {**key("subscription"), "period": {"S": "daily"}}),
        ("INSERT", "calendar", {**key("calendar"), "calendar_id": {"S": "holidays"}}),
        ("MODIFY", "subscription", {**key("subscription"), "period": {"S": "weekly"}}),
        ("INSERT", "bare", key("bare")),
    ]
    assert stats.read == 6 and stats.bare_keys_dropped == 2 and stats.filtered_out == 0
    assert seen() == ["subscription", "calendar", "subscription", "bare"]
