"""The HTTP API's routes as API Gateway holds them, and which one a request takes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

DEFAULT_ROUTE = "$default"
"""The catch-all route: every method and path no other route of the API takes (the web app's, #32)."""
_INTEGRATION_FUNCTION = re.compile(r"/functions/(?P<arn>arn:[^/]+)/invocations$")


@dataclass(frozen=True)
class Route:
    route_key: str
    """``POST /checks``, ``GET /equipment/{equipment_id}/status``."""
    function_arn: str
    authorization: str
    """``AWS_IAM``, ``JWT`` or ``NONE``."""
    payload_format: str
    pattern: re.Pattern[str]
    authorizer_id: str | None = None
    """The ``JWT`` authorizer of the route (GetAuthorizer), else None."""

    @property
    def method(self) -> str:
        return "ANY" if self.route_key == DEFAULT_ROUTE else self.route_key.split(" ", 1)[0]

    @property
    def path(self) -> str:
        return DEFAULT_ROUTE if self.route_key == DEFAULT_ROUTE else self.route_key.split(" ", 1)[1]


def _pattern(path: str) -> re.Pattern[str]:
    """``/equipment/{equipment_id}/status`` -> a regex with one named group per path parameter (a
    parameter is one path segment; ``{name+}`` takes the rest of the path)."""
    if path == DEFAULT_ROUTE:
        return re.compile(r"^/.*$", re.S)
    parts = []
    for piece in re.split(r"(\{[^}]+\})", path):
        if piece.startswith("{") and piece.endswith("+}"):
            parts.append(f"(?P<{piece[1:-2]}>.+)")
        elif piece.startswith("{"):
            parts.append(f"(?P<{piece[1:-1]}>[^/]+)")
        else:
            parts.append(re.escape(piece))
    return re.compile("^" + "".join(parts) + "$")


def read_routes(apigatewayv2: Any, api_id: str) -> list[Route]:
    """The API's routes with their Lambda integrations (GetRoutes and GetIntegrations)."""
    integrations = {i["IntegrationId"]: i for i in apigatewayv2.get_integrations(ApiId=api_id)["Items"]}
    routes = []
    for item in apigatewayv2.get_routes(ApiId=api_id)["Items"]:
        integration = integrations.get(str(item.get("Target", "")).removeprefix("integrations/"))
        if integration is None:
            continue
        uri = integration.get("IntegrationUri", "")
        match = _INTEGRATION_FUNCTION.search(uri)
        routes.append(Route(item["RouteKey"], match.group("arn") if match else uri,
                            item.get("AuthorizationType") or "NONE",
                            integration.get("PayloadFormatVersion") or "2.0",
                            _pattern(item["RouteKey"].split(" ", 1)[-1]), item.get("AuthorizerId") or None))
    # literal paths before parameterised ones, as API Gateway prefers the most specific route; $default last
    return sorted(routes, key=lambda r: (r.route_key == DEFAULT_ROUTE, r.path.count("{"), -len(r.path)))


def match(routes: list[Route], method: str, path: str) -> tuple[Route, dict[str, str]] | None:
    """The route a request takes and its path parameters; None when no route matches (404)."""
    for route in routes:
        if route.method not in (method, "ANY"):
            continue
        found = route.pattern.match(path)
        if found:
            return route, found.groupdict()
    return None
