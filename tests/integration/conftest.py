"""Fixtures for the ops command tests: the local runtime and the command line."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from ops_support import Cli, ops_runtime

from missed_checks_local.runtime import LocalRuntime


@pytest.fixture
def runtime(embedded: None) -> Iterator[LocalRuntime]:
    """The whole stack on the simulated clock, as the ops commands see it through their target."""
    with ops_runtime() as runtime:
        yield runtime


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(capsys)
