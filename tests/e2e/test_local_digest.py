"""A local run with digest subscriptions, through the command line as a user runs it:
``local run --format json`` lists every digest sent in ``notifications`` (kind ``digest``), one per
subscription and period, naming the equipment missed in that period, exactly as computed by hand
below; ``--digest-html`` writes the last one's HTML.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from missed_checks_ops.cli.main import main

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.filterwarnings("ignore:No application metrics to publish:UserWarning"),
]

SCENARIO = {
    "name": "digests",
    "start": "2026-03-01T00:00:00Z",  # Sunday
    "end": "2026-03-05T00:00:00Z",  # Thursday 01:00 Berlin
    "events": [
        {"at": "2026-03-01T09:00:00Z", "put_checklist": {
            "id": "forklift-daily", "name": "Forklift pre-use check", "window": "PT8H", "grace": "PT30M",
            "recurrence": "DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"}},
        {"at": "2026-03-01T09:00:00Z", "assign": {"checklist": "forklift-daily", "equipment": ["fl-01", "fl-02"]}},
        {"at": "2026-03-01T09:00:00Z", "subscribe_digest": {
            "id": "fleet-daily", "to": "fleet@example.com", "period": "daily", "time": "07:00",
            "timezone": "Europe/Berlin"}},
        {"at": "2026-03-01T09:00:00Z", "subscribe_digest": {
            "id": "lead-weekly", "to": "lead@example.com", "period": "weekly", "day": "WE", "time": "08:00",
            "timezone": "Europe/Berlin", "checklists": ["forklift-daily"]}},
        # Monday: fl-01 only. Tuesday: both. Wednesday: nothing (judged after the run ends).
        {"at": "2026-03-02T07:00:00Z", "performed": {"checklist": "forklift-daily", "equipment": "fl-01"}},
        {"at": "2026-03-03T07:00:00Z", "performed": {"checklist": "forklift-daily", "equipment": "fl-01"}},
        {"at": "2026-03-03T08:00:00Z", "performed": {"checklist": "forklift-daily", "equipment": "fl-02"}},
    ],
}

# By hand: the daily digest goes at 07:00 Berlin (06:00Z) for the previous local day; the weekly
# one on Wednesday 08:00 Berlin for Wednesday 25 February to Tuesday 3 March.
EXPECTED = [
    ("fleet@example.com", "2026-02-28T23:00:00Z", [], "2026-03-02T06:00"),  # Sunday: nothing due
    ("fleet@example.com", "2026-03-01T23:00:00Z", ["fl-02"], "2026-03-03T06:00"),  # Monday: fl-02 missed
    ("fleet@example.com", "2026-03-02T23:00:00Z", [], "2026-03-04T06:00"),  # Tuesday: both done
    ("lead@example.com", "2026-02-24T23:00:00Z", ["fl-02"], "2026-03-04T07:00"),  # the week: fl-02 once
]


def test_local_run_lists_each_digest_once_and_writes_the_last_ones_html(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "digests.json"
    scenario.write_text(json.dumps(SCENARIO), encoding="utf-8")
    out, html = tmp_path / "run.json", tmp_path / "digest.html"
    code = main(["local", "run", str(scenario), "--format", "json", "--output", str(out),
                 "--digest-html", str(html)])
    assert code == 0, capsys.readouterr().err
    result = json.loads(out.read_text(encoding="utf-8"))
    digests = [n for n in result["notifications"] if n["kind"] == "digest"]
    assert [(n["to"], n["window_start"], n["equipment"], n["sent_at"][:16]) for n in digests] == EXPECTED
    assert all(n["checklist"] == "*" for n in digests)
    assert digests[-1]["subject"] == ("Weekly missed-checks digest, Wed 25 Feb – Tue 03 Mar 2026: "
                                      "75.0 % done, 1 missed")  # 3 of 4
    assert result["dead_letters"] == {k: [] for k in result["dead_letters"]}

    page = html.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "Weekly digest: Wed 25 Feb – Tue 03 Mar 2026" in page
    assert "<script" not in page and "<style" not in page
    assert page.index('data-id="fl-02"') < page.index('data-id="fl-01"')  # worst first


def test_a_bad_subscription_in_a_scenario_names_the_event_and_field(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    bad = json.loads(json.dumps(SCENARIO))
    bad["events"][3]["subscribe_digest"]["checklists"] = ["no-such-checklist"]
    bad["events"][2]["subscribe_digest"]["time"] = "7am"
    scenario = tmp_path / "bad.json"
    scenario.write_text(json.dumps(bad), encoding="utf-8")
    assert main(["local", "run", str(scenario)]) == 2
    assert "events[2].subscribe_digest.time" in capsys.readouterr().err
    bad["events"][2]["subscribe_digest"]["time"] = "07:00"
    scenario.write_text(json.dumps(bad), encoding="utf-8")
    assert main(["local", "run", str(scenario)]) == 2
    assert "events[3].subscribe_digest.checklists: no checklist 'no-such-checklist'" in capsys.readouterr().err


def test_without_a_subscription_digest_html_is_the_weekly_digest_of_the_runs_last_week(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = {**SCENARIO, "events": [e for e in SCENARIO["events"] if "subscribe_digest" not in e]}
    scenario = tmp_path / "plain.json"
    scenario.write_text(json.dumps(plain), encoding="utf-8")
    out, html = tmp_path / "run.json", tmp_path / "digest.html"
    assert main(["local", "run", str(scenario), "--format", "json", "--output", str(out),
                 "--digest-html", str(html)]) == 0, capsys.readouterr().err
    assert [n for n in json.loads(out.read_text(encoding="utf-8"))["notifications"] if n["kind"] == "digest"] == []
    page = html.read_text(encoding="utf-8")
    # The run ends Thursday 5 March 00:00Z: the last whole week is Monday 23 February to Sunday 1 March.
    assert "Weekly digest: Mon 23 Feb – Sun 01 Mar 2026" in page and "local-weekly" in page
    unwritable = main(["local", "run", str(scenario), "--digest-html", str(tmp_path / "no" / "such" / "x.html")])
    assert unwritable == 2 and "digest-html: cannot write" in capsys.readouterr().err
