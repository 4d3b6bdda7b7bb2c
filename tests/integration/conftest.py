"""Fixtures for the ops command tests: the local runtime and the command line."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from missed_checks_local.runtime import LocalRuntime
from tests.integration.ops.ops_support import START, Cli, ops_runtime


@pytest.fixture
def runtime(request: pytest.FixtureRequest, shared_stack) -> Iterator[LocalRuntime]:
    """The whole stack on the simulated clock (at ``START``), as the ops commands see it through
    their target: the session's shared stack, emptied (``tests/conftest.py``), or a stack of its
    own for a test marked ``stack_parameters``/``own_stack``."""
    marker = request.node.get_closest_marker("stack_parameters")
    if marker is None and request.node.get_closest_marker("own_stack") is None:
        with shared_stack.local_runtime(START) as runtime:
            yield runtime
        return
    request.getfixturevalue("embedded")
    with ops_runtime(parameters=marker.kwargs if marker else None) as runtime:
        yield runtime


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(capsys)
