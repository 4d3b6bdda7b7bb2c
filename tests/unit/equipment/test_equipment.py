from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from missed_checks.equipment.assignments import SHARD_COUNT, Assignment, shard_batches, shard_of, validate_equipment_id
from missed_checks.errors import InvalidInput

T0 = datetime(2026, 3, 2, 5, 0, tzinfo=UTC)
T1 = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)


def test_shard_is_stable_across_processes_and_versions():
    # Pinned: a change here would move stored assignments and performed checks to other partitions.
    assert [shard_of(e) for e in ("fl-01", "fl-02", "ext-0001", "truck-7")] == [0, 9, 4, 11]


@given(st.text(min_size=1, max_size=40))
def test_every_equipment_id_lands_in_a_valid_shard(equipment_id):
    assert 0 <= shard_of(equipment_id) < SHARD_COUNT


def test_shards_spread_a_fleet_evenly():
    counts = [0] * SHARD_COUNT
    for n in range(16_000):
        counts[shard_of(f"eq-{n:05d}")] += 1
    assert min(counts) > 850 and max(counts) < 1150


@pytest.mark.parametrize("bad", ["", "a#b", " x", "-lead", "x" * 129, None, 7])
def test_invalid_equipment_ids_are_rejected_with_the_field(bad):
    with pytest.raises(InvalidInput) as error:
        validate_equipment_id(bad)
    assert error.value.field == "equipment"


def test_assignment_counts_only_when_assigned_before_start_and_not_unassigned_before_end():
    assert Assignment("c", "e", assigned_at=T0).counts_for(T0, T1)
    assert not Assignment("c", "e", assigned_at=T0.replace(minute=1)).counts_for(T0, T1)
    assert Assignment("c", "e", assigned_at=T0, unassigned_at=T1).counts_for(T0, T1)
    assert not Assignment("c", "e", assigned_at=T0, unassigned_at=T1.replace(minute=59, hour=12)).counts_for(T0, T1)


def test_an_earlier_assignment_period_still_counts_after_reassignment():
    later = Assignment("c", "e", assigned_at=T1 + (T1 - T0) * 3, earlier_periods=((T0, T1),))
    assert later.counts_for(T0, T1)
    assert not later.counts_for(T1, T1 + (T1 - T0))


@given(st.integers(min_value=0, max_value=10_000_000), st.integers(min_value=1, max_value=20_000))
def test_shard_batches_split_every_shard_once_into_as_few_tasks_as_the_fleet_needs(equipment, per_task):
    batches = shard_batches(equipment, per_task)
    assert sorted(shard for batch in batches for shard in batch) == list(range(SHARD_COUNT))
    assert len(batches) == max(1, min(SHARD_COUNT, -(-equipment // per_task)))
    assert max(map(len, batches)) - min(map(len, batches)) <= 1  # even batches
    assert all(batch == sorted(batch) for batch in batches)


def test_shard_batches_for_the_sizes_the_benchmark_measures():
    assert shard_batches(10, 5_000) == [list(range(16))]
    assert [len(b) for b in shard_batches(10_000, 5_000)] == [8, 8]
    assert [len(b) for b in shard_batches(100_000, 5_000)] == [1] * 16
