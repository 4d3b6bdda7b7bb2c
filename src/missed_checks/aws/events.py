"""EventBridge: the one event per judged window that customers wire e-mail, chat or paging to."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from missed_checks.aws.clients import client
from missed_checks.errors import TransientError

SOURCE = "missed-checks"
WINDOW_JUDGED = "Occurrence window judged"


def publish_window_judged(bus_name: str, detail: Mapping[str, Any]) -> None:
    """Put one ``Occurrence window judged`` event; a rejected entry raises TransientError (retried)."""
    response = client("events").put_events(Entries=[{
        "Source": SOURCE,
        "DetailType": WINDOW_JUDGED,
        "Detail": json.dumps(detail),
        "EventBusName": bus_name,
    }])
    if response.get("FailedEntryCount"):
        raise TransientError(f"EventBridge did not accept the window event: {response.get('Entries')}")
