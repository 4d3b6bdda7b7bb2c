"""What EventBridge Scheduler's refusals mean (#30 item 1): the rule, or the stack's setup."""

from __future__ import annotations

import pytest

from missed_checks.aws.scheduler import SchedulerSetupError, classify
from missed_checks.errors import ScheduleRejected, TransientError


@pytest.mark.parametrize("message", [
    "Invalid Schedule Expression cron(30 14 ? * MON-FRI *).",  # localstack#9284 quotes AWS
    "Invalid Schedule Expression Timezone Mars/Olympus",
    "1 validation error detected: Value 'a b' at 'name' failed to satisfy constraint: Member must satisfy "
    "regular expression pattern: [0-9a-zA-Z-_.]+",
])
def test_a_refused_rule_is_rejected_for_good(message: str) -> None:
    assert classify("ValidationException", message) is ScheduleRejected


@pytest.mark.parametrize("message", [
    "The execution role you provide must allow AWS EventBridge Scheduler to assume the role.",  # aws-sdk-js-v3#6494
    "1 validation error detected: Value 'x' at 'target.arn' failed to satisfy constraint",
    "The StartDate you specify cannot be earlier than 5 minutes ago.",  # Scheduler's clock: the retry recomputes
    "Invalid DeadLetterConfig Arn",
    "something Scheduler never said before",
])
def test_a_refused_setup_is_transient_and_never_the_rule(message: str) -> None:
    kind = classify("ValidationException", message)
    assert kind is SchedulerSetupError and issubclass(kind, TransientError)


def test_codes_beyond_validation() -> None:
    assert classify("AccessDeniedException", "not authorized to perform: iam:PassRole") is SchedulerSetupError
    assert classify("ThrottlingException", "Rate exceeded") is TransientError
    assert classify("ConflictException", "exists") is None
