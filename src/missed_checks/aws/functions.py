"""Lambda: reading a deployed function's configuration; invoking one and waiting for its answer."""

from __future__ import annotations

import json
from typing import Any


def function_environment(lambda_client: Any, function_name: str) -> dict[str, str]:
    """The function's environment variables (GetFunctionConfiguration); {} when it has none."""
    config = lambda_client.get_function_configuration(FunctionName=function_name)
    return dict((config.get("Environment") or {}).get("Variables") or {})


def function_arn(lambda_client: Any, function_name: str) -> str:
    """The function's ARN (GetFunctionConfiguration)."""
    return str(lambda_client.get_function_configuration(FunctionName=function_name)["FunctionArn"])


def invoke_function(lambda_client: Any, function_name: str, event: Any) -> tuple[bool, Any]:
    """Invoke the function and wait (RequestResponse): (whether it succeeded, its decoded answer or
    Lambda's error payload; None when the answer is not JSON)."""
    response = lambda_client.invoke(FunctionName=function_name, InvocationType="RequestResponse",
                                    Payload=json.dumps(event).encode())
    try:
        answer = json.loads(response["Payload"].read() or b"null")
    except ValueError:
        answer = None
    return not response.get("FunctionError"), answer
