"""The HTTP API through HTTP against ``missed-checks local serve`` (issue #19): signed requests as an
app sends them (SigV4, service execute-api), the functions as built, the events API Gateway sends.

Record (and the same request again: one record), a batch with a bad row (nothing written), the
status of an equipment before and after its check, the missed list, a dismissal (by the caller),
the report of the judged hour as CSV (and as JSON, the rows of ``missed-checks report``), a backwards
range refused, and unsigned or badly signed requests refused with 403.

The record-to-dismissal test runs the server ``local serve`` runs in this process, on a simulated clock
the test moves past the window's close (the commands and the functions read that clock from the
stack): no real time is waited for and no verdict depends on the machine's speed. The refusals run
against ``local serve`` as a process, with its banner."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from missed_checks_local.clock import SimulatedClock
from missed_checks_local.serve import LocalServer
from missed_checks_local.serve_process import serve_process
from missed_checks_ops.target import stack_clock
from tests.e2e.test_local_clock import BOUND_S, START, _cli, _environment, _free_port, run, utc, wait_until

SPEED = 120  # the process-level fixture's clock (its tests never wait on it)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """``missed-checks local serve`` in a process of its own, with its HTTP API on a port of its own."""
    port, api_port = _free_port(), _free_port()
    output = tmp_path / "serve.out"
    with serve_process([*_cli(), "local", "serve", "--port", str(port), "--api-port", str(api_port), "--start",
                        START.isoformat(), "--speed", str(SPEED), "--log-file", str(tmp_path / "serve.log")],
                       output, timeout_s=BOUND_S, env=_environment()):
        yield {"endpoint": f"http://127.0.0.1:{port}", "api": f"http://127.0.0.1:{api_port}",
               "banner": output.read_text()}


@pytest.fixture
def driven(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The server ``local serve`` runs (:class:`LocalServer`, its moto endpoint and HTTP API on ports of
    their own) on a simulated clock the test moves: the commands and the functions read that clock, so
    what happens before a window closes and after it never depends on how fast the machine is."""
    clock = SimulatedClock(START)
    server = LocalServer(port=_free_port(), api_port=0, clock=clock, log_path=tmp_path / "serve.log")
    try:
        server.start()
        yield {"endpoint": server.endpoint, "api": server.api_url, "clock": clock, "server": server}
    finally:
        server.stop()


def advance(driven: dict[str, Any], instant: datetime) -> None:
    """Move the simulated clock to ``instant``, firing what falls due on the way at its own time (as
    ``local run`` does), and publish it to the commands (streams and executions settled)."""
    driven["server"].runtime.advance_to(instant)
    driven["server"].tick()


def stack_now(serve: dict[str, Any]) -> datetime:
    """The serve's simulated now (read with the local credentials, whatever the test process has)."""
    session = boto3.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-1")
    anchor = stack_clock(None, "us-east-1", serve["endpoint"], session=session)
    assert anchor is not None, "local serve publishes no clock"
    return anchor.now()


def call(serve: dict[str, Any], method: str, path: str, body: Any = None, *, sign: bool = True,
         secret: str = "testing", headers: dict[str, str] | None = None) -> tuple[int, str, Any]:
    """(status, content type, JSON or text body) of one request, signed as ``curl --aws-sigv4`` would."""
    data = json.dumps(body).encode() if body is not None else b""
    request = AWSRequest(method=method, url=serve["api"] + path, data=data,
                         headers={"Content-Type": "application/json", **(headers or {})})
    if sign:
        SigV4Auth(Credentials("testing", secret), "execute-api", "us-east-1").add_auth(request)
    prepared = urllib.request.Request(request.url, data=data or None, method=method, headers=dict(request.headers))
    try:
        with urllib.request.urlopen(prepared, timeout=BOUND_S) as response:
            status, content_type, raw = response.status, response.headers["Content-Type"], response.read()
    except urllib.error.HTTPError as error:
        status, content_type, raw = error.code, error.headers["Content-Type"], error.read()
    text = raw.decode()
    return status, content_type, json.loads(text) if "json" in (content_type or "") else text


def test_record_status_missed_and_dismiss_through_http(driven: dict[str, Any]) -> None:
    serve = driven
    run(serve, "checklist", "put", "hourly", "--recurrence", "DTSTART;TZID=Europe/Riga:20260302T000000",
        "--recurrence", "RRULE:FREQ=HOURLY", "--window", "PT50M", "--grace", "PT10M")
    run(serve, "equipment", "assign", "--checklist", "hourly", "done-1", "missed-1")
    driven["server"].tick()  # the stream settles: schedule-sync has written the hourly schedule
    first_hour = (stack_now(serve) + timedelta(hours=1)).replace(minute=0, second=0, microsecond=0)
    advance(driven, first_hour + timedelta(minutes=1))
    assert stack_now(serve) == first_hour + timedelta(minutes=1), "the commands read the stack's clock"

    # status before the check: the hour's window is open and undone, shown in Riga time
    status, kind, before = call(serve, "GET", "/equipment/done-1/status")
    assert (status, kind) == (200, "application/json"), before
    (hourly,) = before["checklists"]
    assert (hourly["checklist_id"], hourly["state"], hourly["timezone"]) == ("hourly", "undone", "Europe/Riga")
    assert hourly["window"]["start"].endswith("+02:00")

    # record with an idempotency key; the same request again records nothing more
    check = {"checklist_id": "hourly", "equipment_id": "done-1",
             "performed_at": stack_now(serve).strftime("%Y-%m-%dT%H:%M:%SZ")}
    status, _, recorded = call(serve, "POST", "/checks", check, headers={"Idempotency-Key": "tablet-7-0001"})
    assert status == 201, recorded
    assert recorded["written"] == 1 and recorded["recorded_by"] == "arn:aws:sts::123456789012:user/moto"
    # recorded at the stack's now (the clock stands until the test moves it), inside the open window
    assert utc(recorded["recorded_at"]) == first_hour + timedelta(minutes=1) < utc(hourly["window"]["end"])
    status, _, again = call(serve, "POST", "/checks", check, headers={"Idempotency-Key": "tablet-7-0001"})
    assert (status, again["replayed"], again["recorded_at"]) == (200, True, recorded["recorded_at"])
    status, kind, reused = call(serve, "POST", "/checks", {**check, "equipment_id": "missed-1"},
                                headers={"Idempotency-Key": "tablet-7-0001"})
    assert (status, kind, reused["field"]) == (409, "application/problem+json", "Idempotency-Key")
    status, _, after = call(serve, "GET", "/equipment/done-1/status")
    assert after["checklists"][0]["state"] == "done" and after["checklists"][0]["performed_at"]

    # a batch with a bad row: every bad row named, nothing written (missed-1 stays undone)
    status, kind, refused = call(serve, "POST", "/checks/batch", {"checks": [
        {**check, "equipment_id": "missed-1"}, {**check, "equipment_id": "missed-l"},
        {**check, "performed_at": "2026-03-02T07:00:00"}]})
    assert (status, kind) == (400, "application/problem+json"), refused
    assert [(e["row"], e["field"]) for e in refused["errors"]] == [("checks[2]", "performed_at")]
    status, kind, refused = call(serve, "POST", "/checks/batch", {"checks": [
        {**check, "equipment_id": "missed-1"}, {**check, "equipment_id": "missed-l"}]})
    assert (status, kind, refused["status"]) == (422, "application/problem+json", 422), refused
    assert [(e["row"], e["field"], e["kind"]) for e in refused["errors"]] == [
        ("checks[1]", "equipment_id", "not_assigned")]
    assert call(serve, "GET", "/equipment/missed-1/status")[2]["checklists"][0]["state"] == "undone"

    # the window is judged: missed-1 is missed; dismiss it (by the caller), once
    window_start = utc(hourly["window"]["start"])
    since = (window_start - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    until = (window_start + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    listing = f"/missed?checklist_id=hourly&from={since}&to={until}"
    assert call(serve, "GET", listing)[2]["missed"] == [], "nothing is judged before the window closes"
    advance(driven, utc(hourly["window"]["end"]) + timedelta(minutes=10, seconds=1))  # window and grace over
    missed = wait_until(lambda: driven["server"].tick() is not None and call(serve, "GET", listing)[2]["missed"],
                        "the window is judged")
    assert [(m["equipment_id"], m["dismissal"]) for m in missed] == [("missed-1", None)]
    dismissal = {"checklist_id": "hourly", "equipment_id": "missed-1", "window_start": missed[0]["window_start"],
                 "reason": "in the workshop"}
    status, _, dismissed = call(serve, "POST", "/missed/dismissals", dismissal)
    assert status == 200 and dismissed["dismissal"]["by"] == "arn:aws:sts::123456789012:user/moto"
    assert call(serve, "POST", "/missed/dismissals", dismissal)[0] == 409
    fleet = call(serve, "GET", f"/missed?from={since}&to={until}")[2]["missed"]
    assert [m["dismissal"]["reason"] for m in fleet] == ["in the workshop"]
    page = call(serve, "GET", f"/missed?from={since}&to={until}&limit=1")[2]  # a page, the last: no cursor
    assert (len(page["missed"]), page["next_cursor"]) == (1, None)
    status, _, problem = call(serve, "GET", f"/missed?from={since}&to={until}&cursor=bm90LWEtY3Vyc29y")
    assert (status, problem["field"]) == (400, "cursor"), problem
    assert call(serve, "GET", "/equipment/missed-1/status")[2]["checklists"][0]["open_misses"]["count"] == 1

    # the report of that hour as CSV (Accept: text/csv): done-1 on time, missed-1 dismissed (counted as
    # expected, left out of compliance), the fleet total; the same rows as `missed-checks report`
    hour = f"from={missed[0]['window_start']}&to={(window_start + timedelta(hours=1)).strftime('%Y-%m-%dT%H:%M:%SZ')}"
    status, kind, text = call(serve, "GET", f"/report?{hour}&checklist=hourly", headers={"Accept": "text/csv"})
    assert (status, kind) == (200, "text/csv; charset=utf-8"), text
    assert text.splitlines() == [
        "checklist_id,equipment_id,expected,on_time,late,missed,recorded_late,dismissed,excused,pending,compliance_pct",
        "hourly,done-1,1,1,0,0,0,0,0,0,100.0",
        "hourly,missed-1,1,0,0,0,0,1,0,0,",
        "*,*,2,1,0,0,0,1,0,0,100.0"]
    status, _, document = call(serve, "GET", f"/report?{hour}&checklist=hourly")
    command = run(serve, "report", "--from", missed[0]["window_start"], "--to",
                  (window_start + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"), "--checklist", "hourly")
    assert status == 200 and document["rows"] == command["rows"] and document["total"] == command["total"]


def test_unsigned_and_badly_signed_requests_are_refused(serve: dict[str, Any]) -> None:
    assert f"HTTP API: {serve['api']}" in serve["banner"]
    body = {"checklist_id": "x", "equipment_id": "y", "performed_at": "2026-03-02T05:00:00Z"}
    status, _, unsigned = call(serve, "POST", "/checks", body, sign=False)
    assert (status, unsigned) == (403, {"message": "Missing Authentication Token"})
    status, _, forged = call(serve, "POST", "/checks", body, secret="not-the-secret")
    assert status == 403 and "signature" in forged["message"]
    assert call(serve, "GET", "/no/such/route")[0] == 404
    status, kind, missing = call(serve, "GET", "/missed?from=2026-03-02T00:00:00Z")
    assert (status, kind, missing["field"]) == (400, "application/problem+json", "to")
    status, kind, backwards = call(serve, "GET", "/report?from=2026-03-05&to=2026-03-02&format=csv")
    assert (status, kind, backwards["field"]) == (400, "application/problem+json", "to")
    assert "after from" in backwards["detail"]
