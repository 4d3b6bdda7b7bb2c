"""Reading what operators hand the command line: checklist files, equipment lists, check CSVs."""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from missed_checks.aws.table.item_size import within_item_size as within_item_size  # the commands' check
from missed_checks.checklists.checklist import validate_checklist_id
from missed_checks.checklists.saving import ITEM_FIELDS, item_fields
from missed_checks.equipment.assignments import validate_equipment_id
from missed_checks.errors import InvalidInput, describe
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks.performed_checks.recording import Row
from missed_checks.timefmt import parse_instant, to_utc_iso

CHECKLIST_FIELDS = ("id", "name", "recurrence", "timezone", "window", "grace", "closed_on")
CSV_COLUMNS = {
    "checklist_id": ("checklist_id", "checklist"),
    "equipment_id": ("equipment_id", "equipment"),
    "performed_at": ("performed_at", "at"),
}
MAX_REPORTED_ERRORS = 10


def read_text(path: str | Path, field: str) -> str:
    """The file's text (UTF-8); ``-`` reads standard input. Every way it cannot be read is one
    :class:`InvalidInput` naming ``field`` and the file."""
    name = "standard input" if str(path) == "-" else str(path)
    try:
        if str(path) == "-":
            if sys.stdin is None or sys.stdin.closed:
                raise InvalidInput(field, "standard input is closed: give a file, or pipe the text in")
            return sys.stdin.buffer.read().decode("utf-8-sig") if hasattr(sys.stdin, "buffer") else sys.stdin.read()
        return Path(path).read_text(encoding="utf-8-sig")
    except InvalidInput:
        raise
    except UnicodeDecodeError as error:
        raise InvalidInput(field, f"{name} is not UTF-8 text (byte 0x{error.object[error.start]:02x} at offset "
                                  f"{error.start})") from None
    except (OSError, ValueError) as error:  # ValueError: a NUL in the name, a closed stream
        raise InvalidInput(field, f"cannot read {name}: {getattr(error, 'strerror', None) or error}") from None


def checklist_specs(path: str) -> list[dict[str, Any]]:
    """One checklist or a list of them from a YAML or JSON file (JSON is YAML); an entry's ``notify``
    (#18) is kept as it came, for :meth:`missed_checks.notifications.notification.NotifySettings.parse`;
    its ``items``, ``pre_use`` and ``clear_on_pass`` (#33) are parsed (a bad item named
    ``items[2].minimum``, in a list ``entries[1].items[2].minimum``)."""
    try:
        document = yaml.safe_load(read_text(path, "file"))
    except yaml.YAMLError as error:
        raise InvalidInput("file", f"{path} is not valid YAML or JSON: {error}") from None
    entries = document if isinstance(document, list) else [document]
    if not entries:
        raise InvalidInput("file", f"{path} holds an empty list: give one checklist (a mapping with id, recurrence, "
                                   "...) or a list of them")
    specs: list[dict[str, Any]] = []
    for number, given in enumerate(entries, 1):
        where = f"{path}" + (f" entry {number}" if isinstance(document, list) else "")
        if not isinstance(given, dict):
            raise InvalidInput("file", f"{where}: expected a mapping with id, recurrence, ...")
        entry = dict(given)
        if "checklist_id" in entry and "id" not in entry:
            entry["id"] = entry.pop("checklist_id")
        known = (*CHECKLIST_FIELDS, "notify", *ITEM_FIELDS)
        unknown = sorted(str(key) for key in set(entry) - set(known))  # YAML keys may be numbers
        if unknown:
            raise InvalidInput("file", f"{where}: unknown field(s) {', '.join(unknown)}; "
                                       f"expected {', '.join(known)}")
        prefix = f"entries[{number - 1}]." if isinstance(document, list) else ""
        spec: dict[str, Any] = {name: _text(entry.get(name), f"{prefix}{name}", where)
                                for name in CHECKLIST_FIELDS if name != "closed_on"}
        if entry.get("closed_on") is not None:  # closure calendars (#23 item 2): a list of calendar ids
            spec["closed_on"] = entry["closed_on"]
        if "notify" in entry:  # notifications (#18)
            spec["notify"] = entry["notify"]
        spec.update(item_fields(entry, prefix))  # what a check finds (#33): items[2].minimum named
        specs.append(spec)
    if isinstance(document, list):
        refuse_repeated_ids([spec["id"] for spec in specs])
    return specs


def refuse_repeated_ids(ids: Sequence[Any], field: str = "entries", key: str = "id") -> None:
    """Refuse a file that names the same id twice, naming both positions (``entries[3].id: 'x' repeats
    entries[0]``): written one after the other, the later entry would silently replace the first."""
    seen: dict[Any, int] = {}
    for index, value in enumerate(ids):
        if value is None:
            continue
        if value in seen:
            raise InvalidInput(f"{field}[{index}].{key}", f"{value!r} repeats {field}[{seen[value]}]")
        seen[value] = index


def _text(value: Any, field: str, where: str) -> str | None:
    """A text field of a checklist file, as written (surrounding blanks aside); ``recurrence`` may be
    a list of lines. Anything else YAML reads as another type (``name: yes`` is a boolean, ``id:
    0123`` the number 83, ``window: 2026-03-01`` a date) is refused, naming the field: converted, it
    would be stored as something the file does not say."""
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip()
    if field.endswith("recurrence") and isinstance(value, list) and all(isinstance(line, str) for line in value):
        return "\n".join(line.strip() for line in value).strip()
    raise InvalidInput(field, f"{where}: is {describe(value)}, not text: quote it (YAML reads yes, no, numbers "
                              "and dates unquoted as other things)")


def equipment_ids(arguments: Iterable[str], path: str | None) -> list[str]:
    """Ids given as arguments and/or in a file: one per line (or the first CSV column); blank
    lines and ``#`` comments are skipped. An id repeated inside the file is refused, naming both
    lines (a typo for another unit, most likely); one given both as an argument and in the file
    counts once, order kept."""
    ids = list(arguments)
    if path:
        lines: dict[str, int] = {}
        for number, line in enumerate(read_text(path, "file").splitlines(), 1):
            value = line.split(",", 1)[0].strip()
            if not value or value.startswith("#") or (number == 1 and value.lower() in ("equipment_id", "equipment")):
                continue
            try:
                ids.append(validate_equipment_id(value))
            except InvalidInput as error:
                raise InvalidInput("file", f"{path} line {number}: {error.message}") from None
            if value in lines:  # duplicate ids in one file (#23 item 5)
                raise InvalidInput("file", f"{path} line {number}: {value!r} repeats line {lines[value]}")
            lines[value] = number
    for value in ids:
        validate_equipment_id(value)
    if not ids:
        raise InvalidInput("equipment", "give equipment ids as arguments or with --file")
    return list(dict.fromkeys(ids))


@dataclass(frozen=True)
class CsvChecks:
    checks: list[PerformedCheck]
    """Without duplicates (the same checklist, equipment and instant twice)."""
    checklist_ids: list[str]
    rows: int
    lines: list[int] = field(default_factory=list)
    """The line of each of ``checks`` (its first, when a row was repeated)."""
    errors: list[tuple[int, str]] = field(default_factory=list)
    """(line, what is wrong) of the rows that could not be read: the caller names them, with the
    rows the rules refuse (:func:`missed_checks.performed_checks.recording.refusals`), before writing anything."""

    def labelled(self) -> list[Row]:
        """The checks labelled with their line, for :func:`missed_checks.performed_checks.recording.record_checks`."""
        return [Row(check, f"line {line}") for check, line in zip(self.checks, self.lines, strict=True)]


def bad_rows(path: str, errors: Sequence[str]) -> InvalidInput:
    """One error naming the file's bad rows (the first :data:`MAX_REPORTED_ERRORS`, and how many more)."""
    more = f" (and {len(errors) - MAX_REPORTED_ERRORS} more)" if len(errors) > MAX_REPORTED_ERRORS else ""
    return InvalidInput("file", f"{path}: nothing written, {len(errors)} bad row(s){more}:\n  "
                        + "\n  ".join(errors[:MAX_REPORTED_ERRORS]))


def performed_checks_csv(path: str) -> CsvChecks:
    """Every row read, the unreadable ones in ``errors`` by line (a file without a needed column or
    without rows raises)."""
    rows = csv.reader(io.StringIO(read_text(path, "file")))
    header = [name.strip().lower() for name in next(rows, [])]
    columns: dict[str, int] = {}
    for column, aliases in CSV_COLUMNS.items():
        found = [i for i, name in enumerate(header) if name in aliases]
        if not found:
            raise InvalidInput("file", f"{path}: no {column} column (header needs "
                                       f"{', '.join(CSV_COLUMNS)}; got {', '.join(header) or 'nothing'})")
        columns[column] = found[0]
    checks: list[PerformedCheck] = []
    lines: list[int] = []
    errors: list[tuple[int, str]] = []
    for number, row in enumerate(rows, 2):
        if not any(cell.strip() for cell in row):
            continue
        try:
            values = {column: row[index].strip() if index < len(row) else "" for column, index in columns.items()}
            checks.append(PerformedCheck(
                validate_checklist_id(values["checklist_id"], "checklist_id"),
                validate_equipment_id(values["equipment_id"], "equipment_id"),
                parse_instant(values["performed_at"], "performed_at"),
            ))
            lines.append(number)
        except InvalidInput as error:
            errors.append((number, f"line {number}: {error}"))
    if not checks and not errors:
        raise InvalidInput("file", f"{path}: no rows")
    unique: dict[tuple[str, str, str], tuple[PerformedCheck, int]] = {}
    for check, line in zip(checks, lines, strict=True):
        unique.setdefault((check.checklist_id, check.equipment_id, to_utc_iso(check.performed_at)), (check, line))
    return CsvChecks([c for c, _ in unique.values()], sorted({c.checklist_id for c in checks}),
                     rows=len(checks) + len(errors), lines=[line for _, line in unique.values()], errors=errors)
