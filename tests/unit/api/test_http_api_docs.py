"""docs/http-api.md's IAM policies per role (#31) are what they say: each is valid JSON, an
identity policy parliament finds nothing in (as tools/lint_policies.py lints the template's), and,
evaluated as IAM evaluates ``execute-api:Invoke`` (``*`` and ``?`` match any characters, ``/``
included; an explicit Deny wins), it allows exactly the documented routes of the actions its role
has (the operator's: a tablet's few routes). The route -> action table is written out here; every
route of openapi/missed-checks.yaml must be in it."""

from __future__ import annotations

import json
import re
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pytest
import yaml

from missed_checks.permissions.role import ALLOWED, Role

ROOT = Path(__file__).resolve().parents[3]
DOC = (ROOT / "docs" / "http-api.md").read_text(encoding="utf-8")
OPENAPI = yaml.safe_load((ROOT / "openapi" / "missed-checks.yaml").read_text(encoding="utf-8"))
API_ARN = "arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/$default/"

ACTION_OF = {
    "GET /me": None,  # any caller
    "GET /sites": "read", "GET /sites/{site_id}": "read", "GET /equipment": "read",
    "GET /equipment/{equipment_id}": "read", "GET /equipment/{equipment_id}/status": "read",
    "GET /checklists": "read", "GET /checklists/{checklist_id}": "read", "POST /checklists/preview": "read",
    "GET /checklists/{checklist_id}/equipment": "read", "GET /calendars": "read",
    "GET /calendars/{calendar_id}": "read",
    "GET /checklists/{checklist_id}/items": "read", "GET /defects": "read", "GET /defects/{defect_id}": "read",
    "GET /sites/{site_id}/readiness": "read",
    "POST /checks": "record", "POST /checks/batch": "record",
    "GET /missed": "read_records", "GET /report": "read_records",
    "GET /equipment/{equipment_id}/out-of-service": "read_records", "GET /notifications": "read_records",
    "POST /missed/dismissals": "supervise", "POST /equipment/{equipment_id}/out-of-service": "supervise",
    "POST /equipment/{equipment_id}/back-in-service": "supervise", "POST /defects/{defect_id}/resolve": "supervise",
    "POST /equipment": "manage", "PUT /equipment/{equipment_id}": "manage",
    "DELETE /equipment/{equipment_id}": "manage", "POST /checklists": "manage",
    "PUT /checklists/{checklist_id}": "manage", "DELETE /checklists/{checklist_id}": "manage",
    "POST /checklists/{checklist_id}/pause": "manage", "POST /checklists/{checklist_id}/resume": "manage",
    "POST /checklists/{checklist_id}/equipment": "manage",
    "DELETE /checklists/{checklist_id}/equipment/{equipment_id}": "manage",
    "PUT /calendars/{calendar_id}": "manage", "DELETE /calendars/{calendar_id}": "manage",
    "POST /subscriptions": "manage", "DELETE /subscriptions/{subscription_id}": "manage",
    "GET /subscriptions": "read_management", "GET /sites/{site_id}/audit": "read_management",
    "GET /audit": "read_management",
    "POST /sites": "administer", "PUT /sites/{site_id}": "administer", "GET /grants": "administer",
    "GET /grants/{principal}": "administer", "PUT /grants/{principal}": "administer",
    "DELETE /grants/{principal}": "administer",
}
OPERATOR_INTEGRATION = {"GET /me", "POST /checks", "POST /checks/batch", "GET /equipment/{equipment_id}/status"}
"""The operator's example is a yard tablet's: fewer routes than the role allows (no reads of the registry)."""


def documented() -> set[str]:
    return {f"{method.upper()} {path}" for path, item in OPENAPI["paths"].items() for method in item
            if method in {"get", "post", "put", "delete"}}


def policies() -> dict[str, dict[str, Any]]:
    """Each ``**<role>**: ...`` paragraph of the section and the JSON block after it."""
    section = DOC[DOC.index("### IAM policies per role"):]
    section = section[:section.index("\n## ")]
    return {role: json.loads(block) for role, block in
            re.findall(r"^\*\*(\w+)\*\*: [^\n]*\n\n```json\n(.*?)\n```", section, flags=re.S | re.M)}


def allows(policy: dict[str, Any], route: str) -> bool:
    """IAM's evaluation of execute-api:Invoke on ``route`` (path parameters filled in)."""
    method, path = route.split(" ", 1)
    resource = API_ARN + method + re.sub(r"\{\w+\}", "x-1", path)
    verdicts = set()
    for statement in policy["Statement"]:
        resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        assert statement["Action"] == "execute-api:Invoke"
        if any(fnmatchcase(resource, pattern) for pattern in resources):
            verdicts.add(statement["Effect"])
    return "Allow" in verdicts and "Deny" not in verdicts


def test_every_documented_route_has_its_action_here() -> None:
    assert documented() <= set(ACTION_OF)


def test_there_is_a_policy_per_role_and_each_is_valid_json_for_this_api() -> None:
    found = policies()
    assert set(found) == {role.value for role in Role}
    for role, policy in found.items():
        assert policy["Version"] == "2012-10-17", role
        for statement in policy["Statement"]:
            for resource in statement["Resource"]:
                assert resource.startswith(API_ARN), (role, resource)


@pytest.mark.parametrize("role", [role.value for role in Role])
def test_each_policy_allows_exactly_its_roles_routes(role: str) -> None:
    policy = policies()[role]
    allowed = {route for route in documented() if allows(policy, route)}
    if role == Role.operator:
        expected = OPERATOR_INTEGRATION & documented()
        assert expected <= {route for route in documented()
                            if ACTION_OF[route] is None or ACTION_OF[route] in ALLOWED[Role.operator]}
    else:
        expected = {route for route in documented()
                    if ACTION_OF[route] is None or ACTION_OF[route] in ALLOWED[Role(role)]}
    assert allowed == expected, (sorted(allowed - expected), sorted(expected - allowed))


def test_parliament_finds_nothing_in_the_policies() -> None:
    from parliament import analyze_policy_string

    for role, policy in policies().items():
        findings = analyze_policy_string(json.dumps(policy), include_community_auditors=True).findings
        assert [(f.issue, f.detail) for f in findings] == [], role
