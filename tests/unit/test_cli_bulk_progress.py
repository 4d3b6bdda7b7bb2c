"""A long command that is stopped or fails part way says what it wrote (issue #22)."""

from __future__ import annotations

import pytest

from missed_checks_ops.cli.common import bulk_progress, written_so_far

IDS = [f"site-{n:04d}" for n in range(1000)]


def test_a_stopped_bulk_write_says_which_ids_were_written_and_which_not(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(KeyboardInterrupt), bulk_progress("writing checklists", "checklists", IDS) as advance:
        for _ in range(412):
            advance(1)
        raise KeyboardInterrupt
    err = capsys.readouterr().err
    assert err == ("missed-checks: wrote 412 of 1000 checklists: site-0000 .. site-0411 (412, in the file's order); "
                   "not written: site-0412 .. site-0999 (588, in the file's order)\n")


def test_a_failed_bulk_write_lists_few_ids_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(RuntimeError), bulk_progress("writing", "checklists", ["a", "b", "c"]) as advance:
        advance(1)
        raise RuntimeError("throttled")
    assert capsys.readouterr().err == "missed-checks: wrote 1 of 3 checklists: a; not written: b, c\n"


def test_a_complete_bulk_write_prints_nothing_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    with bulk_progress("writing", "checklists", ["a", "b"]) as advance:
        advance(2)
    assert capsys.readouterr().err == ""


def test_a_write_in_the_store_s_order_says_the_counts_and_how_to_finish() -> None:
    said = written_so_far("equipment ids", IDS, 250, in_order=False)
    assert said.startswith("stopped after 250 of 1000 equipment ids;") and "the same command again" in said
