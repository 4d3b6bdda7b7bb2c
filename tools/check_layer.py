"""Check what `sam build` produced: the DomainLayer's contents and size, and the functions' sizes.

    .venv/bin/python tools/check_layer.py [--build-dir .aws-sam/build] [--layer DomainLayer] [--max-mb 10]

Prints the layer's unzipped size, its top-level packages with their sizes and each function's size,
then fails (exit 1, saying why) when the layer
  - lacks the product package ``missed_checks``;
  - holds something the Lambda runtime provides or that must never ship (boto3, botocore,
    s3transfer, missed_checks_local, missed_checks_ops, pytest, moto);
  - is larger than ``--max-mb`` unzipped;
  - holds a wheel built for another platform than Lambda's python3.13 on arm64;
  - disagrees with its lock file (src/layer-requirements.txt): a package installed at another
    version or not pinned, a pin outside pyproject.toml's range, or a dependency declared by a
    pinned package (its real metadata, read from the layer) that is neither pinned nor provided by
    the runtime (lambda-runtime/requirements.txt) at a version it accepts.
Exit 2: nothing built (run `make build`).
"""

from __future__ import annotations

import argparse
import email.parser
import re
import sys
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
LAYER_LOCK = ROOT / "src" / "layer-requirements.txt"
RUNTIME_LOCK = ROOT / "lambda-runtime" / "requirements.txt"
PYPROJECT = ROOT / "pyproject.toml"

PRODUCT_PACKAGE = "missed_checks"
FORBIDDEN = ("boto3", "botocore", "s3transfer", "missed_checks_local", "missed_checks_ops", "pytest", "moto")
MAX_MB = 10.0
MB = 1024 * 1024

# The functions' platform: Lambda python3.13 on arm64 (markers of Requires-Dist are read for it).
LAMBDA_MARKER_ENVIRONMENT = {
    "implementation_name": "cpython",
    "implementation_version": "3.13.0",
    "os_name": "posix",
    "platform_machine": "aarch64",
    "platform_python_implementation": "CPython",
    "platform_release": "",
    "platform_system": "Linux",
    "platform_version": "",
    "python_full_version": "3.13.0",
    "python_version": "3.13",
    "sys_platform": "linux",
}

_DIST_INFO = re.compile(r"^(?P<name>.+?)-(?P<version>[^-]+)\.dist-info$")


@dataclass(frozen=True)
class Pin:
    name: str  # canonical
    version: Version
    extras: frozenset[str] = frozenset()


@dataclass
class Report:
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


# --- sizes and contents --------------------------------------------------------------------------

def tree_size(path: Path) -> int:
    """Bytes of every file under ``path`` (or of ``path`` itself), symlinks not followed."""
    if not path.is_dir() or path.is_symlink():
        return path.lstat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*") if not p.is_dir() or p.is_symlink())


def human(size: int) -> str:
    return f"{size / MB:.2f} MB" if size >= MB else f"{size / 1024:.1f} KB"


def bytecode_caches(root: Path) -> list[Path]:
    return sorted(root.rglob("__pycache__"))


def package_dirs(layer: Path) -> list[Path]:
    """The directories of the layer that Lambda puts on sys.path for python3.13."""
    python = layer / "python"
    return [d for d in (python, python / "lib" / "python3.13" / "site-packages") if d.is_dir()]


def top_level_name(entry: Path) -> str:
    """Importable name of a top-level entry (``foo/``, ``foo.py``, ``_foo.cpython-313-...so``)."""
    return entry.name.split(".", 1)[0] if entry.is_file() else entry.name


def distributions(layer: Path) -> dict[str, tuple[Version, Path]]:
    """Canonical distribution name -> (version, dist-info directory) for every dist-info in the layer."""
    found = {}
    for directory in package_dirs(layer):
        for info in directory.glob("*.dist-info"):
            match = _DIST_INFO.match(info.name)
            if match:
                found[canonicalize_name(match["name"])] = (Version(match["version"]), info)
    return found


def runs_on_lambda(tag: str) -> bool:
    """Whether wheel tag ``interpreter-abi-platform`` suits Lambda python3.13 on arm64 (glibc)."""
    parts = tag.split("-")
    if len(parts) != 3:
        return False
    interpreters, abis, platforms = (set(part.split(".")) for part in parts)
    # abi3 wheels built for CPython 3.X run on any later 3.Y.
    stable = {f"cp3{minor}" for minor in range(2, 14)} if "abi3" in abis else set()
    return (bool(interpreters & ({"py3", "cp313"} | stable)) and bool(abis & {"none", "abi3", "cp313"})
            and any(p == "any" or (p.startswith("manylinux") and p.endswith("_aarch64")) for p in platforms))


def wrong_platform(layer: Path) -> list[str]:
    """Installed wheels (their dist-info WHEEL tags) that cannot run on Lambda python3.13/arm64."""
    wrong = []
    for name, (version, info) in sorted(distributions(layer).items()):
        wheel = info / "WHEEL"
        if not wheel.is_file():
            continue
        tags = [line.split(":", 1)[1].strip() for line in wheel.read_text().splitlines() if line.startswith("Tag:")]
        if tags and not any(runs_on_lambda(tag) for tag in tags):
            wrong.append(f"{layer}: {name} {version} is built for {', '.join(tags)}, not CPython 3.13 on arm64 Linux")
    return wrong


def check_contents(layer: Path, max_mb: float, report: Report) -> None:
    """Size, packages, forbidden packages and wheel platforms of the layer at ``layer``."""
    total = tree_size(layer)
    report.lines.append(f"{layer.name} ({layer}): {total / MB:.2f} MB unzipped (limit {max_mb:g} MB)")
    names: set[str] = set()
    for directory in package_dirs(layer):
        entries = [e for e in directory.iterdir() if e != directory / "lib"]
        infos = [e for e in entries if e.name.endswith(".dist-info")]
        packages = sorted((e for e in entries if e not in infos), key=lambda e: (-tree_size(e), e.name))
        for entry in packages:
            rel = entry.relative_to(layer)
            report.lines.append(f"  {str(rel) + ('/' if entry.is_dir() else ''):<48} {human(tree_size(entry)):>10}")
            if entry.name != "__pycache__":
                names.add(top_level_name(entry))
        if infos:
            size = sum(tree_size(e) for e in infos)
            label = f"{directory.relative_to(layer)}/*.dist-info ({len(infos)})"
            report.lines.append(f"  {label:<48} {human(size):>10}")
    dists = set(distributions(layer))
    if not package_dirs(layer):
        report.problems.append(f"{layer}: no python/ directory: not a Python layer")
    if PRODUCT_PACKAGE not in names:
        report.problems.append(f"{layer}: lacks the product package {PRODUCT_PACKAGE} (python/{PRODUCT_PACKAGE}/)")
    for name in FORBIDDEN:
        if name in names or canonicalize_name(name) in dists:
            report.problems.append(f"{layer}: contains {name}, which must not be in the layer")
    if total > max_mb * MB:
        report.problems.append(f"{layer}: {total / MB:.2f} MB unzipped, over the {max_mb:g} MB limit")
    report.problems.extend(wrong_platform(layer))


# --- lock file consistency -----------------------------------------------------------------------

def read_pins(path: Path) -> dict[str, Pin]:
    """``name[extras]==version`` lines of a lock file; anything looser is an error."""
    pins = {}
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            requirement = Requirement(line)
        except InvalidRequirement as error:
            raise ValueError(f"{path}:{number}: {error}") from None
        specifiers = list(requirement.specifier)
        if requirement.marker or len(specifiers) != 1 or specifiers[0].operator != "==" or "*" in specifiers[0].version:
            raise ValueError(f"{path}:{number}: {line!r} is not an exact pin (name==version, no markers)")
        name = canonicalize_name(requirement.name)
        if name in pins:
            raise ValueError(f"{path}:{number}: {requirement.name} is pinned twice")
        pins[name] = Pin(name, Version(specifiers[0].version), frozenset(requirement.extras))
    return pins


def project_requirements(pyproject: Path) -> dict[str, Requirement]:
    """pyproject.toml's runtime dependencies, by canonical name."""
    dependencies = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    return {canonicalize_name(r.name): r for r in map(Requirement, dependencies)}


def declared_dependencies(metadata: str, extras: Iterable[str]) -> list[Requirement]:
    """Requires-Dist of a METADATA text that apply on Lambda python3.13/arm64 with ``extras``."""
    message = email.parser.Parser().parsestr(metadata, headersonly=True)
    applicable = []
    for value in message.get_all("Requires-Dist") or []:
        requirement = Requirement(value)
        marker: Marker | None = requirement.marker
        if marker is None or any(
            marker.evaluate({**LAMBDA_MARKER_ENVIRONMENT, "extra": extra}) for extra in ("", *extras)
        ):
            applicable.append(requirement)
    return applicable


def lock_problems(
    layer_pins: Mapping[str, Pin],
    runtime_pins: Mapping[str, Pin],
    project: Mapping[str, Requirement],
    metadata: Mapping[str, str],
) -> list[str]:
    """Why the layer lock is inconsistent (empty when it is consistent).

    ``metadata``: METADATA text of each pinned package (canonical name), as installed.
    """
    problems = []
    for name in sorted(set(layer_pins) & set(runtime_pins)):
        problems.append(f"layer lock: {name} is provided by the Lambda runtime; remove it from the layer lock")
    for pins, what in ((layer_pins, "layer lock"), (runtime_pins, "runtime lock")):
        for name, pin in sorted(pins.items()):
            wanted = project.get(name)
            if wanted is None:
                continue
            if not wanted.specifier.contains(pin.version, prereleases=True):
                problems.append(f"{what}: {name}=={pin.version} is outside pyproject.toml's {wanted}")
            if not set(map(canonicalize_name, wanted.extras)) <= set(map(canonicalize_name, pin.extras)):
                problems.append(f"{what}: {name} lacks pyproject.toml's extras [{','.join(sorted(wanted.extras))}]")
    available = {**runtime_pins, **layer_pins}
    for name, pin in sorted(layer_pins.items()):
        if name not in metadata:
            problems.append(f"layer lock: no metadata for {name}=={pin.version} (not installed in the layer?)")
            continue
        for requirement in declared_dependencies(metadata[name], pin.extras):
            dependency = canonicalize_name(requirement.name)
            provider = available.get(dependency)
            if provider is None:
                problems.append(f"layer lock: {name}=={pin.version} needs {requirement}, "
                                "which is neither pinned nor provided by the Lambda runtime")
            elif not requirement.specifier.contains(provider.version, prereleases=True):
                where = "pinned" if dependency in layer_pins else "the runtime's"
                problems.append(f"layer lock: {name}=={pin.version} needs {requirement}, "
                                f"but {where} {dependency} is {provider.version}")
    return problems


def check_lock(layer: Path, report: Report, layer_lock: Path = LAYER_LOCK, runtime_lock: Path = RUNTIME_LOCK,
               pyproject: Path = PYPROJECT) -> None:
    """The layer's installed distributions against its lock, and the lock against its dependencies."""
    try:
        layer_pins, runtime_pins = read_pins(layer_lock), read_pins(runtime_lock)
    except ValueError as error:
        report.problems.append(str(error))
        return
    installed = distributions(layer)
    for name, (version, _) in sorted(installed.items()):
        pin = layer_pins.get(name)
        if pin is None:
            report.problems.append(f"{layer}: {name} {version} is installed but not in {layer_lock.name}")
        elif pin.version != version:
            report.problems.append(f"{layer}: {name} is {version}, {layer_lock.name} pins {pin.version}")
    metadata = {name: (info / "METADATA").read_text() for name, (_, info) in installed.items()
                if (info / "METADATA").is_file()}
    report.problems.extend(lock_problems(layer_pins, runtime_pins, project_requirements(pyproject), metadata))


# --- the whole build -----------------------------------------------------------------------------

def check_build(build_dir: Path, layer_name: str = "DomainLayer", max_mb: float = MAX_MB, lock: bool = True) -> Report:
    report = Report()
    layer = build_dir / layer_name
    if not layer.is_dir():
        report.problems.append(f"{layer}: no such layer build (run `make build`)")
        return report
    check_contents(layer, max_mb, report)
    if lock:
        check_lock(layer, report)
    functions = sorted(d for d in build_dir.iterdir() if d.is_dir() and d.name != layer_name)
    if functions:
        report.lines.append("functions (unzipped):")
        for function in functions:
            report.lines.append(f"  {function.name:<48} {human(tree_size(function)):>10}")
    caches = [c for d in (layer, *functions) for c in bytecode_caches(d)]
    if caches:  # not what `sam build` wrote (bytecode of whatever Python ran on the build): not shipped
        report.problems.append(f"{len(caches)} __pycache__ director{'y' if len(caches) == 1 else 'ies'} in the "
                            f"build (first: {caches[0].relative_to(build_dir)}); run Python on it with -B or "
                            "PYTHONPYCACHEPREFIX, or rebuild (rm -rf .aws-sam/build && make build)")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--build-dir", type=Path, default=ROOT / ".aws-sam" / "build")
    parser.add_argument("--layer", default="DomainLayer", help="the layer's logical id (its build directory)")
    parser.add_argument("--max-mb", type=float, default=MAX_MB, help="largest unzipped layer allowed")
    parser.add_argument("--no-lock", action="store_true", help="skip the lock file consistency check")
    args = parser.parse_args(argv)
    if not args.build_dir.is_dir():
        print(f"check_layer: {args.build_dir} does not exist: run `make build` first", file=sys.stderr)
        return 2
    report = check_build(args.build_dir, args.layer, args.max_mb, lock=not args.no_lock)
    print("\n".join(report.lines))
    if report.problems:
        print(f"check_layer: {len(report.problems)} problem(s):", file=sys.stderr)
        for problem in report.problems:
            print(f"  - {problem}", file=sys.stderr)
        return 1
    print(f"check_layer: OK ({args.layer} has {PRODUCT_PACKAGE}, nothing the runtime provides, "
          f"within {args.max_mb:g} MB, matches its lock)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
