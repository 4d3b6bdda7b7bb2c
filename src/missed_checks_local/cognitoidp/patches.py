"""The emulator's patches of moto's Cognito user pools (people sign in, #31).

Each patch names its upstream candidate. Checked against moto 5.2.5. Nothing here runs at import.
"""

from __future__ import annotations

from typing import Any

__all__ = ["UserPool", "UserPoolClient", "cloudformation_user_pools"]

_MODELS: list[type[Any]] = []
"""The CloudFormation models this patch made (``CloudFormationModel.__subclasses__`` holds them weakly)."""


def cloudformation_user_pools() -> None:
    """Patch 12: ``AWS::Cognito::UserPool`` and ``AWS::Cognito::UserPoolClient`` in moto's
    CloudFormation. moto's cognito-idp backend has the user pools (CreateUserPool, InitiateAuth, its
    signed tokens) but no CloudFormation model for them, so a stack's pool and app client were
    missing from the local stack (and ``!Ref UserPool`` named nothing). The models create them
    through the backend with the template's properties as the API's (the two share their shapes:
    ``Policies``, ``Schema``, ``MfaConfiguration``, ``ExplicitAuthFlows``, token validities, ...).
    ``Ref`` is the pool's id and the client's id, as CloudFormation's; ``Fn::GetAtt`` answers the
    pool's ``Arn``, ``ProviderName``, ``ProviderURL``, ``UserPoolId`` and the client's ``ClientId``,
    ``Name``, ``ClientSecret``.

    Upstream candidate (moto, ``cognitoidp/models.py``): ``CognitoIdpUserPool`` and
    ``CognitoIdpUserPoolClient`` as ``CloudFormationModel`` (create, delete), as moto has for its
    other services; :class:`UserPool` and :class:`UserPoolClient` are that pull request's shape."""
    if _MODELS:
        return
    from moto.core.common_models import CloudFormationModel  # deferred: moto is slow to import

    _MODELS.extend(type(model.__name__, (model, CloudFormationModel), {}) for model in (UserPool, UserPoolClient))


def _backend(account_id: str, region_name: str) -> Any:
    from moto.cognitoidp.models import cognitoidp_backends  # deferred: moto is slow to import

    return cognitoidp_backends[account_id][region_name]


class UserPool:
    """``AWS::Cognito::UserPool`` (patch 12's model, a ``CloudFormationModel`` once installed)."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::Cognito::UserPool"

    @staticmethod
    def cloudformation_name_type() -> str:
        return "UserPoolName"

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return attr in ("Arn", "ProviderName", "ProviderURL", "UserPoolId")

    @property
    def physical_resource_id(self) -> str:
        return str(self.pool.id)

    def get_cfn_attribute(self, attribute_name: str) -> Any:
        provider = f"cognito-idp.{self.pool.region}.amazonaws.com/{self.pool.id}"
        return {"Arn": self.pool.arn, "ProviderName": provider, "ProviderURL": f"https://{provider}",
                "UserPoolId": self.pool.id}[attribute_name]

    @classmethod
    def create_from_cloudformation_json(
        cls, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str, **kwargs: Any
    ) -> UserPool:
        properties = dict(cloudformation_json.get("Properties") or {})
        name = properties.pop("UserPoolName", None) or resource_name
        properties.pop("UserPoolTags", None)
        return cls(_backend(account_id, region_name).create_user_pool(name, properties))

    @classmethod
    def delete_from_cloudformation_json(
        cls, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str
    ) -> None:
        backend = _backend(account_id, region_name)
        if resource_name in backend.user_pools:
            backend.delete_user_pool(resource_name)


class UserPoolClient:
    """``AWS::Cognito::UserPoolClient`` (patch 12's model, a ``CloudFormationModel`` once installed)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::Cognito::UserPoolClient"

    @staticmethod
    def cloudformation_name_type() -> str:
        return "ClientName"

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return attr in ("ClientId", "Name", "ClientSecret")

    @property
    def physical_resource_id(self) -> str:
        return str(self.client.id)

    def get_cfn_attribute(self, attribute_name: str) -> Any:
        return {"ClientId": self.client.id, "Name": self.client.extended_config.get("ClientName"),
                "ClientSecret": self.client.secret if self.client.generate_secret else ""}[attribute_name]

    @classmethod
    def create_from_cloudformation_json(
        cls, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str, **kwargs: Any
    ) -> UserPoolClient:
        properties = dict(cloudformation_json.get("Properties") or {})
        pool_id = properties.pop("UserPoolId")
        generate_secret = bool(properties.pop("GenerateSecret", False))
        properties.setdefault("ClientName", resource_name)
        return cls(_backend(account_id, region_name).create_user_pool_client(pool_id, generate_secret, properties))

    @classmethod
    def delete_from_cloudformation_json(
        cls, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str
    ) -> None:
        pool_id = str((cloudformation_json.get("Properties") or {}).get("UserPoolId"))
        backend = _backend(account_id, region_name)
        pool = backend.user_pools.get(pool_id)
        if pool is not None and resource_name in pool.clients:
            backend.delete_user_pool_client(pool.id, resource_name)
