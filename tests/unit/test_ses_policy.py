"""The notifier's and the digest's e-mail permission works in and out of the SES sandbox (#30 item 4):
in the sandbox SES authorizes the sender's identity and each recipient's, so the statement names the
account's identities and keeps the sender the only "From" (ses:FromAddress)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cfnlint.decode import decode

TEMPLATE, _ = decode(str(Path(__file__).resolve().parents[2] / "template.yaml"))


@pytest.mark.parametrize("policy", ["NotifySendEmailPolicy", "DigestSendEmailPolicy"])
def test_send_as_the_sender_only_to_any_identity_of_the_account(policy: str) -> None:
    (statement,) = TEMPLATE["Resources"][policy]["Properties"]["PolicyDocument"]["Statement"]
    assert statement["Action"] == ["ses:SendEmail"]
    assert statement["Resource"] == {
        "Fn::Sub": "arn:${AWS::Partition}:ses:${AWS::Region}:${AWS::AccountId}:identity/*"}
    assert statement["Condition"] == {"StringEquals": {"ses:FromAddress": {"Ref": "NotificationSender"}}}
