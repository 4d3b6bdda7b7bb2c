"""An HTTP server answering one of the stack's HTTP APIs as API Gateway would (payload format 2.0; IAM
authorization, or the JWT authorizer of the people's API)."""

from __future__ import annotations

import base64
import concurrent.futures
import json
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from missed_checks_local.apigateway.jwt import (
    JwtAuthorizer,
    Unauthorized,
    bearer_token,
    cognito_key_set,
    event_claims,
    verify_token,
)
from missed_checks_local.apigateway.routes import Route, match, read_routes
from missed_checks_local.apigateway.sigv4 import Caller, Denied, KeyOwner, verify
from missed_checks_local.iam.callers import decide

Invoke = Callable[[str, dict[str, Any]], Any]
"""Run a function (by ARN) with an event; returns the emulator's Invocation (``result``, ``error``)."""
KeySetOf = Callable[[str], "dict[str, Any] | None"]
"""An issuer's JWKS (None: none known here)."""

MAX_PAYLOAD_BYTES = 10 * 1024 * 1024
"""API Gateway HTTP APIs refuse larger request bodies (413): refused from ``Content-Length``, unread."""
INTEGRATION_TIMEOUT_S = 30.0
"""An HTTP API's integration timeout (its maximum, and the default for a Lambda proxy integration):
past it API Gateway answers 503 whatever the function still does."""
STAGE = "$default"
"""The stage SAM's HttpApi deploys (its ARNs' ``<stage>``)."""


def key_owners(account_id: str, partition: str, local_key: str, local_secret: str) -> dict[str, KeyOwner]:
    """Access key id -> its secret and owner: the local stack's own credentials (STS names their
    caller ``user/moto``), every active access key of a user of the local IAM and the temporary
    credentials of every role session of the local STS (``sts:AssumeRole``, with their token)."""
    from moto.iam.models import iam_backends  # deferred: moto is a dev dependency and slow to import
    from moto.sts.models import sts_backends

    owners = {local_key: KeyOwner(local_secret, f"arn:{partition}:sts::{account_id}:user/moto", "AKIAIOSFODNN7EXAMPLE")}
    for user in list(iam_backends[account_id][partition].users.values()):
        for key in user.access_keys:
            if key.status == "Active":
                owners[key.access_key_id] = KeyOwner(key.secret_access_key, user.arn, user.id)
    for session in list(sts_backends[account_id][partition].assumed_roles):
        owners[session.access_key_id] = KeyOwner(session.secret_access_key, session.arn, session.user_id,
                                                 session.session_token)
    return owners


def http_api_event(route: Route, parameters: dict[str, str], method: str, raw_path: str, query: str,
                   headers: dict[str, str], body: bytes, *, api_id: str, account_id: str, caller: Caller | None,
                   source_ip: str, jwt_claims: dict[str, str] | None = None) -> dict[str, Any]:
    """The payload format 2.0 event API Gateway sends a Lambda proxy integration: the IAM caller in
    ``requestContext.authorizer.iam``, or a JWT's claims in ``requestContext.authorizer.jwt``."""
    now = datetime.now(UTC)
    lower = {name.lower(): value for name, value in headers.items()}
    text = None
    encoded = False
    if body:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            text, encoded = base64.b64encode(body).decode("ascii"), True
    query_parameters: dict[str, str] = {}
    for name, value in parse_qsl(query, keep_blank_values=True):
        query_parameters[name] = f"{query_parameters[name]},{value}" if name in query_parameters else value
    request_context: dict[str, Any] = {
        "accountId": account_id, "apiId": api_id, "domainName": lower.get("host", ""),
        "domainPrefix": api_id, "http": {"method": method, "path": raw_path, "protocol": "HTTP/1.1",
                                         "sourceIp": source_ip, "userAgent": lower.get("user-agent", "")},
        "requestId": str(uuid.uuid4()), "routeKey": route.route_key, "stage": "$default",
        "time": now.strftime("%d/%b/%Y:%H:%M:%S +0000"), "timeEpoch": int(now.timestamp() * 1000),
    }
    if caller is not None:
        request_context["authorizer"] = {"iam": caller.to_event()}
    elif jwt_claims is not None:
        request_context["authorizer"] = {"jwt": {"claims": jwt_claims, "scopes": None}}
    event: dict[str, Any] = {
        "version": "2.0", "routeKey": route.route_key, "rawPath": raw_path, "rawQueryString": query,
        "headers": lower, "requestContext": request_context, "isBase64Encoded": encoded,
    }
    if query_parameters:
        event["queryStringParameters"] = query_parameters
    if parameters:
        event["pathParameters"] = parameters
    if text is not None:
        event["body"] = text
    if "cookie" in lower:
        event["cookies"] = [c.strip() for c in lower["cookie"].split(";")]
    return event


def http_response(result: Any) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body from what the function returned (payload format 2.0 rules: a dict
    with ``statusCode`` is a response, its ``cookies`` each a ``Set-Cookie``; anything else is a 200
    JSON body)."""
    if not isinstance(result, dict) or "statusCode" not in result:
        return 200, {"content-type": "application/json"}, json.dumps(result).encode("utf-8")
    headers = {str(k).lower(): str(v) for k, v in (result.get("headers") or {}).items()}
    for name, values in (result.get("multiValueHeaders") or {}).items():
        headers[str(name).lower()] = ",".join(str(v) for v in values)
    cookies = [str(cookie) for cookie in result.get("cookies") or []]
    if cookies:  # payload 2.0's cookies: one Set-Cookie header each (the handler splits them at newlines)
        headers["set-cookie"] = "\n".join([*filter(None, [headers.get("set-cookie")]), *cookies])
    body = result.get("body") or ""
    raw = base64.b64decode(body) if result.get("isBase64Encoded") else str(body).encode("utf-8")
    return int(result["statusCode"]), headers, raw


class LocalHttpApi:
    """An HTTP API of a provisioned local stack on ``host:port``; start it with :meth:`start`.
    ``key_set_of``: the JWKS a JWT authorizer's issuer signs with (default: the embedded user pools')."""

    def __init__(self, *, apigatewayv2: Any, api_id: str, invoke: Invoke, region: str, account_id: str,
                 partition: str, local_key: str, local_secret: str, host: str = "127.0.0.1", port: int = 0,
                 integration_timeout_s: float = INTEGRATION_TIMEOUT_S,
                 key_set_of: KeySetOf = cognito_key_set) -> None:
        self.api_id, self.region, self.account_id, self.partition = api_id, region, account_id, partition
        self.invoke = invoke
        self.integration_timeout_s = integration_timeout_s
        self._local = (local_key, local_secret)
        self.routes = read_routes(apigatewayv2, api_id)
        self.authorizers = read_jwt_authorizers(apigatewayv2, api_id, self.routes)
        self._key_set_of = key_set_of
        self._server = _Server((host, port), _handler_for(self))
        self._server.daemon_threads = True
        self.host, self.port = host, int(self._server.server_address[1])
        self.url = f"http://{host}:{self.port}"
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._server.serve_forever, name="local-http-api", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def answer(self, method: str, target: str, headers: dict[str, str], body: bytes,
               source_ip: str) -> tuple[int, dict[str, str], bytes]:
        """API Gateway's answer to one request: 404 without a route, 403 when unsigned or badly
        signed or when the caller's IAM policies do not allow ``execute-api:Invoke`` on the request
        (IAM routes), 413 for a body over 10 MB, else the function's response (500 when it failed,
        503 when it did not answer within the integration timeout). Path parameters are decoded
        (``/equipment/x%2Fy/status`` is equipment ``x/y``); the route is matched on the path as sent."""
        parts = urlsplit(target)
        found = match(self.routes, method, parts.path)
        if found is None:
            return _message(404, "Not Found")
        route, raw_parameters = found
        parameters = {name: unquote(value) for name, value in raw_parameters.items()}
        if len(body) > MAX_PAYLOAD_BYTES:
            return _message(413, "Request Entity Too Large")
        caller = None
        if route.authorization == "AWS_IAM":
            host = headers.get("Host") or headers.get("host") or f"{self.host}:{self.port}"
            try:
                caller = verify(method, f"http://{host}{target}", headers, body, region=self.region,
                                account_id=self.account_id,
                                owner_of=key_owners(self.account_id, self.partition, *self._local))
            except Denied as denied:
                return _message(403, str(denied))
            refusal = self._refusal(caller, method, parts.path, source_ip, headers)
            if refusal is not None:
                return refusal
        claims = None
        if route.authorization == "JWT":
            try:
                claims = event_claims(self._verified(route, headers))
            except Unauthorized as refused:
                return _unauthorized(str(refused))
        event = http_api_event(route, parameters, method, parts.path, parts.query, headers, body, api_id=self.api_id,
                               account_id=self.account_id, caller=caller, source_ip=source_ip, jwt_claims=claims)
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="local-http-api-integration")
        try:
            invocation = pool.submit(self.invoke, route.function_arn, event).result(self.integration_timeout_s)
        except concurrent.futures.TimeoutError:
            return _message(503, "Service Unavailable")
        finally:
            pool.shutdown(wait=False)  # a function past the timeout runs on, as on AWS; its answer is dropped
        if invocation.error is not None:
            return _message(500, "Internal Server Error")
        return http_response(invocation.result)

    def _verified(self, route: Route, headers: dict[str, str]) -> dict[str, Any]:
        """The claims of the request's bearer token, as the route's JWT authorizer accepts it."""
        authorizer = self.authorizers.get(route.authorizer_id or "")
        if authorizer is None:
            raise Unauthorized(f"route {route.route_key} names no JWT authorizer of the API")
        token = bearer_token(headers)
        return verify_token(token, authorizer, self._key_set_of(authorizer.issuer))

    def invoke_arn(self, method: str, path: str) -> str:
        """The resource IAM authorizes for a request: ``arn:aws:execute-api:<region>:<account>:<api
        id>/<stage>/<METHOD>/<path without its leading slash>``."""
        return (f"arn:{self.partition}:execute-api:{self.region}:{self.account_id}:{self.api_id}/{STAGE}/"
                f"{method}/{path.removeprefix('/')}")

    def _refusal(self, caller: Caller, method: str, path: str, source_ip: str,
                 headers: dict[str, str]) -> tuple[int, dict[str, str], bytes] | None:
        """403 when the caller's policies (an IAM user's, or a role's for its temporary credentials)
        do not allow ``execute-api:Invoke`` on the request; the local stack's own credentials (the
        operator's, an administrator's) are not restricted."""
        if caller.access_key == self._local[0]:
            return None
        role_session = ":assumed-role/" in caller.user_arn
        context = {"aws:SourceIp": source_ip, "aws:userid": caller.user_id, "aws:PrincipalAccount": self.account_id,
                   "aws:SecureTransport": "true", "aws:PrincipalArn": caller.user_arn}
        if role_session:  # a role's session: its principal is the role; it has no user name
            role_name = caller.user_arn.split(":assumed-role/", 1)[1].split("/", 1)[0]
            context["aws:PrincipalArn"] = f"arn:{self.partition}:iam::{self.account_id}:role/{role_name}"
        else:
            context["aws:username"] = caller.user_arn.rsplit("/", 1)[-1]
        decision = decide(self.account_id, self.partition, caller.access_key, "execute-api:Invoke",
                          self.invoke_arn(method, path), context,
                          session_token=_header(headers, "x-amz-security-token") if role_session else None)
        if decision.allowed:
            return None
        status, headers, body = _message(403, "Forbidden")
        return status, {**headers, "x-local-iam-decision": decision.reason}, body


def read_jwt_authorizers(apigatewayv2: Any, api_id: str, routes: list[Route]) -> dict[str, JwtAuthorizer]:
    """Authorizer id -> the issuer and audiences of each JWT authorizer the routes name (GetAuthorizer)."""
    found = {}
    for authorizer_id in sorted({route.authorizer_id for route in routes if route.authorizer_id}):
        answer = apigatewayv2.get_authorizer(ApiId=api_id, AuthorizerId=authorizer_id)
        configuration = answer.get("JwtConfiguration") or {}
        found[authorizer_id] = JwtAuthorizer(str(configuration.get("Issuer", "")),
                                             tuple(str(a) for a in configuration.get("Audience") or []))
    return found


def _unauthorized(reason: str) -> tuple[int, dict[str, str], bytes]:
    """API Gateway's 401 from a JWT authorizer: ``{"message":"Unauthorized"}``, the reason in
    ``www-authenticate`` (RFC 6750's ``invalid_token``)."""
    status, headers, body = _message(401, "Unauthorized")
    description = reason.replace('"', "'")
    return status, {**headers, "www-authenticate": f'Bearer scope="" error="invalid_token" '
                                                   f'error_description="{description}"'}, body


def _header(headers: dict[str, str], name: str) -> str | None:
    return next((value for key, value in headers.items() if key.lower() == name), None)


def _message(status: int, message: str) -> tuple[int, dict[str, str], bytes]:
    return status, {"content-type": "application/json"}, json.dumps({"message": message}).encode("utf-8")


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # socketserver's 5 resets a burst of parallel connections
    daemon_threads = True


def _handler_for(api: LocalHttpApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            started = time.perf_counter()
            answer = self._refused_body()
            if answer is None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {name: value for name, value in self.headers.items()}
                try:
                    answer = api.answer(self.command, self.path, headers, body, self.client_address[0])
                except Exception:  # noqa: BLE001 - the gateway's own failure: a 500, the server keeps serving
                    answer = _message(500, "Internal Server Error")
            status, response_headers, payload = answer
            self.send_response(status)
            for name, value in response_headers.items():
                if name == "set-cookie":  # one header per cookie (http_response joined them with newlines)
                    for cookie in value.split("\n"):
                        self.send_header(name, cookie)
                elif name not in ("content-length", "connection"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("apigw-requestid", str(uuid.uuid4()))
            self.send_header("x-local-latency-ms", f"{(time.perf_counter() - started) * 1000:.1f}")
            self.end_headers()
            self.wfile.write(payload)

        def _refused_body(self) -> tuple[int, dict[str, str], bytes] | None:
            """400 for a ``Content-Length`` that is not a length or a chunked body (API Gateway
            needs the length), 413 for one over :data:`MAX_PAYLOAD_BYTES`, before the body is read
            (the connection is closed after the answer: the unread body is not taken as a request)."""
            raw = self.headers.get_all("Content-Length") or []
            if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
                self.close_connection = True
                return _message(400, "Bad Request: a chunked body is not supported here; send Content-Length")
            if not raw:
                return None
            if len(set(raw)) > 1 or not raw[0].strip().isdigit():
                self.close_connection = True
                return _message(400, f"Bad Request: Content-Length {', '.join(raw)!r} is not a length in bytes")
            if int(raw[0]) > MAX_PAYLOAD_BYTES:
                self.close_connection = True
                return _message(413, "Request Entity Too Large")
            return None

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _serve

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class names it so
            return  # quiet: the functions' own logs go to the serve's log file

    return Handler
