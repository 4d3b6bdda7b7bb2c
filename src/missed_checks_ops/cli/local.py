"""missed-checks local: the whole system on an embedded AWS (moto), on a simulated clock.

  local run SCENARIO.json [--format table|json|csv|html] [--output FILE]
                                                      play a scenario and print the fleet report
  local demo [--format ...] [--output FILE]           play the bundled five-week scenario
  local serve [--port N] [--api-port N] [--speed X]   keep the stack running behind a local AWS endpoint
  local token USER                                    print an access token of a local user (people's API)
  local chaos [SCENARIO.json] [--seed N]              play it under injected faults, recover, compare

See README "Local runtime" for the scenario format and what is emulated.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from missed_checks.dead_letters import read_dead_letter
from missed_checks.errors import InvalidInput
from missed_checks.reporting.fleet_report import Report
from missed_checks.timefmt import parse_instant
from missed_checks_local import collect_less
from missed_checks_local.product.application import install
from missed_checks_local.serve_process import READY_LINE
from missed_checks_local.stopping import say_once, stop_signals
from missed_checks_ops.cli.common import RESULT_FORMATS, add_format_options, command_output, set_examples
from missed_checks_ops.cli.streams import EXIT_INTERRUPTED, EXIT_OK, finish, guarded_stdout
from missed_checks_ops.report_output import FORMATS, print_table, write_report
from missed_checks_ops.target import LOCAL_ENDPOINT, LOCAL_SERVE_PORT, StackTarget

if TYPE_CHECKING:
    from missed_checks_local.product.scenario import Scenario
    from missed_checks_ops.dlq import Replayed

DEMO_SCENARIO = "demo.json"


def register(subparsers: Any) -> None:
    local = subparsers.add_parser(
        "local",
        help="run the whole system on an embedded AWS (no account needed)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = local.add_subparsers(dest="local_command", metavar="COMMAND", required=True)

    run = commands.add_parser(
        "run", help="play a scenario file and print the report",
        description="Play a scenario on the embedded AWS and print the fleet report (the `missed-checks report` "
                    "command's, over the windows starting in the scenario's start..end) with what the run did.")
    set_examples(run, """  missed-checks local run my.json
  missed-checks local run my.json --format html --output my-report.html
  missed-checks local run my.json --format json --output my-run.json --log-file my.log""")
    run.add_argument("scenario", metavar="SCENARIO.json", help="the timeline to play (see README 'Local runtime')")
    _report_options(run)
    run.set_defaults(handler=_emulator(_run))

    demo = commands.add_parser(
        "demo", help="play the bundled five-week demo scenario",
        description="Play the bundled five-week scenario of a small fleet on the embedded AWS and print the fleet "
                    "report (the `missed-checks report` command's) with what the run did.")
    set_examples(demo, """  missed-checks local demo
  missed-checks local demo --format html --output demo-report.html
  missed-checks local demo --show-scenario > my.json    # the timeline, to edit and play with local run""")
    _report_options(demo)
    demo.add_argument("--show-scenario", action="store_true", help="print the demo scenario's JSON and exit")
    demo.set_defaults(handler=_emulator(_demo))

    serve = commands.add_parser("serve", help="keep the stack running behind a local AWS endpoint",
                                description="Deploy the stack into a local AWS endpoint and run its clock, "
                                            "schedules and stream until Ctrl-C; every ops command and the AWS CLI "
                                            "work against it.")
    set_examples(serve, f"""  missed-checks local serve --speed 60        # a simulated minute per second
  missed-checks checklist list --endpoint {LOCAL_ENDPOINT}    # in another terminal
  aws --endpoint-url {LOCAL_ENDPOINT} sqs list-queues""")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=LOCAL_SERVE_PORT,
                       help=f"port of the local AWS endpoint (default {LOCAL_SERVE_PORT})")
    serve.add_argument("--api-port", type=int, default=None,
                       help="port of the stack's HTTP API (default: --port + 1, or a free one when taken; "
                            "docs/http-api.md)")
    serve.add_argument("--people-api-port", type=int, default=None,
                       help="port of the stack's people's API, JWT-authorized (default: --port + 2, or a free one "
                            "when taken; docs/people.md)")
    serve.add_argument("--web-port", type=int, default=None,
                       help="port of the fleet manager's web app (default: --port + 3, or a free one when taken; "
                            "README 'Web app')")
    serve.add_argument("--scenario", metavar="demo|SCENARIO.json",
                       help="play a scenario into the stack first (demo: the bundled five weeks), its checklists and "
                            "equipment at site north, to explore in the web app; the clock then stands at its end")
    serve.add_argument("--speed", type=float, default=1.0, help="simulated seconds per real second (default 1)")
    serve.add_argument("--start", help="simulated start instant (ISO 8601, default now)")
    serve.add_argument("--log-file", type=Path, help="where handler and moto logs go")
    serve.add_argument(
        "--parameter",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a template parameter (repeatable)",
    )
    serve.set_defaults(handler=_emulator(_serve))

    token = commands.add_parser(
        "token", help="print a local user's access token for the people's API",
        description="Sign USER in to the user pool of the `missed-checks local serve` behind the endpoint "
                    "(InitiateAuth USER_PASSWORD_AUTH with the stack's app client) and print the access token "
                    "(--id: the id token), for `Authorization: Bearer` on the people's API. local serve "
                    "creates admin and, per site north and south, operator-, supervisor-, manager- and "
                    "auditor-<site> (docs/people.md).")
    set_examples(token, f"""  missed-checks local token operator-north --endpoint {LOCAL_ENDPOINT}
  missed-checks local token admin --id --format json --endpoint {LOCAL_ENDPOINT}   # both tokens, their lifetime""")
    token.add_argument("user", metavar="USER", help="the user to sign in, e.g. operator-north")
    token.add_argument("--endpoint", metavar="URL",
                       help=f"the local serve's endpoint (default $AWS_ENDPOINT_URL, else {LOCAL_ENDPOINT})")
    token.add_argument("--password", metavar="PASSWORD",
                       help="the user's password (default: $MISSED_CHECKS_PASSWORD, else the one local serve printed)")
    token.add_argument("--id", action="store_true", help="print the id token instead of the access token")
    add_format_options(token, RESULT_FORMATS)
    token.set_defaults(handler=_token)

    advance = commands.add_parser(
        "advance", help="move a running local serve's clock forward, judging what falls due on the way",
        description="Ask the `missed-checks local serve` behind the endpoint to move its simulated clock forward at "
                    "once, firing every schedule due on the way in time order (evaluations, reminders, digests) "
                    "and waiting until all of it is done, as if that time had passed. A clock started with "
                    "--speed 0 stands still between advances, so what a walkthrough shows does not depend on "
                    "how fast it is typed. Exit 2 for an instant before the stack's clock (time never goes back).")
    set_examples(advance, f"""  missed-checks local serve --start 2026-03-01T12:00:00+01:00 --speed 0  # elsewhere
  missed-checks local advance --by PT8H --endpoint {LOCAL_ENDPOINT}   # --to 2026-03-02T08:00:00+01:00: an instant
  missed-checks local advance --by P1D --endpoint {LOCAL_ENDPOINT}""")
    moved = advance.add_mutually_exclusive_group(required=True)
    moved.add_argument("--to", metavar="INSTANT", help="the instant to move to (ISO 8601 with offset)")
    moved.add_argument("--by", metavar="DURATION", help="how far to move (ISO 8601 duration, e.g. PT8H or P1D)")
    advance.add_argument("--endpoint", metavar="URL",
                         help=f"the local serve's endpoint (default $AWS_ENDPOINT_URL, else {LOCAL_ENDPOINT})")
    advance.add_argument("--timeout", type=float, default=900, metavar="SECONDS",
                         help="how long to wait for the stack to get there (default 900)")
    add_format_options(advance, RESULT_FORMATS)
    advance.set_defaults(handler=_advance)

    chaos = commands.add_parser(
        "chaos",
        help="play a scenario under injected faults, recover, and compare with a clean run",
        description="Plays the scenario twice (clean, then under faults), recovers both as README 'Operate' "
        "tells an operator (re-run stopped executions, replay every DLQ) and checks that no missed check was "
        "lost or duplicated, no window announced twice, no stream shard blocked. Exit 1 when one was.",
    )
    set_examples(chaos, """  missed-checks local chaos --seed 7
  missed-checks local chaos my.json --faults faults.json --format json --output chaos.json""")
    chaos.add_argument("scenario", metavar="SCENARIO.json", nargs="?",
                       help="the timeline to play (default: the bundled demo)")
    chaos.add_argument("--seed", type=int, default=0, help="seed of the random fault plan (default 0)")
    chaos.add_argument("--faults", type=Path, help="a fault plan (JSON) instead of a random one")
    output = chaos.add_argument_group("output")
    output.add_argument("--format", choices=RESULT_FORMATS, default="table",
                        help="table for people (default), json for tools: the figures")
    output.add_argument("--output", metavar="FILE", help="write there instead of standard output (replaced)")
    chaos.add_argument("--log-file", type=Path, help="where handler and moto logs go")
    chaos.set_defaults(handler=_emulator(_chaos))


def _emulator(handler: Any) -> Any:
    """A ``local`` command's handler, run with the emulator's garbage-collector thresholds, one
    botocore data loader for the process (patch 5i, installed before moto is imported) and the
    product registered with the kernel (:func:`missed_checks_local.product.application.install`)."""

    @functools.wraps(handler)
    def run(args: argparse.Namespace) -> int:
        collect_less()
        install()
        return int(handler(args))

    return run


def _chaos(args: argparse.Namespace) -> int:
    from missed_checks_local.product.chaos import (
        run_chaos,  # deferred: `missed-checks` start-up must not pay for the emulator
    )
    from missed_checks_local.product.scenario import Scenario

    if args.scenario:
        scenario = load_scenario(args.scenario)
    else:
        text = resources.files("missed_checks_local").joinpath("scenarios", DEMO_SCENARIO).read_text("utf-8")
        scenario = Scenario.from_dict(json.loads(text), name="demo")
    faults = load_faults(args.faults) if args.faults else None
    with _interruptible(args), command_output(args.format, args.output) as out:
        log_path = _default_log(args.log_file)
        try:
            result = run_chaos(scenario, replay=replay_dead_letters, seed=args.seed, faults=faults,
                               log_path=log_path)
        except InvalidInput:
            raise
        except Exception as error:
            print(f"missed-checks: the chaos run failed: {type(error).__name__}: {error}", file=sys.stderr)
            print(f"missed-checks: handler and moto logs: {log_path}", file=sys.stderr)
            return 1
        if out.format == "json":
            out.json(result)
        else:
            _print_chaos(result, out.say)
    print(f"chaos: {result['scenario']}, seed {result['seed']}, {result['injected_total']} faults injected: "
          + ("every invariant held" if result["ok"] else "an invariant broke"), file=sys.stderr)
    return 0 if result["ok"] else 1


def _print_chaos(result: dict[str, Any], say: Any) -> None:
    say(f"chaos: {result['scenario']}, seed {result['seed']}, {result['injected_total']} faults injected "
        f"in {result['elapsed_s']} s")
    for kind, count in result["injected"].items():
        say(f"  injected {kind}: {count}")
    say(f"  survived by retry: {result['survived_by_retry']}")
    for queue, count in result["dead_lettered"].items():
        if count:
            say(f"  dead-lettered in {queue}: {count}")
    recovery = result["recovery"]
    say(f"  recovery: {recovery.get('stopped_executions_rerun', 0)} stopped execution(s) re-run, "
        f"{recovery.get('dead_letters_replayed', 0)} dead letter(s) replayed, "
        f"{recovery.get('dead_letters_left', 0)} left")
    say(f"  missed checks: clean {result['missed_checks']['clean']}, faulty {result['missed_checks']['faulty']}")
    for name, value in result["invariants"].items():
        say(f"  {name}: {value}{'' if value == 0 else '   <-- broken'}")


def _report_options(parser: argparse.ArgumentParser) -> None:

    output = parser.add_argument_group("output")
    output.add_argument(
        "--format",
        "--report",  # its first spelling
        dest="report",
        choices=FORMATS,
        default="table",
        help="table for people (default, with what the run did), json (the whole run) or csv for tools, html: "
        "the report as one self-contained page (charts, heatmap, lists)",
    )
    output.add_argument("--output", metavar="FILE", help="write the report (any format) there instead of standard "
                        "output")
    parser.add_argument(
        "--log-file",
        type=Path,
        help="where handler and moto logs go (default: a new missed-checks-local-*.log in the temp directory, "
             "one per run)",
    )
    # digest (#18): a digest e-mail's HTML, to open in a browser
    output.add_argument("--digest-html", metavar="FILE", type=Path,
                        help="also write the HTML of the last digest the run e-mailed (without one: the weekly "
                             "digest of the run's last week, whole fleet, UTC) to FILE")


def _default_log(path: Path | None) -> Path:
    """``--log-file`` (emptied), else a log file of this run's own in the temp directory: two
    local runs at once never write the same file."""
    try:
        if path is None:
            handle, name = tempfile.mkstemp(prefix="missed-checks-local-", suffix=".log")
            os.close(handle)
            return Path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("", encoding="utf-8")
    except OSError as error:
        raise InvalidInput("log-file", f"cannot write {error.filename or path}: {error.strerror or error}") from None
    return path


def _run(args: argparse.Namespace) -> int:
    scenario = load_scenario(args.scenario)
    return _play(scenario, args, source=args.scenario)


def _demo(args: argparse.Namespace) -> int:
    from missed_checks_local.product.scenario import (
        Scenario,  # deferred: `missed-checks` start-up must not pay for the emulator
    )

    text = resources.files("missed_checks_local").joinpath("scenarios", DEMO_SCENARIO).read_text("utf-8")
    if args.show_scenario:
        sys.stdout.write(text)
        return 0
    scenario = Scenario.from_dict(json.loads(text), name="demo")
    return _play(scenario, args, source="missed-checks local demo --show-scenario", demo=True)


def _play(scenario: Any, args: argparse.Namespace, *, source: str, demo: bool = False) -> int:
    with _interruptible(args):
        return _play_once(scenario, args, source=source, demo=demo)


@contextmanager
def _interruptible(args: argparse.Namespace) -> Iterator[None]:
    """SIGINT and SIGTERM stop a local run (or chaos run) the same way, wherever it stands (even
    where the shell ignores SIGINT for background jobs), within
    :data:`missed_checks_local.stopping.STOP_BOUND_S`: the runtime closes on the way out (workers
    stopped, temporary folders removed), and the process ends with 130 and ``missed-checks:
    interrupted``; in-process (tests), main() says it."""
    owns = getattr(args, "owns_process", False)
    with stop_signals(owns_process=owns, code=EXIT_INTERRUPTED, line=INTERRUPTED):
        try:
            yield
        except KeyboardInterrupt:  # the runtime is closed by now
            if owns:
                say_once(INTERRUPTED)
                _end_promptly(args, EXIT_INTERRUPTED)
            raise


INTERRUPTED = "missed-checks: interrupted"


def _play_once(scenario: Any, args: argparse.Namespace, *, source: str, demo: bool) -> int:
    # deferred (and below): `missed-checks` start-up must not pay for the emulator
    from missed_checks_local.product.digests import last_digest_html
    from missed_checks_local.product.run_result import to_json
    from missed_checks_local.product.scenario import run_scenario

    with command_output(args.report, args.output) as out:
        log_path = _default_log(args.log_file)
        console = out.console
        err = Console(stderr=True)
        if args.report == "table" and demo and scenario.description:
            console.print(f"[bold]{scenario.name}[/bold]: {scenario.description}\n")
        digest: list[str] = []  # digest (#18): --digest-html (its file checked now), read before the stack goes
        _write_digest(args.digest_html, "")
        observe = (lambda runtime: digest.append(last_digest_html(runtime, scenario.end))) if args.digest_html else None
        try:
            if err.is_terminal:
                result = _with_progress(scenario, err, log_path, observe)
            else:
                result = run_scenario(scenario, log_path=log_path, observe=observe)
        except Exception as error:
            for denial in getattr(error, "denials", []):  # the cause before its consequence
                print(f"missed-checks: denied: {denial}", file=sys.stderr)
            if isinstance(error, InvalidInput):
                raise
            # the runtime itself failed: say what and where the logs are
            print(f"missed-checks: the local run failed: {type(error).__name__}: {error}", file=sys.stderr)
            print(f"missed-checks: handler and moto logs: {log_path}", file=sys.stderr)
            return 1
        if args.report == "json":
            out.stream.write(to_json(result))
        elif args.report == "table":
            explore = "demo" if demo else str(getattr(args, "scenario", "") or "SCENARIO.json")
            print_run(result, console, where_next=_where_next(result, source, log_path, explore))
            console.print(f"\nPlayed {len(scenario.events)} events in {result['elapsed_s']:.1f} s.", style="dim")
        else:
            subtitle = (f"Scenario {scenario.name!r} played on the local runtime (embedded AWS, simulated clock). "
                        f"{scenario.description}").strip()
            write_report(result["report"], args.report, out.stream, subtitle=subtitle)
    if args.output:
        print(f"missed-checks: wrote the {args.report} report to {args.output}", file=sys.stderr)
    if args.digest_html:  # digest (#18)
        _write_digest(args.digest_html, digest[0])
        print(f"missed-checks: wrote a digest's HTML to {args.digest_html}", file=sys.stderr)
    problems = result.get("deployment_problems") or []
    if problems:  # the built stack itself is broken: it would fail the same way on AWS
        for denial in result.get("denials") or []:  # the cause before its consequences
            print(f"missed-checks: denied: {denial}", file=sys.stderr)
        print("missed-checks: the deployed stack is broken (it would fail the same way on AWS):", file=sys.stderr)
        for problem in problems[:10]:
            print(f"  - {problem[:500]}", file=sys.stderr)
        print(f"missed-checks: handler and moto logs: {log_path}", file=sys.stderr)
        return 1
    return 0


def _write_digest(path: Path | None, html: str) -> None:
    """``--digest-html``'s file (digest, #18); nothing without one."""
    if path is None:
        return
    try:
        path.write_text(html, encoding="utf-8")
    except OSError as error:
        raise InvalidInput("digest-html", f"cannot write {path}: {error.strerror or error}") from None


def _with_progress(scenario: Any, console: Any, log_path: Path, observe: Any = None) -> dict[str, Any]:
    from missed_checks_local.product.scenario import (
        run_scenario,  # deferred: `missed-checks` start-up must not pay for the emulator
    )

    total = (scenario.end - scenario.start).total_seconds()
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[now]}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        # the runtime routes handler output itself; rich need not wrap stdout/stderr
        redirect_stdout=False,
        redirect_stderr=False,
        refresh_per_second=4,
    ) as progress:
        task = progress.add_task("simulating", total=total, now="")

        def update(now: datetime) -> None:
            progress.update(
                task,
                completed=(now - scenario.start).total_seconds(),
                now=now.strftime("%a %Y-%m-%d %H:%M UTC"),
            )

        return run_scenario(scenario, progress=update, log_path=log_path, observe=observe)


def _where_next(report: dict[str, Any], source: str, log_path: Path, explore: str = "demo") -> list[str]:
    lines = []
    letters = report["dead_letters"]
    for queue, messages in letters.items():
        if messages:
            lines.append(f"{queue} holds {len(messages)} message(s): see 'dead_letters' in --format json")
    if report["failed_executions"]:
        lines.append(f"{len(report['failed_executions'])} evaluation(s) failed: 'failed_executions' in --format json")
    lines.append("every window's outcome: --format json ('report' > 'windows'); the report as a page: --format html "
                 "--output report.html; as --format csv")
    lines.append(f"handler and moto logs of this run: {log_path}")
    lines.append(f"the timeline that was played: {source}")
    lines.append(
        f"drive the stack yourself: missed-checks local serve (then missed-checks ... --endpoint {LOCAL_ENDPOINT})"
    )
    lines.append(f"explore these weeks in the web app: missed-checks local serve --scenario {explore}, open the "
                 "Web app address it prints and sign in as manager-north (its password is printed too)")
    return lines


def _serve(args: argparse.Namespace) -> int:
    # deferred: `missed-checks` start-up must not pay for the emulator
    from missed_checks_local.product.application import firing_line
    from missed_checks_local.serve import LocalServer

    if args.speed < 0:
        raise InvalidInput("speed", f"{args.speed:g} is negative: give simulated seconds per real second, e.g. 60, "
                                    "or 0 for a clock that stands still until `missed-checks local advance`")
    start = parse_instant(args.start, "start") if args.start else None
    scenario = _serve_scenario(args)
    parameters = {}
    for item in args.parameter:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise InvalidInput("parameter", f"{item!r} is not NAME=VALUE: give e.g. --parameter LogLevel=DEBUG")
        parameters[name] = value
    console = Console()
    log_path = _default_log(args.log_file)

    def on_firing(firing: Any) -> None:
        console.print(firing_line(firing), markup=False, highlight=False)

    from missed_checks_local.clock import SimulatedClock

    server = LocalServer(
        host=args.host,
        port=args.port,
        speed=args.speed or 1.0,
        clock=(SimulatedClock(scenario.start) if scenario is not None
               else SimulatedClock(start or datetime.now(UTC)) if args.speed == 0 else None),
        start=start,
        parameters=parameters,
        log_path=log_path,
        on_firing=on_firing,
        api_port=args.api_port,
        people_api_port=args.people_api_port,
        web_port=args.web_port,
    )
    # Both stop it, wherever the loop is (waiting for a worker's answer too), within STOP_BOUND_S
    with stop_signals(owns_process=getattr(args, "owns_process", False), code=EXIT_OK,
                      on_stop=server.request_stop):
        _serve_until_stopped(server, console, log_path, args, scenario)
        _end_promptly(args, EXIT_OK)
    return EXIT_OK


def _serve_scenario(args: argparse.Namespace) -> Any:
    """The scenario ``serve --scenario`` plays first (None without one): ``demo`` or a file."""
    if not getattr(args, "scenario", None):
        return None
    if args.start:
        raise InvalidInput("start", "--scenario starts the clock at the scenario's start: leave --start out")
    from missed_checks_local.product.scenario import Scenario  # deferred: the emulator

    if args.scenario == "demo":
        text = resources.files("missed_checks_local").joinpath("scenarios", DEMO_SCENARIO).read_text("utf-8")
        return Scenario.from_dict(json.loads(text), name="demo")
    return load_scenario(args.scenario)


def _serve_until_stopped(server: Any, console: Console, log_path: Path, args: argparse.Namespace,
                         scenario: Any = None) -> None:
    # Said first, and flushed: a standard output that cannot be written stops it here (exit 3),
    # before a stack nobody can see the endpoint of is deployed.
    console.print(f"Deploying the stack behind {server.endpoint} (a few seconds) ...", highlight=False)
    stdout = guarded_stdout()
    if stdout is not None:
        stdout.raise_if_lost()
    try:
        stack = server.start()
        if scenario is not None:  # #32: its weeks to explore in the web app
            from missed_checks_local.product.exploring import load_scenario as play_into

            console.print(f"Playing the scenario {scenario.name} into the stack ...", highlight=False)
            played = play_into(server, scenario)
            console.print(f"Scenario {scenario.name}: {played} events played, its checklists and equipment at site "
                          f"north; the clock stands at its end", highlight=False, soft_wrap=True)
        console.print(f"[bold]Local AWS endpoint[/bold]: {server.endpoint}  (region {stack.region})")
        pace = (f"standing still until `missed-checks local advance --endpoint {server.endpoint}` moves it"
                if args.speed == 0 or scenario is not None else f"speed x{args.speed:g}")
        console.print(f"Clock: simulated, now {server.clock.now():%Y-%m-%dT%H:%M:%SZ}, {pace}: "
                      f"the missed-checks commands with --endpoint {server.endpoint} take their \"now\" from it",
                      highlight=False, soft_wrap=True)
        console.print(f"Logs: {log_path}")
        if server.api_url:  # the stack's HTTP API (issue #19; docs/http-api.md)
            console.print(f"[bold]HTTP API[/bold]: {server.api_url}  (SigV4 with the local credentials: "
                          f"curl --aws-sigv4 aws:amz:{stack.region}:execute-api --user testing:testing ...)",
                          highlight=False, soft_wrap=True)
        if server.people_api_url:  # the people's API (#31; docs/people.md)
            console.print(f"[bold]People's API[/bold]: {server.people_api_url}  (a bearer token of the stack's user "
                          f"pool: missed-checks local token USER --endpoint {server.endpoint})",
                          highlight=False, soft_wrap=True)
        if server.web_url:  # the fleet manager's web app (#32; README "Web app")
            console.print(f"[bold]Web app[/bold]: {server.web_url}  (open it in a browser and sign in as one of the "
                          f"users below)", highlight=False, soft_wrap=True)
        if server.people is not None:
            users = ", ".join(server.people.groups)
            console.print(f"[bold]Users[/bold] (password {server.people.password}): {users}",
                          highlight=False, soft_wrap=True)
            console.print(f"  e.g. TOKEN=$(missed-checks local token supervisor-north --endpoint {server.endpoint})\n"
                          f"       curl -sf -H \"Authorization: Bearer $TOKEN\" "
                          f"\"{server.people_api_url}/missed?from=2026-03-02T00:00:00Z&to=2026-03-09T00:00:00Z\"",
                          highlight=False, soft_wrap=True)
        console.print("[bold]Stack outputs[/bold]")
        for key, value in stack.outputs.items():
            console.print(f"  {key}: {value}", highlight=False, soft_wrap=True)
        console.print(
            f"\nTry: export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_DEFAULT_REGION={stack.region}\n"
            f"     missed-checks dlq list --endpoint {server.endpoint}\n"
            f"     aws --endpoint-url {server.endpoint} dynamodb scan --table-name {stack.table_name}",
            highlight=False,
            soft_wrap=True,
        )
        console.print(f"{READY_LINE}\n")
        server.run_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop(forget=not getattr(args, "owns_process", False))  # a process that ends keeps moto as it is


def _advance(args: argparse.Namespace) -> int:
    """``local advance``: ask the serve behind the endpoint to move its clock and wait until it did
    (:func:`missed_checks_local.endpoint.advance_serve`)."""
    from missed_checks.checklists.durations import parse_duration
    from missed_checks.checklists.recurrence.windows import add_duration
    from missed_checks_local.endpoint import AdvanceFailed, advance_serve, serve_session
    from missed_checks_ops.target import stack_clock

    endpoint = args.endpoint or os.environ.get("AWS_ENDPOINT_URL") or LOCAL_ENDPOINT
    to = parse_instant(args.to, "to") if args.to else None
    by = parse_duration(args.by, "by", allow_zero=False) if args.by else None
    session = serve_session()
    anchor = stack_clock(None, session.region_name, endpoint, session)
    if anchor is None:
        print(f"missed-checks: no local serve answers at {endpoint} (or it publishes no clock): start one in another "
              "terminal, e.g. missed-checks local serve --speed 0", file=sys.stderr)
        return 1
    now = anchor.now()
    target = to if to is not None else add_duration(now, by)  # type: ignore[arg-type]
    if target < now:
        raise InvalidInput("to", f"{args.to} is before the stack's clock ({now:%Y-%m-%dT%H:%M:%SZ}): "
                                 "the clock only moves forward")
    try:
        result = advance_serve(session, endpoint, target, args.timeout)
    except AdvanceFailed as failed:
        print(f"missed-checks: {failed}", file=sys.stderr)
        return 1
    firings = result["firings"]
    with command_output(args.format or "table", args.output) as out:
        if out.format == "json":
            out.json({"from": result["from"], "to": result["to"], "firings": firings})
            return 0
        lines = [f"the stack's clock moved from {result['from']} to {result['to']}; "
                 f"{len(firings)} schedule firing{'' if len(firings) == 1 else 's'}{':' if firings else ''}",
                 *(f"  {line}" for line in firings)]
        out.stream.write("\n".join(lines) + "\n")  # whole lines, however wide the terminal
    return 0


def _token(args: argparse.Namespace) -> int:
    """``local token USER``: the user's access (or id) token from the local stack's user pool."""
    from missed_checks_local.endpoint import serve_session
    from missed_checks_ops.people import password_for, sign_in
    from missed_checks_ops.target import TargetError, resolve_target

    endpoint = args.endpoint or os.environ.get("AWS_ENDPOINT_URL") or LOCAL_ENDPOINT
    session = serve_session()
    try:
        target = resolve_target(None, session.region_name, endpoint, {}, session=session)
        result = sign_in(target, args.user, password_for(args.password, local=True), field="user")
    except TargetError as error:
        print(f"missed-checks: {error} (is `missed-checks local serve` running at {endpoint}?)", file=sys.stderr)
        return 1
    except InvalidInput as error:
        print(f"missed-checks: {error}", file=sys.stderr)
        return 2
    with command_output(args.format or "table", args.output) as out:
        if out.format == "json":
            out.json({"user": args.user, "access_token": result["AccessToken"], "id_token": result["IdToken"],
                      "expires_in": result["ExpiresIn"]})
        else:
            out.stream.write((result["IdToken"] if args.id else result["AccessToken"]) + "\n")
    return 0


def _end_promptly(args: argparse.Namespace, code: int) -> None:
    """Once the runtime is closed (workers stopped, temporary folders removed), end the process
    without the interpreter's teardown of moto's many modules (seconds, after a stop signal); with
    exit 3 instead of 0 when what it printed could not be written (and a line saying so)."""
    if not getattr(args, "owns_process", False):
        return  # called in-process (tests): the caller's process goes on
    code = finish(code)
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def print_run(result: dict[str, Any], console: Console, *, where_next: list[str] | None = None) -> None:
    """A local run for people: the report's table (the ``report`` command's), its warnings, then what
    the run did (firings, executions, dead letters) and where to look next."""
    from missed_checks_local.product.notifications import count_line  # deferred: as the run itself
    from missed_checks_local.product.readiness import readiness_line

    report: Report = result["report"]
    print_table(report, console.file, console=console)
    for warning in report.warnings:
        console.print(f"warning: {warning}", markup=False, highlight=False)
    executions = result["executions"]
    firings = result["firings"]
    statuses = ", ".join(f"{count} {status.lower()}" for status, count in executions["by_status"].items())
    outcomes = ", ".join(f"{count} {outcome}" for outcome, count in executions["by_outcome"].items())
    console.print(
        f"\nSchedules fired {firings['fired']} times ({firings['failed_to_start']} failed to start); "
        f"{executions['started']} evaluations: {statuses or 'none'}"
        + (f" (plans: {outcomes})" if outcomes else "")
        + "."
    )
    dismissed = sum(1 for m in result["missed"] if m.get("dismissal"))
    console.print(f"Missed checks recorded: {len(result['missed'])} ({dismissed} dismissed); "
                  f"performed checks: {len(result['performed'])}.")
    if "notifications" in result:  # notifications (#18)
        console.print(count_line(result["notifications"]))
    if result.get("readiness") or result.get("defects"):  # cleared to operate (#33)
        console.print(readiness_line(result["readiness"], result["defects"]), markup=False, highlight=False)
    letters = result["dead_letters"]
    if any(letters.values()):
        console.print("\n[bold]Dead-letter queues[/bold]")
        for queue, messages in letters.items():
            if messages:
                console.print(f"  {queue}: {len(messages)} message(s)")
                for message in messages[:5]:
                    console.print(f"    - {_describe_letter(message)}", markup=False, highlight=False)
    if result.get("schedule_problems"):
        console.print("\n[bold]Schedules AWS would have refused[/bold]")
        for name, problem in result["schedule_problems"].items():
            console.print(f"  {name}: {problem}", markup=False)
    if where_next:
        console.print("\n[bold]Where to look next[/bold]")
        for line in where_next:
            console.print(f"  - {line}", highlight=False)


def _describe_letter(message: dict[str, Any]) -> str:
    return read_dead_letter(message.get("body"), message.get("attributes") or {}).summary


def load_scenario(path: str | Path) -> Scenario:
    """A scenario file (``SCENARIO``; ``-`` reads standard input), read by the operator's reader and
    parsed by the scenario player (:func:`missed_checks_local.product.scenario.parse_scenario`)."""
    from missed_checks_local.product.scenario import parse_scenario  # deferred: the emulator
    from missed_checks_ops.inputs import read_text

    path = Path(path)
    return parse_scenario(read_text(path, "SCENARIO"), str(path), path.stem)


def replay_dead_letters(stack: Any, now: datetime) -> list[Replayed]:
    """``missed-checks dlq replay`` of every queue of an embedded stack at ``now`` (the scenario
    player's recovery, :func:`missed_checks_local.product.scenario.recover_as_an_operator`)."""
    from missed_checks_ops.dlq import replay_queues  # deferred: boto3, for chaos only

    target = StackTarget(region=stack.region, endpoint_url=stack.endpoint_url, stack_name=stack.stack_name,
                         outputs=dict(stack.outputs), parameters=dict(stack.parameters))
    return replay_queues(target, now)


def load_faults(path: str | Path) -> list[Any]:
    """Faults from a JSON file (``--faults``): a list, or an object with a ``faults`` list."""
    from missed_checks_local.product.faults import parse_faults  # deferred: the emulator, for chaos only
    from missed_checks_ops.inputs import read_text

    if str(path) != "-" and not Path(path).exists():
        raise InvalidInput("--faults", f"{path}: no such file")
    try:
        raw = json.loads(read_text(path, "--faults"))
    except ValueError as error:
        raise InvalidInput("--faults", f"{path}: not JSON: {error}") from None
    if isinstance(raw, Mapping):
        raw = raw.get("faults")
    return parse_faults(raw, "--faults")
