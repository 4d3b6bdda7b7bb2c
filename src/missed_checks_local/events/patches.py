"""The emulator's patches of moto's EventBridge (rules and their Lambda targets).

Checked against moto 5.2.1. Nothing here runs at import.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["event_rule_lambda_targets", "rule_lambda_targets"]

_RULE_LAMBDA_DELIVERERS: list[Callable[[str, Any], bool]] = []
"""Who runs an EventBridge rule's Lambda targets now (:func:`event_rule_lambda_targets`); none: dropped."""


def rule_lambda_targets() -> None:
    """Patch 11: ``Rule.send_to_targets`` hands a matching event's Lambda targets to the runtime that
    runs the functions, and moto keeps the other targets (it raises NotImplementedError for Lambda).
    With no runtime running the functions (:func:`event_rule_lambda_targets`) the event is dropped.

    Upstream candidate (moto, ``events/models.py``) for the delivery to Lambda; not upstreamable for
    running it: product-specific, the emulator's own Lambda runtime runs the function."""
    from moto.events.models import Rule  # deferred: moto is a dev dependency and slow to import

    original = Rule.send_to_targets

    def send_to_targets(self: Any, original_event: Any, transform_input: bool = True) -> None:
        if not self.event_pattern.matches_event(original_event):
            return
        ours = [target for target in self.targets if ":lambda:" in str(target.get("Arn"))]
        for target in ours:
            for deliver in list(_RULE_LAMBDA_DELIVERERS[-1:]):
                deliver(str(target["Arn"]), json.loads(json.dumps(original_event, default=str)))
        if len(ours) < len(self.targets):
            others = copy.copy(self)
            others.targets = [target for target in self.targets if target not in ours]
            original(others, original_event, transform_input)

    Rule.send_to_targets = send_to_targets  # type: ignore[method-assign]


@contextmanager
def event_rule_lambda_targets(deliver: Callable[[str, Any], bool]) -> Iterator[None]:
    """While the block runs, ``deliver(function_arn, event)`` gets each event a rule matches for a
    Lambda target (Lambda's asynchronous invocation, :mod:`missed_checks_local.awslambda.async_invoke`).
    Outside any such block nothing runs the functions: the event is dropped."""
    _RULE_LAMBDA_DELIVERERS.append(deliver)
    try:
        yield
    finally:
        _RULE_LAMBDA_DELIVERERS.remove(deliver)

