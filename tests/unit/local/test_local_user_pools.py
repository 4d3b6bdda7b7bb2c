"""Patch 12 (missed_checks_local/cognitoidp/patches.py): moto's CloudFormation creates the template's
``AWS::Cognito::UserPool`` and ``AWS::Cognito::UserPoolClient`` through its cognito-idp backend, with
the template's properties (the password policy holds), ``Ref`` and ``Fn::GetAtt`` as CloudFormation
answers them, and a user of the pool signs in with the client (its token's issuer is the pool)."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest

from missed_checks_local import patches
from missed_checks_local.cognitoidp.users import LocalPeople, create_people, sign_in, user_pool_of

TEMPLATE = {
    "Resources": {
        "Pool": {"Type": "AWS::Cognito::UserPool", "Properties": {
            "UserPoolName": "people", "AdminCreateUserConfig": {"AllowAdminCreateUserOnly": True},
            "Policies": {"PasswordPolicy": {"MinimumLength": 12, "RequireLowercase": True, "RequireUppercase": True,
                                            "RequireNumbers": True, "RequireSymbols": True}}}},
        "Client": {"Type": "AWS::Cognito::UserPoolClient", "Properties": {
            "UserPoolId": {"Ref": "Pool"}, "ClientName": "app", "GenerateSecret": False,
            "ExplicitAuthFlows": ["ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"]}},
    },
    "Outputs": {name: {"Value": value} for name, value in {
        "PoolId": {"Ref": "Pool"}, "PoolArn": {"Fn::GetAtt": ["Pool", "Arn"]},
        "ProviderUrl": {"Fn::GetAtt": ["Pool", "ProviderURL"]}, "ClientId": {"Ref": "Client"},
        "ClientName": {"Fn::GetAtt": ["Client", "Name"]}}.items()},
}


def client(service: str) -> Any:
    return boto3.client(service, region_name="us-east-1")


def test_a_stacks_pool_and_client_are_created_and_sign_people_in(embedded: None) -> None:
    patches.install()
    cloudformation = client("cloudformation")
    cloudformation.create_stack(StackName="pool", TemplateBody=json.dumps(TEMPLATE))
    outputs = {o["OutputKey"]: o["OutputValue"]
               for o in cloudformation.describe_stacks(StackName="pool")["Stacks"][0]["Outputs"]}
    pool_id = outputs["PoolId"]
    assert pool_id.startswith("us-east-1_") and outputs["PoolArn"].endswith(f":userpool/{pool_id}")
    assert outputs["ProviderUrl"] == f"https://cognito-idp.us-east-1.amazonaws.com/{pool_id}"
    cognito = client("cognito-idp")
    described = cognito.describe_user_pool(UserPoolId=pool_id)["UserPool"]
    assert described["Name"] == "people" and described["Policies"]["PasswordPolicy"]["MinimumLength"] == 12
    app = cognito.describe_user_pool_client(UserPoolId=pool_id, ClientId=outputs["ClientId"])["UserPoolClient"]
    assert app["ClientName"] == outputs["ClientName"] == "app" and "ClientSecret" not in app

    resources = {r["LogicalResourceId"]: {"Type": r["ResourceType"], "Ref": r["PhysicalResourceId"]}
                 for r in cloudformation.describe_stack_resources(StackName="pool")["StackResources"]}
    pool = user_pool_of(resources)
    assert (pool.pool_id, pool.client_id) == (pool_id, outputs["ClientId"])
    with pytest.raises(cognito.exceptions.InvalidPasswordException):  # the template's policy holds
        create_people(cognito, pool, LocalPeople("short", {"dana": ("supervisor@north",)}))
    create_people(cognito, pool, LocalPeople("Long-Enough-1", {"dana": ("supervisor@north",)}))
    create_people(cognito, pool, LocalPeople("Long-Enough-1", {"dana": ("supervisor@north",)}))  # again: no error
    token = sign_in(cognito, pool.client_id, "dana", "Long-Enough-1")["AccessToken"]
    assert cognito.get_user(AccessToken=token)["Username"] == "dana"
    assert [g["GroupName"] for g in cognito.admin_list_groups_for_user(UserPoolId=pool_id, Username="dana")[
        "Groups"]] == ["supervisor@north"]
