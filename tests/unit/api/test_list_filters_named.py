"""A list's filter that can match nothing because it is malformed is a 400 naming it (#31, review),
never an empty page that reads as "nothing there": the notification log's ``kind`` (one of
reminder, missed, escalation, digest) and the site of ``GET /sites/{site_id}/audit``."""

from __future__ import annotations

from missed_checks.api.routes.context import ManagementTable
from tests.unit.api.test_scoped_routes import SUPERVISOR, call, manage, person, table  # noqa: F401
from tests.unit.two_sites import dynamodb  # noqa: F401

ADMIN = person("root", "admin")
RANGE = {"from": "2026-03-01T00:00:00Z", "to": "2026-03-03T00:00:00Z"}


def test_an_unknown_notification_kind_is_400_naming_kind(table: ManagementTable) -> None:  # noqa: F811
    status, problem, _ = call(manage(), "GET", "/notifications", SUPERVISOR, query={**RANGE, "kind": "bogus"})
    assert (status, problem["field"]) == (400, "kind")
    assert "reminder, missed, escalation, digest" in problem["detail"]
    status, page, _ = call(manage(), "GET", "/notifications", SUPERVISOR, query={**RANGE, "kind": "missed"})
    assert (status, page["items"]) == (200, [])


def test_a_malformed_site_id_of_a_sites_trail_is_400_naming_site_id(table: ManagementTable) -> None:  # noqa: F811
    status, problem, _ = call(manage(), "GET", "/sites/a%20b/audit", ADMIN)
    assert (status, problem["field"]) == (400, "site_id")
    assert call(manage(), "GET", "/sites/north/audit", ADMIN)[0] == 200
