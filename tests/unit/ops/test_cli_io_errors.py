"""Every I/O failure and every oversized item is one line naming the file or field (issue 22):
no traceback, the documented exit code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from missed_checks_ops.cli.main import main

RULE = ["--recurrence", "DTSTART:20260105T060000Z", "--recurrence", "RRULE:FREQ=DAILY"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    err = capsys.readouterr().err
    return code, err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_a_scenario_that_is_not_utf8_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "latin1.json"
    scenario.write_bytes('{"name": "Pr\xfcfung"}'.encode("latin-1"))
    code, err = run(capsys, "local", "run", str(scenario))
    assert code == 2
    assert one_line(err) == (f"missed-checks: error: SCENARIO: {scenario} is not UTF-8 text (byte 0xfc at offset 12)")


def test_a_file_that_is_not_utf8_names_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    equipment = tmp_path / "fleet.txt"
    equipment.write_bytes(b"FL-1\nFL-\xff\n")
    code, err = run(capsys, "equipment", "assign", "--checklist", "c", "--file", str(equipment),
                    "--table", "t", "--region", "eu-west-1")
    assert code == 2
    assert one_line(err) == f"missed-checks: error: file: {equipment} is not UTF-8 text (byte 0xff at offset 8)"


def test_reading_a_closed_standard_input(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", None)  # what Python gives a process started with stdin closed
    code, err = run(capsys, "checklist", "put", "--file", "-", "--dry-run")
    assert code == 2
    assert one_line(err) == "missed-checks: error: file: standard input is closed: give a file, or pipe the text in"


def test_a_full_disk_and_an_unwritable_path_name_the_output(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(capsys, "checklist", "put", "c", *RULE, "--dry-run", "--output", "/dev/full")
    assert code == 3  # the file opened: the work was done, its output lost (exit 2 is for a path refused at once)
    assert one_line(err) == ("missed-checks: error: output: cannot write /dev/full: No space left on device "
                             "(the command's work is done: only its output is lost)")
    missing = tmp_path / "no-such-dir" / "out.json"
    code, err = run(capsys, "checklist", "put", "c", *RULE, "--dry-run", "--output", str(missing))
    assert code == 2
    assert one_line(err).startswith(f"missed-checks: error: output: cannot write {missing}: No such file")
    (tmp_path / "file.txt").write_text("")  # a file where a directory is needed
    code, err = run(capsys, "local", "demo", "--log-file", str(tmp_path / "file.txt" / "x.log"))
    assert code == 2
    assert one_line(err).startswith(f"missed-checks: error: log-file: cannot write {tmp_path / 'file.txt'}")


@pytest.mark.stack  # starts a process
def test_standard_output_on_a_full_disk_is_one_line() -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-c", "import sys; from missed_checks_ops.cli.main import main; "
                               "sys.exit(main())", "local", "demo", "--show-scenario"],
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=120, check=False)
    assert done.returncode == 3
    assert one_line(done.stderr) == ("missed-checks: error: output: cannot write standard output: No space left on "
                                     "device (the command's work is done: only its output is lost)")


def test_an_item_over_400_kb_names_its_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "big.json"
    spec.write_text(json.dumps({"id": "big", "name": "x" * 410_000, "recurrence": "\n".join(RULE[1::2])}))
    code, err = run(capsys, "checklist", "put", "--file", str(spec), "--dry-run")
    assert code == 2
    assert one_line(err) == ("missed-checks: error: name: is 400 KB: one item of the table holds at most 400 KB, "
                             "all its fields together")
    code, err = run(capsys, "missed", "dismiss", "--checklist", "c", "--equipment", "e", "--window-start",
                    "2026-03-02T06:00:00Z", "--reason", "r" * 205_000, "--by", "b" * 204_000,
                    "--table", "t", "--region", "eu-west-1")
    assert code == 2
    assert one_line(err).startswith("missed-checks: error: reason: is 200 KB")


def test_an_oversized_scenario_event_names_the_event_and_field() -> None:
    from missed_checks.errors import InvalidInput
    from missed_checks_local.product.scenario import Scenario

    data = {"start": "2026-03-01T00:00:00Z", "end": "2026-03-02T00:00:00Z", "events": [
        {"at": "2026-03-01T09:00:00Z", "put_checklist": {"id": "c", "recurrence": "\n".join(RULE[1::2]),
                                                         "name": "n" * 410_000}}]}
    with pytest.raises(InvalidInput) as error:
        Scenario.from_dict(data)
    assert error.value.field == "events[0].put_checklist.name"


def test_each_local_run_has_a_log_file_of_its_own(tmp_path: Path) -> None:
    from missed_checks_ops.cli.local import _default_log

    first, second = _default_log(None), _default_log(None)
    try:
        assert first != second and first.name.startswith("missed-checks-local-") and first.suffix == ".log"
    finally:
        first.unlink()
        second.unlink()
    chosen = tmp_path / "logs" / "mine.log"
    assert _default_log(chosen) == chosen and chosen.read_text() == ""  # --log-file says otherwise
