"""The emulator's speed fixes of moto (``*/patches.py``) answer exactly what moto answers without them."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any
from unittest import mock

import boto3
import pytest
from botocore.config import Config
from moto import mock_aws
from moto.dynamodb.models.table import Table
from moto.dynamodb.responses import DynamoResult
from moto.dynamodbstreams.responses import DynamoDBStreamsHandler

from missed_checks_local import patches
from missed_checks_local.core.patches import _OneWritePerAnswer, process_loader
from missed_checks_local.iam.patches import _MANAGED_POLICIES, managed_policies_parsed_once

REGION = "us-east-1"
ACCOUNT = "123456789012"  # moto's default account


@pytest.fixture(autouse=True)
def _patched() -> None:
    patches.install_data_plane()


@pytest.fixture
def dynamodb() -> Any:
    with mock_aws():
        client = boto3.client("dynamodb", region_name=REGION)
        client.create_table(
            TableName="t",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            AttributeDefinitions=[{"AttributeName": name, "AttributeType": "S"} for name in ("pk", "sk", "gpk", "gsk")],
            GlobalSecondaryIndexes=[{
                "IndexName": "by-g",
                "KeySchema": [{"AttributeName": "gpk", "KeyType": "HASH"},
                              {"AttributeName": "gsk", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "ALL"},
            }],
            BillingMode="PAY_PER_REQUEST",
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        )
        try:
            yield client
        finally:
            # mock_aws does not reset moto's backends while another mock is active (the session's
            # shared stack), so the table would still be there for the next test.
            client.delete_table(TableName="t")


def _unpatched(cls: type, name: str) -> Any:
    return mock.patch.object(cls, name, getattr(cls, name).__wrapped__)


def _fill(dynamodb: Any) -> None:
    rows = [(f"p{n % 7}", f"s{n:03d}", f"g{n % 3}", f"k{n % 5}") for n in range(120)]
    random.Random(7).shuffle(rows)
    puts = [{"PutRequest": {"Item": {
        "pk": {"S": pk}, "sk": {"S": sk}, "gpk": {"S": gpk}, "gsk": {"S": gsk},
        "n": {"N": "1.50"}, "flag": {"BOOL": True}, "none": {"NULL": True}, "raw": {"B": b"\x00\xff"},
        "tags": {"SS": ["a", "b"]}, "nums": {"NS": ["1", "2"]},
        "nested": {"M": {"l": {"L": [{"S": "x"}, {"N": "2"}]}}},
    }}} for pk, sk, gpk, gsk in rows]
    for offset in range(0, len(puts), 25):  # in the shuffled order, 25 a request (as fast as a test may be)
        assert not dynamodb.batch_write_item(RequestItems={"t": puts[offset : offset + 25]})["UnprocessedItems"]
    dynamodb.put_item(TableName="t", Item={"pk": {"S": "p0"}, "sk": {"S": "no-index-keys"}})
    dynamodb.update_item(TableName="t", Key={"pk": {"S": "p1"}, "sk": {"S": "s001"}},
                         UpdateExpression="SET n = :n", ExpressionAttributeValues={":n": {"N": "3"}})
    dynamodb.delete_item(TableName="t", Key={"pk": {"S": "p2"}, "sk": {"S": "s002"}})


def _pages(call: Callable[..., dict[str, Any]], token_in: str, token_out: str, **kwargs: Any) -> list[dict[str, Any]]:
    pages, token = [], None
    while True:
        page = call(**kwargs, **({token_in: token} if token else {}))
        page.pop("ResponseMetadata", None)
        pages.append(page)
        token = page.get(token_out)
        if not token:
            return pages


@pytest.mark.parametrize(("on_index", "conditions"), [
    (True, [("gpk = :h", {":h": {"S": "g1"}}),
            ("gpk = :h AND gsk BETWEEN :a AND :b", {":h": {"S": "g2"}, ":a": {"S": "k1"}, ":b": {"S": "k3"}})]),
    (False, [("pk = :h", {":h": {"S": "p3"}}),
             ("pk = :h AND sk BETWEEN :a AND :b", {":h": {"S": "p0"}, ":a": {"S": "s010"}, ":b": {"S": "s090"}})]),
], ids=["index", "table"])
def test_a_query_answers_as_moto_does_in_every_order_and_page(
    dynamodb: Any, on_index: bool, conditions: list[tuple[str, dict[str, Any]]],
) -> None:
    _fill(dynamodb)
    for forward in (True, False):
        for condition, values in conditions:
            query = {"TableName": "t", "KeyConditionExpression": condition, "ExpressionAttributeValues": values,
                     "ScanIndexForward": forward, "Limit": 4, **({"IndexName": "by-g"} if on_index else {})}
            patched = _pages(dynamodb.query, "ExclusiveStartKey", "LastEvaluatedKey", **query)
            with _unpatched(Table, "all_items"):
                expected = _pages(dynamodb.query, "ExclusiveStartKey", "LastEvaluatedKey", **query)
            assert patched == expected
            assert sum(page["Count"] for page in patched) > 4  # several pages compared


def test_get_records_answers_the_document_moto_serialises(dynamodb: Any) -> None:
    _fill(dynamodb)
    arn = dynamodb.describe_table(TableName="t")["Table"]["LatestStreamArn"]
    streams = boto3.client("dynamodbstreams", region_name=REGION, config=Config(account_id_endpoint_mode="disabled"))
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]

    def read() -> list[dict[str, Any]]:
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        records: list[dict[str, Any]] = []
        while True:
            page = streams.get_records(ShardIterator=iterator, Limit=50)
            if not page["Records"]:
                return records
            records.extend(page["Records"])
            iterator = page["NextShardIterator"]

    patched = read()
    with _unpatched(DynamoDBStreamsHandler, "get_records"):
        expected = read()
    assert len(patched) == 123  # 121 puts, an update, a delete
    assert {record["eventName"] for record in patched} == {"INSERT", "MODIFY", "REMOVE"}
    assert patched == expected
    assert patched[0]["dynamodb"]["NewImage"]["raw"] == {"B": b"\x00\xff"}


def test_item_reads_answer_the_document_moto_serialises(dynamodb: Any) -> None:
    _fill(dynamodb)
    key = {"pk": {"S": "p3"}, "sk": {"S": "s003"}}
    calls: list[Callable[[], Any]] = [
        lambda: dynamodb.get_item(TableName="t", Key=key),
        lambda: dynamodb.get_item(TableName="t", Key={"pk": {"S": "p3"}, "sk": {"S": "absent"}}),
        lambda: dynamodb.get_item(TableName="t", Key=key, ProjectionExpression="nested.l, #r",
                                  ExpressionAttributeNames={"#r": "raw"},
                                  ReturnConsumedCapacity="TOTAL"),
        lambda: dynamodb.batch_get_item(RequestItems={"t": {"Keys": [key, {"pk": {"S": "p4"}, "sk": {"S": "s004"}},
                                                                     {"pk": {"S": "p9"}, "sk": {"S": "x"}}]}}),
        lambda: _pages(dynamodb.query, "ExclusiveStartKey", "LastEvaluatedKey", TableName="t", Limit=6,
                       KeyConditionExpression="pk = :p AND sk > :s",
                       ExpressionAttributeValues={":p": {"S": "p5"}, ":s": {"S": "s010"}}),
        lambda: dynamodb.query(TableName="t", Select="COUNT", KeyConditionExpression="pk = :p",
                               ExpressionAttributeValues={":p": {"S": "p6"}}),
        lambda: _pages(dynamodb.scan, "ExclusiveStartKey", "LastEvaluatedKey", TableName="t", Limit=40,
                       ProjectionExpression="pk, sk, tags"),
    ]

    def answers() -> list[Any]:
        found = []
        for call in calls:
            answer = call()
            if isinstance(answer, dict):
                assert answer["ResponseMetadata"]["HTTPHeaders"]["content-type"] == "application/x-amz-json-1.0"
                answer.pop("ResponseMetadata")
            found.append(answer)
        return found

    patched = answers()
    with _unpatched(DynamoResult, "execute_result"):
        expected = answers()
    assert patched == expected
    assert patched[0]["Item"]["raw"] == {"B": b"\x00\xff"}
    assert "Item" not in patched[1]
    assert len(patched[3]["Responses"]["t"]) == 2


def test_the_server_finds_each_hosts_backend_once_and_as_moto_does() -> None:
    from moto import backends
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

    application = DomainDispatcherApplication(create_backend_app)
    hosts = ["dynamodb.us-east-1.amazonaws.com", "streams.dynamodb.us-east-1.amazonaws.com",
             "states.eu-west-1.amazonaws.com", "s3.amazonaws.com", "sqs", "moto_api"]
    expected = [DomainDispatcherApplication.get_backend_for_host.__wrapped__(application, host) for host in hosts]
    assert [application.get_backend_for_host(host) for host in hosts] == expected
    assert expected[:3] == ["dynamodb", "dynamodbstreams", "stepfunctions"]
    with mock.patch.object(backends, "list_of_moto_modules", side_effect=AssertionError("listed again")):
        assert [application.get_backend_for_host(host) for host in hosts] == expected
        assert application.get_backend_for_host(None) is None


RANGES = [
    ("pk = :h AND begins_with(sk, :a)", {":h": {"S": "p3"}, ":a": {"S": "s0"}}),
    ("pk = :h AND sk < :a", {":h": {"S": "p4"}, ":a": {"S": "s050"}}),
    ("pk = :h AND sk >= :a", {":h": {"S": "p5"}, ":a": {"S": "s040"}}),
    ("pk = :h AND sk BETWEEN :a AND :b", {":h": {"S": "p0"}, ":a": {"S": "s007"}, ":b": {"S": "s028"}}),  # 4: a page
    ("pk = :h AND sk BETWEEN :a AND :b", {":h": {"S": "p0"}, ":a": {"S": "s100"}, ":b": {"S": "zzz"}}),  # the end
    ("pk = :h AND sk BETWEEN :a AND :b", {":h": {"S": "p1"}, ":a": {"S": "t"}, ":b": {"S": "u"}}),  # nothing
    ("pk = :h AND sk = :a", {":h": {"S": "p6"}, ":a": {"S": "s006"}}),
]


def test_a_range_condition_is_answered_as_moto_does_at_every_limit(dynamodb: Any) -> None:
    """Patch 5g gives moto only the items in the range and one on either side: the same pages,
    in both directions, whether a page ends inside the range, at its end or past it."""
    _fill(dynamodb)
    for condition, values in RANGES:
        for forward in (True, False):
            for limit in (1, 4, 5, None):
                query = {"TableName": "t", "KeyConditionExpression": condition, "ExpressionAttributeValues": values,
                         "ScanIndexForward": forward, **({"Limit": limit} if limit else {})}
                patched = _pages(dynamodb.query, "ExclusiveStartKey", "LastEvaluatedKey", **query)
                with _unpatched(Table, "all_items"):
                    expected = _pages(dynamodb.query, "ExclusiveStartKey", "LastEvaluatedKey", **query)
                assert patched == expected, (condition, values, forward, limit)


def _exchange(port: int, head: bytes, body: bytes, *, interim: bool) -> tuple[bytes, bytes]:
    """Send a request's head, then (after the interim answer when ``interim``) its body; return
    the interim answer and the final one."""
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(head)
        first = connection.recv(65536) if interim else b""
        connection.sendall(body)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return first, answer


def test_the_server_sends_each_answer_in_one_write_and_an_interim_one_at_once() -> None:
    """Patch 5h: status line, headers and body in one sendall; ``100 Continue`` before the body."""
    from moto.server import ThreadedMotoServer

    sent: list[bytes] = []

    class Counting:
        def __init__(self, connection: Any) -> None:
            self.connection = connection

        def sendall(self, data: bytes) -> None:
            sent.append(data)
            self.connection.sendall(data)

    init = _OneWritePerAnswer.__init__
    body = b"{}"
    head = (b"POST / HTTP/1.1\r\nHost: dynamodb.us-east-1.amazonaws.com\r\n"
            b"Authorization: AWS4-HMAC-SHA256 Credential=testing/20260301/us-east-1/dynamodb/aws4_request, "
            b"SignedHeaders=host, Signature=0\r\n"
            b"X-Amz-Target: DynamoDB_20120810.ListTables\r\nContent-Type: application/x-amz-json-1.0\r\n"
            b"Content-Length: %d\r\n" % len(body))
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        port = server.get_host_and_port()[1]
        with mock.patch.object(_OneWritePerAnswer, "__init__",
                               lambda self, connection: init(self, Counting(connection))):
            _, answer = _exchange(port, head + b"\r\n", body, interim=False)
            # (the body lists whatever tables moto's process-wide backend holds from earlier tests)
            assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"]}") and b'{"TableNames": [' in answer
            assert sent == [answer]
            interim, answer = _exchange(port, head + b"Expect: 100-continue\r\n\r\n", body, interim=True)
            # (http.server and werkzeug each send one 100 Continue: twice, as without the patch)
            assert interim.startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
            assert b"HTTP/1.1 200 " in interim + answer and (interim + answer).endswith(b"]}")
            assert b'{"TableNames": [' in interim + answer
    finally:
        server.stop()


def test_every_session_of_an_emulator_process_parses_botocore_data_once() -> None:
    """Patch 5i: moto's own ``boto3.Session()`` calls and ours share the process's one loader;
    each session still has its own region and credentials, and boto3's data path is listed once."""
    import botocore.session

    from missed_checks.aws.clients import new_session

    moto_sessions = [boto3.session.Session(region_name=region) for region in ("eu-west-1", "us-east-1")]
    ours = new_session("eu-central-1", aws_access_key_id="k", aws_secret_access_key="s")
    loaders = {id(s._session.get_component("data_loader")) for s in [*moto_sessions, ours]}
    assert loaders == {id(process_loader())}
    assert id(botocore.session.get_session().get_component("data_loader")) in loaders
    assert [s.region_name for s in [*moto_sessions, ours]] == ["eu-west-1", "us-east-1", "eu-central-1"]
    assert ours.get_credentials().access_key == "k"
    paths = process_loader().search_paths
    assert len(paths) == len(set(paths))
    before = process_loader().load_data("endpoints")
    assert moto_sessions[0]._session.get_component("data_loader").load_data("endpoints") is before  # parsed once


def test_each_iam_backend_gets_moto_s_managed_policies_as_its_own_objects() -> None:
    """Patch 5f builds the AWS managed policies once per account and Region: every backend has
    what moto's own ``from_data`` builds, and what one backend changes stays in it."""
    from moto.iam import models

    managed_policies_parsed_once()
    arn = "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"
    with mock_aws(config={"iam": {"load_aws_managed_policies": True}}):
        backend = models.iam_backends["111111111111"]["aws"]
        mine = backend.managed_policies[arn]
        models.iam_backends["111111111111"].reset()  # a new backend of the same account
        theirs = models.iam_backends["111111111111"]["aws"].managed_policies[arn]
        assert mine is not theirs
        data = _MANAGED_POLICIES["AWSLambdaBasicExecutionRole"]
        built = models.AWSManagedPolicy.from_data("AWSLambdaBasicExecutionRole", backend.account_id,
                                                  backend.region_name, data)
        for policy in (mine, theirs):
            assert (policy.arn, policy.path, policy.default_version_id, policy.create_date, policy.update_date) == (
                built.arn, built.path, built.default_version_id, built.create_date, built.update_date)
            assert [(v.document, v.version_id, v.is_default) for v in policy.versions] == [
                (v.document, v.version_id, v.is_default) for v in built.versions]
        assert len(models.iam_backends["111111111111"]["aws"].managed_policies) == len(_MANAGED_POLICIES)
        mine.attachment_count += 1
        mine.versions[0].is_default = False
        mine.tags["team"] = {"Key": "team", "Value": "ops"}
        assert (theirs.attachment_count, theirs.versions[0].is_default, theirs.tags) == (0, True, {})


def test_a_json_template_reads_as_moto_reads_it_and_yaml_still_goes_to_moto() -> None:
    """Patch 5j: the same dictionary from ``json.loads`` as from moto's YAML-first parser."""
    import json
    from pathlib import Path

    from moto.cloudformation.models import Stack

    from missed_checks_local.cloudformation.deploy import load_sam_template

    patches.install()
    moto_parse = Stack.parse_template.moto_parse_template
    text = json.dumps(load_sam_template(Path(__file__).resolve().parents[3] / "template.yaml"), indent=1)
    assert Stack.parse_template(text) == moto_parse(text)
    short_form = "Resources:\n  Queue:\n    Type: AWS::SQS::Queue\nOutputs:\n  Url:\n    Value: !Ref Queue\n"
    assert Stack.parse_template(short_form) == moto_parse(short_form) == {
        "Resources": {"Queue": {"Type": "AWS::SQS::Queue"}}, "Outputs": {"Url": {"Value": {"Ref": "Queue"}}}}
    for parse in (Stack.parse_template, moto_parse):  # neither JSON nor YAML: moto's own error, as before
        with pytest.raises(json.JSONDecodeError):
            parse('{"Resources": {}')


def test_reading_an_item_of_an_empty_partition_creates_no_partition(dynamodb: Any) -> None:
    """A read that created the partition's dict (moto's defaultdict) raced a concurrent first put
    into that partition, which then landed in a dict the read replaced: the item was lost."""
    table = dynamodb_backend_table("t")
    dynamodb.get_item(TableName="t", Key={"pk": {"S": "never-written"}, "sk": {"S": "x"}})
    assert not [key for key in table.items if key.value == "never-written"]
    dynamodb.put_item(TableName="t", Item={"pk": {"S": "p"}, "sk": {"S": "s"}})
    assert dynamodb.get_item(TableName="t", Key={"pk": {"S": "p"}, "sk": {"S": "s"}})["Item"]["sk"] == {"S": "s"}
    assert "Item" not in dynamodb.get_item(TableName="t", Key={"pk": {"S": "p"}, "sk": {"S": "other"}})


def dynamodb_backend_table(name: str) -> Any:
    from moto.dynamodb.models import dynamodb_backends

    return dynamodb_backends[ACCOUNT][REGION].get_table(name)

