"""template.yaml declares ``AWS_ENDPOINT_URL: ""`` on every function (so that `sam local invoke
--env-vars` can point a function at a local stack): on AWS that empty value must leave the Lambda
runtime's own SDK on the Region's endpoints. Checked with that SDK (lambda-runtime/requirements.txt,
installed by `make runtime`) on Python 3.13, as the functions run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
RUNTIME_SDK = ROOT / ".aws-sam" / "lambda-runtime" / "python"
PYTHON313 = ROOT / ".aws-sam" / "lambda-runtime" / "python313"
PROBE = """
import boto3, botocore
print(botocore.__version__)
for service in ("dynamodb", "scheduler", "sqs", "events"):
    print(boto3.session.Session().client(service).meta.endpoint_url)
"""


class _Tags(yaml.SafeLoader):
    """CloudFormation's short tags (!Ref, !GetAtt ...) read as plain nodes."""


_Tags.add_multi_constructor("!", lambda loader, suffix, node: None)


def test_the_template_declares_an_empty_endpoint_for_every_function():
    template = yaml.load((ROOT / "template.yaml").read_text(), Loader=_Tags)
    assert template["Globals"]["Function"]["Environment"]["Variables"]["AWS_ENDPOINT_URL"] == ""


def test_an_empty_endpoint_url_leaves_the_runtime_sdk_on_the_regions_endpoints():
    environment = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(RUNTIME_SDK), "AWS_ENDPOINT_URL": "",
                   "AWS_REGION": "eu-central-1", "AWS_DEFAULT_REGION": "eu-central-1",  # as Lambda sets them
                   "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x"}
    done = subprocess.run([PYTHON313.read_text().strip(), "-c", PROBE], env=environment,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    version, *endpoints = done.stdout.split()
    assert version == next(line.split("==")[1] for line in (ROOT / "lambda-runtime" / "requirements.txt").read_text()
                           .splitlines() if line.startswith("botocore=="))
    assert endpoints == ["https://dynamodb.eu-central-1.amazonaws.com", "https://scheduler.eu-central-1.amazonaws.com",
                         "https://sqs.eu-central-1.amazonaws.com", "https://events.eu-central-1.amazonaws.com"]
