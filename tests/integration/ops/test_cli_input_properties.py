"""Hostile input, generated, through the command line against a stack (issue 22, "nothing silently
wrong"): options and input files (YAML for ``checklist put --file``, CSV for ``check import``) either
give exit 2 with one line naming the option or field, or exit 0 with an effect that reads back
unchanged (what was given is what the table holds). Never exit 1, never a traceback (an exception
out of ``main`` fails the example). The number of examples: the hypothesis profile (tests/conftest.py:
``ci`` 200 each, ``quick`` 20, ``dev`` 5,000).

Every example writes ids of its own (a counter), so the examples need no clean stack between them:
the runtime fixture's stack is emptied once per test, as for any test on it.
"""

from __future__ import annotations

import csv
import itertools
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from missed_checks.aws.table import ChecklistTable
from missed_checks_local.runtime import LocalRuntime
from tests.integration.ops.ops_support import TARGET, Cli, Result

SETTINGS = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.data_too_large])
ONE_ERROR = re.compile(r"missed-checks: error: (?P<field>[^:\s]+): ")
NUMBERS = itertools.count()
ZONES = ["Europe/Berlin", "UTC", "America/New_York", "Asia/Kolkata"]


def mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any], good_in_ten: int = 6) -> st.SearchStrategy[Any]:
    return st.integers(0, 9).flatmap(lambda n: good if n < good_in_ten else bad)


odd = st.one_of(st.integers(-10**20, 10**20), st.floats(allow_nan=True), st.booleans(), st.none(),
                st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
                st.dates(), st.datetimes(timezones=st.just(UTC)))
hostile_text = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", " ", "\t", "yes", "no", "on", "null", "~", "0o17", "017", "1.10", "1e3", "2026-03-01",
                     "x\ny", "x\x00y", "\u2028", "\ufeffname", "a" * 300, "é" * 70, "'quoted'", '"', "- list",
                     "key: value", "&anchor", "*alias", "!!python/object:os.system", "%YAML 1.1", "---", "..."]),
)


def _text_fields(draw: st.DrawFn, good_in_ten: int = 8) -> dict[str, Any]:
    """name, timezone, window and grace: each plausible ``good_in_ten`` times in ten, else hostile."""
    def mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.integers(0, 9).flatmap(lambda n: good if n < good_in_ten else bad)

    return {
        "name": draw(mostly(st.sampled_from(["Forklift pre-use check", "Site 7 — Prüfung", "  padded  "]),
                            st.one_of(hostile_text, odd))),
        "timezone": draw(mostly(st.sampled_from(ZONES), st.one_of(hostile_text, odd,
                                                                  st.sampled_from(["Europe", "../etc/passwd",
                                                                                   "Mars/Olympus"])))),
        "window": draw(mostly(st.sampled_from(["PT8H", "P1D", "PT30M"]), st.one_of(
            hostile_text, odd, st.sampled_from(["PT0S", "-PT1H", "P400D", "PT99999999999999999999H", "P1M"])))),
        "grace": draw(mostly(st.sampled_from(["PT0S", "PT30M"]), st.one_of(hostile_text, odd))),
    }


RECURRENCES = ["DTSTART:20260302T060000Z\nRRULE:FREQ=DAILY",
               "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
               "DTSTART:20260302T060000\nRRULE:FREQ=MONTHLY;BYMONTHDAY=-1"]


@st.composite
def checklist_entries(draw: st.DrawFn, number: int) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": draw(mostly(st.just(f"prop-{number}"), st.one_of(
        hostile_text, odd, st.sampled_from([f"prop-{number}\n", f" prop-{number}", f"prop/{number}"])), 8))}
    entry["recurrence"] = draw(mostly(st.sampled_from(RECURRENCES), st.one_of(
        hostile_text, odd, st.sampled_from(RECURRENCES).map(lambda r: r.split("\n")),
        st.sampled_from(RECURRENCES).map(lambda r: r + "\n")), 7))
    for key, value in _text_fields(draw).items():
        if draw(st.integers(0, 3)):
            entry[key] = value
    if draw(st.integers(0, 9)) == 0:
        entry[draw(st.sampled_from(["nmae", "closed_on", "notify", "checklist_id", "extra"]))] = draw(
            st.one_of(hostile_text, odd))
    return entry


def _read_back(cli: Cli, checklist_id: str) -> dict[str, Any]:
    shown = cli("checklist", "show", checklist_id, "--format", "json")
    assert shown.code == 0, shown.err
    return dict(shown.json)


def _exit_2_naming(result: Result, fields: set[str]) -> str:
    """The one line of an exit 2, and that its field is one of ``fields`` (or one of them in a list
    entry, ``entries[1].window``)."""
    assert result.code == 2, (result.code, result.err)
    lines = result.err.strip().splitlines()
    assert result.out == "" and lines and "Traceback" not in result.err, result.err
    found = ONE_ERROR.match(lines[0])
    assert found, result.err
    # one entry of a list (entries[1].window), one element of a field's list (closed_on[0])
    field = re.sub(r"\[\d+\]$", "", re.sub(r"^entries\[\d+\]\.", "", found["field"]))
    # a notify block's unknown setting is named as itself (notify.<key>)
    assert field in fields or (field.startswith("notify.") and "notify" in fields), (field, result.err)
    event(f"exit 2 naming {field}")
    return field


def _as_given(value: Any) -> str:
    return value.strip() if isinstance(value, str) else value


@SETTINGS
@given(data=st.data())
def test_any_checklist_file_is_refused_naming_a_field_or_reads_back_as_written(
        runtime: LocalRuntime, cli: Cli, tmp_path: Path, data: st.DataObject) -> None:
    number = next(NUMBERS)
    entries = [data.draw(checklist_entries(number * 10 + n), label=f"entry {n}")
               for n in range(data.draw(st.integers(1, 2), label="entries"))]
    document: Any = entries if len(entries) > 1 or data.draw(st.booleans(), label="as a list") else entries[0]
    path = tmp_path / f"checklists-{number}.yaml"
    if data.draw(st.integers(0, 9), label="raw") == 0:  # text no YAML writer would produce
        text = data.draw(st.sampled_from([
            "id: a\nid: b\nrecurrence: x\n", "- &a {id: x}\n- *a\n", "!!python/object/apply:os.system [true]\n",
            "{id: [unclosed\n", "\ufeffid: bom-{n}\nrecurrence: 'DTSTART:20260302T060000Z\\nRRULE:FREQ=DAILY'\n",
            "id: tab-{n}\n\trecurrence: x\n", "---\nid: a\n---\nid: b\n", "", "\x00", "[]", "42"]))
        path.write_text(text.replace("{n}", str(number)), encoding="utf-8")
        given_entries: list[dict[str, Any]] | None = None
    else:
        path.write_text(yaml.safe_dump(document, allow_unicode=data.draw(st.booleans(), label="unicode")),
                        encoding="utf-8")
        given_entries = entries
    result = cli("checklist", "put", "--file", str(path), "--format", "json")
    assert result.code in (0, 2), (result.code, result.err)
    if result.code == 2:
        _exit_2_naming(result, {"file", "id", "name", "recurrence", "timezone", "window", "grace", "closed_on",
                                "notify", "notify.to", "entries"} | {f"notify.{k}" for k in ("remind_before",)})
        return
    event("exit 0")
    put = result.json if isinstance(result.json, list) else [result.json]
    assert given_entries is not None or put, result.out
    for index, written in enumerate(put):
        stored = _read_back(cli, written["checklist_id"])
        if given_entries is None:
            continue
        entry = given_entries[index]
        assert stored["checklist_id"] == _as_given(entry["id"])
        recurrence = entry["recurrence"]
        assert stored["recurrence"] == ("\n".join(recurrence) if isinstance(recurrence, list) else
                                        recurrence.strip()), (stored, entry)
        for key in ("name", "timezone", "window", "grace"):
            if key in entry and entry[key] is not None:
                assert stored.get(key) == _as_given(entry[key]), (key, stored.get(key), entry[key])


# -- the options of checklist put -------------------------------------------------------------------
@SETTINGS
@given(data=st.data())
def test_any_checklist_options_are_refused_naming_one_or_read_back_as_given(
        runtime: LocalRuntime, cli: Cli, data: st.DataObject) -> None:
    number = next(NUMBERS)
    checklist_id = data.draw(mostly(st.just(f"opt-{number}"), st.one_of(hostile_text, st.just(f"opt-{number} ")), 8),
                             label="id")
    recurrence = data.draw(mostly(st.sampled_from(RECURRENCES).map(lambda r: r.replace("\n", "\\n")),
                                  hostile_text, 8), label="recurrence")
    fields = {key: value for key, value in _text_fields(data.draw).items()
              if isinstance(value, str) and data.draw(st.booleans(), label=f"give --{key}")}
    argv = ["checklist", "put", f"--recurrence={recurrence}", "--format", "json", *(f"--{k}={v}" for k, v in
                                                                                   fields.items())]
    if checklist_id.startswith("-"):  # after "--" every word is an argument: the stack's options come first
        result = cli(*argv, *TARGET, "--", checklist_id, target=False)
    else:
        argv.insert(2, checklist_id)
        result = cli(*argv)
    assert result.code in (0, 2), (result.code, result.err)
    if result.code == 2:
        _exit_2_naming(result, {"id", "checklist_id", "arguments", "recurrence", "name", "timezone", "window", "grace",
                                "usage", "command", "format"})
        return
    event("exit 0")
    stored = _read_back(cli, result.json["checklist_id"])
    assert stored["checklist_id"] == checklist_id
    assert stored["recurrence"] == recurrence.replace("\\n", "\n")
    for key, value in fields.items():
        if value:  # an empty option is no option
            assert stored.get(key) == value, (key, stored.get(key), value)


# -- check import ------------------------------------------------------------------------------------
EQUIPMENT = [f"EQ-{n}" for n in range(5)]
MONDAY = datetime(2026, 3, 2, 6, 0, tzinfo=UTC)


def instants() -> st.SearchStrategy[str]:
    good = st.tuples(st.integers(0, 8 * 60 - 1), st.sampled_from(["Z", "+00:00", "+01:00", "-05:00"])).map(
        lambda t: _instant(MONDAY + timedelta(minutes=t[0]), t[1]))
    bad = st.one_of(hostile_text, st.sampled_from([
        "2026-03-02T07:00:00", "2026-03-02", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2099-01-01T00:00:00Z",
        "2026-02-30T07:00:00Z", "2026-03-02T25:00:00Z", "2026-03-02 07:00:00Z", "2026-03-02T07:00:00.123456789Z",
        "1772434800", "now", "2026-03-02T07:00:00+24:00", "2025-01-01T00:00:00Z"]))
    return mostly(good, bad, 7)


def _instant(moment: datetime, offset: str) -> str:
    if offset == "Z":
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    sign, hours, minutes = offset[0], int(offset[1:3]), int(offset[4:6])
    delta = timedelta(hours=hours, minutes=minutes) * (1 if sign == "+" else -1)
    return (moment + delta).strftime("%Y-%m-%dT%H:%M:%S") + offset


@st.composite
def csv_files(draw: st.DrawFn, checklist_id: str) -> tuple[str, list[tuple[str, str, str]]]:
    """(the file's text, the rows as given: checklist, equipment, instant), well formed or not."""
    header = draw(mostly(st.just(["checklist_id", "equipment_id", "performed_at"]), st.one_of(
        st.permutations(["checklist_id", "equipment_id", "performed_at"]).map(list),
        st.just(["checklist", "equipment", "at"]), st.just(["checklist_id", "equipment_id", "performed_at", "note"]),
        st.just(["checklist_id", "equipment_id"]), st.lists(hostile_text, max_size=3))))
    rows: list[tuple[str, str, str]] = []
    lines = [",".join(header)]
    for _ in range(draw(st.integers(0, 6))):
        row = (draw(mostly(st.just(checklist_id), st.one_of(hostile_text, st.just(checklist_id.upper())), 8)),
               draw(mostly(st.sampled_from(EQUIPMENT), st.one_of(hostile_text, st.sampled_from(
                   [" EQ-1", "EQ-1 ", "eq-1", "EQ-99", "EQ-1\nEQ-2", "EQ,1", '"EQ-1"'])), 7)),
               draw(instants()))
        rows.append(row)
        values = dict(zip(["checklist_id", "equipment_id", "performed_at"], row, strict=True))
        aliases = {"checklist": "checklist_id", "equipment": "equipment_id", "at": "performed_at"}
        cells = [values.get(aliases.get(name, name), draw(hostile_text)) for name in header]
        quote = draw(st.booleans())
        lines.append(",".join('"' + cell.replace('"', '""') + '"' if quote else cell for cell in cells))
        if not quote and row[1].startswith('"') and "\n" not in row[1]:
            # an unquoted cell that starts with a quote is a quoted one to a CSV reader ("EQ-1" reads EQ-1)
            rows[-1] = (row[0], next(csv.reader([row[1]]))[0], row[2])
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from(["", ",,", "   ", "#comment", "\x00"])))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    bom = "\ufeff" if draw(st.integers(0, 9)) == 0 else ""
    return bom + newline.join(lines) + newline, rows


@pytest.fixture
def assigned(runtime: LocalRuntime, cli: Cli) -> str:
    """A checklist (daily, 06:00-14:00 UTC) with EQUIPMENT assigned since February, the clock at
    Monday 2 March 14:00 (its first window closed)."""
    assert cli("checklist", "put", "imports", "--recurrence", RECURRENCES[0].replace("\n", "\\n"),
               "--window", "PT8H").code == 0
    assert cli("equipment", "assign", "--checklist", "imports", *EQUIPMENT, "--at", "2026-02-01T00:00:00Z").code == 0
    runtime.advance_to(MONDAY + timedelta(hours=8))
    return "imports"


@SETTINGS
@given(data=st.data())
def test_any_csv_import_is_refused_naming_the_file_or_every_row_reads_back(
        runtime: LocalRuntime, cli: Cli, assigned: str, tmp_path: Path, data: st.DataObject) -> None:
    text, rows = data.draw(csv_files(assigned), label="csv")
    path = tmp_path / f"checks-{next(NUMBERS)}.csv"
    path.write_text(text, encoding="utf-8")
    result = cli("check", "import", str(path), "--format", "json")
    assert result.code in (0, 2), (result.code, result.err)
    if result.code == 2:
        _exit_2_naming(result, {"file"})
        return
    event("exit 0")
    document = result.json
    assert [line for line in result.err.splitlines() if not line.startswith("missed-checks: warning: ")] == []
    table = ChecklistTable(runtime.stack.table_name)
    stored = {(c.equipment_id, c.performed_at) for c in table.performed_checks_of_checklist(
        assigned, MONDAY - timedelta(days=400), MONDAY + timedelta(days=1))}
    given_checks = {(equipment.strip(), datetime.fromisoformat(at.strip().replace("Z", "+00:00")).astimezone(UTC))
                    for _, equipment, at in rows}
    assert given_checks <= stored, (given_checks - stored, text)
    assert document["rows"] == len(rows)
