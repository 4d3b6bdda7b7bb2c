"""Client requests: one item per (caller, idempotency key) of the HTTP API's record routes, so a
retry never records twice (:mod:`missed_checks.recording`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from missed_checks import keys
from missed_checks.aws.table.base import TableClient, condition_item, error_code, serialize
from missed_checks.ports import ClientRequest
from missed_checks.timefmt import to_utc_iso


class ClientRequestItems(TableClient):
    def client_request(self, caller: str, idempotency_key: str) -> ClientRequest | None:
        item = self._get(keys.client_request_key(caller, idempotency_key))
        return _request(item) if item else None

    def claim_client_request(self, caller: str, idempotency_key: str, fingerprint: str,
                             recorded_at: datetime) -> ClientRequest:
        """A conditional put (``attribute_not_exists``); the earlier item when the key was claimed."""
        item: dict[str, Any] = {**keys.client_request_key(caller, idempotency_key), "type": "client_request",
                                "caller": caller, "idempotency_key": idempotency_key, "fingerprint": fingerprint,
                                "recorded_at": to_utc_iso(recorded_at)}
        try:
            self._request("put_item", Item=serialize(item), ConditionExpression="attribute_not_exists(pk)",
                          ReturnValuesOnConditionCheckFailure="ALL_OLD")
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise
            earlier = condition_item(error)
            return _request(earlier) if earlier else self._claimed(caller, idempotency_key)
        return _request(item)

    def _claimed(self, caller: str, idempotency_key: str) -> ClientRequest:
        found = self.client_request(caller, idempotency_key)
        if found is None:
            raise RuntimeError(f"client request {idempotency_key!r} of {caller!r} vanished after its claim failed")
        return found

    def finish_client_request(self, caller: str, idempotency_key: str, written: int) -> None:
        self._request("update_item", Key=serialize(keys.client_request_key(caller, idempotency_key)),
                      UpdateExpression="SET written = :written",
                      ExpressionAttributeValues=serialize({":written": written}))


def _request(item: dict[str, Any]) -> ClientRequest:
    written = item.get("written")
    return ClientRequest(str(item["fingerprint"]), str(item["recorded_at"]), None if written is None else int(written))
