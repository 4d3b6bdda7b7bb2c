"""moto's SES as the SES sandbox (#30 item 4): it then refuses a recipient that is not a verified
identity, with SES's own answer (moto checks only the sender). AWS: "Moving out of the Amazon SES
sandbox": in the sandbox you can send only to verified email addresses and domains."""

from __future__ import annotations

from typing import Any

import moto.ses.models
import pytest


def act_as_the_ses_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    """Until the test ends, SendEmail to an unverified recipient is refused as the sandbox refuses it."""
    original = moto.ses.models.SESBackend.send_email

    def sandbox(backend: Any, source: str, subject: str, body: str, destinations: dict[str, list[str]]) -> Any:
        unverified = [to for addresses in destinations.values() for to in addresses
                      if not backend._is_verified_address(to)]
        if unverified:
            raise moto.ses.models.MessageRejectedError(
                "Email address is not verified. The following identities failed the check in region US-EAST-1: "
                + ", ".join(unverified))
        return original(backend, source, subject, body, destinations)

    monkeypatch.setattr(moto.ses.models.SESBackend, "send_email", sandbox)
