"""The Digests and Audit trail pages (#32) through the web app's handler on moto, as a signed-in person's
browser sends them. Digests: a site's manager subscribes (the item written, its schedule upserted) and
unsubscribes; a subscription that cannot be made comes back with the message next to its field and
nothing written; a manager of another site cannot end it (a 404 page), an auditor reads it without a
form, an operator gets a 403 page; a form without the session's CSRF token is refused. Audit trail:
an object's changes oldest first with the fields changed; another site's object a 404 page, a role
without read_management a 403 page, a wrong kind refused next to its field."""

from __future__ import annotations

from datetime import timedelta
from html import unescape

import pytest

from missed_checks.api.routes import subscriptions as api_subscriptions
from missed_checks.audit_trails.audit_entry import AuditEntry, ChangeAction
from missed_checks.notifications.digest import schedule_name
from tests.unit import two_sites
from tests.unit.notifications.test_subscribing_scoped import GroupSchedules
from tests.unit.two_sites import NOW
from tests.unit.webapp import browser as browsers
from tests.unit.webapp.browser import Web

dynamodb, web = two_sites.dynamodb, browsers.web  # the fixtures (moto; the stack and its people)

SUBSCRIPTION = {"site_id": "north", "id": "north-morning", "to": "lead@example.com, shift@example.com",
                "period": "weekly", "day": "TU", "time": "07:00", "timezone": "Europe/Berlin", "checklists": "daily"}


@pytest.fixture
def schedules(web: Web, monkeypatch: pytest.MonkeyPatch) -> GroupSchedules:
    """The digest schedules' group, in memory; the digest function's target from the environment."""
    group = GroupSchedules()
    monkeypatch.setattr(api_subscriptions, "schedules", lambda: group)
    for name, value in (("DIGEST_FUNCTION_ARN", "arn:aws:lambda:eu-west-1:123456789012:function:digest"),
                        ("DIGEST_SCHEDULER_ROLE_ARN", "arn:aws:iam::123456789012:role/digest-scheduler"),
                        ("DIGEST_DLQ_ARN", "arn:aws:sqs:eu-west-1:123456789012:notification-dlq"),
                        ("SCHEDULER_MAX_RETRY_ATTEMPTS", "3")):
        monkeypatch.setenv(name, value)
    return group


def test_a_sites_manager_subscribes_and_unsubscribes(web: Web, schedules: GroupSchedules) -> None:
    browser = web.browser("manager-north")
    empty = browser.get("/subscriptions")
    assert empty.status == 200 and "No digest subscriptions" in empty.text
    assert '<label for="sub-to">' in empty.text and 'value="Europe/Berlin"' in empty.text  # the site's zone
    made = browser.submit("/subscriptions", SUBSCRIPTION)
    assert made.status == 303 and made.location == "/subscriptions?site=north#subscription-north-morning"
    stored = web.table.get_subscription("north-morning")
    assert stored is not None and (stored.site_id, stored.day, stored.checklists) == ("north", "TU", ("daily",))
    assert stored.addresses == ("lead@example.com", "shift@example.com")
    assert [s.name for s in schedules.upserted] == [schedule_name("north-morning")]
    listed = browser.get("/subscriptions", site="north")
    assert 'id="subscription-north-morning"' in listed.text and "Every Tuesday at 07:00 Europe/Berlin" in listed.text
    assert 'action="/subscriptions/north-morning/delete"' in listed.text
    assert 'href="/audit?kind=subscription&amp;id=north-morning">Changes of north-morning</a>' in listed.text
    auditor = web.browser("auditor-north").get("/subscriptions")
    assert auditor.status == 200 and "north-morning" in auditor.text
    assert "north-morning/delete" not in auditor.text  # an auditor reads, never manages
    assert 'method="post" action="/subscriptions"' not in auditor.text
    south = web.browser("manager-south")
    assert "north-morning" not in south.get("/subscriptions").text
    assert south.submit("/subscriptions/north-morning/delete", {"site": ""}).status == 404
    assert web.table.get_subscription("north-morning") is not None
    browser.get("/subscriptions", site="north")
    ended = browser.submit("/subscriptions/north-morning/delete", {"site": "north"})
    assert ended.status == 303 and ended.location == "/subscriptions?site=north"
    assert web.table.get_subscription("north-morning") is None and schedules.deleted == [schedule_name("north-morning")]


@pytest.mark.parametrize(("changed", "field"), [
    ({"to": "not-an-address"}, "to"),
    ({"time": "25:00"}, "time"),
    ({"timezone": "Mars/Olympus"}, "timezone"),
    ({"checklists": "south-daily"}, "checklists"),
    ({"id": "no spaces please"}, "id"),
    ({"site_id": ""}, "site_id"),
])
def test_a_subscription_that_cannot_be_made_is_refused_next_to_its_field(
        web: Web, schedules: GroupSchedules, changed: dict[str, str], field: str) -> None:
    browser = web.browser("manager-north")
    browser.get("/subscriptions")
    answer = browser.submit("/subscriptions", {**SUBSCRIPTION, **changed})
    assert answer.status == 400, answer.text
    assert f'id="{field}-error"' in answer.text and f'aria-describedby="{field}-error"' in answer.text
    assert 'value="north-morning"' in answer.text or field == "id"  # what was typed is kept
    assert web.table.get_subscription("north-morning") is None and schedules.upserted == []


def test_who_may_not_subscribe_is_refused(web: Web, schedules: GroupSchedules) -> None:
    operator = web.browser("operator-north")
    answer = operator.get("/subscriptions")
    assert answer.status == 403 and "read_management" in unescape(answer.text)
    supervisor = web.browser("supervisor-north")
    refused = supervisor.submit("/subscriptions", SUBSCRIPTION)  # the session's token (the sign-out form's)
    assert refused.status == 403 and "supervisor at site north does not allow manage" in unescape(refused.text)
    assert web.table.get_subscription("north-morning") is None
    manager = web.browser("manager-north")
    forged = manager.post("/subscriptions", {"csrf": "not-the-token", **SUBSCRIPTION})
    assert forged.status == 403 and "did not come from your current session" in unescape(forged.text)
    assert web.table.get_subscription("north-morning") is None and schedules.upserted == []


def audited(kind: str, object_id: str, site_id: str | None, n: int) -> AuditEntry:
    return AuditEntry(kind=kind, object_id=object_id, site_id=site_id, changed_at=NOW + timedelta(minutes=n),
                      changed_by="manager-north" if n else "operator", action=ChangeAction.changed if n else
                      ChangeAction.created, before=None if n == 0 else {"name": f"v{n - 1}", "grace": "PT1H"},
                      after={"name": f"v{n}", "grace": "PT1H"}, event_id=f"event-{kind}-{object_id}-{n}",
                      sequence=f"{n:040d}")


def _entries(text: str) -> list[str]:
    return [part.split("</h3>", 1)[0] for part in text.split('<li class="card audit-entry">\n    <h3>')[1:]]


def test_an_objects_trail_oldest_first_for_who_may_read_it(web: Web) -> None:
    for n in range(3):
        web.table.put_audit_entry(audited("checklist", "daily", "north", n))
    web.table.put_audit_entry(audited("checklist", "south-daily", "south", 0))
    auditor = web.browser("auditor-north")
    answer = auditor.get("/audit", kind="checklist", id="daily")
    assert answer.status == 200, answer.text
    assert _entries(answer.text) == ["Created by operator", "Changed by manager-north", "Changed by manager-north"]
    assert "<tr><th scope=\"row\">name</th><td>v0</td><td>v1</td></tr>" in answer.text
    assert "grace" not in answer.text.split("Changed by manager-north", 1)[1]  # only the fields that changed
    assert "Mon 2 Mar 2026, 13:00 CET" in answer.text  # in the site's zone
    other = auditor.get("/audit", kind="checklist", id="south-daily")
    assert other.status == 404 and "Changed by" not in other.text and "Created by" not in other.text
    never = auditor.get("/audit", kind="checklist", id="nothing-here")
    assert never.status == 404
    assert web.browser("manager-south").get("/audit", kind="checklist", id="south-daily").status == 200
    assert web.browser("operator-north").get("/audit", kind="checklist", id="daily").status == 403
    assert web.browser("supervisor-north").get("/audit", kind="checklist", id="daily").status == 403


def test_a_kind_or_id_that_cannot_be_read_is_refused_next_to_its_field(web: Web) -> None:
    browser = web.browser("auditor-north")
    form = browser.get("/audit")
    assert form.status == 200 and '<label for="audit-kind">' in form.text and "audit-entry" not in form.text
    wrong = browser.get("/audit", kind="spaceship", id="daily")
    assert wrong.status == 400 and 'id="kind-error"' in wrong.text and 'aria-describedby="kind-error"' in wrong.text
    no_id = browser.get("/audit", kind="checklist")
    assert no_id.status == 400 and 'id="id-error"' in no_id.text
    unknown = browser.get("/audit", kind="checklist", id="daily", sort="newest")
    assert unknown.status == 400 and "is not a parameter of this page" in unescape(unknown.text)
