"""EventBridge: the one event per judged window that customers wire e-mail, chat or paging to."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from missed_checks.aws.clients import client
from missed_checks.contracts import JudgedWindowDetail, dump
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


class EventBusAnnouncer:
    """The evaluation's :class:`missed_checks.evaluation.ports.Announcer` on an EventBridge bus."""

    def __init__(self, bus_name: str) -> None:
        self.bus_name = bus_name

    def window_judged(self, detail: JudgedWindowDetail) -> None:
        """The detail as JSON, ``missed_equipment`` left out when not listed."""
        publish_window_judged(self.bus_name, dump(detail, omit_none=True))
