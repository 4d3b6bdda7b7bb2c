"""EventBridge: the one event per judged window that customers wire e-mail, chat or paging to, and
the one event per change of an equipment's readiness (#33, docs/readiness.md)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from missed_checks.aws.clients import client
from missed_checks.contracts import JudgedWindowDetail, ReadinessChangedDetail, dump
from missed_checks.errors import TransientError

SOURCE = "missed-checks"
WINDOW_JUDGED = "Occurrence window judged"
READINESS_CHANGED = "Equipment readiness changed"


def publish(bus_name: str, detail_type: str, detail: Mapping[str, Any]) -> None:
    """Put one event of ours; a rejected entry raises TransientError (retried)."""
    response = client("events").put_events(Entries=[{
        "Source": SOURCE,
        "DetailType": detail_type,
        "Detail": json.dumps(detail),
        "EventBusName": bus_name,
    }])
    if response.get("FailedEntryCount"):
        raise TransientError(f"EventBridge did not accept the {detail_type!r} event: {response.get('Entries')}")


def publish_window_judged(bus_name: str, detail: Mapping[str, Any]) -> None:
    """Put one ``Occurrence window judged`` event; a rejected entry raises TransientError (retried)."""
    publish(bus_name, WINDOW_JUDGED, detail)


class EventBusAnnouncer:
    """The evaluation's :class:`missed_checks.evaluation.ports.Announcer` and readiness's
    :class:`missed_checks.readiness.ports.ReadinessAnnouncer` on an EventBridge bus."""

    def __init__(self, bus_name: str) -> None:
        self.bus_name = bus_name

    def window_judged(self, detail: JudgedWindowDetail) -> None:
        """The detail as JSON, ``missed_equipment`` left out when not listed."""
        publish_window_judged(self.bus_name, dump(detail, omit_none=True))

    def readiness_changed(self, detail: ReadinessChangedDetail) -> None:
        """One ``Equipment readiness changed`` event, every field present (None as null)."""
        publish(self.bus_name, READINESS_CHANGED, dump(detail))
