"""``AWS::ApiGatewayV2::Api`` and ``AWS::ApiGatewayV2::Stage`` for moto's CloudFormation (issue #19).

moto has API Gateway v2 (its ``apigatewayv2`` backend answers CreateApi, GetRoutes, ...) but no
CloudFormation model for it, so the template's HTTP API would be missing from the local stack.
These shims create it through the backend from what the SAM transform produced: the API from its
OpenAPI ``Body`` (one route per path and method, each with its Lambda proxy integration, payload
format and authorization type: ``AWS_IAM`` or ``JWT`` from the operation's ``security``), and its
stage with the throttling settings. ``missed_checks_local.apigateway`` then reads the routes back
with the ordinary GetRoutes/GetIntegrations, as a client of API Gateway would.
"""

from __future__ import annotations

from typing import Any

from moto.apigatewayv2.models import apigatewayv2_backends
from moto.core.common_models import CloudFormationModel

IAM_SCHEME = "AWS_IAM"


def authorization_of(operation: dict[str, Any], schemes: dict[str, Any]) -> tuple[str, str | None]:
    """(authorization type, authorizer scheme name) of an OpenAPI operation: ``AWS_IAM``, ``JWT``
    (the ``x-amazon-apigateway-authorizer`` of type jwt it names), or ``NONE``."""
    for requirement in operation.get("security") or []:
        for name in requirement:
            if name == IAM_SCHEME:
                return "AWS_IAM", None
            authorizer = (schemes.get(name) or {}).get("x-amazon-apigateway-authorizer") or {}
            if authorizer.get("type") == "jwt":
                return "JWT", name
    return "NONE", None



ANY_METHOD = "x-amazon-apigateway-any-method"
DEFAULT_ROUTE = "$default"


def route_key_of(method: str, path: str) -> str:
    """The route key API Gateway makes of an OpenAPI operation: ``GET /checks``; ``ANY /x`` for SAM's
    ``x-amazon-apigateway-any-method``; ``$default`` for the path ``$default`` (the catch-all route a
    SAM event ``Path: $default`` makes, #32's web app)."""
    if path == DEFAULT_ROUTE:
        return DEFAULT_ROUTE
    return f"{'ANY' if method.lower() == ANY_METHOD else method.upper()} {path}"

class HttpApiResource(CloudFormationModel):
    """``AWS::ApiGatewayV2::Api`` (an HTTP API with an OpenAPI ``Body``) through moto's backend."""

    def __init__(self, api: Any) -> None:
        self.api = api

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::ApiGatewayV2::Api"

    @staticmethod
    def cloudformation_name_type() -> str:
        return "Name"

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return attr in ("ApiEndpoint", "ApiId")

    @property
    def physical_resource_id(self) -> str:
        return str(self.api.api_id)

    def get_cfn_attribute(self, attribute_name: str) -> Any:
        if attribute_name == "ApiId":
            return self.api.api_id
        return self.api.api_endpoint

    @classmethod
    def create_from_cloudformation_json(
        cls, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str, **kwargs: Any
    ) -> HttpApiResource:
        properties = cloudformation_json.get("Properties") or {}
        body = properties.get("Body") or {}
        backend = apigatewayv2_backends[account_id][region_name]
        cors: Any = body.get("x-amazon-apigateway-cors")  # moto annotates these str; they are what the body holds
        disable_endpoint: Any = properties.get("DisableExecuteApiEndpoint")
        api = backend.create_api(
            api_key_selection_expression="", cors_configuration=cors,
            description=properties.get("Description") or body.get("info", {}).get("description", ""),
            disable_schema_validation="", disable_execute_api_endpoint=disable_endpoint,
            name=properties.get("Name") or body.get("info", {}).get("title") or resource_name, protocol_type="HTTP",
            route_selection_expression="$request.method $request.path", tags=properties.get("Tags") or {},
            version=str(body.get("info", {}).get("version", "")))
        schemes = (body.get("components") or {}).get("securitySchemes") or {}
        authorizers: dict[str, str] = {}
        for name, scheme in schemes.items():
            jwt = (scheme.get("x-amazon-apigateway-authorizer") or {})
            if jwt.get("type") == "jwt":
                configuration = jwt.get("jwtConfiguration") or {}
                # moto annotates every parameter str; it keeps lists, dicts and None as given (moto 5.2)
                unset: Any = None
                identity_source: Any = [jwt.get("identitySource")]
                jwt_config: Any = {"audience": configuration.get("audience"), "issuer": configuration.get("issuer")}
                authorizers[name] = api.create_authorizer(
                    name=name, authorizer_type="JWT", identity_source=identity_source, jwt_config=jwt_config,
                    auth_creds_arn=unset, auth_payload_format_version=unset, auth_result_ttl=unset,
                    authorizer_uri=unset, enable_simple_response=unset, identity_validation_expr=unset).id
        for path, operations in (body.get("paths") or {}).items():
            for method, operation in operations.items():
                integration = operation.get("x-amazon-apigateway-integration")
                if not isinstance(integration, dict):
                    continue
                given: Any = integration  # moto annotates these str; they are what the body holds
                created = api.create_integration(
                    connection_type="INTERNET", description=route_key_of(method, path),
                    integration_method=given.get("httpMethod"), integration_type=given.get("type"),
                    integration_uri=given.get("uri"),
                    payload_format_version=integration.get("payloadFormatVersion"))
                authorization, scheme_name = authorization_of(operation, schemes)
                api.create_route(api_key_required=False, authorization_scopes=[],
                                 route_key=route_key_of(method, path), target=f"integrations/{created.id}",
                                 authorization_type=authorization,
                                 authorizer_id=authorizers.get(scheme_name) if scheme_name else None)
        return cls(api)

    @classmethod
    def delete_from_cloudformation_json(
        cls, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str
    ) -> None:
        apigatewayv2_backends[account_id][region_name].delete_api(resource_name)


class HttpApiStageResource(CloudFormationModel):
    """``AWS::ApiGatewayV2::Stage`` (its name and default route settings: the throttling limits)."""

    def __init__(self, stage: Any) -> None:
        self.stage = stage

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::ApiGatewayV2::Stage"

    @staticmethod
    def cloudformation_name_type() -> str:
        return "StageName"

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return False

    @property
    def physical_resource_id(self) -> str:
        return str(self.stage.name)

    @classmethod
    def create_from_cloudformation_json(
        cls, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str, **kwargs: Any
    ) -> HttpApiStageResource:
        properties = cloudformation_json.get("Properties") or {}
        api = apigatewayv2_backends[account_id][region_name].get_api(properties["ApiId"])
        settings = properties.get("DefaultRouteSettings") or {}
        stage = api.create_stage({
            "stageName": properties.get("StageName", "$default"), "autoDeploy": properties.get("AutoDeploy"),
            "defaultRouteSettings": {"throttlingBurstLimit": settings.get("ThrottlingBurstLimit"),
                                     "throttlingRateLimit": settings.get("ThrottlingRateLimit"),
                                     "detailedMetricsEnabled": bool(settings.get("DetailedMetricsEnabled"))},
            "accessLogSettings": properties.get("AccessLogSettings"), "tags": properties.get("Tags") or {}})
        return cls(stage)
