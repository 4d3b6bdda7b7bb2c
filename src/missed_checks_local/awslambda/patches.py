"""The emulator's patches of moto's Lambda.

Each patch names its upstream candidate. Checked against moto 5.2.1. Nothing here runs at import:
:func:`missed_checks_local.patches.install` installs the CloudFormation ones;
:func:`lambda_invoke` is a context manager the Lambda runtime enters while it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

__all__ = ["cloudformation_layers_and_dead_letters", "lambda_invoke"]


def cloudformation_layers_and_dead_letters() -> None:
    """Patches 2 and 3: ``LayerVersion.physical_resource_id`` (moto's CloudFormation model has none,
    so ``Ref`` of an ``AWS::Lambda::LayerVersion`` is empty), and
    ``LambdaFunction.create_from_cloudformation_json`` keeps ``Layers`` and ``DeadLetterConfig``
    (moto's model drops them; the latter is noted on the function as ``dead_letter_config``, which
    :mod:`missed_checks_local.awslambda.async_invoke` sends a failed asynchronous event to).

    Upstream candidate (moto, ``awslambda/models.py``): a ``physical_resource_id`` for layer versions
    and ``Layers``/``DeadLetterConfig`` read from the CloudFormation properties."""
    from moto.awslambda.models import (  # deferred: moto is a dev dependency and slow to import
        LambdaFunction,
        LayerVersion,
    )

    LayerVersion.physical_resource_id = property(lambda self: self.arn)  # type: ignore[attr-defined]
    create_function = LambdaFunction.create_from_cloudformation_json.__func__  # type: ignore[attr-defined]

    def create_with_layers(cls: Any, name: str, cloudformation_json: Any, *args: Any, **kwargs: Any) -> Any:
        function = create_function(cls, name, cloudformation_json, *args, **kwargs)
        properties = cloudformation_json.get("Properties") or {}
        layers = properties.get("Layers") or []
        if layers:
            function.layers = function._get_layers_data(layers)
        # moto keeps no DeadLetterConfig (5.2.1): the emulator's asynchronous invocations read it here
        function.dead_letter_config = dict(properties.get("DeadLetterConfig") or {})
        return function

    LambdaFunction.create_from_cloudformation_json = classmethod(create_with_layers)  # type: ignore[assignment]


@contextmanager
def lambda_invoke(serve: Callable[[str, Any, Any], bytes | None]) -> Iterator[None]:
    """moto's ``lambda:Invoke`` (after its IAM check) asks ``serve(function_arn, body,
    response_headers)`` first; ``None`` means not ours, and moto runs it as it would (8).

    Not upstreamable: product-specific to the emulator, which runs the stack's functions in its own
    warm worker processes; moto's own answer is its Docker-based runner."""
    from moto.awslambda.models import LambdaFunction  # deferred: moto is a dev dependency and slow to import

    original = LambdaFunction.invoke

    def invoke(function: Any, body: Any, request_headers: Any, response_headers: Any) -> Any:
        answer = serve(function.function_arn, body, response_headers)
        if answer is None:
            return original(function, body, request_headers, response_headers)
        return answer

    with mock.patch.object(LambdaFunction, "invoke", invoke):
        yield

