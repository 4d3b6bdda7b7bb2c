"""The AWS CLI (v1, in ``.venv-aws``: ``make aws-cli``, which ``make unit`` runs first) for tests that
read what a stack holds back as a user would: ``aws --endpoint-url <local serve> ...``.

:func:`aws` runs one command against a local endpoint with the local credentials and returns its
JSON output; without the CLI it fails the test saying how to install it (never skips: a test that
reads back through the CLI and quietly did not would prove nothing).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
AWS_CLI = ROOT / ".venv-aws" / "bin" / "aws"
LOCAL_KEYS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}


def aws_cli() -> Path:
    """The AWS CLI's path; fails the test when it is not installed, saying how to install it."""
    if not AWS_CLI.is_file():
        pytest.fail(f"the AWS CLI is not installed at {AWS_CLI.relative_to(ROOT)}: run `make aws-cli` (pip installs "
                    f"awscli<2 into .venv-aws; make unit and make test do it first). If pip cannot reach PyPI, "
                    f"install it from a mirror: .venv-aws/bin/pip install 'awscli<2' --index-url URL", pytrace=False)
    return AWS_CLI


def aws(endpoint: str, *arguments: str, timeout_s: float = 60) -> Any:
    """``aws --endpoint-url endpoint --output json ARGUMENTS`` with the local credentials: its JSON
    output (None when it printed nothing); fails the test with the CLI's own message on an error."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")} | LOCAL_KEYS
    done = subprocess.run([str(aws_cli()), "--endpoint-url", endpoint, "--output", "json", *arguments],
                          capture_output=True, text=True, timeout=timeout_s, env=environment, check=False)
    if done.returncode != 0:
        pytest.fail(f"aws {' '.join(arguments)} exited {done.returncode}: {done.stderr.strip()}", pytrace=False)
    return json.loads(done.stdout) if done.stdout.strip() else None
