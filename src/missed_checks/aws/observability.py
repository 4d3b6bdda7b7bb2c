"""Powertools' logger, tracer and metrics for a function, and the one decorator every handler wears.

Each function runs in its own process, so these are that function's own instances (configured by
the ``POWERTOOLS_*`` variables template.yaml sets). :func:`lambda_handler` applies, outermost
first: the Lambda context in every log line (the event too when ``POWERTOOLS_LOGGER_LOG_EVENT``
is ``true``), an X-Ray segment, and the metrics flushed once per invocation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

__all__ = ["lambda_handler", "logger", "metrics", "tracer"]

logger = Logger()
tracer = Tracer()
metrics = Metrics()

Handler = Callable[[dict[str, Any], LambdaContext], dict[str, Any]]


def lambda_handler(handler: Handler) -> Handler:
    """``handler`` logged with its context, traced, and with its metrics flushed."""
    decorated: Handler = logger.inject_lambda_context(tracer.capture_lambda_handler(metrics.log_metrics(handler)))
    return decorated
