"""CloudFormation: what a deployed stack publishes (its Outputs, Parameters and Tags)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class StackDescription:
    outputs: dict[str, str]
    parameters: dict[str, str]
    tags: dict[str, str] = field(default_factory=dict)


def describe_stack(cloudformation: Any, stack_name: str) -> StackDescription | None:
    """The stack's outputs and parameters (DescribeStacks); None when the answer lists no stack.

    botocore's errors (``ClientError`` for a stack that does not exist, ``NoCredentialsError`` ...)
    are the caller's to translate."""
    stacks = cloudformation.describe_stacks(StackName=stack_name)["Stacks"]
    if not stacks:
        return None
    found = stacks[0]
    return StackDescription(
        outputs={o["OutputKey"]: o["OutputValue"] for o in found.get("Outputs") or []},
        parameters={p["ParameterKey"]: p.get("ParameterValue", "") for p in found.get("Parameters") or []},
        tags={t["Key"]: t["Value"] for t in found.get("Tags") or []},
    )
