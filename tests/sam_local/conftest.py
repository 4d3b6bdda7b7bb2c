"""The sam_local lane's session: one `missed-checks local serve` (listening where podman's containers
reach it) and the container engine, image and build that `make sam-local` provides.

Nothing here is skipped: when this machine cannot run `sam local invoke` (no podman, no base image,
no build for it), every test of the lane fails saying what is missing and what to run.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest

from missed_checks.aws.scheduler import ScheduleStore
from missed_checks.aws.table import ChecklistTable
from missed_checks_local.serve_process import serve_process
from missed_checks_local.stack import DEFAULT_REGION, LOCAL_CREDENTIALS
from missed_checks_ops.target import LOCAL_STACK_NAME
from tests.event_samples import CREATED

ROOT = Path(__file__).resolve().parents[2]
INVOKE = ROOT / "tools" / "sam_local" / "invoke.py"
CONTAINERS_CONF = ROOT / "tools" / "sam_local" / "containers.conf"
BUILT = ROOT / ".aws-sam" / "sam-local" / "build" / "template.yaml"
SAM = ROOT / ".venv-sam" / "bin" / "sam"
SERVE_TIMEOUT_S = 120
INVOKE_TIMEOUT_S = 300


def machine_architecture() -> str:
    return "arm64" if os.uname().machine in ("aarch64", "arm64") else "x86_64"


def missing_prerequisite() -> str | None:
    """What `sam local invoke` lacks on this machine, or None."""
    image = f"public.ecr.aws/lambda/python:3.13-{machine_architecture()}"
    try:
        found = subprocess.run(["podman", "image", "exists", image], env={**os.environ,
                               "CONTAINERS_CONF": str(CONTAINERS_CONF)}, check=False, capture_output=True)
    except FileNotFoundError:
        return "podman is not installed"
    if found.returncode != 0:
        return f"podman has no {image} image"
    if not SAM.is_file():
        return f"the SAM CLI ({SAM}) is not installed"
    if not BUILT.is_file():
        return f"{BUILT.relative_to(ROOT)} (make invoke's build) is missing"
    return None


@pytest.fixture(scope="session")
def sam_local_ready() -> None:
    missing = missing_prerequisite()
    if missing:
        pytest.fail(f"sam local invoke cannot run here: {missing}. Run `make sam-local` (make test does it first): "
                    "it installs podman with apt-get, builds the Lambda base image and the functions; its "
                    "messages say why when this machine cannot run containers.", pytrace=False)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("0.0.0.0", 0))
        return probe.getsockname()[1]


@dataclass
class ServedStack:
    """A running `missed-checks local serve` and clients of it."""

    endpoint: str
    outputs: dict[str, str]

    def client(self, service: str) -> Any:
        return boto3.session.Session(region_name=DEFAULT_REGION, **LOCAL_CREDENTIALS).client(
            service, endpoint_url=self.endpoint)

    @property
    def table(self) -> ChecklistTable:
        return ChecklistTable(self.outputs["TableName"], self.client("dynamodb"))

    @property
    def schedules(self) -> ScheduleStore:
        return ScheduleStore(self.outputs["ScheduleGroupName"], self.client("scheduler"))

    def empty(self) -> None:
        """Every item of the table and every schedule gone, for the next test."""
        dynamodb = self.client("dynamodb")
        keys = [item for page in dynamodb.get_paginator("scan").paginate(TableName=self.table.name,
                                                                          ProjectionExpression="pk, sk")
                for item in page["Items"]]
        self.table.batch_write([{"DeleteRequest": {"Key": key}} for key in keys])
        for name in self.schedules.names():
            self.schedules.delete(name)

    def invoke(self, function: str, event: Path) -> Any:
        """`sam local invoke` of one sample through tools/sam_local/invoke.py; the handler's result."""
        done = subprocess.run(
            [sys.executable, str(INVOKE), function, str(event), "--endpoint", self.endpoint,
             "--architecture", machine_architecture()],
            cwd=ROOT, capture_output=True, text=True, timeout=INVOKE_TIMEOUT_S, check=False)
        assert done.returncode == 0, f"sam local invoke failed ({done.returncode}):\n{done.stderr[-4000:]}"
        lines = [line for line in done.stdout.splitlines() if line.strip()]
        assert lines, f"sam local invoke printed no result:\n{done.stderr[-4000:]}"
        result = json.loads(lines[-1])
        assert not (isinstance(result, dict) and "errorType" in result), \
            f"the handler failed: {result}\n{done.stderr[-4000:]}"
        return result


@pytest.fixture(scope="module")
def served_stack(sam_local_ready, tmp_path_factory) -> Iterator[ServedStack]:
    """One local stack for the lane (the module; stopped when it ends), on all addresses (the
    containers reach it at podman's gateway), its clock on the Sunday the samples' checklist is
    created, so no schedule fires by itself."""
    port = free_port()
    folder = tmp_path_factory.mktemp("sam-local")
    command = [str(Path(sys.executable).with_name("missed-checks")), "local", "serve", "--host", "0.0.0.0",
               "--port", str(port), "--start", CREATED.isoformat().replace("+00:00", "Z"),
               "--log-file", str(folder / "serve.log")]
    with serve_process(command, folder / "serve.out", timeout_s=SERVE_TIMEOUT_S, cwd=ROOT):
        stack = ServedStack(f"http://127.0.0.1:{port}", {})
        described = stack.client("cloudformation").describe_stacks(StackName=LOCAL_STACK_NAME)["Stacks"][0]
        stack.outputs = {o["OutputKey"]: o["OutputValue"] for o in described["Outputs"]}
        yield stack


@pytest.fixture
def stack(served_stack) -> Iterator[ServedStack]:
    served_stack.empty()
    yield served_stack
