"""tools/sam_local/env_vars.py reads `sam local invoke --env-vars` from a stack: each function's
own environment as the stack deployed it, with AWS_ENDPOINT_URL left empty for a stack on AWS;
tools/sam_local/invoke.py says what to do when no local stack answers."""

from __future__ import annotations

import importlib.util
import socket
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools" / "sam_local"


def _load(name: str):
    sys.path.insert(0, str(TOOLS))  # invoke.py imports env_vars beside it, as when run as a script
    try:
        spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(TOOLS))


env_vars = _load("env_vars")
invoke = _load("invoke")


def test_every_function_gets_the_stacks_resource_names_and_no_endpoint(local_stack):
    values = env_vars.env_vars(local_stack.stack_name, "us-east-1", None, None)
    assert set(values) == {"ScheduleSyncFunction", "PlanEvaluationFunction", "RecordMissedChecksFunction",
                           "CloseWindowFunction",
                           "NotifyFunction", "DigestFunction",  # people in the loop: #18
                           "ApiChecksFunction", "ApiMissedFunction", "ApiStatusFunction",  # the HTTP API: #19
                           "ApiReportFunction", "ApiManageFunction",  # the management routes: #31
                           "AuditFunction",  # the audit trail: #31
                           "ReadinessFunction",  # readiness: #33
                           "WebAppFunction"}  # the web app: #32
    for variables in values.values():
        assert variables["TABLE_NAME"] == local_stack.table_name
        assert variables["AWS_ENDPOINT_URL"] == ""  # declared empty: on AWS, the Region's endpoints
    sync = values["ScheduleSyncFunction"]
    assert sync["STATE_MACHINE_ARN"] == local_stack.state_machine_arn
    assert sync["SCHEDULE_GROUP_NAME"] == local_stack.outputs["ScheduleGroupName"]
    assert values["PlanEvaluationFunction"]["MAX_WINDOWS_PER_RUN"] == "20"
    assert values["NotifyFunction"]["NOTIFICATION_DLQ_URL"] == local_stack.outputs["NotificationDeadLetterQueueUrl"]


def test_a_stack_that_does_not_exist_is_one_line_naming_it(local_stack, tmp_path, capsys):
    assert env_vars.main(["--stack", "no-such-stack", "--region", "us-east-1", "--output",
                          str(tmp_path / "env.json")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("env_vars: cannot read stack no-such-stack in us-east-1: ") and err.count("\n") == 1
    assert not (tmp_path / "env.json").exists()


def test_invoke_says_how_to_start_a_local_stack_when_none_answers(tmp_path, capsys):
    event = tmp_path / "event.json"
    event.write_text("{}")
    template = tmp_path / "template.yaml"
    template.write_text("")
    code = invoke.main(["PlanEvaluationFunction", str(event), "--endpoint", "http://127.0.0.1:9",
                        "--template", str(template)])
    assert code == 1
    assert capsys.readouterr().err == (
        "invoke: no local stack answers at http://127.0.0.1:9: start one in another terminal: missed-checks local "
        "serve --host 0.0.0.0; or give a deployed stack's --env-vars file (docs/sam-local-invoke.md)\n")


@pytest.mark.parametrize(("url", "host", "expected"), [
    ("http://127.0.0.1:5000", "10.88.0.1", "http://10.88.0.1:5000"),
    ("http://localhost:5123/", "10.88.0.1", "http://10.88.0.1:5123/"),
])
def test_the_container_reaches_the_endpoint_at_the_gateway(url, host, expected):
    assert invoke.with_host(url, host) == expected


def _listener(host: str) -> socket.socket:
    server = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    server.bind((host, 0))
    server.listen()
    return server


def test_a_stack_on_loopback_only_is_refused_before_podmans_bridge_exists(monkeypatch):
    """Read from the kernel's listening sockets, not by connecting to the gateway: before a first
    container ran there is no bridge (a connection fails though --host 0.0.0.0 would serve), and a
    sandbox's network may accept a connection to any address (one succeeds though nothing listens)."""
    monkeypatch.setattr(invoke, "reachable", lambda host, port: pytest.fail("probed by connecting"))
    with _listener("127.0.0.1") as loopback, _listener("0.0.0.0") as everywhere:
        assert not invoke.serves_containers(loopback.getsockname()[1], "10.88.0.1")
        assert invoke.serves_containers(everywhere.getsockname()[1], "10.88.0.1")
    with _listener("::") as everywhere6:
        assert invoke.serves_containers(everywhere6.getsockname()[1], "10.88.0.1")


def test_the_listening_table_is_read_as_the_kernel_writes_it(tmp_path):
    """Lines of /proc/net/tcp and tcp6 (hex addresses in the kernel's byte order; 0A is LISTEN)."""
    tcp = tmp_path / "tcp"
    tcp.write_text(
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        "   0: 0100007F:1388 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1\n"
        "   1: 0100580A:1389 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2 1\n"
        "   2: 00000000:1388 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 3 1\n")
    tcp6 = tmp_path / "tcp6"
    tcp6.write_text(
        "  sl  local_address                         remote_address                        st\n"
        "   0: 00000000000000000000000000000000:138A 00000000000000000000000000000000:0000 0A 0 0 0 0 0 0 4 1\n")
    assert invoke.listening_addresses(5000, (tcp, tcp6)) == {"127.0.0.1"}  # the ESTABLISHED one is no listener
    assert invoke.listening_addresses(5001, (tcp, tcp6)) == {"10.88.0.1"}
    assert invoke.listening_addresses(5002, (tcp, tcp6)) == {"::"}
    assert invoke.listening_addresses(5000, (tmp_path / "missing",)) is None


def test_invoke_refuses_a_stack_on_loopback_at_once_naming_the_fix(tmp_path, capsys, monkeypatch):
    """The first `make invoke` against a stack on 127.0.0.1 ran 55 s and ended in an
    EndpointConnectionError inside the container (#29): it is refused before any container starts."""
    event = tmp_path / "event.json"
    event.write_text("{}")
    template = tmp_path / "template.yaml"
    template.write_text("")
    monkeypatch.setattr(invoke, "bridge_gateway", lambda: "10.88.0.1")
    monkeypatch.setattr(invoke.subprocess, "run", lambda *a, **k: pytest.fail(f"started {a}"))
    with _listener("127.0.0.1") as stack:
        port = stack.getsockname()[1]
        code = invoke.main(["PlanEvaluationFunction", str(event), "--endpoint", f"http://127.0.0.1:{port}",
                            "--template", str(template)])
    assert code == 1
    assert capsys.readouterr().err == (
        f"invoke: the local stack at http://127.0.0.1:{port} does not listen on 10.88.0.1, where the function's "
        "container reaches this machine: restart it with --host 0.0.0.0 (or --host 10.88.0.1)\n")
