"""Client requests: one item per (caller, idempotency key) of the HTTP API's record routes, so a
retry never records twice (:mod:`missed_checks.performed_checks.recording`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from missed_checks.aws.table import keys
from missed_checks.aws.table.base import TableClient, serialize
from missed_checks.evaluation.ports import ClientRequest
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
        earlier = self._put_new(item)
        return _request(item if earlier is None else earlier)

    def finish_client_request(self, caller: str, idempotency_key: str, written: int) -> None:
        self._request("update_item", Key=serialize(keys.client_request_key(caller, idempotency_key)),
                      UpdateExpression="SET written = :written",
                      ExpressionAttributeValues=serialize({":written": written}))


def _request(item: dict[str, Any]) -> ClientRequest:
    written = item.get("written")
    return ClientRequest(str(item["fingerprint"]), str(item["recorded_at"]), None if written is None else int(written))
