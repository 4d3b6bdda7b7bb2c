"""Lambda: reading a deployed function's configuration."""

from __future__ import annotations

from typing import Any


def function_environment(lambda_client: Any, function_name: str) -> dict[str, str]:
    """The function's environment variables (GetFunctionConfiguration); {} when it has none."""
    config = lambda_client.get_function_configuration(FunctionName=function_name)
    return dict((config.get("Environment") or {}).get("Variables") or {})
