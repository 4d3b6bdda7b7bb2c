"""A site's digest reports on that site's checklists only (#31, review): a checklist a site's
subscription names that was deleted and made again, same id, at another site is left out of the
digest, with a warning, as a deleted one is: its missed checks go to the other site's people, never
to the addresses of this site's subscription."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from missed_checks.aws.table import ManagementTable
from missed_checks.checklists import managing
from missed_checks.notifications import digesting
from tests.unit.notifications.test_subscribing_scoped import digest, table  # noqa: F401
from tests.unit.two_sites import NOW, OPERATOR, add_checklist, dynamodb  # noqa: F401


def test_a_checklist_now_at_another_site_is_left_out_of_a_sites_digest(
        table: ManagementTable, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    asked: list[Any] = []
    real = digesting.build_report

    def build_report(*args: Any, checklist_ids: Any = (), **kwargs: Any) -> Any:
        asked.append(list(checklist_ids))
        return real(*args, checklist_ids=checklist_ids, **kwargs)

    monkeypatch.setattr(digesting, "build_report", build_report)
    named = digest(checklists=["daily"])
    digesting.build_digests(table, named, NOW + timedelta(days=1))
    managing.delete_checklist(table, OPERATOR, "daily")
    add_checklist(table, "daily", "south", recurrence="DTSTART:20260223T060000\nRRULE:FREQ=DAILY")
    digests = digesting.build_digests(table, named, NOW + timedelta(days=1))
    assert asked == [["daily"]]  # the second digest read no report: none of its checklists is north's now
    assert "checklist daily is at site south now, not north; it is not in this digest" in digests[0].notification.body
