"""The embedded AWS checks a DynamoDB transaction as AWS does: by the operation of each of its
members (Put as dynamodb:PutItem, Update as UpdateItem, Delete as DeleteItem, ConditionCheck as
ConditionCheckItem, Get as GetItem; the DynamoDB Developer Guide, "Using IAM with DynamoDB
transactions"), never as dynamodb:TransactWriteItems, which is no IAM action: a role granting the
member operations may write a transaction, and a role lacking one of them may not."""

from __future__ import annotations

import json
from typing import Any

import pytest

from missed_checks_local.iam.patches import _actions_checked

AUTHORIZATION = ("AWS4-HMAC-SHA256 Credential=ASIAEXAMPLE/20260302/us-east-1/{service}/aws4_request, "
                 "SignedHeaders=host, Signature=0")


class Request:
    """What the patch reads of moto's response object: headers, the raw body, the action."""

    def __init__(self, service: str, action: str, body: Any) -> None:
        self.headers = {"Authorization": AUTHORIZATION.format(service=service)}
        self.raw_body = json.dumps(body).encode()
        self._action = action

    def _get_action(self) -> str:
        return self._action


@pytest.mark.parametrize(("members", "actions"), [
    ([{"Put": {}}, {"ConditionCheck": {}}], ["dynamodb:ConditionCheckItem", "dynamodb:PutItem"]),
    ([{"Update": {}}, {"Update": {}}, {"Delete": {}}], ["dynamodb:DeleteItem", "dynamodb:UpdateItem"]),
])
def test_a_write_transaction_is_checked_by_its_members_operations(members: list[Any], actions: list[str]) -> None:
    checked = _actions_checked(Request("dynamodb", "TransactWriteItems", {"TransactItems": members}))
    assert [f"dynamodb:{action}" for action in checked] == actions


def test_a_read_transaction_is_checked_as_get_item() -> None:
    checked = _actions_checked(Request("dynamodb", "TransactGetItems", {"TransactItems": [{"Get": {}}, {"Get": {}}]}))
    assert checked == ["GetItem"]


@pytest.mark.parametrize(("service", "action", "body"), [
    ("dynamodb", "PutItem", {"Item": {}}),
    ("dynamodb", "TransactWriteItems", {"TransactItems": []}),  # DynamoDB refuses it itself
    ("dynamodb", "TransactWriteItems", "not a request"),
    ("sqs", "SendMessage", {}),
])
def test_every_other_request_is_checked_as_its_own_action(service: str, action: str, body: Any) -> None:
    assert _actions_checked(Request(service, action, body)) == [None]
