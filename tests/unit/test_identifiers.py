"""One validation of identifiers and names (:mod:`missed_checks.identifiers`): a full match of one
documented alphabet and length per kind, used by the command line, the HTTP API, the scenario format
and the table adapter, so that an id which validates can always be used (``"a\\n"`` passed the old
``re.match`` checks: ``$`` matches before a final newline). Time zones are names of the same kind: a
directory of the zone database (``Europe``), an empty or a 10,000-character ``tz`` is refused naming
the field, by the API and by every command (exit 2), never read as UTC or failing in the zone files."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from missed_checks import identifiers
from missed_checks.api.parameters import period_bound
from missed_checks.checklists.checklist import validate_checklist_id
from missed_checks.checklists.closure_calendar import validate_calendar_id
from missed_checks.equipment.assignments import validate_equipment_id
from missed_checks.errors import InvalidInput
from missed_checks.notifications.digest import validate_subscription_id
from missed_checks.performed_checks.recording import validate_idempotency_key
from missed_checks_local.product.scenario import Scenario
from missed_checks_ops.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
VALIDATORS = {"checklist id": validate_checklist_id, "equipment id": validate_equipment_id,
              "calendar id": validate_calendar_id, "subscription id": validate_subscription_id,
              "idempotency key": validate_idempotency_key}
GOOD = {"checklist id": "forklift-daily", "equipment id": "FL-001/a@b", "calendar id": "de-holidays",
        "subscription id": "fleet-daily", "idempotency key": "2f1c:0e-7"}


@pytest.mark.parametrize("kind", VALIDATORS)
@pytest.mark.parametrize("tail", ["\n", "\r\n", "\x00", " ", "\u2028", "\u00e9"])
def test_an_id_with_anything_after_its_alphabet_is_refused(kind: str, tail: str) -> None:
    validate = VALIDATORS[kind]
    assert validate(GOOD[kind], "field") == GOOD[kind]
    with pytest.raises(InvalidInput) as refused:
        validate(GOOD[kind] + tail, "field")
    assert refused.value.field == "field"


@pytest.mark.parametrize("kind", identifiers.KINDS)
def test_every_kind_is_a_full_match_of_its_alphabet_and_length(kind: str) -> None:
    spec = identifiers.KINDS[kind]
    longest = "a" * spec.max_length
    if kind != "time zone":  # a zone is also one of the database's
        assert spec.validate(longest, "f") == longest
    for bad in ("", "a" * (spec.max_length + 1), "a\n", "\na", "a b", "-a" if kind != "time zone" else "1a", 7, None):
        with pytest.raises(InvalidInput):
            spec.validate(bad, "f")


def test_the_kinds_are_the_ones_the_validators_use() -> None:
    for kind, validate in VALIDATORS.items():
        spec = identifiers.KINDS[kind]
        assert validate("a" * spec.max_length, "f")
        with pytest.raises(InvalidInput):
            validate("a" * (spec.max_length + 1), "f")


@pytest.mark.parametrize("page", ["http-api.md", "operations.md"])
def test_the_alphabets_are_documented_as_the_code_has_them(page: str) -> None:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    assert identifiers.markdown_table() in text, f"docs/{page}: paste identifiers.markdown_table()"


# -- the scenario format and the command line refuse what the table could not address -------------
RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"


def test_a_scenario_checklist_id_with_a_trailing_newline_is_refused() -> None:
    data = {"start": "2026-03-02T00:00:00Z", "end": "2026-03-09T00:00:00Z", "events": [
        {"at": "2026-03-02T00:00:00Z", "put_checklist": {"id": "fl\n", "recurrence": RULE}}]}
    with pytest.raises(InvalidInput) as refused:
        Scenario.from_dict(data)
    assert refused.value.field == "events[0].put_checklist.id"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    return code, capsys.readouterr().err


def test_a_checklist_id_with_a_trailing_newline_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(capsys, "checklist", "put", "fl\n", "--recurrence", "DTSTART:20260105T060000Z",
                    "--recurrence", "RRULE:FREQ=DAILY", "--dry-run")
    assert code == 2, err
    assert err.startswith("missed-checks: error: id: 'fl\\n' is not a valid checklist id")


# -- time zones ------------------------------------------------------------------------------------
BAD_ZONES = {"a directory of the zone database": "Europe", "too long": "A" * 10_000, "empty": "",
             "a trailing newline": "UTC\n", "a path": "../zoneinfo/UTC", "a file of the package": "__init__.py",
             "a trailing slash": "Europe/", "a NUL": "UTC\x00"}


@pytest.mark.parametrize("name", BAD_ZONES.values(), ids=list(BAD_ZONES))
def test_a_zone_that_is_not_one_is_refused_naming_the_field(name: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        identifiers.zone(name, "tz")
    assert refused.value.field == "tz"
    assert len(refused.value.message) < 200 and "site-packages" not in refused.value.message
    with pytest.raises(InvalidInput):
        period_bound("2026-03-01", "from", name)


@pytest.mark.parametrize("name", ["UTC", "Europe/Berlin", "America/Argentina/Buenos_Aires", "Etc/GMT+5",
                                  "America/Port-au-Prince"])
def test_every_iana_zone_is_accepted(name: str) -> None:
    assert identifiers.validate_timezone(name, "tz") == name
    assert period_bound("2026-03-01", "from", name) == datetime(2026, 3, 1, tzinfo=identifiers.zone(name, "tz")
                                                                ).astimezone(UTC)


def test_a_zone_of_a_wrong_type_is_refused() -> None:
    value: Any
    for value in (None, 5, ["UTC"]):
        with pytest.raises(InvalidInput):
            identifiers.validate_timezone(value, "tz")


COMMANDS_WITH_A_ZONE = {
    "report": (["report", "--from", "2026-03-01", "--to", "2026-03-02", "--tz"], "tz"),
    "missed list": (["missed", "list", "--checklist", "c", "--from", "2026-03-01", "--to", "2026-03-02", "--tz"],
                    "tz"),
    "notifications list": (["notifications", "list", "--from", "2026-03-01", "--to", "2026-03-02", "--tz"], "tz"),
    "equipment out-of-service-list": (["equipment", "out-of-service-list", "--from", "2026-03-01", "--tz"], "tz"),
    "digest subscribe": (["digest", "subscribe", "d1", "--to", "a@example.com", "--period", "daily", "--time",
                          "07:00", "--timezone"], "timezone"),
}


@pytest.mark.parametrize("command", COMMANDS_WITH_A_ZONE)
@pytest.mark.parametrize("zone", ["Europe", "A" * 10_000, ""], ids=["directory", "long", "empty"])
def test_every_command_refuses_a_bad_zone_with_exit_2_naming_the_option(capsys: pytest.CaptureFixture[str],
                                                                        command: str, zone: str) -> None:
    argv, field = COMMANDS_WITH_A_ZONE[command]
    code, err = run(capsys, *argv, zone, "--endpoint", "http://127.0.0.1:9")
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"missed-checks: error: {field}: "), err
    assert "site-packages" not in err and len(lines[0]) < 300
    assert re.search(r"IANA time zone", lines[0])
