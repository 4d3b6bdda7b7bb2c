"""An out-of-service period reaching back to before the equipment came to the caller's site (#31,
review): the report excuses the windows a period covers, so a period over the weeks a forklift was
at south, recorded by north's supervisor after it moved north, would change south's past report
rows. Such a period is refused (InvalidInput naming ``from``, nothing written) unless the caller
supervises at every site the equipment was at during it; from the move on, it is north's."""

from __future__ import annotations

from datetime import timedelta

from missed_checks.api.routes.context import ManagementTable
from missed_checks.equipment import registering
from missed_checks.timefmt import to_utc_iso
from tests.unit.api.test_scoped_routes import SUPERVISOR, call, manage, person, table  # noqa: F401
from tests.unit.two_sites import NOW, OPERATOR, dynamodb  # noqa: F401


def test_a_period_before_the_move_is_the_old_sites(table: ManagementTable) -> None:  # noqa: F811
    registering.move_equipment(table, OPERATOR, "FL-9", site_id="north", at=NOW - timedelta(days=2), now=NOW)
    before = {"from": to_utc_iso(NOW - timedelta(days=5)), "to": to_utc_iso(NOW - timedelta(days=1)),
              "reason": "annual service"}
    status, problem, _ = call(manage(), "POST", "/equipment/FL-9/out-of-service", SUPERVISOR, before)
    assert (status, problem["field"]) == (400, "from"), problem
    assert "was at site south" in problem["detail"]
    assert table.out_of_service_of_equipment("FL-9") == []
    both = person("both", "supervisor@north", "supervisor@south")
    assert call(manage(), "POST", "/equipment/FL-9/out-of-service", both, before)[0] == 201
    after = {"from": to_utc_iso(NOW - timedelta(days=1)), "to": to_utc_iso(NOW + timedelta(days=1)),
             "reason": "flat tyre"}
    status, recorded, _ = call(manage(), "POST", "/equipment/FL-9/out-of-service", SUPERVISOR, after)
    assert status == 201, recorded
