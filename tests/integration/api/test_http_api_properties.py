"""Hostile requests to every route of the HTTP API, generated: bodies (wrong types, unknown or missing
fields, ids with a newline or a space, deep nesting, bytes that are not UTF-8, members twice, random
JSON, random bytes) and query strings (unknown or repeated parameters, bad zones, ranges, ids, bad
percent-escapes). Whatever arrives, the answer is a 4xx problem+json (naming the field for 400, 413
and 422), or a success whose effect reads back unchanged from the table: never a 500, never an
exception out of the function.

The functions are the built ones, run by the emulator's Lambda runtime (as test_http_api_handlers
does) with events made by the local API Gateway's own event builder
(``missed_checks_local.apigateway.server.http_api_event``: a body that is not UTF-8 arrives base64,
repeated parameters joined with commas, as API Gateway does), on the samples' checklist
(tests/event_samples.py) with the Monday window's misses on record. How many examples: the
hypothesis profile (tests/conftest.py; ``ci``: 200 per test)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import quote, unquote

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from missed_checks import clock
from missed_checks.aws.table import ChecklistTable
from missed_checks.checklists.checklist import JudgedBy
from missed_checks.evaluation.missed_check import MissedCheck
from missed_checks.timefmt import parse_instant, to_utc_iso
from missed_checks_local.apigateway.routes import Route
from missed_checks_local.apigateway.server import http_api_event
from missed_checks_local.apigateway.sigv4 import Caller
from tests.event_samples import (
    CHECKED,
    CHECKLIST,
    CREATED,
    EQUIPMENT,
    MONDAY_END,
    MONDAY_START,
    seed_sample_checklist,
)

NOW = MONDAY_START.replace(hour=6, minute=15)  # 07:15 in Berlin, the Monday window open
MISSED = [e for e in EQUIPMENT if e not in CHECKED]
CALLER = Caller("AKIAIOSFODNN7EXAMPLE", "123456789012", "arn:aws:iam::123456789012:user/yard-tablet-7",
                "AIDAEXAMPLEYARDTABLET")
SETTINGS = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.data_too_large, HealthCheck.filter_too_much])
STATUSES = {200, 201, 400, 404, 409, 413, 422}


@pytest.fixture
def stack(local_stack: Any) -> Iterator[Any]:
    """The shared stack with the samples' checklist and fleet, and a missed check on record for every
    piece of equipment not checked in the Monday window (so dismissals can succeed)."""
    clock.set_source(lambda: NOW)
    table = ChecklistTable(local_stack.table_name)
    seed_sample_checklist(table)
    checklist = table.get_checklist(CHECKLIST)
    assert checklist is not None
    window = next(iter(checklist.parsed().windows(MONDAY_START, MONDAY_END)))
    table.open_window(CHECKLIST, window, JudgedBy())
    for equipment_id in MISSED:
        table.put_missed_check(MissedCheck(checklist_id=CHECKLIST, equipment_id=equipment_id, window=window,
                                           judged_at=NOW, execution="seed"))
    yield local_stack
    clock.set_source(None)


def route(key: str) -> Route:
    path = key.split(" ", 1)[1]
    pattern = re.compile("^" + re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(path)) + "$")
    return Route(key, "", "AWS_IAM", "2.0", pattern)


def send(stack: Any, function: str, key: str, *, path: str | None = None, query: str = "", body: bytes = b"",
         headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    """One request as API Gateway hands it to ``function``; the answer checked for what every answer
    must be (never a failure of the function, never a 5xx; a refusal is problem+json naming the field)."""
    the_route = route(key)
    raw_path = path or the_route.path
    found = the_route.pattern.match(raw_path)
    assert found is not None, raw_path
    request = http_api_event(the_route, found.groupdict(), the_route.method, raw_path, query,
                           {"content-type": "application/json", **(headers or {})}, body, api_id="api",
                           account_id="123456789012", caller=CALLER, source_ip="198.51.100.7")
    invocation = stack.lambda_runtime.invoke(function, request)
    assert invocation.error is None, invocation.error
    result = invocation.result
    status = int(result["statusCode"])
    answer_headers = {str(k).lower(): str(v) for k, v in (result.get("headers") or {}).items()}
    text = str(result.get("body") or "")
    assert status in STATUSES, (status, text)
    event(f"{key}: {status}")  # --hypothesis-show-statistics: how often each answer was reached
    if status >= 400:
        assert answer_headers["content-type"] == "application/problem+json", (status, text)
        problem = json.loads(text)
        assert problem["status"] == status and problem["detail"], problem
        if status in (400, 413, 422):
            assert isinstance(problem.get("field"), str) and problem["field"], problem
    return status, answer_headers, text


# -- the corpus ------------------------------------------------------------------------------------
def mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any], good_in_ten: int = 6) -> st.SearchStrategy[Any]:
    return st.integers(0, 9).flatmap(lambda n: good if n < good_in_ten else bad)


SUFFIXES = ["\n", "\r\n", " ", "\x00", "\t", "\u2028", "\u00e9", "#", "/", "%0A", "\ud800", ",", "\ufeff"]
odd_values = st.one_of(st.none(), st.booleans(), st.integers(-(10**20), 10**20),
                       st.floats(allow_nan=False, allow_infinity=False), st.lists(st.integers(), max_size=3),
                       st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


def hostile_text(good: list[str], good_in_ten: int = 7) -> st.SearchStrategy[Any]:
    """A good value most of the time; else one with something after (or before) it, any text, a very
    long one, or a value of another type."""
    base = st.sampled_from(good)
    return mostly(base, good_in_ten=good_in_ten, bad=st.one_of(
        st.tuples(base, st.sampled_from(SUFFIXES)).map(lambda t: t[0] + t[1]),
        st.tuples(st.sampled_from(SUFFIXES), base).map(lambda t: t[0] + t[1]),
        base.map(str.upper), st.text(max_size=30), st.text(min_size=200, max_size=300),
        st.just(""), odd_values))


OFFSETS = ["Z", "z", "+00:00", "+01:00", "-03:00", "+05:30", "+14:00", ""]


@st.composite
def instants(draw: st.DrawFn, low: Any = CREATED, high: Any = NOW) -> str:
    """Mostly an instant the checks can have (in the fleet's assigned life, not in the future), with
    any offset and sometimes fractions; else something near one."""
    seconds = draw(st.integers(0, int((high - low).total_seconds())))
    offset = draw(st.sampled_from(OFFSETS[:-1]))
    moment = low + timedelta(seconds=seconds)
    zone = timedelta(0) if offset.lower() in ("z", "+00:00") else (
        timedelta(hours=int(offset[1:3]), minutes=int(offset[4:6])) * (1 if offset[0] == "+" else -1))
    local = (moment + zone).replace(tzinfo=None)
    text = local.isoformat(timespec=draw(st.sampled_from(["seconds", "seconds", "milliseconds", "minutes"])))
    text += offset
    return draw(mostly(st.just(text), st.one_of(
        st.just(text[:-len(offset)] if offset else text), st.just(text + "\n"), st.just(" " + text),
        st.sampled_from(["2026-03-02", "2026-13-02T00:00:00Z", "9999-12-31T23:59:59Z", "2026-03-02T06:10:00+25:00",
                         "2026-03-30T00:00:00Z", "0001-01-01T00:00:00Z"]), odd_values, st.text(max_size=30)), 7))


def checks(draw: st.DrawFn, good_in_ten: int = 7) -> dict[str, Any]:
    return {"checklist_id": draw(hostile_text([CHECKLIST], good_in_ten)),
            "equipment_id": draw(hostile_text(EQUIPMENT, good_in_ten)), "performed_at": draw(instants())}


@st.composite
def objects(draw: st.DrawFn, fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` with, sometimes, one missing and, sometimes, one more (a known name in another case,
    or an unknown one)."""
    document = dict(fields)
    if document and draw(st.integers(0, 9)) == 0:
        document.pop(draw(st.sampled_from(sorted(document))))
    if draw(st.integers(0, 9)) == 0:
        extra = draw(st.one_of(st.sampled_from(["by", "dismissed_at", "recorded_by", "recorded_at", "Checklist_Id",
                                                "checks", "reason", "id"]), st.text(max_size=8)))
        document.setdefault(extra, draw(st.one_of(st.text(max_size=8), odd_values)))
    return document


json_values = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False,
                                                                                       allow_infinity=False),
                                     st.text(max_size=10)),
                           lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                   st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                           max_leaves=10)


@st.composite
def raw_bodies(draw: st.DrawFn, document: Any) -> bytes:
    """``document`` as UTF-8 JSON most of the time; else the same in Latin-1, with a member twice,
    nested deep, cut short, random JSON, random bytes, empty."""
    text = json.dumps(document, ensure_ascii=draw(st.booleans()))
    choice = draw(st.integers(0, 19))
    if choice < 12:
        return text.encode("utf-8", "surrogatepass")
    if choice == 12:
        return text.encode("latin-1", "replace") + b"\xe9\xff"
    if choice == 13 and text.startswith("{") and len(text) > 2:
        return (text[:-1] + ', "checklist_id": "' + CHECKLIST + '"}').encode("utf-8", "surrogatepass")
    if choice == 14:
        depth = draw(st.sampled_from([9, 50, 1000, 100_000]))
        return ("[" * depth + "]" * depth).encode()
    if choice == 15:
        return text[: draw(st.integers(0, max(0, len(text) - 1)))].encode("utf-8", "surrogatepass")
    if choice == 16:
        return json.dumps(draw(json_values)).encode()
    if choice == 17:
        return draw(st.binary(max_size=64))
    if choice == 18:
        return draw(st.sampled_from([b"", b" ", b"null", b"NaN", b'{"checks": 1e999}', b"\xef\xbb\xbf{}"]))
    return ('{"checks": [' + ",".join([json.dumps(document)] * 501) + "]}").encode("utf-8", "surrogatepass")


@st.composite
def query_strings(draw: st.DrawFn, parameters: dict[str, Any]) -> str:
    """The parameters (hostile values), percent-encoded as a client would, sometimes raw; sometimes one
    repeated, one unknown, or a broken escape."""
    pairs = [(name, value) for name, value in parameters.items() if value is not None and isinstance(value, str)]
    if pairs and draw(st.integers(0, 9)) == 0:
        pairs.append(draw(st.sampled_from(pairs)))
    if draw(st.integers(0, 14)) == 0:
        pairs.append((draw(st.sampled_from(["checklists", "by", "equipment_id", "limit", "TZ", ""])),
                      draw(st.text(max_size=5))))
    encoded = [f"{quote(name, safe='')}={quote(value.encode('utf-8', 'surrogatepass'), safe=',:/')}"
               for name, value in pairs]
    if draw(st.integers(0, 19)) == 0:
        encoded.append(draw(st.sampled_from(["%FF=1", "tz=%E0%A4", "&&", "=x", "from"])))
    return "&".join(encoded)


def idempotency_keys() -> st.SearchStrategy[dict[str, str]]:
    key = hostile_text(["0b7e6c1a-4f0e-4f51-9d1e-2f6a3c9d8e11", "tablet-7:2026-03-02"]).filter(
        lambda k: isinstance(k, str) and "\x00" not in k and "\n" not in k and "\r" not in k)
    return st.one_of(st.just({}), key.map(lambda k: {"idempotency-key": k}))


# -- the properties ----------------------------------------------------------------------------------
def read_back(stack: Any, sent: list[dict[str, Any]]) -> None:
    """Every check of a successful request is on record as sent (its instant at second precision, in
    UTC, as every instant is stored)."""
    stored = {(c.equipment_id, to_utc_iso(c.performed_at)) for c in ChecklistTable(stack.table_name)
              .performed_checks_of_checklist(CHECKLIST, CREATED, NOW + timedelta(minutes=10))}
    for check in sent:
        assert check["checklist_id"] == CHECKLIST
        assert (check["equipment_id"], to_utc_iso(parse_instant(check["performed_at"], "performed_at"))) in stored


@SETTINGS
@given(data=st.data())
def test_post_checks_answers_a_problem_or_records_what_was_sent(stack: Any, data: st.DataObject) -> None:
    document = data.draw(mostly(objects(checks(data.draw)), st.one_of(odd_values, json_values), 8))
    body = data.draw(raw_bodies(document))
    status, _headers, text = send(stack, "ApiChecksFunction", "POST /checks", body=body,
                                  query=data.draw(st.sampled_from(["", "", "", "by=someone"])),
                                  headers=data.draw(idempotency_keys()))
    if status in (200, 201):
        answer = json.loads(text)
        assert json.loads(body.decode("utf-8")) == document
        read_back(stack, [document])
        assert [c["equipment_id"] for c in answer["checks"]] == [document["equipment_id"]]


@SETTINGS
@given(data=st.data())
def test_post_a_batch_answers_a_problem_or_records_every_check(stack: Any, data: st.DataObject) -> None:
    rows = [data.draw(mostly(st.just(checks(data.draw, 9)), objects(checks(data.draw)), 8))
            for _ in range(data.draw(st.integers(0, 4)))]
    document = data.draw(objects({"checks": data.draw(mostly(st.just(rows), st.one_of(odd_values, st.just({}))))}))
    body = data.draw(raw_bodies(document))
    status, _headers, text = send(stack, "ApiChecksFunction", "POST /checks/batch", body=body,
                                  headers=data.draw(idempotency_keys()))
    if status in (200, 201):
        assert json.loads(body.decode("utf-8")) == document
        read_back(stack, document["checks"])
        assert len(json.loads(text)["checks"]) == len(document["checks"])


@SETTINGS
@given(equipment_id=hostile_text(EQUIPMENT + ["FL-001/a@b+c:d"]), query=st.sampled_from(["", "", "x=1", "tz=UTC"]),
       get_body=st.sampled_from([b"", b"", b"", b"{}", b"\xff"]))
def test_get_status_answers_a_problem_or_the_status_of_the_id_sent(stack: Any, equipment_id: Any, query: str,
                                                                   get_body: bytes) -> None:
    assume(isinstance(equipment_id, str) and equipment_id)
    path = "/equipment/" + quote(equipment_id.encode("utf-8", "surrogatepass"), safe=":@+") + "/status"
    status, _headers, text = send(stack, "ApiStatusFunction", "GET /equipment/{equipment_id}/status", path=path,
                                  query=query, body=get_body)
    if status == 200:
        answer = json.loads(text)
        assert answer["equipment_id"] == equipment_id == unquote(path.split("/")[2])
        assert [c["checklist_id"] for c in answer["checklists"]] == [CHECKLIST]


@SETTINGS
@given(data=st.data())
def test_get_missed_answers_a_problem_or_the_missed_checks_of_the_range_sent(stack: Any, data: st.DataObject) -> None:
    start = data.draw(instants(MONDAY_START - timedelta(days=200), MONDAY_START))
    end = data.draw(instants(MONDAY_START, MONDAY_START + timedelta(days=200)))
    parameters = {"from": start, "to": end, "checklist_id": data.draw(st.one_of(st.none(), hostile_text([CHECKLIST])))}
    status, _headers, text = send(stack, "ApiMissedFunction", "GET /missed", query=data.draw(query_strings(parameters)))
    if status == 200:
        answer = json.loads(text)
        low, high = parse_instant(answer["from"], "from"), parse_instant(answer["to"], "to")
        assert timedelta(0) < high - low <= timedelta(days=366)
        for item in answer["missed"]:
            assert low <= parse_instant(item["window_start"], "window_start") < high
            assert item["checklist_id"] == (answer["checklist_id"] or CHECKLIST)
        if low <= MONDAY_START < high and answer["checklist_id"] in (None, CHECKLIST):
            assert sorted(item["equipment_id"] for item in answer["missed"]) == MISSED


@SETTINGS
@given(data=st.data())
def test_post_a_dismissal_answers_a_problem_or_dismisses_with_the_reason_sent(stack: Any,
                                                                              data: st.DataObject) -> None:
    document = data.draw(objects({
        "checklist_id": data.draw(hostile_text([CHECKLIST])),
        "equipment_id": data.draw(hostile_text(MISSED + CHECKED[:1])),
        "window_start": data.draw(mostly(st.sampled_from([to_utc_iso(MONDAY_START), "2026-03-02T06:00:00+01:00"]),
                                         instants())),
        "reason": data.draw(mostly(st.sampled_from(["in the workshop", "Prüfung ausgefallen"]),
                                   st.one_of(st.text(max_size=40), st.text(min_size=990, max_size=1010),
                                             st.just("  "), odd_values)))}))
    body = data.draw(raw_bodies(document))
    status, _headers, text = send(stack, "ApiMissedFunction", "POST /missed/dismissals", body=body,
                                  query=data.draw(st.sampled_from(["", "", "", "by=x"])))
    if status == 200:
        answer = json.loads(text)
        stored = {item["equipment_id"]: item for item in ChecklistTable(stack.table_name).missed_checks_of_checklist(
            CHECKLIST, MONDAY_START, MONDAY_END)}
        dismissal = stored[document["equipment_id"]]["dismissal"]
        assert dismissal == answer["dismissal"]
        assert dismissal["reason"] == document["reason"].strip()  # kept as sent, without surrounding blanks
        assert dismissal["by"] == CALLER.user_arn


@SETTINGS
@given(data=st.data())
def test_get_report_answers_a_problem_or_the_report_of_the_range_sent(stack: Any, data: st.DataObject) -> None:
    dates = st.sampled_from(["2026-03-01", "2026-03-02", "2026-03-03", "2026-03-09", "2026-03-29", "2027-03-30",
                             "2027-03-31", "2026-02-30", "2026-3-1"])
    parameters = {
        "from": data.draw(mostly(dates, instants(MONDAY_START - timedelta(days=3), MONDAY_START))),
        "to": data.draw(mostly(dates, instants(MONDAY_START, MONDAY_START + timedelta(days=3)))),
        "tz": data.draw(st.one_of(st.none(), hostile_text(["UTC", "Europe/Berlin", "America/Argentina/Buenos_Aires"]),
                                  st.sampled_from(["Europe", "", "Etc", "zoneinfo", "iso3166.tab", "../../etc/passwd",
                                                   "E" * 10_000]))),
        "checklist": data.draw(st.one_of(st.none(), hostile_text([CHECKLIST, f"{CHECKLIST},{CHECKLIST}"]))),
        "equipment": data.draw(st.one_of(st.none(), hostile_text(EQUIPMENT + [",".join(EQUIPMENT)]))),
        "format": data.draw(st.one_of(st.none(), hostile_text(["json", "csv"])))}
    status, headers, text = send(stack, "ApiReportFunction", "GET /report", query=data.draw(query_strings(parameters)))
    if status == 200:
        if headers["content-type"].startswith("text/csv"):
            assert text.splitlines()[0].startswith("checklist_id,equipment_id,")
        else:
            answer = json.loads(text)
            low, high = parse_instant(answer["from"], "from"), parse_instant(answer["to"], "to")
            assert timedelta(0) < high - low <= timedelta(days=366, hours=1)
            assert {row["checklist_id"] for row in answer["rows"]} <= {CHECKLIST}
