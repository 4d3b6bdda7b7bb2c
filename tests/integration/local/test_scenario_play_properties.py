"""The scenario format, generated and played: a hostile scenario document is refused before anything
runs, naming the event and the field, or it is accepted and then every event plays without error
on the real table adapter (the shared local stack's table) and what it wrote reads back as given:
checklists (name, rule, calendars, who is told, paused or not, deleted), calendars (dates,
description, who put each revision), assignments, performed checks (when and by whom they were
recorded: the first post of a check), out-of-service periods (and who ended one), digest
subscriptions. The parse-level half is tests/unit/local/test_scenario_properties.py.

Events are applied with the scenario's own ``_apply`` on the stack's table, the clock at each
event's ``at``, without the evaluation (so ``dismiss``, which needs a missed check only an
evaluation writes, is left to the parse-level property and the e2e scenarios).

Examples: the hypothesis profile's (``ci``: 200, ``quick``: 20; tests/conftest.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hypothesis import HealthCheck, event, given, settings

from missed_checks import clock
from missed_checks.aws.table import ChecklistTable
from missed_checks.aws.table.subscriptions import SubscriptionItems
from missed_checks.checklists.checklist import Status
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.errors import InvalidInput
from missed_checks.evaluation.ports import CheckRecord, check_key
from missed_checks.notifications.digest import Subscription
from missed_checks.performed_checks.performed_check import PerformedCheck
from missed_checks.timefmt import to_utc_iso
from missed_checks_local.product.scenario import Scenario, ScenarioEvent, _apply
from tests.conftest import SharedStack
from tests.scenario_strategies import PLAYABLE, timelines
from tests.unit.local.test_scenario_properties import refusal_names_where

SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.function_scoped_fixture])


class _Scheduler:
    def inject_failure(self, *args: Any, **kwargs: Any) -> None:
        pass

    def refresh(self) -> None:
        pass


@dataclass
class _Runtime:
    """What ``_apply`` needs of the local runtime: its stack, and a Scheduler to tell."""

    stack: Any
    scheduler: _Scheduler = field(default_factory=_Scheduler)


@dataclass
class Expected:
    """What the played events should have left, worked out from the events alone."""

    checklists: dict[str, dict[str, Any]] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    calendars: dict[str, dict[str, Any]] = field(default_factory=dict)
    assigned: dict[str, set[str]] = field(default_factory=dict)
    performed: dict[tuple[str, str, str], CheckRecord] = field(default_factory=dict)
    periods: dict[str, list[OutOfServicePeriod]] = field(default_factory=dict)
    subscriptions: dict[str, Subscription] = field(default_factory=dict)

    def play(self, played: ScenarioEvent) -> None:
        args, at = played.args, played.at
        action = played.action
        if action == "put_checklist":
            before = self.checklists.get(args["id"]) if args["id"] not in self.deleted else None
            self.deleted.discard(args["id"])
            if before is None:
                self.assigned[args["id"]] = set()
            self.checklists[args["id"]] = {
                "name": args["name"] or (before or {}).get("name", ""), "recurrence": args["recurrence"],
                "timezone": args["timezone"], "window": args["window"], "grace": args["grace"],
                "closed_on": (args["closed_on"] if args["closed_on"] is not None
                              else (before or {}).get("closed_on", ())),
                "notify": args["notify"] if args["notify"] is not None else (before or {}).get("notify"),
                "status": (before or {}).get("status", Status.ACTIVE)}
        elif action in ("pause_checklist", "resume_checklist"):
            self.checklists[args]["status"] = Status.PAUSED if action == "pause_checklist" else Status.ACTIVE
        elif action == "delete_checklist":
            self.deleted.add(args)
            self.assigned.pop(args, None)
        elif action == "put_calendar":
            revision = self.calendars.get(args["id"], {}).get("revision", 0) + 1
            self.calendars[args["id"]] = {"dates": args["dates"], "description": args["description"],
                                          "by": args["by"], "at": at, "revision": revision}
        elif action == "assign":
            self.assigned[args["checklist"]].update(args["equipment"])
        elif action == "unassign":
            self.assigned[args["checklist"]].difference_update(args["equipment"])
        elif action == "performed":
            key = check_key(PerformedCheck(args["checklist"], args["equipment"], args["performed_at"]))
            self.performed.setdefault(key, CheckRecord(to_utc_iso(at), args["by"]))  # the first post's
        elif action == "out_of_service":
            periods = self.periods.setdefault(args.equipment_id, [])
            if not any(p.same_as(args) for p in periods):
                periods.append(args)
        elif action == "back_in_service":
            periods = self.periods[args["equipment"]]
            [current] = [p for p in periods if p.in_effect_at(at)]
            periods[periods.index(current)] = current.ended(at, by=args["by"], now=at)
        elif action == "subscribe_digest":
            self.subscriptions[args.subscription_id] = args

    def read_back(self, table: ChecklistTable, stack: Any) -> None:
        for checklist_id, wanted in self.checklists.items():
            stored = table.get_checklist(checklist_id)
            if checklist_id in self.deleted:
                assert stored is None, checklist_id
                continue
            assert stored is not None, checklist_id
            assert (stored.name, stored.recurrence, stored.timezone, stored.window, stored.grace) == (
                wanted["name"], wanted["recurrence"], wanted["timezone"], wanted["window"], wanted["grace"])
            assert (stored.closed_on, stored.status) == (tuple(wanted["closed_on"]), wanted["status"])
            assert stored.notify == wanted["notify"]
            open_now = {a.equipment_id for a in table.assignments(checklist_id) if a.unassigned_at is None}
            assert open_now == self.assigned.get(checklist_id, set()), checklist_id
        for calendar_id, wanted in self.calendars.items():
            calendar = table.get_calendar(calendar_id)
            assert calendar is not None
            assert (calendar.dates, calendar.description, calendar.updated_by, calendar.updated_at,
                    calendar.revision) == (wanted["dates"], wanted["description"], wanted["by"], wanted["at"],
                                           wanted["revision"])
        for (checklist_id, equipment_id, at), record in self.performed.items():
            check = PerformedCheck(checklist_id, equipment_id, datetime.fromisoformat(at.replace("Z", "+00:00")))
            assert table.performed_check_records([check]) == {(checklist_id, equipment_id, at): record}
        for equipment_id, periods in self.periods.items():
            stored_periods = table.out_of_service_of_equipment(equipment_id)
            wanted_periods = sorted(periods, key=lambda p: p.start)
            assert [p.to_dict() for p in stored_periods] == [p.to_dict() for p in wanted_periods]
        items = SubscriptionItems(stack.table_name, stack.client("dynamodb"))
        for subscription_id, subscription in self.subscriptions.items():
            stored_subscription = items.get_subscription(subscription_id)
            assert stored_subscription is not None
            assert stored_subscription.to_dict() | {"created_at": None, "updated_at": None} == (
                subscription.to_dict() | {"created_at": None, "updated_at": None})


@SETTINGS
@given(document=timelines(PLAYABLE))
def test_a_hostile_scenario_is_refused_before_it_runs_or_plays_and_reads_back_as_given(
        local_stack: Any, document: dict[str, Any]) -> None:
    try:
        scenario = Scenario.from_dict(document)
    except InvalidInput as error:
        event("refused before anything ran")
        refusal_names_where(document, error)
        return
    event(f"accepted: {len(scenario.events)} events played")
    SharedStack._empty_tables(local_stack)
    table = ChecklistTable(local_stack.table_name)
    runtime = _Runtime(local_stack)
    expected = Expected()
    try:
        for played in scenario.events:
            clock.set_source(lambda at=played.at: at)
            try:
                _apply(played, table, runtime)
            except Exception as error:  # accepted, then not honoured: the validation missed something
                raise AssertionError(f"{played.where} was accepted but could not be played: "
                                     f"{type(error).__name__}: {error}\n{document}") from error
            expected.play(played)
        expected.read_back(table, local_stack)
    finally:
        clock.set_source(None)
