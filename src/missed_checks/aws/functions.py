"""Lambda: reading a deployed function's configuration; invoking one and waiting for its answer."""

from __future__ import annotations

import json
from typing import Any


def function_environment(lambda_client: Any, function_name: str) -> dict[str, str]:
    """The function's environment variables (GetFunctionConfiguration); {} when it has none."""
    config = lambda_client.get_function_configuration(FunctionName=function_name)
    return dict((config.get("Environment") or {}).get("Variables") or {})


def invoke_and_wait(lambda_client: Any, function_name: str, payload: Any) -> tuple[Any, str | None]:
    """Invoke the function synchronously (RequestResponse) with ``payload`` (JSON); its decoded answer
    and, when it failed, the error message (None when it succeeded)."""
    response = lambda_client.invoke(FunctionName=function_name, InvocationType="RequestResponse",
                                    Payload=json.dumps(payload).encode())
    try:
        answer = json.loads(response["Payload"].read() or b"null")
    except ValueError:
        answer = None
    if response.get("FunctionError"):
        return answer, str(answer.get("errorMessage") if isinstance(answer, dict) else answer)
    return answer, None
