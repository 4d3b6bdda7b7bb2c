"""Who may talk to AWS: every boto3 call lives in ``missed_checks.aws``; nothing else reaches past it.

Read with ``ast`` (nothing is imported or run), every module of ``src/missed_checks`` (except the
adapters in ``src/missed_checks/aws``), of ``src/missed_checks_ops`` and of ``functions/`` must:

* not import ``boto3``, nor anything of ``botocore`` but ``botocore.exceptions``: a caller may
  catch ``ClientError``/``BotoCoreError`` (and their kin) where an adapter lets them through, but
  sessions, configs and clients come from ``missed_checks.aws.clients``;
* not call an AWS API: no call ``<anything>.<operation>(...)`` where ``<operation>`` is botocore's
  Python name of an operation of a service the stack uses (``query``, ``send_message``,
  ``start_execution``, ``describe_stacks`` ...), nor ``get_paginator``/``get_waiter``. Creating a
  client bound to the chosen stack (``StackTarget.client("sqs")``) is configuration, not a call,
  and is allowed: the client is handed to an adapter.

And the command line (``src/missed_checks_ops/cli``) neither imports anything of ``missed_checks.aws``
nor asks the target for an adapter or a client (``.table()``, ``.client()``, ``.queue()``,
``.schedules()``): its commands parse, call a use case of ``missed_checks_ops`` and print.

The operation names come from botocore's own service models, so a method of ours named like an
AWS operation is flagged too: that is deliberate (name it after what it does for the domain).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import botocore.session
import pytest
from botocore import xform_name

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
ADAPTERS = SRC / "missed_checks" / "aws"
CLI = SRC / "missed_checks_ops" / "cli"
TARGET_ADAPTERS = {"table", "client", "queue", "schedules"}
# The services template.yaml's resources are (and the operator's tools look a stack up with).
SERVICES = ("dynamodb", "dynamodbstreams", "sqs", "stepfunctions", "lambda", "scheduler", "events",
            "cloudformation", "sts", "logs", "sns")
CLIENT_HELPERS = {"get_paginator", "get_waiter", "can_paginate", "generate_presigned_url"}


def _operations() -> frozenset[str]:
    session = botocore.session.get_session()
    return frozenset(xform_name(name) for service in SERVICES
                     for name in session.get_service_model(service).operation_names)


OPERATIONS = _operations() | CLIENT_HELPERS
NOT_AWS = {("src/missed_checks_ops/html_report.py", "get_template"),  # Jinja2's Environment.get_template
           ("src/missed_checks/reporting/report_html.py", "get_template")}


def _modules() -> Iterator[Path]:
    for root in (SRC / "missed_checks", SRC / "missed_checks_ops", ROOT / "functions"):
        for path in sorted(root.rglob("*.py")):
            if ADAPTERS not in path.parents:
                yield path


MODULES = list(_modules())


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _imports(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, dotted module) of every import, ``from a.b import c`` giving ``a.b.c``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield from ((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)


def test_every_layer_is_checked() -> None:
    names = {_name(path) for path in MODULES}
    assert "src/missed_checks_ops/dlq.py" in names
    assert "src/missed_checks/evaluation/judging.py" in names
    assert any(name.startswith("functions/") and name.endswith("/app.py") for name in names)
    assert not any(name.startswith("src/missed_checks/aws/") for name in names)
    assert {"query", "send_message", "start_execution", "describe_stacks", "put_events"} <= OPERATIONS


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_no_boto3_outside_the_adapters(path: Path) -> None:
    tree = ast.parse(path.read_text(), str(path))
    found = [f"line {line}: import {module}" for line, module in _imports(tree)
             if module.split(".")[0] == "boto3"
             or (module.split(".")[0] == "botocore" and not module.startswith("botocore.exceptions."))]
    found += [f"line {node.lineno}: .{node.func.attr}(...)" for node in ast.walk(tree)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in OPERATIONS
              and (_name(path), node.func.attr) not in NOT_AWS]
    assert not found, f"{_name(path)} talks to AWS itself; move it behind missed_checks.aws: {found}"


@pytest.mark.parametrize("path", sorted(CLI.rglob("*.py")), ids=_name)
def test_the_cli_calls_use_cases_not_adapters(path: Path) -> None:
    tree = ast.parse(path.read_text(), str(path))
    found = [f"line {line}: import {module}" for line, module in _imports(tree)
             if module == "missed_checks.aws" or module.startswith("missed_checks.aws.")]
    found += [f"line {node.lineno}: .{node.func.attr}()" for node in ast.walk(tree)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in TARGET_ADAPTERS]
    assert not found, f"{_name(path)} reaches the adapters; give it a use case in missed_checks_ops: {found}"


# -- the table's keys and item shapes are the adapter's alone (#35 item 2) ---------------------------
KEYS = "missed_checks.aws.table.keys"
ITEM_METHODS = ("to_item", "from_item", "revision_item")
"""What a domain type had when it knew its own item (now :mod:`missed_checks.aws.table`'s functions)."""
KEY_USERS = [path for root in (SRC / "missed_checks", SRC / "missed_checks_ops", SRC / "missed_checks_local",
                               ROOT / "functions") for path in sorted(root.rglob("*.py"))
             if ADAPTERS not in path.parents]


def test_keys_are_checked_everywhere_but_the_adapters() -> None:
    names = {_name(path) for path in KEY_USERS}
    assert {"functions/schedule_sync/app.py", "src/missed_checks/reporting/fleet_report.py",
            "src/missed_checks/evaluation/missed_check.py", "src/missed_checks_ops/checklists.py"} <= names
    assert not (SRC / "missed_checks" / "keys.py").exists()


@pytest.mark.parametrize("path", KEY_USERS, ids=_name)
def test_nothing_outside_the_adapters_knows_the_keys(path: Path) -> None:
    """Keys and item shapes live in ``missed_checks.aws.table``: the domain, the handlers, the operator
    package and the emulator speak domain types (tests and tools/ may read the keys)."""
    tree = ast.parse(path.read_text(), str(path))
    found = [f"line {line}: import {module}" for line, module in _imports(tree)
             if module in (KEYS, "missed_checks.keys") or module.startswith(f"{KEYS}.")
             or module.startswith("missed_checks.keys.")]
    found += [f"line {node.lineno}: .{node.attr}" for node in ast.walk(tree)
              if isinstance(node, ast.Attribute) and node.attr in ITEM_METHODS]
    found += [f"line {node.lineno}: def {node.name}" for node in ast.walk(tree)
              if isinstance(node, ast.FunctionDef) and node.name in ITEM_METHODS]
    assert not found, f"{_name(path)} knows the table's keys or items; ask missed_checks.aws.table: {found}"
