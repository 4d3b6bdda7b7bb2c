"""The emulator's processes run with the garbage-collector thresholds it sets (GC_THRESHOLDS)."""

from __future__ import annotations

import argparse
import gc

from missed_checks_local import GC_THRESHOLDS
from missed_checks_ops.cli.common import subcommands
from missed_checks_ops.cli.local import _emulator
from missed_checks_ops.cli.main import build_parser


def test_every_local_command_runs_with_the_emulators_thresholds() -> None:
    local = subcommands(build_parser(["local"]))["local"]
    handlers = {name: parser.get_default("handler") for name, parser in subcommands(local).items()}
    assert set(handlers) == {"run", "demo", "serve", "chaos", "advance", "token"}
    for name in ("advance", "token"):  # clients of a running serve: they run no emulator in their process
        assert handlers.pop(name).__code__ is not _emulator(print).__code__
    assert {h.__code__ for h in handlers.values()} == {_emulator(print).__code__}  # each wrapped by _emulator
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        seen: list[tuple[int, ...]] = []
        assert _emulator(lambda args: seen.append(gc.get_threshold()) or 3)(argparse.Namespace()) == 3
        assert seen == [GC_THRESHOLDS]
    finally:
        gc.set_threshold(*before)
