"""What the local stack told people (#18): the e-mails the embedded SES kept, read where moto keeps
them (``SESBackend.sent_messages``), each joined with its notification record in the table (by
the SES message id the notifier noted on it) for what the e-mail is about.

One entry per notification sent: ``kind``, ``checklist``, ``window_start``, ``to``, ``equipment``
(the list it names), ``sent_at`` (simulated time) and ``subject``. A stack without a sender
(``NotificationSender`` empty) sends no e-mail: its notifications are the records marked sent.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Any

from missed_checks.aws.table.notifications import SENT, NotificationItems

__all__ = ["captured_notifications", "count_line"]

_EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
_LATEST = datetime(2199, 12, 1, tzinfo=UTC)


def _records(table_name: str, client: Any, start: datetime, end: datetime) -> list[dict[str, Any]]:
    return list(NotificationItems(table_name, client).notifications(start, end))


def captured_notifications(stack: Any, table_name: str, start: datetime = _EARLIEST,
                           end: datetime = _LATEST) -> list[dict[str, Any]]:
    """Every notification the stack sent whose record was claimed in ``[start, end)``, oldest first."""
    from moto.ses.models import ses_backends  # deferred: moto is a dev dependency and slow to import

    records = _records(table_name, stack.client("dynamodb"), start, end)
    by_message = {str(((record.get("channels_sent") or {}).get("email") or {}).get("message_id")): record
                  for record in records}
    found: list[dict[str, Any]] = []
    for message in ses_backends[stack.account_id][stack.region].sent_messages:
        record = by_message.pop(str(getattr(message, "id", "")), None)
        if record is None:
            continue  # not a notification of this stack (or claimed outside the range)
        found.append(_entry(record, str(record["channels_sent"]["email"]["at"]), getattr(message, "subject", None)))
    for record in records:  # no e-mail channel: what was published and marked sent
        if record.get("status") == SENT and "email" not in (record.get("channels_sent") or {}):
            found.append(_entry(record, str(record.get("sent_at")), record.get("subject")))
    return sorted(found, key=lambda n: (n["sent_at"], n["kind"], n["checklist"], n["window_start"] or "", n["to"]))


def _entry(record: dict[str, Any], sent_at: str, subject: Any) -> dict[str, Any]:
    return {"kind": record.get("kind"), "checklist": record.get("checklist_id"),
            "window_start": record.get("window_start"), "to": record.get("to"),
            "equipment": list(record.get("equipment") or []), "sent_at": sent_at, "subject": subject}


def count_line(notifications: list[dict[str, Any]]) -> str:
    """``Notifications sent: 7 (3 reminder, 3 missed, 1 escalation).``"""
    kinds = Counter(str(n["kind"]) for n in notifications)
    detail = ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items()))
    return f"Notifications sent: {len(notifications)}" + (f" ({detail})" if detail else "") + "."
