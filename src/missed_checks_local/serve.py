"""``missed-checks local serve``: the stack behind a local AWS endpoint, on a running clock.

A moto server (:class:`moto.server.ThreadedMotoServer`) runs in this process on 127.0.0.1; the
template is provisioned into it, and a loop drains the table's stream into schedule-sync and
fires due schedules while the clock runs (real time from ``start``, times ``speed``). Anything
that talks to the endpoint (``AWS_ENDPOINT_URL=http://127.0.0.1:PORT aws dynamodb ...``, boto3,
our ops commands) sees the same stack. moto's Step Functions interpreter runs inside this process
and reaches the functions through moto's ``lambda:Invoke``, which the runtime answers from each
function's warm worker process (``missed_checks_local.awslambda``), as built by ``sam build``.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from missed_checks_local.application import registered
from missed_checks_local.clock import RealTimeClock, SimulatedClock
from missed_checks_local.embedded import MOTO_CONFIG, local_environment, reset_clients
from missed_checks_local.endpoint import ADVANCE_REQUEST, ADVANCE_RESULT, CLOCK_TAG, LOCAL_SERVE_PORT
from missed_checks_local.runtime import LocalRuntime
from missed_checks_local.scheduler.simulated import Firing
from missed_checks_local.stack import DEFAULT_REGION, EmbeddedStack

__all__ = ["LocalServer"]


class LocalServer:
    """Start with :meth:`start`, loop with :meth:`run_forever` (or :meth:`tick`), :meth:`stop`."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = LOCAL_SERVE_PORT,
        speed: float = 1.0,
        start: datetime | None = None,
        parameters: dict[str, str] | None = None,
        template_path: str | Path | None = None,
        log_path: str | Path | None = None,
        poll_interval_s: float = 0.5,
        on_firing: Callable[[Firing], None] | None = None,
        clock: SimulatedClock | None = None,
        api_port: int | None = None,
        people_api_port: int | None = None,
        web_port: int | None = None,
    ) -> None:
        """``clock``: a simulated clock the caller moves (a test drives time instead of racing the
        wall clock); by default the clock runs from ``start`` at ``speed``. ``api_port``: where the
        stack's HTTP API (IAM) answers (default ``port + 1``; 0 picks a free port), see :attr:`api_url`;
        ``people_api_port``: the people's API (JWT, #31; default ``port + 2``), :attr:`people_api_url`;
        ``web_port``: the fleet manager's web app (#32; default ``port + 3``), :attr:`web_url`."""
        self.host, self.port = host, port
        self.endpoint = f"http://{host}:{port}"
        self._start, self._speed = start, speed
        self._given_clock = clock
        self.clock: SimulatedClock | RealTimeClock = clock or RealTimeClock(start, speed)
        self.parameters = parameters or {}
        self.template_path = template_path
        self.log_path = log_path
        self.poll_interval_s = poll_interval_s
        self.on_firing = on_firing
        self.stack: EmbeddedStack | None = None
        self.runtime: LocalRuntime | None = None
        self._server: Any = None
        self._environment: Any = None
        self._saved: dict[str, Any] = {}
        self._stop = threading.Event()
        # the stack's HTTP API on its own port (issue #19), started with the stack
        self.api_port = port + 1 if api_port is None else api_port
        self._api_port_given = api_port is not None
        self.http_api: Any = None
        # the people's API (#31): the same routes behind the JWT authorizer of the embedded user pool
        self.people_api_port = port + 2 if people_api_port is None else people_api_port
        self._people_api_port_given = people_api_port is not None
        self.people_api: Any = None
        # the web app (#32): its own HTTP API (no authorizer: the function signs people in)
        self.web_port = port + 3 if web_port is None else web_port
        self._web_port_given = web_port is not None
        self.web_app: Any = None
        self.people: Any = None
        """The :class:`~missed_checks_local.cognitoidp.users.LocalPeople` of the user pool (None: none)."""
        self._user_pool: Any = None

    def start(self) -> EmbeddedStack:
        from moto.core.config import default_user_config  # deferred: moto is a dev dependency and slow to import
        from moto.server import ThreadedMotoServer

        # The ASL interpreter reaches the server on localhost:MOTO_PORT and must execute definitions.
        self._saved = {"MOTO_PORT": os.environ.get("MOTO_PORT"), "config": dict(default_user_config)}
        os.environ["MOTO_PORT"] = str(self.port)
        default_user_config.update(MOTO_CONFIG)
        # werkzeug logs every request: into the log file (or nowhere), not the terminal
        werkzeug = logging.getLogger("werkzeug")
        self._saved["werkzeug"] = (werkzeug.handlers[:], werkzeug.propagate)
        werkzeug.handlers = [
            logging.FileHandler(self.log_path, encoding="utf-8") if self.log_path else logging.NullHandler()
        ]
        werkzeug.propagate = False
        # Its errors only: a line (and a flush) per request cost about 5 ms of each request's 30.
        self._saved["werkzeug_level"] = werkzeug.level
        werkzeug.setLevel(logging.WARNING)
        self._server = ThreadedMotoServer(ip_address=self.host, port=self.port, verbose=False)
        try:
            self._server.start()
            self._environment = local_environment(DEFAULT_REGION, endpoint_url=self.endpoint)
            self._environment.__enter__()
            reset_clients()
            self.stack = EmbeddedStack.provision(
                self.template_path, parameters=self.parameters, endpoint_url=self.endpoint
            )
            # The clock starts once the stack is up (provisioning takes seconds, hours at a high speed).
            if self._given_clock is None:
                self.clock = RealTimeClock(self._start, self._speed)
            self.runtime = LocalRuntime(self.stack, self.clock, log_path=self.log_path, refresh_always=True)
            self.publish_clock()
            self.runtime.start()
            self._start_http_api()
            self._start_people()
        except BaseException:
            self.stop()  # nothing half-started left behind (the server, its stack, the environment)
            raise
        return self.stack

    def _start_http_api(self) -> None:
        """Answer the stack's HTTP API (``HttpApi``, IAM) on :attr:`api_port`, its people's API
        (``PeopleApi``, JWT) on :attr:`people_api_port` and its web app (``WebApp``) on :attr:`web_port`."""
        self.http_api = self._start_api("HttpApi", self.api_port, self._api_port_given)
        if self.http_api is not None:
            self.api_port = self.http_api.port
        self.people_api = self._start_api("PeopleApi", self.people_api_port, self._people_api_port_given)
        if self.people_api is not None:
            self.people_api_port = self.people_api.port
        self.web_app = self._start_api("WebApp", self.web_port, self._web_port_given)
        if self.web_app is not None:
            self.web_port = self.web_app.port

    def _start_api(self, logical_id: str, port: int, port_given: bool) -> Any:
        """One ``AWS::ApiGatewayV2::Api`` of the stack on ``port`` (a free one when the default is
        taken); None when the stack has no such API."""
        from missed_checks_local.apigateway.server import LocalHttpApi
        from missed_checks_local.stack import LOCAL_CREDENTIALS

        assert self.stack is not None and self.runtime is not None
        resource = self.stack.resources.get(logical_id)
        if resource is None or resource["Type"] != "AWS::ApiGatewayV2::Api":
            return None
        options = {"apigatewayv2": self.stack.client("apigatewayv2"), "api_id": str(resource["Ref"]),
                   "invoke": self.runtime.lambda_runtime.invoke, "region": self.stack.region,
                   "account_id": self.stack.account_id, "partition": "aws",
                   "local_key": LOCAL_CREDENTIALS["aws_access_key_id"],
                   "local_secret": LOCAL_CREDENTIALS["aws_secret_access_key"], "host": self.host}
        try:
            api = LocalHttpApi(**options, port=port)
        except OSError:
            if port_given:
                raise
            # the default (the endpoint's port + 1 or + 2) is taken: any free port, the banner says which
            api = LocalHttpApi(**options, port=0)
        api.start()
        return api

    def _start_people(self) -> None:
        """The application's start-up in the stack (its sites), then the people it names in the
        stack's user pool, each in its groups, with the one password (#31)."""
        from missed_checks_local.cognitoidp.users import NoUserPool, create_people, user_pool_of

        assert self.stack is not None
        people = registered().serve_started(self.stack, self.clock.now())
        if people is None:
            return
        try:
            self._user_pool = user_pool_of(self.stack.resources)
        except NoUserPool:
            return  # deployed with JwtIssuer: people sign in elsewhere
        create_people(self.stack.client("cognito-idp"), self._user_pool, people)
        self.people = people

    def access_token(self, user: str, password: str | None = None) -> str:
        """``user``'s access token from the stack's user pool (InitiateAuth ``USER_PASSWORD_AUTH``
        against the local endpoint, as ``missed-checks local token USER`` gets it); ``password``
        defaults to the one the people were created with."""
        from missed_checks_local.cognitoidp.users import NoUserPool, sign_in

        if self.stack is None or self._user_pool is None:
            raise NoUserPool("no user pool with people here: start() first (a stack with JwtIssuer has none)")
        given = password if password is not None else self.people.password
        return str(sign_in(self.stack.client("cognito-idp"), self._user_pool.client_id, user, given)["AccessToken"])

    @property
    def api_url(self) -> str | None:
        """The local HTTP API's base URL (None before :meth:`start` or without an HTTP API)."""
        return None if self.http_api is None else str(self.http_api.url)

    @property
    def people_api_url(self) -> str | None:
        """The local people's API's base URL (None before :meth:`start` or without one)."""
        return None if self.people_api is None else str(self.people_api.url)

    @property
    def web_url(self) -> str | None:
        """The local web app's address (None before :meth:`start` or without one)."""
        return None if self.web_app is None else f"{self.web_app.url}/"

    def publish_clock(self) -> None:
        """Put the simulated clock on the stack (tag ``missed-checks:clock``), where the
        ``missed-checks`` commands read their "now" from: one clock for the stack and its users."""
        from moto.cloudformation.models import cloudformation_backends  # deferred: moto is slow to import

        assert self.stack is not None, "start() first"
        backend = cloudformation_backends[self.stack.account_id][self.stack.region]
        tag = self.clock.anchor().to_tag()
        for stack in list(backend.stacks.values()):
            if stack.name == self.stack.stack_name:
                stack.tags = {**(stack.tags or {}), CLOCK_TAG: tag}

    def tick(self) -> list[Firing]:
        """One round: settle streams and executions, fire what is due by now; first, when
        ``missed-checks local advance`` asked for it, move the clock forward (:meth:`advance`)."""
        assert self.runtime is not None, "start() first"
        self.publish_clock()  # anchored afresh each round: the wall clocks of two processes may drift
        self.runtime.settle()
        requested = self._advance_request()
        if requested is not None:
            return self._answer_advance(requested)
        fired = self.runtime.fire_due(self.clock.now())
        self._announce(fired)
        return fired

    def advance(self, to: datetime) -> list[Firing]:
        """Move the clock forward to ``to`` at once, firing every schedule due on the way in time
        order and settling after each, as if that time had passed; a stopped clock (``--speed 0``)
        then stands at ``to``, a running one runs on from there. An instant not after now moves
        nothing."""
        assert self.runtime is not None, "start() first"
        fired: list[Firing] = []
        if to > self.clock.now():
            if isinstance(self.clock, SimulatedClock):
                fired = self.runtime.fire_due(to)
                self.clock.advance_to(to)
            else:
                self.clock.jump_to(to)
                fired = self.runtime.fire_due(self.clock.now())
        self.runtime.settle()
        self.publish_clock()
        self._announce(fired)
        return fired

    def _announce(self, fired: list[Firing]) -> None:
        if self.on_firing is not None:
            for firing in fired:
                self.on_firing(firing)

    def _advance_request(self) -> datetime | None:
        assert self.stack is not None
        ssm = self.stack.client("ssm")
        try:
            value = ssm.get_parameter(Name=ADVANCE_REQUEST)["Parameter"]["Value"]
        except ssm.exceptions.ParameterNotFound:
            return None
        try:
            instant = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            instant = None
        if instant is None or instant.tzinfo is None:
            self._finish_advance({"error": f"{value!r} is not an instant with an offset"})
            return None
        return instant

    def _answer_advance(self, to: datetime) -> list[Firing]:
        before = self.clock.now()
        try:
            fired = self.advance(to)
        except Exception as error:  # said to the command that asked, and in this terminal
            self._finish_advance({"error": f"{type(error).__name__}: {error}"})
            raise
        self._finish_advance({"from": _instant(before), "to": _instant(self.clock.now()),
                              "firings": [registered().describe_firing(f) for f in fired]})
        return fired

    def _finish_advance(self, result: dict[str, Any]) -> None:
        assert self.stack is not None
        ssm = self.stack.client("ssm")
        ssm.put_parameter(Name=ADVANCE_RESULT, Value=json.dumps(result), Type="String", Overwrite=True)
        ssm.delete_parameter(Name=ADVANCE_REQUEST)

    def run_forever(self) -> None:
        while not self._stop.is_set():
            self.tick()
            self._stop.wait(self.poll_interval_s)

    def request_stop(self) -> None:
        """Stop the loop (safe from a signal handler): the round in progress stops waiting."""
        self._stop.set()
        if self.runtime is not None:
            self.runtime.interrupt()

    def stop(self, *, forget: bool = True) -> None:
        """Stop everything :meth:`start` started. ``forget``: empty moto's backends too, so that a
        server started again in this process begins empty; a process that ends right after skips it
        (over a second with a big fleet, on a busy machine)."""
        from moto.core.config import default_user_config  # deferred: moto is a dev dependency and slow to import

        for api in (self.http_api, self.people_api, self.web_app):
            if api is not None:
                api.stop()
        self.http_api = self.people_api = self.web_app = None
        if self.runtime is not None:
            self.runtime.close()
            self.runtime = None
        if self._environment is not None:
            self._environment.__exit__(None, None, None)
            self._environment = None
        reset_clients()
        if self._server is not None:
            self._server.stop()
            self._server = None
            if forget:
                time.sleep(0.05)
                _forget_what_moto_holds()
        if self._saved:
            if self._saved["MOTO_PORT"] is None:
                os.environ.pop("MOTO_PORT", None)
            else:
                os.environ["MOTO_PORT"] = self._saved["MOTO_PORT"]
            default_user_config.clear()  # type: ignore[attr-defined]  # moto's config is a TypedDict: typed without clear()
            default_user_config.update(self._saved["config"])
            werkzeug = logging.getLogger("werkzeug")
            for handler in werkzeug.handlers:
                handler.close()
            werkzeug.handlers, werkzeug.propagate = self._saved["werkzeug"]
            werkzeug.setLevel(self._saved["werkzeug_level"])
            self._saved = {}


def _instant(instant: datetime) -> str:
    return f"{instant.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}"


def _forget_what_moto_holds() -> None:
    """Every moto backend emptied, as a stopped ``local serve`` process leaves nothing behind.

    moto's server keeps its data in moto's process-wide backends (``mock_aws`` empties them when
    it starts and stops; ``ThreadedMotoServer.stop`` does not): without this, a second server in
    the same process (a test after another) found the first one's stack ("Stack missed-checks-local
    already exists") and its items."""
    from moto.core.base_backend import BackendDict  # deferred: moto is a dev dependency and slow to import
    from moto.core.model_instances import reset_model_data

    BackendDict.reset()
    reset_model_data()
