"""The channels a notification goes out on (#18): an e-mail through Amazon SES, and an EventBridge
event of its own detail-type on the stack's bus (integrators route it to chat or paging).

Each is a :class:`missed_checks.evaluation.ports.NotificationChannel`. Throttling and service errors are
retried by botocore's ``standard`` mode (:mod:`missed_checks.aws.clients`); what is left raises
:class:`~missed_checks.errors.TransientError`, a refusal that retrying cannot change (a rejected
address, an unverified sender) :class:`~missed_checks.notifications.notification.NotificationRejected`.
"""

from __future__ import annotations

import json
from typing import Any

from botocore.exceptions import ClientError

from missed_checks.aws.clients import ServiceAdapter
from missed_checks.aws.events import SOURCE
from missed_checks.errors import TransientError
from missed_checks.evaluation.ports import NotificationChannel
from missed_checks.notifications.notification import Notification, NotificationRejected
from missed_checks.notifications.notifying import RecipientRefused

NOTIFICATION_DETAIL_TYPE = "Checklist notification"
"""The detail-type of the event every notification publishes (``source: missed-checks``)."""

FOOTER = "\n--\nmissed-checks notification {notification_id}\n"
"""Ends every e-mail: the record it can be found by (``notifications list``), for people and for
the local capture (``missed_checks_local.product.notifications``)."""

def refused_recipient(code: str, message: str, recipient: str) -> RecipientRefused | None:
    """SES's refusal of ``recipient`` itself, or None (#30 item 4). In the sandbox SES checks each
    recipient's identity too: "MessageRejected: Email address is not verified. The following
    identities failed the check in region ...: <recipient>" (SES Developer Guide, "Moving out of the
    Amazon SES sandbox": you can send only to verified identities), and a policy that allows
    ``ses:SendEmail`` on the sender's identity only is refused on the recipient's:
    "AccessDenied ... not authorized to perform `ses:SendEmail' on resource `...:identity/<recipient>'"."""
    names_recipient = recipient.lower() in message.lower()
    if code == "MessageRejected" and "not verified" in message and names_recipient:
        return RecipientRefused(recipient, message)
    if code in {"AccessDenied", "AccessDeniedException"} and f"identity/{recipient}".lower() in message.lower():
        return RecipientRefused(recipient, message)
    return None


_SES_REFUSALS = {"MessageRejected", "MailFromDomainNotVerifiedException", "InvalidParameterValue",
                 "AccountSendingPausedException", "ConfigurationSetDoesNotExist"}


class SesChannel(ServiceAdapter):
    """E-mail from ``sender`` (an SES identity verified in the stack's account and Region)."""

    service_name = "ses"
    name = "email"

    def __init__(self, sender: str, ses: Any | None = None) -> None:
        super().__init__(ses)
        self.sender = sender

    def send(self, notification: Notification) -> str:
        text = notification.body + FOOTER.format(notification_id=notification.notification_id)
        body = {"Text": {"Data": text, "Charset": "UTF-8"}}
        if notification.html:  # the digest (#18): an HTML part beside the text
            body["Html"] = {"Data": notification.html, "Charset": "UTF-8"}
        try:
            response = self.client.send_email(
                Source=self.sender,
                Destination={"ToAddresses": [notification.recipient]},
                Message={"Subject": {"Data": notification.subject, "Charset": "UTF-8"}, "Body": body},
            )
        except ClientError as error:
            code = str(error.response.get("Error", {}).get("Code", ""))
            refused = refused_recipient(code, str(error.response.get("Error", {}).get("Message", "")),
                                        notification.recipient)
            if refused is not None:
                raise refused from error
            if code in _SES_REFUSALS:
                raise NotificationRejected(f"SES refused the message to {notification.recipient}: {error}") from error
            raise TransientError(f"SES: {error}") from error
        return str(response["MessageId"])


class EventBusChannel(ServiceAdapter):
    """One ``Checklist notification`` event per notification on ``bus_name``."""

    service_name = "events"
    name = "eventbridge"

    def __init__(self, bus_name: str, events: Any | None = None) -> None:
        super().__init__(events)
        self.bus_name = bus_name

    def send(self, notification: Notification) -> str:
        detail = {key: value for key, value in notification.to_dict().items() if key != "body"}
        try:
            response = self.client.put_events(Entries=[{
                "Source": SOURCE, "DetailType": NOTIFICATION_DETAIL_TYPE, "Detail": json.dumps(detail),
                "EventBusName": self.bus_name,
            }])
        except ClientError as error:
            raise TransientError(f"EventBridge: {error}") from error
        if response.get("FailedEntryCount"):
            raise TransientError(f"EventBridge did not accept the notification event: {response.get('Entries')}")
        return str(response["Entries"][0].get("EventId", ""))


def stack_channels(sender: str, bus_name: str) -> list[NotificationChannel]:
    """The stack's channels: e-mail first when it has a sender (a stack without one publishes events
    only), then the event bus: what the notifier and the digest function send through."""
    found: list[NotificationChannel] = [SesChannel(sender)] if sender else []
    found.append(EventBusChannel(bus_name))
    return found
