"""What `make build` deploys: the DomainLayer's contents, its lock file, and the Python 3.13 finder.

Fast tests judge fabricated trees and lock files; the rest run `make artifacts` (incremental: a
no-op when nothing changed) and look at the real `.aws-sam/build` and `.aws-sam/lambda-runtime`.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
FINDER = ROOT / "tools" / "find_python313"
BUILD_DIR = ROOT / ".aws-sam" / "build"
LAYER = BUILD_DIR / "DomainLayer"
RUNTIME_DIR = ROOT / ".aws-sam" / "lambda-runtime"


def _load_check_layer():
    spec = importlib.util.spec_from_file_location("check_layer", ROOT / "tools" / "check_layer.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


check_layer = _load_check_layer()


# --- check_layer on fabricated builds ------------------------------------------------------------

def write(path: Path, size: int = 10) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"#" * size)
    return path


@pytest.fixture
def good_build(tmp_path):
    build = tmp_path / "build"
    python = build / "DomainLayer" / "python"
    write(python / "missed_checks" / "__init__.py")
    write(python / "missed_checks" / "aws" / "table.py", 2000)
    write(python / "aws_lambda_powertools" / "__init__.py", 5000)
    write(python / "typing_extensions.py", 300)
    write(python / "tzdata-2026.6.dist-info" / "METADATA")
    (python / "tzdata-2026.6.dist-info" / "WHEEL").write_text("Tag: py2-none-any\nTag: py3-none-any\n")
    write(python / "wrapt" / "_wrappers.cpython-313-aarch64-linux-gnu.so", 100)
    (python / "wrapt-2.5.2.dist-info").mkdir()
    (python / "wrapt-2.5.2.dist-info" / "WHEEL").write_text(
        "Tag: cp313-cp313-manylinux2014_aarch64\nTag: cp313-cp313-manylinux_2_17_aarch64\n")
    write(build / "PlanEvaluationFunction" / "app.py", 1500)
    write(build / "CloseWindowFunction" / "app.py", 2500)
    return build


def verdict(build: Path, *args: str) -> tuple[int, str, str]:
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "check_layer.py"), "--build-dir", str(build),
                             "--no-lock", *args], capture_output=True, text=True, check=False)
    return result.returncode, result.stdout, result.stderr


def test_a_lean_layer_passes_and_its_packages_and_functions_are_listed_with_sizes(good_build):
    report = check_layer.check_build(good_build, lock=False)
    assert report.problems == []
    code, out, err = verdict(good_build)
    assert code == 0, err
    assert "DomainLayer" in out and " MB unzipped" in out
    for listed in ("python/missed_checks/", "python/aws_lambda_powertools/", "python/typing_extensions.py",
                   "python/wrapt/", "PlanEvaluationFunction", "CloseWindowFunction"):
        assert listed in out
    assert "check_layer: OK" in out


@pytest.mark.parametrize("forbidden", check_layer.FORBIDDEN)
@pytest.mark.parametrize("where", ["python", "python/lib/python3.13/site-packages"])
def test_a_layer_with_a_package_of_the_runtime_or_of_dev_fails(good_build, forbidden, where):
    write(good_build / "DomainLayer" / where / forbidden / "__init__.py")
    code, _, err = verdict(good_build)
    assert code == 1
    assert f"contains {forbidden}, which must not be in the layer" in err


def test_a_forbidden_distribution_is_found_by_its_dist_info_too(good_build):
    write(good_build / "DomainLayer" / "python" / "botocore-1.40.4.dist-info" / "METADATA")
    report = check_layer.check_build(good_build, lock=False)
    assert any("contains botocore" in p for p in report.problems)


def test_a_layer_without_the_product_package_fails(good_build):
    shutil.rmtree(good_build / "DomainLayer" / "python" / "missed_checks")
    code, _, err = verdict(good_build)
    assert code == 1
    assert "lacks the product package missed_checks" in err


def test_a_layer_over_10_mb_fails_and_one_under_passes(good_build):
    big = write(good_build / "DomainLayer" / "python" / "tzdata" / "blob.bin", 9 * 1024 * 1024)
    assert verdict(good_build)[0] == 0
    big.write_bytes(b"\0" * (10 * 1024 * 1024 + 1))
    code, _, err = verdict(good_build)
    assert code == 1
    assert "over the 10 MB limit" in err


def test_a_wheel_for_another_platform_fails(good_build):
    (good_build / "DomainLayer" / "python" / "wrapt-2.5.2.dist-info" / "WHEEL").write_text(
        "Tag: cp313-cp313-manylinux2014_x86_64\n")
    code, _, err = verdict(good_build)
    assert code == 1
    assert "wrapt 2.5.2 is built for cp313-cp313-manylinux2014_x86_64" in err


def test_an_abi3_wheel_for_an_older_cpython_runs_on_313(good_build):
    (good_build / "DomainLayer" / "python" / "wrapt-2.5.2.dist-info" / "WHEEL").write_text(
        "Tag: cp39-abi3-manylinux2014_aarch64\n")
    assert verdict(good_build)[0] == 0


def test_bytecode_in_the_build_fails(good_build):
    write(good_build / "DomainLayer" / "python" / "missed_checks" / "__pycache__" / "x.cpython-311.pyc")
    code, _, err = verdict(good_build)
    assert code == 1
    assert "__pycache__" in err


def test_nothing_built_is_exit_2_with_the_command_to_run(tmp_path):
    code, _, err = verdict(tmp_path / "nothing")
    assert code == 2
    assert "make build" in err


# --- the lock file's consistency -------------------------------------------------------------------

def pins(*lines: str, tmp_path: Path) -> dict:
    path = tmp_path / "lock.txt"
    path.write_text("\n".join(lines) + "\n")
    return check_layer.read_pins(path)


POWERTOOLS_METADATA = """Metadata-Version: 2.1
Name: aws-lambda-powertools
Version: 3.37.0
Requires-Dist: jmespath<2.0.0,>=1.0.1
Requires-Dist: typing-extensions<5.0.0,>=4.11.0
Requires-Dist: aws-xray-sdk<3.0.0,>=2.8.0; extra == "tracer"
Requires-Dist: pydantic<3.0.0,>=2.4.0; extra == "parser"
Requires-Dist: backports-zoneinfo; python_version < "3.9"

"""
XRAY_METADATA = "Name: aws-xray-sdk\nVersion: 2.15.0\nRequires-Dist: wrapt\nRequires-Dist: botocore >=1.11.3\n\n"
PROJECT = {canonicalize_name(r.name): r for r in map(Requirement, [
    "boto3>=1.34,<2", "aws-lambda-powertools[tracer]>=3.5,<4", "tzdata>=2024.1"])}


@pytest.fixture
def runtime_pins(tmp_path):
    return pins("boto3==1.40.4", "botocore==1.40.4", "jmespath==1.0.1", tmp_path=tmp_path)


def consistent_layer_pins(tmp_path, **override):
    versions = {"aws-lambda-powertools[tracer]": "3.37.0", "aws-xray-sdk": "2.15.0", "typing_extensions": "4.16.0",
                "wrapt": "2.5.2", "tzdata": "2026.6", **override}
    return pins(*(f"{name}=={version}" for name, version in versions.items() if version), tmp_path=tmp_path)


METADATA = {"aws-lambda-powertools": POWERTOOLS_METADATA, "aws-xray-sdk": XRAY_METADATA,
            "typing-extensions": "Name: typing_extensions\n\n", "wrapt": "Name: wrapt\n\n",
            "tzdata": "Name: tzdata\n\n"}


def test_a_complete_lock_is_consistent_and_extras_and_markers_are_honoured(tmp_path, runtime_pins):
    # pydantic (extra "parser") and backports-zoneinfo (Python < 3.9) are not needed: not pinned.
    assert check_layer.lock_problems(consistent_layer_pins(tmp_path), runtime_pins, PROJECT, METADATA) == []


def test_a_pin_outside_pyproject_range_is_reported(tmp_path, runtime_pins):
    layer = consistent_layer_pins(tmp_path, **{"aws-lambda-powertools[tracer]": "4.0.0"})
    problems = check_layer.lock_problems(layer, runtime_pins, PROJECT, METADATA)
    assert problems == ["layer lock: aws-lambda-powertools==4.0.0 is outside pyproject.toml's "
                        "aws-lambda-powertools[tracer]<4,>=3.5"]


def test_a_runtime_pin_outside_pyproject_range_is_reported(tmp_path):
    runtime = pins("boto3==1.33.0", "botocore==1.40.4", "jmespath==1.0.1", tmp_path=tmp_path)
    problems = check_layer.lock_problems(consistent_layer_pins(tmp_path), runtime, PROJECT, METADATA)
    assert problems == ["runtime lock: boto3==1.33.0 is outside pyproject.toml's boto3<2,>=1.34"]


def test_a_dependency_neither_pinned_nor_in_the_runtime_is_reported(tmp_path, runtime_pins):
    layer = consistent_layer_pins(tmp_path, wrapt=None)
    problems = check_layer.lock_problems(layer, runtime_pins, PROJECT, METADATA)
    assert problems == ["layer lock: aws-xray-sdk==2.15.0 needs wrapt, which is neither pinned nor provided by "
                        "the Lambda runtime"]


def test_the_extra_requested_by_the_lock_pulls_in_its_dependencies(tmp_path, runtime_pins):
    layer = consistent_layer_pins(tmp_path, **{"aws-xray-sdk": None})
    problems = check_layer.lock_problems(layer, runtime_pins, PROJECT, METADATA)
    assert any("needs aws-xray-sdk<3.0.0,>=2.8.0" in p for p in problems)


def test_a_dependency_at_a_version_it_does_not_accept_is_reported(tmp_path, runtime_pins):
    layer = consistent_layer_pins(tmp_path, typing_extensions="4.10.0")
    problems = check_layer.lock_problems(layer, runtime_pins, PROJECT, METADATA)
    assert problems == ["layer lock: aws-lambda-powertools==3.37.0 needs typing-extensions<5.0.0,>=4.11.0, "
                        "but pinned typing-extensions is 4.10.0"]
    runtime = pins("boto3==1.40.4", "botocore==1.40.4", "jmespath==0.10.0", tmp_path=tmp_path)
    problems = check_layer.lock_problems(consistent_layer_pins(tmp_path), runtime, PROJECT, METADATA)
    assert problems == ["layer lock: aws-lambda-powertools==3.37.0 needs jmespath<2.0.0,>=1.0.1, "
                        "but the runtime's jmespath is 0.10.0"]


def test_a_package_of_the_runtime_in_the_layer_lock_and_a_missing_extra_are_reported(tmp_path, runtime_pins):
    layer = consistent_layer_pins(tmp_path, **{"aws-lambda-powertools[tracer]": None, "aws-lambda-powertools": "3.37.0",
                                              "botocore": "1.40.4"})
    problems = check_layer.lock_problems(layer, runtime_pins, PROJECT, METADATA)
    assert "layer lock: botocore is provided by the Lambda runtime; remove it from the layer lock" in problems
    assert "layer lock: aws-lambda-powertools lacks pyproject.toml's extras [tracer]" in problems


@pytest.mark.parametrize("line", ["wrapt>=2", "wrapt", "wrapt==2.*", "wrapt==2.5.2; python_version >= '3.13'"])
def test_a_lock_line_that_is_not_an_exact_pin_is_refused(tmp_path, line):
    with pytest.raises(ValueError, match="not an exact pin"):
        pins(line, tmp_path=tmp_path)


def test_the_committed_locks_are_exact_pins_and_leave_the_runtime_sdk_out_of_the_layer():
    layer = check_layer.read_pins(check_layer.LAYER_LOCK)
    runtime = check_layer.read_pins(check_layer.RUNTIME_LOCK)
    assert {"aws-lambda-powertools", "aws-xray-sdk", "wrapt", "typing-extensions", "tzdata"} <= set(layer)
    assert layer["aws-lambda-powertools"].extras == {"tracer"}
    provided = {"boto3", "botocore", "s3transfer", "jmespath", "urllib3", "python-dateutil", "six"}
    assert set(runtime) == provided
    assert not set(layer) & provided
    assert runtime["boto3"].version == runtime["botocore"].version == Version("1.40.4")


# --- tools/find_python313 -------------------------------------------------------------------------

def find_python313(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([str(FINDER)], capture_output=True, text=True, env=env, check=False, timeout=60)


@pytest.fixture(scope="module")
def real_python313():
    env = {k: v for k, v in os.environ.items() if k != "MISSED_CHECKS_PYTHON313"}
    found = find_python313(env)
    if found.returncode != 0:
        pytest.fail(f"no Python 3.13 on this machine, which `make build` needs:\n{found.stderr}")
    return found.stdout.strip()


@pytest.fixture
def bare_path(tmp_path):
    """A PATH with the finder's tools (sort) and no python3.13."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sort").symlink_to(shutil.which("sort"))
    return bin_dir


def fake_python(path: Path, works: bool) -> Path:
    """A stand-in interpreter: answers the finder's probe with its own path, or fails like a stale shim."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + ('echo "$0"\n' if works else "exit 127\n"))
    path.chmod(0o755)
    return path


def test_a_bogus_MISSED_CHECKS_PYTHON313_is_a_clear_error(tmp_path):
    result = find_python313({**os.environ, "MISSED_CHECKS_PYTHON313": str(tmp_path / "no" / "python3.13")})
    assert result.returncode == 1
    assert result.stdout == ""
    assert f"MISSED_CHECKS_PYTHON313={tmp_path / 'no' / 'python3.13'} is not a working Python 3.13" in result.stderr
    assert "not an executable file" in result.stderr


def test_MISSED_CHECKS_PYTHON313_of_another_version_says_which_version_it_is(tmp_path):
    other = tmp_path / "python3.12"
    other.write_text('#!/bin/sh\ncase "$2" in *assert*) exit 1;; *) echo 3.12.1;; esac\n')
    other.chmod(0o755)
    result = find_python313({**os.environ, "MISSED_CHECKS_PYTHON313": str(other)})
    assert result.returncode == 1
    assert "(Python 3.12.1, not 3.13)" in result.stderr


def test_a_real_MISSED_CHECKS_PYTHON313_is_printed_as_is(real_python313):
    version = subprocess.run([real_python313, "-c", "import sys; print(sys.version_info[:2])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    assert version == "(3, 13)"
    result = find_python313({**os.environ, "MISSED_CHECKS_PYTHON313": real_python313})
    assert result.returncode == 0, result.stderr
    assert result.stdout == real_python313 + "\n"


def test_a_broken_python313_on_path_is_skipped_for_pyenvs_highest_313(tmp_path, bare_path):
    fake_python(bare_path / "python3.13", works=False)  # like a pyenv shim for an unselected version
    root = tmp_path / "pyenv"
    for version in ("3.13.2", "3.13.10", "3.12.9"):
        fake_python(root / "versions" / version / "bin" / "python3.13", works=True)
    result = find_python313({"PATH": str(bare_path), "PYENV_ROOT": str(root), "HOME": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{root}/versions/3.13.10/bin/python3.13\n"


def test_no_python313_anywhere_says_where_it_looked_and_how_to_provide_one(tmp_path, bare_path):
    fake_python(bare_path / "python3.13", works=False)
    result = find_python313({"PATH": str(bare_path), "PYENV_ROOT": str(tmp_path / "none"), "HOME": str(tmp_path)})
    assert result.returncode == 1
    assert result.stdout == ""
    for said in ("no Python 3.13 interpreter found", f"python3.13 on PATH: {bare_path}/python3.13 (does not run)",
                 "pyenv: none", "uv: not installed", "export MISSED_CHECKS_PYTHON313=/path/to/python3.13",
                 "pyenv install 3.13"):
        assert said in result.stderr


# --- the real build ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def artifacts():
    """`make artifacts`: sam build and the runtime's SDK, rebuilt only if an input changed. One
    process at a time: pytest-xdist workers running this module's tests at once would otherwise
    build into the same directory together (the second copy of the package landed inside the first)."""
    BUILD_DIR.parent.mkdir(exist_ok=True)
    with open(BUILD_DIR.parent / ".artifacts.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        result = subprocess.run(["make", "--no-print-directory", "artifacts"], cwd=ROOT, capture_output=True,
                                text=True, check=False, timeout=900)
    if result.returncode != 0:
        pytest.fail(f"make artifacts failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return BUILD_DIR


def test_the_built_layer_passes_check_layer(artifacts):
    report = check_layer.check_build(artifacts)
    assert report.problems == []
    assert (LAYER / "python" / "missed_checks").is_dir()
    assert check_layer.tree_size(LAYER) <= 10 * 1024 * 1024


def test_the_built_layer_holds_exactly_the_product_package_and_the_locked_distributions(artifacts):
    python = LAYER / "python"
    source = ROOT / "src" / "missed_checks"
    shipped = {p.relative_to(python / "missed_checks") for p in (python / "missed_checks").rglob("*") if p.is_file()}
    expected = {p.relative_to(source) for p in source.rglob("*")
                if p.is_file() and "__pycache__" not in p.parts and p.suffix not in {".pyc", ".pyo"}}
    assert shipped == expected
    assert not any((python / "missed_checks").rglob("__pycache__")), \
        "bytecode in the layer: run Python on .aws-sam/build with -B or PYTHONPYCACHEPREFIX"
    for name in ("missed_checks_local", "missed_checks_ops", "boto3", "botocore", "s3transfer", "dateutil", "six.py"):
        assert not (python / name).exists(), name
    installed = {name: version for name, (version, _) in check_layer.distributions(LAYER).items()}
    locked = {name: pin.version for name, pin in check_layer.read_pins(check_layer.LAYER_LOCK).items()}
    assert installed == locked


def test_the_runtime_sdk_for_the_emulator_is_installed_with_its_interpreter(artifacts):
    installed = {name: version for name, (version, _) in check_layer.distributions(RUNTIME_DIR).items()}
    locked = {name: pin.version for name, pin in check_layer.read_pins(check_layer.RUNTIME_LOCK).items()}
    assert installed == locked
    python313 = Path((RUNTIME_DIR / "python313").read_text().strip())
    assert python313.is_absolute()
    assert os.access(python313, os.X_OK)


@pytest.mark.parametrize("function", ["ScheduleSyncFunction", "PlanEvaluationFunction", "RecordMissedChecksFunction",
                                      "CloseWindowFunction"])
def test_each_built_handler_imports_on_python313_with_only_its_layer_and_the_runtime_sdk(artifacts, function):
    # Lambda's path order: the function, the layer, the runtime's packages; no project virtualenv.
    paths = [str(artifacts / function), str(LAYER / "python"), str(RUNTIME_DIR / "python")]
    code = (
        "import sys; sys.path[:0] = " + repr(paths) + "\n"
        "import app, aws_xray_sdk.core, botocore, zoneinfo\n"
        "assert callable(app.handler)\n"
        "assert botocore.__file__.startswith(" + repr(str(RUNTIME_DIR)) + ")\n"
        "zoneinfo.ZoneInfo('Europe/Berlin')\n"
    )
    env = {"PATH": os.environ.get("PATH", ""), "AWS_DEFAULT_REGION": "eu-central-1", "TABLE_NAME": "table",
           "POWERTOOLS_SERVICE_NAME": "missed-checks", "POWERTOOLS_METRICS_NAMESPACE": "MissedChecks"}
    python313 = (RUNTIME_DIR / "python313").read_text().strip()
    result = subprocess.run([python313, "-I", "-S", "-B", "-c", code], capture_output=True, text=True, env=env,
                            cwd=artifacts, check=False, timeout=120)
    assert result.returncode == 0, result.stderr
