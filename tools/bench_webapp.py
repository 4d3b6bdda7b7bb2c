"""Per page of the web app (#32): server time and table reads, measured locally. Prints figures; it
is never a test (docs/app.md#per-page-time-and-table-reads, docs/measurements.md).

The server ``local serve`` runs starts in this process with the fleet of ``tools/webapp_fleet.py``
(an hourly checklist at north, two misses, one forklift out of service); each page is requested as
a person whose role may see it, signed in through the sign-in form. Per page: one cold request
first (the web app's worker process may start), then ``--requests`` warm ones, each timed from the
client (HTTP, the local API Gateway, the function's warm worker, the session read, the page's use
cases, DynamoDB on moto, the template) and each counted at the embedded DynamoDB: how many requests
the page made of the table, and how many of them read (GetItem, Query, BatchGetItem, Scan).

    .venv/bin/python tools/bench_webapp.py --requests 30
    .venv/bin/python tools/bench_webapp.py --requests 30 --page "Missed checks" --page Report
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: `tools` importable

from tools.webapp_fleet import (  # noqa: E402
    CHECKLIST,
    EQUIPMENT,
    TableRequests,
    WebClient,
    reads,
    seed,
    start_server,
)

PAGES: tuple[tuple[str, str | None, str], ...] = (
    ("Sign-in", None, "/sign-in"),
    ("Today", "supervisor-north", "/?site=north"),
    ("Record a check", "operator-north", f"/record/{EQUIPMENT[1]}"),
    ("Missed checks", "supervisor-north", f"/missed?site=north&checklist={CHECKLIST}"),
    ("Equipment", "manager-north", "/equipment"),
    ("One piece of equipment", "manager-north", f"/equipment/{EQUIPMENT[2]}"),
    ("Checklists", "manager-north", "/checklists"),
    ("One checklist", "manager-north", f"/checklists/{CHECKLIST}"),
    ("New checklist", "manager-north", "/checklists/new"),
    ("Closure calendars", "manager-north", "/calendars"),
    ("Report", "manager-north", "/report?site=north"),
    ("Subscriptions", "manager-north", "/subscriptions"),
    ("Audit trail", "manager-north", f"/audit?kind=checklist&id={CHECKLIST}"),
)
"""(page, who asks for it, path): every page a person reads (None: no one signed in)."""


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


@dataclass
class Measured:
    """One page's requests: the cold one's status and time, then each warm one's time and table requests."""

    name: str
    path: str
    user: str | None
    cold_status: int
    cold_ms: float
    times: list[float] = field(default_factory=list)
    counts: list[Counter[str]] = field(default_factory=list)

    def row(self) -> str:
        who = self.user or "(no one)"
        if self.cold_status != 200:
            return f"| {self.name} | `{self.path}` | {who} | answered {self.cold_status} | | | | | | |"
        totals = sorted({sum(c.values()) for c in self.counts})
        read_totals = sorted({reads(c) for c in self.counts})
        typical = Counter(tuple(sorted(c.items())) for c in self.counts).most_common(1)[0][0]
        operations = ", ".join(f"{n} {operation}" for operation, n in typical)
        return (f"| {self.name} | `{self.path}` | {who} | {statistics.median(self.times):.1f} ms "
                f"| {percentile(self.times, 0.95):.1f} ms | {max(self.times):.1f} ms | {self.cold_ms:.0f} ms "
                f"| {_spread(totals)} | {_spread(read_totals)} | {operations} |")


def _spread(values: list[int]) -> str:
    return str(values[0]) if len(values) == 1 else f"{values[0]} to {values[-1]}"


def measure(base: str, password: str, requests: int, pages: Sequence[str] = ()) -> list[Measured]:
    """Each page of :data:`PAGES` (those named ``pages`` alone, when given) measured."""
    people: dict[str | None, WebClient] = {}
    measured = []
    for name, user, path in PAGES:
        if pages and name not in pages:
            continue
        if user not in people:
            people[user] = WebClient(base)
            if user is not None:
                people[user].sign_in(user, password)
        client = people[user]
        cold = client.request("GET", path)
        page = Measured(name, path, user, cold.status, cold.milliseconds)
        measured.append(page)
        if cold.status != 200:
            continue
        for _ in range(requests):
            with TableRequests() as counted:
                answer = client.request("GET", path)
            if answer.status != 200:
                raise AssertionError(f"{name} {path}: {answer.status} on a warm request")
            page.times.append(answer.milliseconds)
            page.counts.append(Counter(counted))
    return measured


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=30, help="warm requests per page (default 30)")
    parser.add_argument("--page", action="append", default=[], metavar="NAME",
                        help="measure this page alone (its name in the table; repeat for more; default: every page)")
    args = parser.parse_args(argv)
    if args.requests < 1:
        parser.error("--requests: give 1 or more")
    unknown = sorted(set(args.page) - {name for name, _, _ in PAGES})
    if unknown:
        parser.error(f"--page: {unknown[0]!r} is not a page; give one of " + ", ".join(name for name, _, _ in PAGES))
    started = datetime.now(UTC)
    before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-webapp-") as scratch:
        server = start_server(Path(scratch) / "serve.log")
        try:
            seed(server)
            assert server.people is not None
            measured = measure(str(server.web_url).rstrip("/"), server.people.password, args.requests, args.page)
        finally:
            server.stop(forget=False)
    after = os.getloadavg()
    print(f"# the web app's pages through local serve: one cold request, then {args.requests} warm ones each")
    print(f"measured {started:%Y-%m-%d %H:%M} UTC on {platform.machine()}, {os.cpu_count()} cores, load average "
          f"{before[0]:.1f} / {before[1]:.1f} / {before[2]:.1f} at the start, {after[0]:.1f} at the end")
    print()
    print("| page | path | as | median | p95 | max | cold | table requests | of them reads | by operation |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for page in measured:
        print(page.row())
    return 0


if __name__ == "__main__":
    sys.exit(main())
