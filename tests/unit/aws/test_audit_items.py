"""The audit adapter's pure parts (#31): which managed object a key holds, and reading a stream
batch again for dlq replay (pages, stopping at the batch's last record)."""

from __future__ import annotations

from typing import Any

import pytest

from missed_checks.aws.table.audit import batch_records, kind_of


@pytest.mark.parametrize(("pk", "sk", "kind"), [
    ("CHECKLIST#x", "CHECKLIST", "checklist"),
    ("CHECKLIST#x", "EQUIPMENT#03#fl-1", "assignment"),
    ("CHECKLIST#x", "CHECKLIST#EVALUATED_UNTIL", None),
    ("CHECKLIST#x", "WINDOW#2026-03-02T05:00:00Z", None),
    ("CALENDAR#x", "CALENDAR", "calendar"),
    ("CALENDAR#x", "REVISION#000000000001", None),
    ("OUT_OF_SERVICE", "2026-03-02T05:00:00Z#fl-1", "out_of_service"),
    ("MISSED#x#001", "2026-03-02T05:00:00Z#fl-1", "dismissal"),
    ("SUBSCRIPTION#s", "SUBSCRIPTION", "subscription"),
    ("SITE#north", "SITE", "site"),
    ("REGISTERED#fl-1", "REGISTERED", "equipment"),
    ("GRANT#alice", "GRANT", "grant"),
    ("DEFECT#D-3f9a0c1b2d4e5f60", "DEFECT", "defect"),  # #33
    ("CHECKLIST#x", "ITEMS#000000000001", None),  # a revision of a checklist's items: the checklist's entry says it
    ("PERFORMED#x#001", "2026-03-02T05:00:00Z#fl-1", None),
    ("AUDIT#checklist#x", "CHECKLIST", None),  # an entry is never audited, whatever its sort key
])
def test_the_key_says_which_object_it_holds(pk, sk, kind):
    assert kind_of({"pk": pk, "sk": sk}) == kind


class Streams:
    """A DynamoDB Streams client reading a shard of records numbered 1 to 9, two a page."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def get_shard_iterator(self, **request: Any) -> dict[str, Any]:
        assert request["ShardIteratorType"] == "AT_SEQUENCE_NUMBER"
        return {"ShardIterator": request["SequenceNumber"]}

    def get_records(self, ShardIterator: str, Limit: int) -> dict[str, Any]:  # noqa: N803 - boto3's names
        self.calls.append(ShardIterator)
        first = int(ShardIterator)
        numbers = [n for n in (first, first + 1) if n <= 9]
        return {"Records": [{"dynamodb": {"SequenceNumber": str(n)}} for n in numbers],
                "NextShardIterator": str(first + 2) if numbers else None}


def test_a_batch_is_read_again_from_its_first_to_its_last_record():
    streams = Streams()
    batch = {"streamArn": "arn", "shardId": "shard", "startSequenceNumber": "3", "endSequenceNumber": "6"}
    assert [r["dynamodb"]["SequenceNumber"] for r in batch_records(streams, batch)] == ["3", "4", "5", "6"]
    assert streams.calls == ["3", "5"]  # no page after the last record is asked for
