"""IAM enforced in the embedded AWS: every function, the state machine and the scheduler act
with the credentials of the role the template gives them, and moto checks each call.

Who is checked: every request signed with *temporary* credentials from ``sts:AssumeRole``
(access key ids starting ``ASIA``), which is how the local runtime runs the functions (their
execution role), the state machine's tasks (its role) and the scheduler's firings (its role).
Requests signed with long-term keys, the operator's (tests, ``missed-checks`` commands, the
provisioning itself), are not checked, as an administrator's would pass on AWS.

What is checked: moto's own policy evaluator decides (Allow/Deny statements, actions with
wildcards, conditions it knows). moto knows the *resource* of a request only for SQS (the
queue ARN); for the other services it evaluates against ``*``, which would match no statement
scoped to an ARN. For those, :func:`enforced` lets a statement's ``Resource`` match, so the
check is by action; the resource scoping of every statement is checked statically instead
(``tests/integration/test_permissions.py`` compares each statement with the calls the code
makes). README "What is emulated" lists this.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

from missed_checks_local.iam.patches import IAM_ACTION_NAMES, iam_enforcement, service_of

__all__ = ["RoleCall", "RoleSessions", "enforced", "observed"]

_TEMPORARY_KEY_PREFIX = "ASIA"
_LOCK = threading.Lock()
_depth = [0]


@dataclass(frozen=True)
class RoleCall:
    """One request made with a role's credentials, as moto received it."""

    access_key_id: str
    action: str
    """``service:Operation`` as IAM names it (``dynamodb:PutItem``)."""
    path: str
    query: dict[str, list[str]]
    body: Any
    """The JSON body, decoded (``{}`` for other protocols)."""
    denied: bool = False
    """IAM refused it (the caller got AccessDenied)."""


_observers: list[Callable[[RoleCall], None]] = []


@contextmanager
def observed(observer: Callable[[RoleCall], None]) -> Iterator[None]:
    """Call ``observer`` with every role-signed request while the block runs (tests use it to
    compare each call's resource with the statements of the role that made it)."""
    _observers.append(observer)
    try:
        yield
    finally:
        _observers.remove(observer)


def _notify(response: Any, access_key_id: str, denied: bool) -> None:
    if not _observers:
        return
    service = service_of(response.headers)
    action = IAM_ACTION_NAMES.get(f"{service}:{response._get_action()}", f"{service}:{response._get_action()}")
    body = _json_body(response)
    call = RoleCall(access_key_id, action, str(response.path), dict(response.querystring or {}), body, denied)
    for observer in list(_observers):
        observer(call)


def _json_body(response: Any) -> Any:
    """The request's JSON body. A request refused before moto read its body (the denial comes
    first) has it parsed as a form: a single key holding the JSON text."""
    candidates = [response.body or b"{}"]
    query = response.querystring or {}
    if len(query) == 1:
        candidates.append(next(iter(query)))
    for text in candidates:
        try:
            body = json.loads(text)
        except (TypeError, ValueError):
            continue
        if body:
            return body
    return {}


@contextmanager
def enforced() -> Iterator[None]:
    """Check every role-signed request against the role's policies while the block runs
    (blocks may nest; the checks stop when the outermost one ends)."""
    with _LOCK:
        if _depth[0] == 0:
            with ExitStack() as starting:  # a patch that fails to start undoes the ones before it
                for patch in _make_patches():
                    starting.enter_context(patch)
                _active[:] = [starting.pop_all()]
        _depth[0] += 1
    try:
        yield
    finally:
        with _LOCK:
            _depth[0] -= 1
            if _depth[0] == 0:
                _active.pop().close()


_active: list[ExitStack] = []


def _make_patches() -> list[Any]:
    return iam_enforcement(lambda key: key.startswith(_TEMPORARY_KEY_PREFIX), _decided)


def _decided(request: Any, access_key_id: str, denied: bool) -> None:
    _notify(request, access_key_id, denied=denied)


class RoleSessions:
    """Credentials of the stack's roles, from ``sts:AssumeRole`` (cached per role ARN).

    ``sts_client`` is a client with the operator's credentials; the returned dicts are what
    Lambda puts in a function's environment (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
    ``AWS_SESSION_TOKEN``).
    """

    def __init__(self, sts_client_factory: Callable[[], Any]) -> None:
        self._sts = sts_client_factory
        self._cache: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()

    def environment(self, role_arn: str, session_name: str) -> dict[str, str]:
        with self._lock:
            if role_arn not in self._cache:
                credentials = self._sts().assume_role(RoleArn=role_arn, RoleSessionName=session_name[:64])[
                    "Credentials"
                ]
                self._cache[role_arn] = {
                    "AWS_ACCESS_KEY_ID": credentials["AccessKeyId"],
                    "AWS_SECRET_ACCESS_KEY": credentials["SecretAccessKey"],
                    "AWS_SESSION_TOKEN": credentials["SessionToken"],
                }
            return dict(self._cache[role_arn])

    def role_of(self, access_key_id: str) -> str | None:
        """The role ARN whose credentials use ``access_key_id``."""
        with self._lock:
            for role_arn, env in self._cache.items():
                if env["AWS_ACCESS_KEY_ID"] == access_key_id:
                    return role_arn
        return None

    def client_kwargs(self, role_arn: str, session_name: str) -> dict[str, str]:
        """The same credentials as boto3 client keyword arguments."""
        env = self.environment(role_arn, session_name)
        return {
            "aws_access_key_id": env["AWS_ACCESS_KEY_ID"],
            "aws_secret_access_key": env["AWS_SECRET_ACCESS_KEY"],
            "aws_session_token": env["AWS_SESSION_TOKEN"],
        }
