"""SES's refusal of a recipient is permanent for that recipient and says why (#30 item 4)."""

from __future__ import annotations

import boto3
import pytest
from botocore.stub import Stubber

from missed_checks.aws.notify_channels import SesChannel
from missed_checks.notifications.notification import Kind, Notification
from missed_checks.notifications.notifying import RecipientRefused

SANDBOX = ("Email address is not verified. The following identities failed the check in region US-EAST-1: "
           "crew@example.com")
"""SES's answer in the sandbox to an unverified recipient (MessageRejected)."""
POLICY = ("User `arn:aws:sts::123456789012:assumed-role/notify/fn' is not authorized to perform `ses:SendEmail' on "
          "resource `arn:aws:ses:us-east-1:123456789012:identity/crew@example.com'")
"""SES's answer when the role may send as the sender's identity only (AccessDenied)."""


def notification(to: str = "crew@example.com") -> Notification:
    return Notification(kind=Kind.MISSED, checklist_id="fl", window_start="2026-03-02T05:00:00Z", recipient=to,
                        equipment=("E1",), subject="Missed", body="E1 was not checked")


@pytest.mark.parametrize(("code", "message"), [("MessageRejected", SANDBOX), ("AccessDenied", POLICY)])
def test_a_refused_recipient_is_named_with_the_reason_and_the_sandbox(code: str, message: str) -> None:
    ses = boto3.client("ses", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(ses) as stub:
        stub.add_client_error("send_email", service_error_code=code, service_message=message, http_status_code=400)
        with pytest.raises(RecipientRefused) as refused:
            SesChannel("alerts@example.com", ses).send(notification())
    assert refused.value.recipient == "crew@example.com"
    assert str(refused.value).startswith(f"SES refused recipient crew@example.com: {message}")
    assert str(refused.value).endswith("in the SES sandbox every recipient must be verified")


def test_a_refusal_that_names_another_identity_is_not_the_recipients() -> None:
    ses = boto3.client("ses", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(ses) as stub:
        stub.add_client_error("send_email", service_error_code="MessageRejected",
                              service_message="Email address is not verified: alerts@example.com", http_status_code=400)
        with pytest.raises(Exception) as raised:
            SesChannel("alerts@example.com", ses).send(notification())
    assert not isinstance(raised.value, RecipientRefused)
