"""Items a person edits by revision (sites, registered equipment, grants; #31): a put conditional on
the revision the edit was made on (``#revision = :expected``; a new item on its key being free),
a deletion stamped then conditional the same way, and pages of a ByPeriod list keyed by id.

A refused condition returns the item as it is (``ReturnValuesOnConditionCheckFailure=ALL_OLD``), so
the answer names its current revision (PreconditionFailed carrying the ETag) without another read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from botocore.exceptions import ClientError

from missed_checks.aws.table import keys
from missed_checks.aws.table.base import TableClient, condition_item, error_code, serialize, stamp
from missed_checks.errors import Conflict, InvalidInput, NotFound, describe
from missed_checks.paging import Page
from missed_checks.revisions import stale

T = TypeVar("T")


def revision_in(item: Mapping[str, Any]) -> int:
    """An item's ``revision`` (InvalidInput naming it when a hand edit made it anything but a whole number)."""
    revision = item.get("revision", 0)
    if isinstance(revision, bool) or not isinstance(revision, int) and type(revision).__name__ != "Decimal":
        raise InvalidInput("revision", f"is {describe(revision)}, not a whole number")
    return int(revision)


class RevisedItems(TableClient):
    def _write_revised(self, item: Mapping[str, Any], *, expected: int | None, what: str, by: str) -> None:
        """Put ``item`` stamped by ``by``, only over revision ``expected`` (None: a new item)."""
        condition: dict[str, Any] = (
            {"ConditionExpression": "attribute_not_exists(pk)"} if expected is None else
            {"ConditionExpression": "#revision = :expected", "ExpressionAttributeNames": {"#revision": "revision"},
             "ExpressionAttributeValues": serialize({":expected": expected})})
        try:
            self._request("put_item", Item=serialize({**item, **stamp(by)}),
                          ReturnValuesOnConditionCheckFailure="ALL_OLD", **condition)
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise
            self._refused(condition_item(error), expected, what)

    def _remove_revised(self, key: Mapping[str, str], *, expected: int | None, what: str, by: str) -> None:
        """Stamp the item as being deleted by ``by``, then delete it, both only at revision ``expected``
        (None: any); NotFound when there is none."""
        condition: dict[str, Any] = {"ConditionExpression": "attribute_exists(pk)"}
        if expected is not None:
            condition = {"ConditionExpression": "attribute_exists(pk) AND #revision = :expected",
                         "ExpressionAttributeNames": {"#revision": "revision"},
                         "ExpressionAttributeValues": {":expected": expected}}
        try:
            if self._stamp_deletion(key, by, ReturnValuesOnConditionCheckFailure="ALL_OLD", **condition):
                values = condition.get("ExpressionAttributeValues")
                self._request("delete_item", Key=serialize(key), ReturnValuesOnConditionCheckFailure="ALL_OLD",
                              **{**condition, **({"ExpressionAttributeValues": serialize(values)} if values else {})})
                return
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise
            self._refused(condition_item(error), expected, what)
        self._refused(self._get(key), expected, what)

    @staticmethod
    def _refused(current: Mapping[str, Any] | None, expected: int | None, what: str) -> None:
        if current is None:
            raise NotFound(f"{what} does not exist")
        if expected is None:
            raise Conflict(f"{what} already exists: to change it, send If-Match with the ETag you read it with")
        raise stale(what, revision_in(current), expected)

    def _index_page(self, index_pk: str, position: str | None, limit: int,
                    read: Callable[[Mapping[str, Any]], T]) -> Page[T]:
        """One page of the ByPeriod list ``index_pk`` (sort key: an id), after ``position``."""
        condition = "gsi2pk = :pk" + (" AND gsi2sk > :after" if position is not None else "")
        values = {":pk": index_pk, **({":after": position} if position is not None else {})}
        found: list[T] = []
        last: str | None = None
        for item in self.query(keys.BY_PERIOD_INDEX, KeyConditionExpression=condition,
                               ExpressionAttributeValues=serialize(values)):
            if len(found) == limit:
                return Page(found, last)
            found.append(read(item))
            last = str(item["gsi2sk"])
        return Page(found, None)
