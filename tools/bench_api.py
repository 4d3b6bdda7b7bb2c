"""Latency of the HTTP API through ``local serve`` (issue #19): a record (POST /checks, signed,
with an idempotency key) and a status read (GET /equipment/{id}/status), each timed from the
client as an app sees it: SigV4 signing, HTTP, the local API Gateway, the function's warm worker,
DynamoDB on moto. Then the management API through the people's API (#31), as people signed in to
the local user pool: a management write (``manager-north`` edits a checklist with its ETag, ``PUT
/checklists/{id}`` + ``If-Match``) and a scoped list (``operator-north`` lists checklists, ``GET
/checklists``, with --checklists at each of the two sites: only north's come back). Prints figures;
it is never a test (docs/http-api.md#latency).

    .venv/bin/python tools/bench_api.py --requests 200
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from missed_checks_local.serve_process import serve_process

CREDENTIALS = Credentials("testing", "testing")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def signed(method: str, url: str, body: dict[str, object] | None = None,
           headers: dict[str, str] | None = None) -> tuple[int, float]:
    """(status, milliseconds) of one signed request, signing included."""
    started = time.perf_counter()
    data = json.dumps(body).encode() if body is not None else b""
    request = AWSRequest(method=method, url=url, data=data, headers={"Content-Type": "application/json",
                                                                     **(headers or {})})
    SigV4Auth(CREDENTIALS, "execute-api", "us-east-1").add_auth(request)
    prepared = urllib.request.Request(url, data=data or None, method=method, headers=dict(request.headers))
    with urllib.request.urlopen(prepared, timeout=60) as response:
        response.read()
        status = response.status
    return status, (time.perf_counter() - started) * 1000


def bearer(method: str, url: str, token: str, body: dict[str, object] | None = None,
           headers: dict[str, str] | None = None) -> tuple[int, float, dict[str, str], object]:
    """(status, milliseconds, headers by lower-case name, JSON body) of one request with a bearer token."""
    started = time.perf_counter()
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json", **(headers or {})})
    with urllib.request.urlopen(request, timeout=60) as response:
        answer = json.loads(response.read() or b"null")
        status, got = response.status, {k.lower(): v for k, v in response.headers.items()}
    return status, (time.perf_counter() - started) * 1000, got, answer


def summary(name: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)]
    return (f"{name:<28} n={len(samples):<5} median {statistics.median(samples):7.1f} ms   p95 {p95:7.1f} ms   "
            f"max {ordered[-1]:7.1f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=200, help="records and status reads each (default 200)")
    parser.add_argument("--checklists", type=int, default=50,
                        help="checklists at each of the two sites for the scoped list (default 50)")
    args = parser.parse_args()
    port, api_port, people_port = free_port(), free_port(), free_port()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("AWS_")},
           "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
           "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}"}
    cli = [str(Path(sys.prefix) / "bin" / "missed-checks")]
    with tempfile.TemporaryDirectory() as scratch, serve_process(
            [*cli, "local", "serve", "--port", str(port), "--api-port", str(api_port),
             "--people-api-port", str(people_port), "--log-file", str(Path(scratch) / "serve.log")],
            Path(scratch) / "serve.out", timeout_s=600, env=env):
        subprocess.run([*cli, "checklist", "put", "bench-daily", "--recurrence",
                        "DTSTART;TZID=Europe/Riga:20260302T060000", "--recurrence", "RRULE:FREQ=DAILY",
                        "--window", "PT8H"], env=env, check=True, capture_output=True)
        subprocess.run([*cli, "equipment", "assign", "--checklist", "bench-daily", "TUG-1",
                        "--at", "2026-01-01T00:00:00Z"], env=env, check=True, capture_output=True)
        api = f"http://127.0.0.1:{api_port}"
        base = datetime.now(UTC) - timedelta(days=1)
        # warm both functions first (the first call starts a worker: reported apart, as a cold start)
        cold_record = signed("POST", f"{api}/checks", {"checklist_id": "bench-daily", "equipment_id": "TUG-1",
                                                       "performed_at": base.strftime("%Y-%m-%dT%H:%M:%SZ")})[1]
        cold_status = signed("GET", f"{api}/equipment/TUG-1/status")[1]
        records, reads = [], []
        for n in range(args.requests):
            at = (base + timedelta(seconds=n + 1)).strftime("%Y-%m-%dT%H:%M:%SZ")
            status, ms = signed("POST", f"{api}/checks",
                                {"checklist_id": "bench-daily", "equipment_id": "TUG-1", "performed_at": at},
                                {"Idempotency-Key": f"bench-{n}"})
            assert status == 201, status
            records.append(ms)
            status, ms = signed("GET", f"{api}/equipment/TUG-1/status")
            assert status == 200, status
            reads.append(ms)
        people = f"http://127.0.0.1:{people_port}"

        def token(user: str) -> str:
            return subprocess.run([*cli, "local", "token", user], env=env, check=True, capture_output=True,
                                  text=True).stdout.strip()

        manager, operator = token("manager-north"), token("operator-north")
        managers = {"north": manager, "south": token("manager-south")}
        rule = {"recurrence": "DTSTART:20260302T060000\nRRULE:FREQ=DAILY", "window": "PT8H"}
        for site, site_manager in managers.items():
            for n in range(args.checklists):
                status, _, _, _ = bearer("POST", f"{people}/checklists", site_manager,
                                         {"id": f"bench-{site}-{n:03d}", "site_id": site, **rule})
                assert status == 201, status
        writes, lists = [], []
        status, _, got, _ = bearer("GET", f"{people}/checklists/bench-north-000", manager)
        etag = got["etag"]
        for n in range(args.requests):
            status, ms, got, _ = bearer("PUT", f"{people}/checklists/bench-north-000", manager,
                                        {**rule, "name": f"edit {n}"}, {"If-Match": etag})
            assert status == 200, status
            etag = got["etag"]
            writes.append(ms)
            status, ms, _, page = bearer("GET", f"{people}/checklists?limit=1000", operator)
            assert status == 200, status
            assert isinstance(page, dict) and {c["site_id"] for c in page["items"]} == {"north"}, page
            assert len(page["items"]) == args.checklists, len(page["items"])
            lists.append(ms)
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"]
    print(f"HTTP API through local serve, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, "
          f"load {' '.join(load)}")
    print(f"{'first record (cold worker)':<28} {cold_record:7.1f} ms;  first status read (cold worker) "
          f"{cold_status:7.1f} ms")
    print(summary("POST /checks (warm)", records))
    print(summary("GET /equipment/{id}/status", reads))
    print(f"management API through the people's API (bearer tokens), {args.checklists} checklists at each of 2 sites:")
    print(summary("PUT /checklists/{id} If-Match", writes))
    print(summary("GET /checklists (scoped)", lists))
    return 0


if __name__ == "__main__":
    sys.exit(main())
