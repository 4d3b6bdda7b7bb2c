"""The AWS CLI the tests read a stack back with (tests/aws_cli.py) is installed, is v1 and talks to the
embedded AWS: what a user runs against ``local serve``'s endpoint."""

from __future__ import annotations

import subprocess

import pytest
from moto.server import ThreadedMotoServer

from tests.aws_cli import aws, aws_cli
from tests.e2e.test_local_clock import _free_port

pytestmark = [pytest.mark.e2e, pytest.mark.duration(3)]


def test_the_aws_cli_is_installed_and_is_version_1() -> None:
    done = subprocess.run([str(aws_cli()), "--version"], capture_output=True, text=True, check=True, timeout=60)
    assert (done.stdout + done.stderr).startswith("aws-cli/1."), done.stdout + done.stderr


def test_it_reads_back_through_a_local_endpoint() -> None:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=_free_port(), verbose=False)
    server.start()
    try:
        endpoint = f"http://127.0.0.1:{server._server.server_port}"  # type: ignore[union-attr]
        aws(endpoint, "sqs", "create-queue", "--queue-name", "read-back")
        urls = aws(endpoint, "sqs", "list-queues")["QueueUrls"]
        assert [url.rsplit("/", 1)[-1] for url in urls] == ["read-back"]
        aws(endpoint, "sqs", "delete-queue", "--queue-url", urls[0])
    finally:
        server.stop()
