"""Lints every IAM policy of the deployed template with parliament (duo-labs), offline.

`make lint` runs it. The policies are those of the *transformed* template, aws-sam-translator's
output (what CloudFormation receives from `sam deploy`): the role SAM writes for the state machine
too, not only those template.yaml spells out. Each role's inline policies, each AWS::IAM::Policy
and each resource policy (queue, topic, key) is rendered to plain JSON (intrinsics become the ARNs
they resolve to, in a placeholder account) and given to parliament. Trust policies are not: they
name who may assume a role, which parliament's identity-policy checks do not read.

Every finding is printed, one a line. A finding that is wrong for this stack, or right but
accepted, is listed in tools/policy-lint-allow.json with the reason; the script fails on any
other finding, and on an allow-list entry no finding matches any more (so the list cannot rot).

    .venv/bin/python tools/lint_policies.py [--template template.yaml] [--allow tools/policy-lint-allow.json]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import sys
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PARTITION, REGION, ACCOUNT = "aws", "us-east-1", "123456789012"
PSEUDO = {"AWS::Partition": PARTITION, "AWS::Region": REGION, "AWS::AccountId": ACCOUNT,
          "AWS::StackName": "missed-checks", "AWS::URLSuffix": "amazonaws.com"}
# The ARN a resource's Ref or GetAtt .Arn resolves to, by type ({name}: the logical id).
ARNS = {
    "AWS::DynamoDB::Table": "arn:aws:dynamodb:us-east-1:123456789012:table/{name}",
    "AWS::SQS::Queue": "arn:aws:sqs:us-east-1:123456789012:{name}",
    "AWS::Lambda::Function": "arn:aws:lambda:us-east-1:123456789012:function:{name}",
    "AWS::StepFunctions::StateMachine": "arn:aws:states:us-east-1:123456789012:stateMachine:{name}",
    "AWS::IAM::Role": "arn:aws:iam::123456789012:role/{name}",
    "AWS::Logs::LogGroup": "arn:aws:logs:us-east-1:123456789012:log-group:{name}:*",
    "AWS::SNS::Topic": "arn:aws:sns:us-east-1:123456789012:{name}",
    "AWS::KMS::Key": "arn:aws:kms:us-east-1:123456789012:key/{name}",
    "AWS::Scheduler::ScheduleGroup": "arn:aws:scheduler:us-east-1:123456789012:schedule-group/{name}",
    "AWS::ApiGatewayV2::Api": "arn:aws:apigateway:us-east-1::/apis/{name}",
    "AWS::Events::Rule": "arn:aws:events:us-east-1:123456789012:rule/{name}",
}
# A Ref that is a name or URL, not an ARN.
NAMES = {"AWS::Scheduler::ScheduleGroup", "AWS::DynamoDB::Table", "AWS::Logs::LogGroup", "AWS::Lambda::Function"}
POLICY_TYPES = {"AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"}
RESOURCE_POLICIES = {"AWS::SQS::QueuePolicy": "PolicyDocument", "AWS::SNS::TopicPolicy": "PolicyDocument",
                     "AWS::KMS::Key": "KeyPolicy"}


class _NoManagedPolicies:
    def load(self) -> dict[str, str]:
        return {}


def transformed_template(template: Path, parameters: dict[str, str] | None = None) -> dict[str, Any]:
    """The SAM template transformed to plain CloudFormation, offline, as `sam deploy` would (code
    and definitions given placeholder locations; AWS_DEFAULT_REGION must be set)."""
    from cfnlint.decode import decode
    from samtranslator.translator.transform import transform

    decoded, matches = decode(str(template))
    if decoded is None:
        raise SystemExit(f"{template}: cannot be read: {matches}")
    packaged = copy.deepcopy(decoded)
    for resource in packaged["Resources"].values():
        props = resource.get("Properties", {})
        for uri in ("CodeUri", "ContentUri"):
            if uri in props:
                props[uri] = "s3://bucket/key.zip"
        if "DefinitionUri" in props:
            props["Definition"] = json.loads((template.parent / props.pop("DefinitionUri")).read_text())
    transformed: dict[str, Any] = transform(packaged, parameters or {}, _NoManagedPolicies())
    return transformed


class Resolver:
    """Intrinsics of a policy document rendered to the strings they become on AWS."""

    def __init__(self, template: dict[str, Any]) -> None:
        self.resources: dict[str, Any] = template["Resources"]
        self.parameters = {name: str(p.get("Default", name)) for name, p in template.get("Parameters", {}).items()}

    def ref(self, name: str) -> str:
        if name in PSEUDO:
            return PSEUDO[name]
        if name in self.parameters:
            return self.parameters[name] or name
        kind = self.resources[name]["Type"]
        if kind == "AWS::SQS::Queue":
            return f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/{name}"
        return name if kind in NAMES else self.arn(name)

    def arn(self, name: str) -> str:
        kind = self.resources[name]["Type"]
        if kind not in ARNS:
            raise SystemExit(f"lint_policies: no ARN format for {name} ({kind}): add one to ARNS")
        return ARNS[kind].format(name=name)

    def get_att(self, name: str, attribute: str) -> str:
        if attribute == "Arn":
            return self.arn(name)
        if attribute == "StreamArn":
            return f"{self.arn(name)}/stream/2026-01-01T00:00:00.000"
        if attribute == "QueueName":
            return name
        raise SystemExit(f"lint_policies: cannot render Fn::GetAtt {name}.{attribute}: add it to Resolver.get_att")

    def render(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self.render(v) for v in value]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            (key, argument), = value.items()
            if key == "Ref":
                return self.ref(argument)
            if key == "Fn::GetAtt":
                name, attribute = argument if isinstance(argument, list) else argument.split(".", 1)
                return self.get_att(name, attribute)
            if key == "Fn::Sub":
                return self.sub(argument)
            if key == "Fn::Join":
                return argument[0].join(str(self.render(v)) for v in argument[1])
            if key == "Fn::If":  # the condition's true branch: a policy names what it may touch when it applies
                return self.render(argument[1])
        return {k: self.render(v) for k, v in value.items()}

    def sub(self, argument: Any) -> str:
        text, variables = (argument, {}) if isinstance(argument, str) else argument

        def value(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in variables:
                return str(self.render(variables[name]))
            if "." in name and name.split(".", 1)[0] in self.resources:
                return self.get_att(*name.split(".", 1))
            return self.ref(name)

        return re.sub(r"\$\{([^}!]+)\}", value, text)


def policies(template: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, document) for every policy document of the template."""
    for name, resource in template["Resources"].items():
        kind, props = resource["Type"], resource.get("Properties", {})
        if kind == "AWS::IAM::Role":
            for policy in props.get("Policies", []):
                yield f"{name}/{policy['PolicyName']}", policy["PolicyDocument"]
        elif kind in POLICY_TYPES:
            yield name, props["PolicyDocument"]
        elif kind in RESOURCE_POLICIES:
            yield name, props[RESOURCE_POLICIES[kind]]


def findings(template: dict[str, Any]) -> list[dict[str, Any]]:
    """Every parliament finding of every policy: where, issue, title, severity, detail."""
    from parliament import analyze_policy_string

    resolver = Resolver(template)
    found = []
    for where, document in policies(template):
        text = json.dumps(resolver.render(document))
        for finding in analyze_policy_string(text, include_community_auditors=True).findings:
            found.append({"policy": where, "issue": finding.issue, "title": finding.title,
                          "severity": finding.severity, "detail": finding.detail})
    return found


def allowed(finding: dict[str, Any], entry: dict[str, Any]) -> bool:
    """Whether the allow-list ``entry`` covers ``finding``: its policy (a regular expression, whole),
    its issue, and every action the entry names among the finding's details."""
    return (re.fullmatch(entry["policy"], finding["policy"]) is not None and entry["issue"] == finding["issue"]
            and all(action in json.dumps(finding["detail"]) for action in entry.get("actions", [])))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--template", type=Path, default=ROOT / "template.yaml")
    parser.add_argument("--allow", type=Path, default=ROOT / "tools" / "policy-lint-allow.json")
    args = parser.parse_args(argv)
    os.environ.setdefault("AWS_DEFAULT_REGION", REGION)  # the translator needs a Region
    allow_list = json.loads(args.allow.read_text())["allowed"]
    template = transformed_template(args.template)
    found = findings(template)
    used: set[int] = set()
    refused = 0
    for finding in found:
        matches = [i for i, entry in enumerate(allow_list) if allowed(finding, entry)]
        used.update(matches)
        refused += not matches
        verdict = (f"allowed: {allow_list[matches[0]]['reason']}" if matches
                   else "NOT ALLOWED (fix it, or allow it with the reason)")
        print(f"{finding['policy']}: {finding['issue']} {json.dumps(finding['detail'])} -- {verdict}")
    stale = [entry for i, entry in enumerate(allow_list) if i not in used]
    for entry in stale:
        print(f"{args.allow.name}: no finding matches {entry['policy']} {entry['issue']} any more: remove the entry")
    print(f"parliament {version('parliament')}: {len(list(policies(template)))} policies, {len(found)} finding(s), "
          f"{len(found) - refused} allowed, {refused} not allowed, {len(stale)} stale allow-list entr(ies)")
    return 1 if refused or stale else 0


if __name__ == "__main__":
    sys.exit(main())
