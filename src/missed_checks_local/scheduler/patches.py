"""The emulator's patches of moto's EventBridge Scheduler.

Each patch names its upstream candidate. Checked against moto 5.2.1. Nothing here runs at import.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any
from unittest import mock

__all__ = ["schedules_in_existing_groups", "scheduler_clock"]


def schedules_in_existing_groups() -> None:
    """Patch 5: ``EventBridgeSchedulerBackend.create_schedule`` in a missing group answers
    ``ResourceNotFoundException`` as AWS does; moto raises a bare ``KeyError`` (HTTP 500, which SDK
    clients retry for minutes).

    Upstream candidate (moto, ``scheduler/models.py``): raise ``ScheduleGroupNotFound``."""
    from moto.scheduler.exceptions import ScheduleGroupNotFound  # deferred: moto is slow to import
    from moto.scheduler.models import EventBridgeSchedulerBackend

    create_schedule = EventBridgeSchedulerBackend.create_schedule

    def create_schedule_in_existing_group(self: Any, *args: Any, **kwargs: Any) -> Any:
        group = kwargs.get("group_name")
        if group and group not in self.schedule_groups:
            raise ScheduleGroupNotFound(group)
        return create_schedule(self, *args, **kwargs)

    EventBridgeSchedulerBackend.create_schedule = create_schedule_in_existing_group  # type: ignore[method-assign]


@contextmanager
def scheduler_clock(now: Callable[[], datetime]) -> Iterator[None]:
    """Patch 6 (Scheduler's part): ``moto.scheduler.models.utcnow`` reads ``now()`` (schedule
    creation dates, ``StartDate`` checks) while the block runs.

    Not upstreamable: product-specific to the emulator's simulated clock; moto has no notion of a
    clock other than the wall clock (freezegun is its answer)."""
    from moto.scheduler import models as scheduler_models  # deferred: moto is a dev dependency and slow to import

    def simulated_utcnow() -> datetime:
        return now().astimezone(UTC).replace(tzinfo=None)

    with mock.patch.object(scheduler_models, "utcnow", simulated_utcnow):
        yield
