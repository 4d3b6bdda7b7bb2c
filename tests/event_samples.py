"""The checklist the ``events/*.json`` samples refer to, for the tests that run them through their
handlers (tests/integration/test_contract_samples.py on the embedded stack, tests/sam_local through
``sam local invoke``): forklift-daily, twelve pieces of equipment, half of them checked on the
sample's Monday, so each sample judges something real."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from missed_checks.aws.table import ChecklistTable
from missed_checks.checklists.saving import save_checklist
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks.performed_checks.recording import Row, record_checks

EVENTS = Path(__file__).resolve().parents[1] / "events"
CHECKLIST = "forklift-daily"
RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"
CREATED = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
MONDAY_START = datetime(2026, 3, 2, 5, 0, tzinfo=UTC)
MONDAY_END = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)
MONDAY_EVALUATE_AT = datetime(2026, 3, 2, 13, 30, tzinfo=UTC)
EQUIPMENT = [f"fl-{n:03d}" for n in range(12)]
CHECKED = EQUIPMENT[::2]
"""The equipment checked an hour into the Monday window; the rest is missed."""
SEEDER = "sample-seed"
"""Who the seeded checks say recorded them (recorded as they were performed)."""


def sample(name: str) -> Any:
    return json.loads((EVENTS / name).read_text())


def seed_sample_checklist(table: ChecklistTable) -> None:
    """The samples' checklist, created on the Sunday before its first window, its fleet and checks."""
    save_checklist(table, CHECKLIST, recurrence=RULE, window="PT8H", grace="PT30M", now=CREATED, name="Forklift",
                   by="tests")
    table.assign_equipment(CHECKLIST, EQUIPMENT, at=CREATED, by="tests")
    performed_at = MONDAY_START + timedelta(hours=1)
    record_checks(table, [Row(PerformedCheck(CHECKLIST, e, performed_at)) for e in CHECKED],
                  now=performed_at, recorded_by=SEEDER)  # the one use case every writer goes through
