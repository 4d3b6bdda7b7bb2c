"""The HTTP API's answers are bounded (issue #30). ``GET /missed`` pages: a fleet's 45,000 missed
checks, seeded through the table adapter (batch writes) on the shared stack's moto, answered by the
function's resolver in this process, page after page: every one exactly once, never a 500, every
answer under Lambda's 6 MB (the emulator does not enforce that limit, so the test measures each
body itself); a cursor is bound to its query, and a bad one or a page too large is a 400 naming the
parameter. ``GET /report`` is one answer, refused with 413 and what to do when it would outlast
API Gateway's 30 s."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from types import ModuleType, SimpleNamespace
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from missed_checks.aws.table import ChecklistTable, keys
from missed_checks.aws.table.base import serialize
from missed_checks.aws.table.windows import judged_window_fields, missed_check_item
from missed_checks.checklists.checklist import JudgedBy
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.evaluation.missed_check import MissedCheck
from missed_checks_ops.target import StackTarget

LAMBDA_ANSWER_BYTES = 6 * 1024 * 1024
"""Lambda's synchronous answer (what API Gateway receives) holds at most 6 MB."""
FIRST = datetime(2026, 2, 20, 6, tzinfo=UTC)
CHECKLISTS = [f"fleet-{n}" for n in range(9)]
DAYS = 50  # February 20 to April 10: three months of the fleet's walk
EQUIPMENT = [f"FL-{n:03d}" for n in range(100)]
IAM = {"iam": {"userArn": "arn:aws:iam::123456789012:user/app"}}


def missed_event(query: dict[str, str]) -> dict[str, Any]:
    """``GET /missed`` as API Gateway sends it (payload 2.0)."""
    return {"version": "2.0", "routeKey": "GET /missed", "rawPath": "/missed",
            "rawQueryString": "&".join(f"{k}={v}" for k, v in query.items()), "queryStringParameters": query,
            "headers": {}, "isBase64Encoded": False,
            "requestContext": {"http": {"method": "GET", "path": "/missed"}, "stage": "$default", "authorizer": IAM}}


def seed(table: ChecklistTable, checklists: list[str], days: int, equipment: list[str],
         dismissal: dict[str, str] | None = None) -> int:
    """Judged windows (daily, with their fleet index entries) and a missed check of every piece of
    equipment in each (with ``dismissal`` when given): BatchWriteItem, 25 at a time."""
    requests: list[dict[str, Any]] = []
    for checklist_id in checklists:
        for day in range(days):
            start = FIRST + timedelta(days=day)
            window = OccurrenceWindow(start, start + timedelta(hours=8), start + timedelta(hours=9))
            fields = judged_window_fields(checklist_id, window, JudgedBy("FREQ=DAILY"))
            requests.append({"PutRequest": {"Item": serialize(
                {**keys.judged_window_key(checklist_id, fields["window_start"]), **fields})}})
            requests.extend({"PutRequest": {"Item": serialize({**missed_check_item(MissedCheck(
                checklist_id, equipment_id, window, window.evaluate_at, "seed")), "dismissal": dismissal})}}
                for equipment_id in equipment)
    table.batch_write(requests)
    return len(checklists) * days * len(equipment)


@pytest.fixture
def missed(local_stack: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[ModuleType, ChecklistTable]]:
    monkeypatch.setenv("TABLE_NAME", local_stack.table_name)
    from functions.api_missed import app

    yield app, ChecklistTable(local_stack.table_name)


def call(module: ModuleType, query: dict[str, str]) -> tuple[int, dict[str, Any], int]:
    """The function's answer to ``GET /missed?query``: status, body, and the body's size in bytes."""
    result = module.app.resolve(missed_event(query), None)
    body = result["body"]
    return result["statusCode"], json.loads(body), len(body.encode("utf-8"))


def every_page(module: ModuleType, query: dict[str, str], then: dict[str, str] | None = None,
               ) -> Iterator[tuple[dict[str, Any], int, float]]:
    """Every page of ``query``, following ``next_cursor``; after the first, with ``then`` too (a
    cursor belongs to the query, not to the page size)."""
    cursor: str | None = None
    while True:
        started = time.perf_counter()
        status, page, size = call(module, {**query, **({"cursor": cursor, **(then or {})} if cursor else {})})
        assert status == 200, page
        assert size < LAMBDA_ANSWER_BYTES
        yield page, size, time.perf_counter() - started
        cursor = page["next_cursor"]
        if cursor is None:
            return


@pytest.mark.duration(120)
def test_the_fleets_45000_missed_checks_come_in_pages_each_once_and_each_answer_under_6_mb(
        missed: tuple[ModuleType, ChecklistTable]) -> None:
    module, table = missed
    started = time.perf_counter()
    total = seed(table, CHECKLISTS, DAYS, EQUIPMENT)
    seeded = time.perf_counter() - started
    query = {"from": "2026-02-01T00:00:00Z", "to": "2026-05-01T00:00:00Z"}
    started = time.perf_counter()
    pages = list(every_page(module, query, then={"limit": "1000"}))
    took = time.perf_counter() - started
    keys_seen = [(m["checklist_id"], m["window_start"], m["equipment_id"])
                 for page, _, _ in pages for m in page["missed"]]
    assert total == 45_000 and len(keys_seen) == total and len(set(keys_seen)) == total
    # the default page (500), then the largest (1,000); the last page says it is the last
    assert [len(page["missed"]) for page, _, _ in pages] == [500] + [1000] * 44 + [500]
    print(f"\n/missed over {total} missed checks: seeded in {seeded:.1f} s; {len(pages)} pages in {took:.1f} s, "
          f"largest {max(size for _, size, _ in pages)} bytes, slowest {max(t for _, _, t in pages):.2f} s")
    one = [m for page, _, _ in every_page(module, {**query, "checklist_id": "fleet-4", "limit": "1000"})
           for m in page["missed"]]
    assert [(m["window_start"], m["equipment_id"]) for m in one] == sorted(
        (w, e) for c, w, e in keys_seen if c == "fleet-4")


def test_a_page_of_the_longest_dismissals_is_cut_short_of_the_byte_bound_and_goes_on(
        missed: tuple[ModuleType, ChecklistTable]) -> None:
    """1,000 missed checks each dismissed with 1,000 characters outside the BMP (12 bytes each as
    JSON's escapes: 12 MB of reasons): the page stops before 4 MB and the next one goes on."""
    module, table = missed
    reason = "\U0001F69C" * 1000
    seed(table, ["long-reasons"], 10, [f"{'E' * 120}-{n:03d}" for n in range(100)],
         {"reason": reason, "by": "arn:aws:iam::123456789012:user/" + "u" * 64, "at": "2026-03-11T00:00:00Z"})
    query = {"from": "2026-02-20T00:00:00Z", "to": "2026-03-10T00:00:00Z", "limit": "1000"}
    pages = list(every_page(module, query))
    assert [page["missed"][0]["dismissal"]["reason"] == reason for page, _, _ in pages] == [True] * len(pages)
    assert len(pages) == 4 and 300 < len(pages[0][0]["missed"]) < 1000
    assert max(size for _, size, _ in pages) < app_bytes_bound()
    assert len({(m["window_start"], m["equipment_id"]) for page, _, _ in pages for m in page["missed"]}) == 1000


def app_bytes_bound() -> int:
    from functions.api_missed.app import MAX_PAGE_BYTES

    return MAX_PAGE_BYTES + 2_000  # the page's own members besides its missed checks


@pytest.mark.parametrize("limit", ["1", "7", "1000"])
def test_a_cursor_round_trip_reads_every_missed_check_once_whatever_the_page(
        missed: tuple[ModuleType, ChecklistTable], limit: str) -> None:
    module, table = missed
    seed(table, ["a-list", "b-list"], 3, ["E1", "E2", "E3"])
    for filters in ({}, {"checklist_id": "b-list"}):
        query = {"from": "2026-02-21T00:00:00Z", "to": "2026-03-01T00:00:00Z", "limit": limit, **filters}
        pages = [page for page, _, _ in every_page(module, query)]
        got = [(m["checklist_id"], m["window_start"], m["equipment_id"]) for page in pages for m in page["missed"]]
        expected = [(c, f"2026-02-{day}T06:00:00Z", e) for c in (["b-list"] if filters else ["a-list", "b-list"])
                    for day in (21, 22) for e in ("E1", "E2", "E3")]
        assert got == expected
        assert all(len(page["missed"]) == min(int(limit), len(expected)) for page in pages[:-1])
        assert pages[-1]["next_cursor"] is None and all(page["next_cursor"] for page in pages[:-1])


def test_a_bad_cursor_or_a_page_too_large_is_a_400_naming_the_parameter(
        missed: tuple[ModuleType, ChecklistTable]) -> None:
    module, table = missed
    seed(table, ["a-list"], 3, ["E1", "E2", "E3"])
    query = {"from": "2026-02-20T00:00:00Z", "to": "2026-03-01T00:00:00Z", "limit": "2"}
    status, first, _ = call(module, query)
    assert status == 200 and first["next_cursor"]
    cursor = first["next_cursor"]
    forged = {"v": 1, "q": json.loads(_decoded(cursor))["q"],
              "p": {"month": "2026-02", "checklist_id": "a-list", "after": "2027-01-01T00:00:00Z#E1"}}
    refusals = {
        "not base64": {**query, "cursor": "not a cursor!"},
        "truncated": {**query, "cursor": cursor[:-5]},
        "another query's": {**query, "from": "2026-02-19T00:00:00Z", "cursor": cursor},
        "another checklist's": {**query, "checklist_id": "a-list", "cursor": cursor},
        "edited to leave the range": {**query, "cursor": _encoded(json.dumps(forged))},
        "too long": {**query, "cursor": "A" * 2000},
    }
    for name, refused in refusals.items():
        status, problem, _ = call(module, refused)
        assert (status, problem.get("field")) == (400, "cursor"), (name, problem)
    for limit in ("1001", "0", "-1", "ten", "1.5", ""):
        status, problem, _ = call(module, {**query, "limit": limit})
        assert (status, problem.get("field")) == (400, "limit"), (limit, problem)
    assert "1 to 1000" in call(module, {**query, "limit": "5000"})[1]["detail"]
    assert call(module, {**query, "cursor": cursor})[0] == 200


def _decoded(cursor: str) -> str:
    import base64

    return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()


def _encoded(text: str) -> str:
    import base64

    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def test_missed_list_on_the_command_line_follows_the_pages_to_the_last(
        missed: tuple[ModuleType, ChecklistTable], monkeypatch: pytest.MonkeyPatch) -> None:
    """``missed-checks missed list`` reads the same pages as ``GET /missed`` and prints them all."""
    from missed_checks_ops import missed as ops_missed

    _, table = missed
    seed(table, ["a-list"], 3, ["E1", "E2", "E3"])
    monkeypatch.setattr(ops_missed, "PAGE", 2)
    target = cast("StackTarget", SimpleNamespace(table=lambda: table))
    listed = ops_missed.list_missed(target, FIRST, FIRST + timedelta(days=3), checklist_id="a-list")
    assert [(m["window_start"][:10], m["equipment_id"]) for m in listed] == [
        (day, e) for day in ("2026-02-20", "2026-02-21", "2026-02-22") for e in ("E1", "E2", "E3")]


def test_a_report_that_outlasts_the_apis_wait_is_a_413_saying_how_to_get_it(
        local_stack: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The report stops once building it has taken :data:`REPORT_SECONDS` (here none at all: after
    its first checklist), instead of running into API Gateway's 30 s and answering nothing."""
    from functions.api_report import app as report
    from missed_checks import clock
    from tests.event_samples import CREATED, seed_sample_checklist

    monkeypatch.setenv("TABLE_NAME", local_stack.table_name)
    clock.set_source(lambda: CREATED + timedelta(days=30))
    try:
        seed_sample_checklist(ChecklistTable(local_stack.table_name))
        event = {**missed_event({"from": "2026-03-01", "to": "2026-03-31", "format": "csv"}),
                 "routeKey": "GET /report", "rawPath": "/report"}
        event["requestContext"] = {**event["requestContext"], "http": {"method": "GET", "path": "/report"}}
        assert report.app.resolve(event, None)["statusCode"] == 200
        monkeypatch.setattr(report, "REPORT_SECONDS", 0.0)
        result = report.app.resolve(event, None)
    finally:
        clock.set_source(None)
    problem = json.loads(result["body"])
    assert (result["statusCode"], problem["field"]) == (413, "to"), problem
    assert "shorter range" in problem["detail"] and "missed-checks report" in problem["detail"]


def test_a_page_out_of_time_ends_early_with_where_to_go_on(missed: tuple[ModuleType, ChecklistTable]) -> None:
    """Past its deadline a page stops after the Query it made (so each page moves on), shorter than
    ``limit``, with a position; following the positions reads every missed check once."""
    _, table = missed
    seed(table, ["a-list", "b-list", "c-list"], 2, ["E1", "E2"])
    start, end = FIRST, FIRST + timedelta(days=2)
    got, after, pages = [], None, 0
    while True:
        page, after = table.missed_checks_page(start, end, limit=1000, after=after, deadline=time.monotonic() - 1)
        got += [(m["checklist_id"], m["window_start"], m["equipment_id"]) for m in page]
        pages += 1
        if after is None:
            break
    assert pages == 3 and len(got) == len(set(got)) == 12  # one checklist's month per page


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_an_edited_cursor_is_a_400_or_a_page_of_the_same_query_never_an_error(
        missed: tuple[ModuleType, ChecklistTable], data: st.DataObject) -> None:
    """Whatever a client makes of a cursor (a character changed, cut, lengthened, or its JSON
    rewritten), the answer is a 400 naming ``cursor`` or a page of the query's own range."""
    module, table = missed
    if table.missed_checks_of_checklist("a-list", FIRST, FIRST + timedelta(days=3)) == []:
        seed(table, ["a-list", "b-list"], 3, ["E1", "E2"])
    query = {"from": "2026-02-20T00:00:00Z", "to": "2026-02-23T00:00:00Z", "limit": "3"}
    cursor = call(module, query)[1]["next_cursor"]
    state = json.loads(_decoded(cursor))
    edited = data.draw(st.one_of(
        st.builds(lambda at, char: cursor[:at] + char + cursor[at + 1:], st.integers(0, len(cursor) - 1),
                  st.sampled_from("AZaz09-_=+/ .")),
        st.integers(0, len(cursor) - 1).map(lambda at: cursor[:at]),
        st.text(min_size=1, max_size=40).map(lambda tail: cursor + tail),
        st.fixed_dictionaries({"month": st.sampled_from([None, "2026-02", "2026-03", "2026-13", 7]),
                               "checklist_id": st.sampled_from(["a-list", "b-list", "c-list", "", None]),
                               "after": st.sampled_from([None, state["p"]["after"], "2026-02-20T06:00:00Z#E1",
                                                         "2026-03-20T06:00:00Z#E1", "2026-02-20T06:00:00Z#",
                                                         "#", "2026-02-21T06:00:00Z#E1\n", "x"])}
                              ).map(lambda p: _encoded(json.dumps({**state, "p": p})))))
    status, page, _ = call(module, {**query, "cursor": edited})
    assert status in (200, 400), page
    if status == 400:
        assert page["field"] == "cursor", page
    else:
        assert all("2026-02-20" <= m["window_start"] < "2026-02-23" for m in page["missed"])
