"""The routes of #33 ("cleared to operate") through the functions' resolvers with API Gateway's payload 2.0
events and the stack's table adapter on moto: a checklist's items put through ``POST``/``PUT
/checklists`` and read by revision (``GET /checklists/{id}/items``); a check answering them
(``POST /checks``): a bad answer refused naming ``answers.<item>`` (``checks[0].answers.<item>`` in a
batch) with nothing written, a failed critical item answered with its findings and the defect it
opened; the defects listed, read and resolved (``If-Match``: 428 without, 412 stale, 409 resolved
already; an operator or auditor 403, another site 404); a site's readiness listed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from missed_checks import clock
from missed_checks.api.routes.context import ManagementTable
from tests.unit.api.test_scoped_routes import AUDITOR, MANAGER, OPERATOR_NORTH, SOUTH, call, manage
from tests.unit.two_sites import NOW, dynamodb, two_sites, with_missed_checks  # noqa: F401

BRAKES = {"id": "brakes", "label": "Brakes work", "kind": "pass_fail", "critical": True}
TYRES = {"id": "tyres", "label": "Tyre pressure", "kind": "number", "unit": "bar", "minimum": 6, "maximum": 8.5}
FLUID = {"id": "fluid", "label": "Hydraulic fluid", "kind": "choice", "choices": ["dry", "ok", "leaking"],
         "failing_choices": ["leaking"]}


@pytest.fixture
def table(dynamodb: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[ManagementTable]:  # noqa: F811
    """Sites north and south, checklist ``daily`` at north (FL-1) and ``south-daily`` at south (FL-9)."""
    with two_sites(dynamodb) as store:
        monkeypatch.setenv("TABLE_NAME", store.name)
        with_missed_checks(store)
        clock.set_source(lambda: NOW)
        yield store
        clock.set_source(None)


def _items_of(checklist_id: str, who: dict[str, Any], revision: str | None = None) -> tuple[int, Any]:
    status, body, _ = call(manage(), "GET", f"/checklists/{checklist_id}/items", who,
                           query={"revision": revision} if revision else None)
    return status, body


def test_a_checklists_items_are_put_and_read_by_revision(table: ManagementTable) -> None:
    assert _items_of("daily", AUDITOR) == (200, {"checklist_id": "daily", "revision": 0, "effective_from": None,
                                                 "items": []})
    read = call(manage(), "GET", "/checklists/daily", MANAGER)
    edit = {"recurrence": read[1]["recurrence"], "window": "PT8H", "items": [BRAKES, TYRES], "pre_use": True}
    status, edited, _ = call(manage(), "PUT", "/checklists/daily", MANAGER, edit, headers={"If-Match": read[2]["ETag"]})
    assert status == 200, edited
    assert (edited["items_revision"], edited["pre_use"], edited["items"]) == (1, True, [BRAKES, TYRES])
    status, first = _items_of("daily", OPERATOR_NORTH)
    assert (status, first["revision"], first["items"]) == (200, 1, [BRAKES, TYRES])

    status, edited, _ = call(manage(), "PUT", "/checklists/daily", MANAGER,
                             {**edit, "items": [BRAKES, FLUID]}, headers={"If-Match": "*"})
    assert (status, edited["items_revision"]) == (200, 2), edited
    assert _items_of("daily", AUDITOR)[1]["items"] == [BRAKES, FLUID]
    assert _items_of("daily", AUDITOR, "1")[1]["items"] == [BRAKES, TYRES]  # an earlier revision reads as it was
    status, problem = _items_of("daily", AUDITOR, "3")
    assert (status, problem["detail"]) == (404, "checklist 'daily' has no revision 3 of its items (its current one "
                                                "is 2)")
    status, problem = _items_of("daily", AUDITOR, "two")
    assert (status, problem["field"]) == (400, "revision")
    assert _items_of("daily", SOUTH)[0] == 404  # another site's checklist: as a missing one
    assert _items_of("south-daily", MANAGER)[0] == 404


def test_a_bad_item_is_400_naming_it_and_nothing_is_written(table: ManagementTable) -> None:
    read = call(manage(), "GET", "/checklists/daily", MANAGER)
    bad = {**TYRES, "minimum": "six"}
    status, problem, _ = call(manage(), "PUT", "/checklists/daily", MANAGER,
                              {"recurrence": read[1]["recurrence"], "items": [BRAKES, bad]}, headers={"If-Match": "*"})
    assert (status, problem["field"]) == (400, "items[1].minimum"), problem
    assert table.get_checklist("daily").items_revision == 0  # type: ignore[union-attr]
