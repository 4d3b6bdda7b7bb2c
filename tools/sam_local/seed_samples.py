"""Puts the checklist the events/*.json samples refer to into a running local stack, so that each
sample invoked with `make invoke` judges something real (docs/sam-local-invoke.md):

    missed-checks local serve --host 0.0.0.0 --start 2026-03-01T09:00:00Z     # in another terminal
    .venv/bin/python tools/sam_local/seed_samples.py [--endpoint http://127.0.0.1:5000]

forklift-daily (weekdays 06:00-14:00 Europe/Berlin, 30 minutes' grace) created on Sunday 1 March
2026, twelve pieces of equipment, half of them checked on Monday 2 March: the set-up of the tests
that run the samples (tests/event_samples.py). Exit 1 with one line when no local stack answers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import boto3
from botocore.exceptions import BotoCoreError, ClientError

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # tests.event_samples: the one definition of the samples' checklist

from missed_checks.aws.stacks import describe_stack  # noqa: E402
from missed_checks.aws.table import ChecklistTable  # noqa: E402
from missed_checks_local.stack import DEFAULT_REGION, LOCAL_CREDENTIALS  # noqa: E402
from missed_checks_ops.target import LOCAL_ENDPOINT, LOCAL_STACK_NAME  # noqa: E402
from tests.event_samples import CHECKLIST, EQUIPMENT, seed_sample_checklist  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoint", default=LOCAL_ENDPOINT, help=f"the local stack (default {LOCAL_ENDPOINT})")
    args = parser.parse_args(argv)
    session = boto3.session.Session(region_name=DEFAULT_REGION, **LOCAL_CREDENTIALS)
    try:
        found = describe_stack(session.client("cloudformation", endpoint_url=args.endpoint), LOCAL_STACK_NAME)
        if found is None:
            raise LookupError(f"no stack {LOCAL_STACK_NAME}")
        table = ChecklistTable(found.outputs["TableName"], session.client("dynamodb", endpoint_url=args.endpoint))
        seed_sample_checklist(table)
    except (BotoCoreError, ClientError, LookupError) as error:
        print(f"seed_samples: no local stack at {args.endpoint} ({error}): start missed-checks local serve "
              "--host 0.0.0.0 --start 2026-03-01T09:00:00Z", file=sys.stderr)
        return 1
    print(f"seed_samples: {CHECKLIST} with {len(EQUIPMENT)} pieces of equipment in {table.name} at {args.endpoint}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
