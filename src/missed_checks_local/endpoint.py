"""Where ``missed-checks local serve`` answers and what it publishes there: the one module the
operator's tools share with the emulator (they import it; it imports nothing of either).

A client of a local stack (the operator's commands, ``local advance``) finds the stack by
:data:`LOCAL_STACK_NAME` behind :data:`LOCAL_ENDPOINT`, takes "now" from the stack's
:data:`CLOCK_TAG` (:class:`ClockAnchor`), and asks the serve to move its clock with
:func:`advance_serve`.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = ["ADVANCE_REQUEST", "ADVANCE_RESULT", "CLOCK_TAG", "LOCAL_API_PORT", "LOCAL_API_URL", "LOCAL_ENDPOINT",
           "LOCAL_PEOPLE_API_PORT", "LOCAL_PEOPLE_API_URL", "LOCAL_SERVE_PORT", "LOCAL_STACK_NAME", "AdvanceFailed",
           "ClockAnchor", "NotAClock", "advance_serve",
           "serve_session"]

LOCAL_STACK_NAME = "missed-checks-local"
"""The stack name ``missed-checks local serve`` publishes its outputs under."""
LOCAL_SERVE_PORT = 5000
"""``missed-checks local serve``'s default port."""
LOCAL_ENDPOINT = f"http://127.0.0.1:{LOCAL_SERVE_PORT}"
"""Where ``missed-checks local serve`` answers by default."""
# the stack's HTTP API under local serve (issue #19): its own port, next to the AWS endpoint's
LOCAL_API_PORT = LOCAL_SERVE_PORT + 1
LOCAL_API_URL = f"http://127.0.0.1:{LOCAL_API_PORT}"
# the people's API (JWT, #31): the port after it
LOCAL_PEOPLE_API_PORT = LOCAL_SERVE_PORT + 2
LOCAL_PEOPLE_API_URL = f"http://127.0.0.1:{LOCAL_PEOPLE_API_PORT}"
CLOCK_TAG = "missed-checks:clock"
"""The stack tag under which ``missed-checks local serve`` publishes its simulated clock
(:class:`ClockAnchor`): whatever talks to a local stack takes "now" from it."""


ADVANCE_REQUEST = "/missed-checks-local/clock/advance-to"
"""The SSM parameter through which ``missed-checks local advance`` asks a running ``local serve``
to move its clock forward (an instant, ISO 8601); the server deletes it once done."""
ADVANCE_RESULT = "/missed-checks-local/clock/advanced"
"""Where the server says what the last advance did (JSON: from, to, the firings' lines)."""
DEFAULT_REGION = "us-east-1"
LOCAL_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
"""The keys a local serve's clients sign with (any keys do: moto checks no secret)."""


class NotAClock(ValueError):
    """A stack's :data:`CLOCK_TAG` tag that is not a clock."""


@dataclass(frozen=True)
class ClockAnchor:
    """A running clock as another process can follow it: it read ``instant`` at wall-clock time
    ``wall`` (seconds since the epoch) and moves ``speed`` simulated seconds per real second (0: it
    stands still until the next anchor is published)."""

    instant: datetime
    wall: float
    speed: float

    def now(self) -> datetime:
        return self.instant + timedelta(seconds=max(0.0, time.time() - self.wall) * self.speed)

    def to_tag(self) -> str:
        return json.dumps({"now": self.instant.astimezone(UTC).isoformat(), "wall": self.wall, "speed": self.speed})

    @classmethod
    def from_tag(cls, text: str) -> ClockAnchor:
        try:
            data = json.loads(text)
            instant = datetime.fromisoformat(data["now"])
            wall, speed = float(data["wall"]), float(data["speed"])
        except (ValueError, TypeError, KeyError) as error:
            raise NotAClock(f"the stack's {CLOCK_TAG} tag is not a clock: {text[:80]!r}") from error
        if instant.tzinfo is None or speed < 0:
            raise NotAClock(f"the stack's {CLOCK_TAG} tag is not a clock: {text[:80]!r}")
        return cls(instant.astimezone(UTC), wall, speed)


def serve_session() -> Any:
    """A boto3 session for a client of a local serve: the local credentials, and the region of
    ``AWS_DEFAULT_REGION`` (else :data:`DEFAULT_REGION`)."""
    import boto3  # deferred: only a client of a running serve needs it

    return boto3.session.Session(region_name=os.environ.get("AWS_DEFAULT_REGION") or DEFAULT_REGION,
                                 **LOCAL_CREDENTIALS)


class AdvanceFailed(RuntimeError):
    """The serve did not move its clock; the message says why, for a person."""


def advance_serve(session: Any, endpoint: str, target: datetime, timeout_s: float) -> dict[str, Any]:
    """Ask the serve behind ``endpoint`` to move its clock to ``target`` (an SSM parameter it reads
    each round, :data:`ADVANCE_REQUEST`) and wait until it did: what it says it did (``from``,
    ``to``, ``firings``, its lines). A request given up on (``timeout_s`` passed) or interrupted is
    withdrawn, so that it is not carried out later behind the person's back."""
    from botocore.exceptions import BotoCoreError, ClientError  # deferred: as boto3 above

    ssm = session.client("ssm", endpoint_url=endpoint)
    try:
        try:
            ssm.delete_parameter(Name=ADVANCE_RESULT)
        except ssm.exceptions.ParameterNotFound:
            pass
        ssm.put_parameter(Name=ADVANCE_REQUEST, Value=target.astimezone(UTC).isoformat(), Type="String",
                          Overwrite=True)
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                ssm.get_parameter(Name=ADVANCE_REQUEST)
            except ssm.exceptions.ParameterNotFound:
                break
            if time.monotonic() > deadline:
                _withdraw(ssm, ADVANCE_REQUEST)
                raise AdvanceFailed(f"the stack at {endpoint} did not reach {target:%Y-%m-%dT%H:%M:%SZ} within "
                                    f"{timeout_s:g} s: its terminal says what it is doing")
            time.sleep(0.1)
        result: dict[str, Any] = json.loads(ssm.get_parameter(Name=ADVANCE_RESULT)["Parameter"]["Value"])
    except (ClientError, BotoCoreError) as error:
        raise AdvanceFailed(f"the local serve at {endpoint} did not answer: {error}") from error
    except KeyboardInterrupt:
        _withdraw(ssm, ADVANCE_REQUEST)
        raise
    if "error" in result:
        raise AdvanceFailed(f"the local serve could not move its clock: {result['error']}")
    return result


def _withdraw(ssm: Any, name: str) -> None:
    """Delete a request parameter if it is still there (best effort: the serve may have taken it)."""
    try:
        ssm.delete_parameter(Name=name)
    except Exception:  # noqa: BLE001 - gone already, or the serve is gone: nothing left to withdraw
        pass
