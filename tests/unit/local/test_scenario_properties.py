"""The scenario format (``missed_checks_local.product.scenario``), generated: any hostile document is either
refused before anything runs, with one ``InvalidInput`` naming the event (its index in the file) and
the field, or accepted as a scenario whose events carry what was given. The played half, on the
local stack, is tests/integration/local/test_scenario_play_properties.py.

Examples: the hypothesis profile's (``ci``: 200, ``quick``: 20; tests/conftest.py).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hypothesis import HealthCheck, event, given, settings

from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.errors import InvalidInput
from missed_checks.timefmt import parse_instant
from missed_checks_local.product.scenario import Scenario
from tests.scenario_strategies import NAMED_FIELD, timelines

SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def refusal_names_where(document: dict[str, Any], error: InvalidInput) -> None:
    """The field names a top-level key, or an event of the file and (below it) its action's field."""
    found = NAMED_FIELD.match(error.field)
    assert found is not None, f"{error.field!r} names no event or key: {error}"
    if found["index"] is not None:
        events = document["events"]
        assert int(found["index"]) < len(events), error
        raw = events[int(found["index"])]
        if found["action"] not in (None, "at"):
            assert isinstance(raw, dict) and found["action"] in raw, (error, raw)


def given_instant(value: Any) -> datetime:
    return parse_instant(value, "given")


@SETTINGS
@given(timelines())
def test_a_hostile_scenario_is_refused_naming_the_event_and_field_or_read_as_given(document: dict[str, Any]) -> None:
    try:
        scenario = Scenario.from_dict(document)
    except InvalidInput as error:
        event("refused")
        refusal_names_where(document, error)
        return
    event("accepted")
    raws = document["events"]
    for parsed in scenario.events:
        raw = raws[parsed.index][parsed.action]
        assert parsed.at == given_instant(raws[parsed.index]["at"])
        args = parsed.args
        if parsed.action == "put_checklist":
            assert (args["id"], args["recurrence"]) == (raw["id"], raw["recurrence"])
            for key in ("name", "timezone", "window", "grace"):
                assert args[key] == raw.get(key), key
        elif parsed.action in ("assign", "unassign"):
            given_ids = [raw["equipment"]] if isinstance(raw["equipment"], str) else raw["equipment"]
            assert (args["checklist"], args["equipment"]) == (raw["checklist"], given_ids)
        elif parsed.action == "performed":
            assert (args["checklist"], args["equipment"]) == (raw["checklist"], raw["equipment"])
            # performed_at absent or null: the event's own instant (as the player reads it)
            given = raw.get("performed_at")
            assert args["performed_at"] == given_instant(raws[parsed.index]["at"] if given is None else given)
            assert args["by"] == raw.get("by", "scenario")
        elif parsed.action == "out_of_service":
            assert isinstance(args, OutOfServicePeriod)
            assert (args.equipment_id, args.start, args.reason) == (raw["equipment"], given_instant(raw["from"]),
                                                                    raw["reason"])
            assert args.end == (None if raw.get("to") is None else given_instant(raw["to"]))
            assert args.recorded_by == raw.get("by", "scenario")
        elif parsed.action == "put_calendar":
            assert args["id"] == raw["id"] and [d.isoformat() for d in args["dates"]] == sorted(set(raw["dates"]))
            assert args["by"] == raw.get("by", "scenario")
        elif parsed.action == "subscribe_digest":
            wanted = [raw["to"]] if isinstance(raw["to"], str) else raw["to"]
            assert list(args.addresses) == list(dict.fromkeys(a.lower() for a in wanted)) or [
                a.lower() for a in args.addresses] == list(dict.fromkeys(a.lower() for a in wanted))
