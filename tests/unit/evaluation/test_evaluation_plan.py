"""Planning an evaluation: the windows due, and the window a dead-letter replay was handed."""

from __future__ import annotations

from datetime import UTC, datetime

from missed_checks.checklists.checklist import Checklist
from missed_checks.evaluation.planning import Outcome, plan_evaluation

RULE = "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY;COUNT=5"
NOW = datetime(2026, 3, 9, 12, 0, tzinfo=UTC)


def drill(evaluated_until: datetime | None = None) -> Checklist:
    return Checklist("drill", RULE, window="PT8H", grace="PT30M", created_at=datetime(2026, 3, 1, tzinfo=UTC),
                     evaluated_until=evaluated_until)


def starts(plan) -> list[str]:
    return [w["start"][:10] for w in plan.to_dict()["windows"]]


def test_windows_due_oldest_first_capped_with_more_due():
    plan = plan_evaluation("drill", drill(), NOW, 2, now=NOW)
    assert (plan.outcome, starts(plan), plan.more_due) == (Outcome.EVALUATE, ["2026-03-02", "2026-03-03"], True)
    last = plan_evaluation("drill", drill(datetime(2026, 3, 5, 13, tzinfo=UTC)), NOW, 2, now=NOW)
    assert (starts(last), last.more_due) == (["2026-03-06"], False)


def test_a_claimed_window_behind_the_watermark_is_judged_again_first():
    monday = drill().parsed().windows(datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 3, 3, tzinfo=UTC))[0]
    # The watermark has passed Monday (another execution judged it after Monday's judge died unannounced).
    passed = drill(datetime(2026, 3, 4, 13, tzinfo=UTC))
    plan = plan_evaluation("drill", passed, NOW, 20, now=NOW, claimed=monday)
    assert starts(plan) == ["2026-03-02", "2026-03-05", "2026-03-06"]
    assert "again, to announce it" in plan.reason
    finished = plan_evaluation("drill", drill(datetime(2026, 3, 6, 13, tzinfo=UTC)), NOW, 20, now=NOW,
                               claimed=monday)
    assert (finished.outcome, starts(finished)) == (Outcome.EVALUATE, ["2026-03-02"])
    # Ahead of the watermark it is simply the oldest window due: listed once.
    ahead = plan_evaluation("drill", drill(), NOW, 2, now=NOW, claimed=monday)
    assert starts(ahead) == ["2026-03-02", "2026-03-03"]


def test_a_small_fleet_is_judged_by_the_plan_a_large_one_fanned_out_in_batches():
    plan = plan_evaluation("drill", drill(), NOW, 2, now=NOW)  # two windows due
    small = plan.split(equipment=2_500, per_task=5_000)  # 5,000 equipment-windows: one task
    assert ([w.start.day for w in small.here], small.fan_out) == ([2, 3], ())
    assert plan.to_dict(small)["windows"] == [] and plan.to_dict(small)["batches"] == []

    large = plan.split(equipment=2_501, per_task=5_000)
    assert (large.here, [w.start.day for w in large.fan_out]) == ((), [2, 3])
    assert large.batches == [list(range(16))]  # 2,501 pieces fit one batch task per window
    fanned = plan.to_dict(large)
    assert [w["start"][:10] for w in fanned["windows"]] == ["2026-03-02", "2026-03-03"]
    assert fanned["batches"] == [list(range(16))]
    assert len(plan.split(equipment=100_000, per_task=5_000).batches) == 16
