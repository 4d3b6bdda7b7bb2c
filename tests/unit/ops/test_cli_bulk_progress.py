"""A long command that is stopped or fails part way says what it wrote (issue #22)."""

from __future__ import annotations

import signal

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


def _write_in_batches(advance: object, written: list[str], ids: list[str], *, batch: int,
                      signals: dict[int, signal.Signals]) -> None:
    """Write ``ids`` a batch at a time, one id after another inside a batch, raising each of
    ``signals`` when that many ids are written (as a Ctrl-C lands wherever the writer is)."""
    for offset in range(0, len(ids), batch):
        for item in ids[offset:offset + batch]:
            written.append(item)
            if len(written) in signals:
                signal.raise_signal(signals[len(written)])
        advance(len(ids[offset:offset + batch]))  # type: ignore[operator]


def test_a_ctrl_c_inside_a_batch_stops_once_the_batch_is_written_and_said_exactly(
        capsys: pytest.CaptureFixture[str]) -> None:
    written: list[str] = []
    with pytest.raises(KeyboardInterrupt), bulk_progress("writing", "checklists", IDS[:100]) as advance:
        _write_in_batches(advance, written, IDS[:100], batch=25, signals={29: signal.SIGINT})
    assert len(written) == 50  # the batch the Ctrl-C landed in was finished, and counted; no more
    assert capsys.readouterr().err == (
        "missed-checks: wrote 50 of 100 checklists: site-0000 .. site-0049 (50, in the file's order); "
        "not written: site-0050 .. site-0099 (50, in the file's order)\n")


def test_sigterm_stops_a_bulk_write_between_batches_too(capsys: pytest.CaptureFixture[str]) -> None:
    def interrupt(*_: object) -> None:  # what main() makes of SIGTERM in the console script
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        written: list[str] = []
        with pytest.raises(KeyboardInterrupt), bulk_progress("assigning", "equipment ids", IDS[:60],
                                                             in_order=False) as advance:
            _write_in_batches(advance, written, IDS[:60], batch=25, signals={3: signal.SIGTERM})
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert len(written) == 25
    assert capsys.readouterr().err.startswith("missed-checks: stopped after 25 of 60 equipment ids;")
    assert signal.getsignal(signal.SIGTERM) is previous


def test_a_ctrl_c_in_the_last_batch_writes_it_all_and_still_stops(capsys: pytest.CaptureFixture[str]) -> None:
    written: list[str] = []
    with pytest.raises(KeyboardInterrupt), bulk_progress("writing", "checklists", IDS[:30]) as advance:
        _write_in_batches(advance, written, IDS[:30], batch=25, signals={27: signal.SIGINT})
    assert len(written) == 30
    assert capsys.readouterr().err == ("missed-checks: wrote 30 of 30 checklists: site-0000 .. site-0029 "
                                       "(30, in the file's order); not written: none\n")


def test_a_second_ctrl_c_stops_at_once_and_says_the_batch_may_be_partly_written(
        capsys: pytest.CaptureFixture[str]) -> None:
    written: list[str] = []
    with pytest.raises(KeyboardInterrupt), bulk_progress("writing", "checklists", IDS[:100]) as advance:
        _write_in_batches(advance, written, IDS[:100], batch=25, signals={29: signal.SIGINT, 31: signal.SIGINT})
    assert len(written) == 31
    err = capsys.readouterr().err
    assert err.startswith("missed-checks: wrote 25 of 100 checklists:") and "may be written in part" in err
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
