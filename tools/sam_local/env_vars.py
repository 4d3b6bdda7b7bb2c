"""Writes `sam local invoke --env-vars` for a stack: every function's own environment, as deployed.

    python tools/sam_local/env_vars.py --stack missed-checks --region eu-central-1 --output env.json
    python tools/sam_local/env_vars.py --endpoint http://127.0.0.1:5000 \\
        --function-endpoint http://10.88.0.1:5000 --output env.json     # missed-checks local serve

SAM passes a function only the variables template.yaml declares, with the template's values
(unresolved references become placeholders); ``--env-vars`` gives them the stack's real ones. This
reads them where they are: each function of the stack (CloudFormation's ListStackResources,
then Lambda's GetFunctionConfiguration), so the file holds exactly what the deployed function
sees: the table's name, the schedule group, the queues, the state machine's ARN. For a local stack
(``--endpoint``), ``AWS_ENDPOINT_URL`` is set to ``--function-endpoint``: the address where the
function's container reaches the endpoint (podman's bridge gateway, not 127.0.0.1). For a stack on
AWS it stays empty (the functions use the Region's endpoints). Exit 1 with one line when the stack
cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from missed_checks.aws.clients import bound_client, new_session
from missed_checks_ops.target import LOCAL_STACK_NAME

FUNCTION_TYPE = "AWS::Lambda::Function"


def function_environments(stack: str, region: str, endpoint: str | None,
                          session: Any = None) -> dict[str, dict[str, str]]:
    """Each function's logical id -> its environment variables, read from the stack (with
    ``session``'s credentials; by default the usual chain's)."""
    session = session or new_session(region)
    cloudformation = bound_client(session, "cloudformation", region, endpoint)
    lambda_ = bound_client(session, "lambda", region, endpoint)
    pages = cloudformation.get_paginator("list_stack_resources").paginate(StackName=stack)
    environments = {}
    for resource in (summary for page in pages for summary in page["StackResourceSummaries"]):
        if resource.get("ResourceType") != FUNCTION_TYPE:
            continue
        configuration = lambda_.get_function_configuration(FunctionName=resource["PhysicalResourceId"])
        variables = (configuration.get("Environment") or {}).get("Variables") or {}
        environments[resource["LogicalResourceId"]] = {str(k): str(v) for k, v in variables.items()}
    if not environments:
        raise LookupError(f"stack {stack} has no {FUNCTION_TYPE} resource")
    return environments


def env_vars(stack: str, region: str, endpoint: str | None, function_endpoint: str | None,
             session: Any = None) -> dict[str, Any]:
    environments = function_environments(stack, region, endpoint, session)
    if endpoint:
        for variables in environments.values():
            variables["AWS_ENDPOINT_URL"] = function_endpoint or endpoint
    return environments


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stack", help=f"the stack's name (default: {LOCAL_STACK_NAME} with --endpoint)")
    parser.add_argument("--region", default=None, help="the stack's Region (default: AWS_REGION, the profile's)")
    parser.add_argument("--endpoint",
                        help="a local AWS endpoint as this machine reaches it (missed-checks local serve)")
    parser.add_argument("--function-endpoint",
                        help="the same endpoint as the function's container reaches it (default: --endpoint)")
    parser.add_argument("--output", type=Path, required=True, help="the JSON file to write (replaced)")
    args = parser.parse_args(argv)
    stack = args.stack or (LOCAL_STACK_NAME if args.endpoint else None)
    if stack is None:
        parser.error("--stack: give the deployed stack's name (or --endpoint for a local stack)")
    region = args.region or new_session().region_name or ("us-east-1" if args.endpoint else None)
    if region is None:
        parser.error("--region: no Region given and none configured (AWS_REGION or the profile's)")
    try:
        values = env_vars(stack, region, args.endpoint, args.function_endpoint)
    except (ClientError, BotoCoreError, LookupError) as error:
        where = f"{region} at {args.endpoint}" if args.endpoint else region
        print(f"env_vars: cannot read stack {stack} in {where}: {error}", file=sys.stderr)
        return 1
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(values, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    where = f"{region} at {args.endpoint}" if args.endpoint else region
    print(f"env_vars: {args.output} ({', '.join(sorted(values))} of stack {stack} in {where})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
