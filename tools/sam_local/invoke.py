"""`make invoke`: one function, one event, through the real `sam local invoke`, in a container.

    python tools/sam_local/invoke.py PlanEvaluationFunction events/plan_evaluation.json
    python tools/sam_local/invoke.py PlanEvaluationFunction events/plan_evaluation.json \\
        --endpoint http://127.0.0.1:5000            # a local stack: missed-checks local serve (default)
    python tools/sam_local/invoke.py PlanEvaluationFunction my-event.json \\
        --env-vars env.json --region eu-central-1    # a deployed stack (tools/sam_local/env_vars.py --stack)

The function runs from `make invoke`'s build (``--template``: this machine's architecture, built by
the Makefile) in podman, started for the invoke and stopped afterwards (tools/sam_local/engine).
Against a local stack, the stack's resource names and the endpoint the container reaches (podman's
bridge gateway) are read from the running `missed-checks local serve` into an env-vars file, and
the local stack's credentials are used. Prints the handler's result on standard output (SAM's
logs on standard error) and exits with SAM's status; exits 1 with one line saying what to do when
no stack can be reached.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import boto3

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))  # env_vars beside this file (run as a script, not a package)

from env_vars import env_vars  # noqa: E402

from missed_checks_local.stack import DEFAULT_REGION, LOCAL_CREDENTIALS  # noqa: E402
from missed_checks_ops.target import LOCAL_ENDPOINT, LOCAL_STACK_NAME  # noqa: E402

WORK = ROOT / ".aws-sam" / "sam-local"
TEMPLATE = WORK / "build" / "template.yaml"
SAM = ROOT / ".venv-sam" / "bin" / "sam"
ENGINE = HERE / "engine"
LOCAL_SERVE_HINT = "start one in another terminal: missed-checks local serve --host 0.0.0.0"


class InvokeError(Exception):
    """Why the invoke cannot run, and what to do (one line)."""


def machine_architecture() -> str:
    """The Lambda architecture this machine runs natively (x86_64 or arm64)."""
    return "arm64" if os.uname().machine in ("aarch64", "arm64") else "x86_64"


def bridge_gateway() -> str:
    """The host's address on podman's default network, as a container reaches it, as the engine
    itself says (known from its network's configuration before the bridge exists)."""
    command = ["podman", "network", "inspect", "podman", "--format", "{{range .Subnets}}{{.Gateway}}{{end}}"]
    try:
        found = subprocess.run(command, capture_output=True, text=True, check=False, env=engine_environment())
    except FileNotFoundError:
        raise InvokeError("podman is not installed: run make sam-local (make invoke does it first)") from None
    gateway = found.stdout.strip()
    if found.returncode != 0 or not gateway:
        raise InvokeError(f"podman cannot say where its containers reach this machine ({' '.join(command[:4])}: "
                          f"{(found.stderr.strip().splitlines() or ['no gateway'])[-1]}); "
                          "see docs/sam-local-invoke.md, Troubleshooting")
    return gateway


def engine_environment() -> dict[str, str]:
    return {**os.environ, "CONTAINERS_CONF": str(HERE / "containers.conf")}


def reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


ANY_ADDRESS = frozenset({"0.0.0.0", "::"})
PROC_NET = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))


def _address(hex_address: str) -> str:
    """An address of /proc/net/tcp{,6} (hex, in the kernel's byte order) as text."""
    raw = bytes.fromhex(hex_address)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
    address = socket.inet_ntop(socket.AF_INET6, words)
    return address.removeprefix("::ffff:") if address.startswith("::ffff:") and "." in address else address


def listening_addresses(port: int, tables: tuple[Path, ...] = PROC_NET) -> set[str] | None:
    """The addresses this machine's kernel has a TCP socket listening on for ``port`` (state 0A in
    /proc/net/tcp and tcp6), or None where those tables cannot be read (not Linux)."""
    found: set[str] = set()
    readable = False
    for table in tables:
        try:
            lines = table.read_text().splitlines()[1:]
        except OSError:
            continue
        readable = True
        for line in lines:
            fields = line.split()
            local, state = fields[1], fields[3]
            address, _, hex_port = local.partition(":")
            if state == "0A" and int(hex_port, 16) == port:
                found.add(_address(address))
    return found if readable else None


def serves_containers(port: int, gateway: str) -> bool:
    """Whether something listens on ``port`` where a container reaches this machine: on every
    address, or on the engine's gateway itself. Read from the kernel's table of listening sockets,
    never by connecting: the bridge does not exist until a first container ran, and a sandbox's
    network may answer a connection to any address."""
    addresses = listening_addresses(port)
    if addresses is None:  # no /proc/net: the probe is the only evidence there is
        return reachable(gateway, port)
    return bool(addresses & (ANY_ADDRESS | {gateway}))


def with_host(url: str, host: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"{host}:{parts.port}" if parts.port else host))


LOCAL_ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": LOCAL_CREDENTIALS["aws_access_key_id"],
    "AWS_SECRET_ACCESS_KEY": LOCAL_CREDENTIALS["aws_secret_access_key"],
    "AWS_REGION": DEFAULT_REGION,
    "AWS_DEFAULT_REGION": DEFAULT_REGION,
}
"""The local stack's credentials and Region, which SAM hands to the function's container."""


def local_env_vars(endpoint: str, output: Path) -> str:
    """Writes the local stack's env-vars file; returns the endpoint as the container reaches it."""
    parts = urlsplit(endpoint)
    if not parts.hostname or not parts.port:
        raise InvokeError(f"--endpoint {endpoint}: give http://HOST:PORT")
    if not reachable(parts.hostname, parts.port):
        raise InvokeError(f"no local stack answers at {endpoint}: {LOCAL_SERVE_HINT}; "
                          "or give a deployed stack's --env-vars file (docs/sam-local-invoke.md)")
    gateway = bridge_gateway()
    if not serves_containers(parts.port, gateway):
        raise InvokeError(f"the local stack at {endpoint} does not listen on {gateway}, where the function's "
                          f"container reaches this machine: restart it with --host 0.0.0.0 (or --host {gateway})")
    function_endpoint = with_host(endpoint, gateway)
    session = boto3.session.Session(region_name=DEFAULT_REGION, **LOCAL_CREDENTIALS)
    values = env_vars(LOCAL_STACK_NAME, DEFAULT_REGION, endpoint, function_endpoint, session)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(values, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return function_endpoint


def sam_command(function: str, event: Path, env_file: Path, region: str, architecture: str,
                template: Path) -> list[str]:
    return [str(SAM), "local", "invoke", function, "--template", str(template), "--event", str(event),
            "--env-vars", str(env_file), "--region", region, "--skip-pull-image",
            "--parameter-overrides", f"Architecture={architecture}"]


def invoke(function: str, event: Path, *, env_file: Path | None, endpoint: str, region: str | None,
           architecture: str, template: Path = TEMPLATE) -> int:
    if not event.is_file():
        raise InvokeError(f"EVENT {event}: no such file (the samples are in events/)")
    if not template.is_file():
        raise InvokeError(f"{template} is missing: run make invoke (it builds it)")
    environment = {**engine_environment(), "SAM_CLI_TELEMETRY": "0"}
    if env_file is None:
        env_file = WORK / "env-local.json"
        reached_at = local_env_vars(endpoint, env_file)
        for key in ("AWS_SESSION_TOKEN", "AWS_PROFILE"):
            environment.pop(key, None)
        environment.update(LOCAL_ENVIRONMENT)
        region = DEFAULT_REGION
        print(f"invoke: {function} with {event} against the local stack at {endpoint} "
              f"(from the container: {reached_at})", file=sys.stderr)
    elif not env_file.is_file():
        raise InvokeError(f"ENV_VARS {env_file}: no such file (make one with tools/sam_local/env_vars.py --stack NAME)")
    region = region or environment.get("AWS_REGION") or environment.get("AWS_DEFAULT_REGION")
    if not region:
        raise InvokeError("no Region for the deployed stack: give REGION=... (or set AWS_REGION)")
    command = [str(ENGINE), "run", str(WORK), "--",
               *sam_command(function, event, env_file, region, architecture, template)]
    return subprocess.run(command, env=environment, check=False).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("function", metavar="FUNCTION", help="the function's logical id, e.g. PlanEvaluationFunction")
    parser.add_argument("event", metavar="EVENT", type=Path, help="the event file, e.g. events/plan_evaluation.json")
    parser.add_argument("--env-vars", type=Path, help="a deployed stack's env-vars file (default: the local stack's)")
    parser.add_argument("--endpoint", default=LOCAL_ENDPOINT,
                        help=f"the local stack's endpoint (default {LOCAL_ENDPOINT})")
    parser.add_argument("--region", help="the deployed stack's Region (with --env-vars)")
    parser.add_argument("--architecture", default=machine_architecture(),
                        help="the functions' architecture, as built (default: this machine's)")
    parser.add_argument("--template", type=Path, default=TEMPLATE, help=f"the built template (default {TEMPLATE})")
    args = parser.parse_args(argv)
    try:
        return invoke(args.function, args.event, env_file=args.env_vars, endpoint=args.endpoint, region=args.region,
                      architecture=args.architecture, template=args.template)
    except InvokeError as error:
        print(f"invoke: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
