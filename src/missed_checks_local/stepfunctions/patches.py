"""The emulator's patches of moto's Step Functions (its ASL interpreter).

Each patch names its upstream candidate. Checked against moto 5.2.1. Nothing here runs at import:
each is a context manager the local runtime enters while it runs.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from unittest import mock

from missed_checks_local.core.patches import MotoChanged

__all__ = ["parse_each_definition_once", "retries_wait_no_real_time", "state_machine_clients"]

_INTERPRETER_CLIENT_USERS = (
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.lambda_eval_utils",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sqs",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_dynamodb",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_events",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sns",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_aws_sdk",
)


class _NoWait:
    """Stands in for the ``time`` module of moto's Retry implementation: no real waiting."""

    def __init__(self) -> None:
        self.waited_s = 0.0

    def sleep(self, seconds: float) -> None:
        self.waited_s += seconds

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


@contextmanager
def retries_wait_no_real_time() -> Iterator[None]:
    """Patch 6 (Step Functions' part): the ``time`` module of moto's Step Functions Retry waits no
    real time (``IntervalSeconds`` of simulated time pass at once).

    Not upstreamable: product-specific to the emulator's simulated clock (moto waits real time, as AWS)."""
    from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl  # deferred: moto is slow to import

    with mock.patch.object(retrier_decl, "time", _NoWait()):
        yield


@contextmanager
def parse_each_definition_once() -> Iterator[None]:
    """Keep moto's parse tree per definition text; each execution still gets fresh evaluation
    components from it (7).

    Upstream candidate (moto, ``stepfunctions/parser``): a cache of parse trees in the backend."""
    from moto.stepfunctions.parser.asl.parse.asl_parser import (
        AmazonStateLanguageParser,  # deferred: moto is a dev dependency and slow to import
    )
    from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor

    original = AmazonStateLanguageParser.parse
    trees: dict[str, Any] = {}
    lock = threading.Lock()

    def parse(definition: str) -> tuple[Any, Any]:
        with lock:
            tree = trees.get(definition)
        if tree is None:
            program, tree = original(definition)
            with lock:
                trees[definition] = tree
            return program, tree
        return Preprocessor().visit(tree), tree

    with mock.patch.object(AmazonStateLanguageParser, "parse", staticmethod(parse)):
        yield


@contextmanager
def state_machine_clients(client_for: Callable[..., Any]) -> Iterator[None]:
    """Patch 9: the state machine's tasks get their boto3 clients from ``client_for(region, service,
    state_credentials=None)`` (9).

    Upstream candidate (moto, ``stepfunctions/parser``): tasks acting with the machine's role (moto
    uses fixed dummy keys, so the tasks would escape IAM)."""
    with ExitStack() as patches:
        for name in _INTERPRETER_CLIENT_USERS:
            module = importlib.import_module(name)
            if not hasattr(module, "boto_client_for"):  # moto changed: the tasks would escape IAM
                raise MotoChanged(f"{name} has no boto_client_for: the state machine's role cannot be applied")
            patches.enter_context(mock.patch.object(module, "boto_client_for", client_for))
        yield

