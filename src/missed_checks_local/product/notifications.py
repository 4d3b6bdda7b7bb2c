"""What the local stack told people (#18): the e-mails the embedded SES kept, read where moto keeps
them (``SESBackend.sent_messages``), each joined with its notification record in the table (by
the notification id every e-mail ends with) for what the e-mail is about.

One entry per e-mail sent: ``kind``, ``checklist``, ``window_start``, ``to``, ``equipment`` (the list
it names), ``sent_at`` (simulated time), ``subject`` and ``notification_id``; an e-mail sent twice
would be two entries with one id (``local chaos`` counts them). A stack without a sender
(``NotificationSender`` empty) sends no e-mail: its notifications are the records marked sent.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime
from typing import Any

from missed_checks.aws.table.notifications import SENT, NotificationItems

__all__ = ["captured_notifications", "count_line"]

_ID = re.compile(r"missed-checks notification ([0-9a-f]{32})")


def _records(table_name: str, client: Any, start: datetime, end: datetime) -> list[dict[str, Any]]:
    return list(NotificationItems(table_name, client).notifications(start, end))


def captured_notifications(stack: Any, table_name: str, start: datetime, end: datetime) -> list[dict[str, Any]]:
    """Every notification the stack sent whose record was claimed in ``[start, end)``, oldest first.

    The records are read one ByPeriod Query per month of the range, so give the run's own range
    (a run's records are claimed on its simulated clock): an open-ended one (1970 to 2200) cost a
    one-week ``local run`` 2,760 Queries, 45 % of its time."""
    from moto.ses.models import ses_backends  # deferred: moto is a dev dependency and slow to import

    records = _records(table_name, stack.client("dynamodb"), start, end)
    by_id = {str(record.get("notification_id")): record for record in records}
    found: list[dict[str, Any]] = []
    for message in ses_backends[stack.account_id][stack.region].sent_messages:
        said = _ID.search(str(getattr(message, "body", "")))
        record = by_id.get(said.group(1)) if said else None
        if record is None:
            continue  # not a notification of this stack's table (or claimed outside the range)
        email = (record.get("channels_sent") or {}).get("email") or {}
        sent_at = str(email.get("at") or record.get("claimed_at"))
        found.append(_entry(record, sent_at, getattr(message, "subject", None)))
    for record in records:  # no e-mail channel: what was published and marked sent
        if record.get("status") == SENT and "email" not in (record.get("channels_sent") or {}):
            found.append(_entry(record, str(record.get("sent_at")), record.get("subject")))
    return sorted(found, key=lambda n: (n["sent_at"], n["kind"], n["checklist"], n["window_start"] or "", n["to"]))


def _entry(record: dict[str, Any], sent_at: str, subject: Any) -> dict[str, Any]:
    return {"kind": record.get("kind"), "checklist": record.get("checklist_id"),
            "window_start": record.get("window_start"), "to": record.get("to"),
            "equipment": list(record.get("equipment") or []), "sent_at": sent_at, "subject": subject,
            "notification_id": record.get("notification_id")}


def count_line(notifications: list[dict[str, Any]]) -> str:
    """``Notifications sent: 7 (3 reminder, 3 missed, 1 escalation).``"""
    kinds = Counter(str(n["kind"]) for n in notifications)
    detail = ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items()))
    return f"Notifications sent: {len(notifications)}" + (f" ({detail})" if detail else "") + "."
