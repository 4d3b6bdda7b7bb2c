"""The embedded AWS's kernel, "a SAM application on moto", knows nothing of this product.

Read with ``ast`` (nothing imported), every module of ``src/missed_checks_local`` outside
``product/`` (the service folders, ``core/``, the stack, runtime, clock, serve, ``endpoint.py``
...) imports nothing of ``missed_checks`` (the product), ``missed_checks_ops`` (the operator's
tools) or ``missed_checks_local.product`` (the product's part of the emulator), not even inside a
function or under ``TYPE_CHECKING``. What the product needs the kernel to call goes through
``missed_checks_local.application`` (registered by ``product.application.install``).

No module of the emulator, ``product/`` included, imports ``missed_checks_ops``: the operator's
``missed-checks local`` commands import the emulator, never the reverse, and hand the scenario player
what is the operator's (a file's text, the dead-letter replay).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
EMULATOR = ROOT / "src" / "missed_checks_local"
PRODUCT = EMULATOR / "product"
FORBIDDEN = ("missed_checks", "missed_checks_ops", "missed_checks_local.product")


def _kernel_modules() -> list[Path]:
    return [path for path in sorted(EMULATOR.rglob("*.py")) if PRODUCT not in path.parents]


def _imported(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module
            for alias in node.names:  # from missed_checks_local import product
                yield node.lineno, f"{node.module}.{alias.name}"


def _found(path: Path, forbidden: Callable[[str], bool]) -> list[str]:
    """Where the module at ``path`` imports a name ``forbidden`` refuses."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [f"line {line}: {name}" for line, name in _imported(tree) if forbidden(name)]


def _forbidden(name: str) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in FORBIDDEN)


def test_the_kernel_is_most_of_the_emulator() -> None:
    names = {path.relative_to(EMULATOR).as_posix() for path in _kernel_modules()}
    assert {"stack.py", "runtime.py", "clock.py", "serve.py", "endpoint.py", "patches.py",
            "awslambda/runtime.py", "dynamodb/patches.py", "core/patches.py"} <= names
    assert not any(name.startswith("product/") for name in names)


@pytest.mark.parametrize("path", _kernel_modules(), ids=lambda path: path.relative_to(EMULATOR).as_posix())
def test_a_kernel_module_imports_nothing_of_the_product(path: Path) -> None:
    found = _found(path, _forbidden)
    assert found == [], f"{path.relative_to(ROOT)} imports the product: {found}"


def test_the_check_sees_an_import_in_a_function_and_a_from_import() -> None:
    tree = ast.parse("def f():\n    from missed_checks.aws import clients\nfrom missed_checks_local import product\n")
    assert sorted(name for _, name in _imported(tree) if _forbidden(name)) == [
        "missed_checks.aws", "missed_checks.aws.clients", "missed_checks_local.product"]



def _emulator_modules() -> list[Path]:
    return sorted(EMULATOR.rglob("*.py"))


def _imports_the_operator(name: str) -> bool:
    return name == "missed_checks_ops" or name.startswith("missed_checks_ops.")


def test_the_product_part_is_checked_too() -> None:
    names = {path.relative_to(EMULATOR).as_posix() for path in _emulator_modules()}
    assert {"product/scenario.py", "product/digests.py", "product/chaos.py", "stack.py"} <= names


@pytest.mark.parametrize("path", _emulator_modules(), ids=lambda path: path.relative_to(EMULATOR).as_posix())
def test_no_module_of_the_emulator_imports_the_operators_package(path: Path) -> None:
    found = _found(path, _imports_the_operator)
    assert found == [], f"{path.relative_to(ROOT)} imports the operator's package: {found}"


def test_the_operator_check_sees_a_deferred_import() -> None:
    tree = ast.parse("def f():\n    from missed_checks_ops.dlq import replay_queues\nimport missed_checks_opsx\n")
    assert [name for _, name in _imported(tree) if _imports_the_operator(name)] == [
        "missed_checks_ops.dlq", "missed_checks_ops.dlq.replay_queues"]
