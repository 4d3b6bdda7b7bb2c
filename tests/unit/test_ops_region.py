"""Which region the ops CLI targets when none is given: the error names a variable boto3 reads."""

from __future__ import annotations

import os

import pytest

from missed_checks_ops.target import TargetError, resolve_target


@pytest.fixture
def no_region(monkeypatch: pytest.MonkeyPatch, tmp_path: os.PathLike[str]) -> pytest.MonkeyPatch:
    for name in ("AWS_DEFAULT_REGION", "AWS_REGION", "AWS_PROFILE", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path) + "/none")  # no profile region either
    return monkeypatch


def test_without_a_region_the_error_names_the_variable_that_sets_it(no_region: pytest.MonkeyPatch) -> None:
    with pytest.raises(TargetError, match="AWS_DEFAULT_REGION") as raised:
        resolve_target(overrides={"table": "checklists"})
    assert raised.value.field == "region"


def test_the_variable_the_error_names_is_the_one_that_works(no_region: pytest.MonkeyPatch) -> None:
    no_region.setenv("AWS_DEFAULT_REGION", "eu-west-3")
    assert resolve_target(overrides={"table": "checklists"}).region == "eu-west-3"
