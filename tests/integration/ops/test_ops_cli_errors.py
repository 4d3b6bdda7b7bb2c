"""Bad usage of the report commands fails at once with exit 2 and one clear line, before any work."""

from __future__ import annotations

from missed_checks_local.runtime import LocalRuntime
from tests.integration.ops.ops_support import Cli


def test_an_unwritable_report_output_is_refused_before_the_report_runs(runtime: LocalRuntime, cli: Cli) -> None:
    result = cli("report", "--from", "2026-03-01", "--to", "2026-03-08", "--output", "/nonexistent/dir/week.csv")
    assert result.code == 2
    assert result.err.strip().startswith("missed-checks: error: output: cannot write /nonexistent/dir/week.csv")
    assert result.out == ""


def test_periods_that_end_before_they_start_are_usage_errors(runtime: LocalRuntime, cli: Cli) -> None:
    for command in (("report",), ("missed", "list", "--checklist", "forklift-daily")):
        result = cli(*command, "--from", "2026-03-08", "--to", "2026-03-01")
        assert result.code == 2, command
        assert "--to (2026-03-01) must be after --from (2026-03-08)" in result.err
