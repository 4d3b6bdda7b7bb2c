"""What an IAM user of the local IAM may do: its identity-based policies evaluated as IAM evaluates
them, for a service in front of which the embedded AWS stands (the local HTTP API asks it about
``execute-api:Invoke`` on ``arn:aws:execute-api:<region>:<account>:<api id>/<stage>/<METHOD>/<path>``).

moto evaluates (:class:`moto.iam.access_control.IAMUserAccessKey` collects the user's inline,
attached and group policies; :class:`moto.iam.access_control.IAMPolicy` decides each). IAM's rules
for combining them: an explicit ``Deny`` wins, else one ``Allow`` allows, else the request is denied
implicitly. Two things moto matches differently from IAM are made IAM's before moto sees a policy
(on a copy of each document): ``Action`` is matched case-insensitively, and a ``Resource`` is a
wildcard pattern (``*`` any characters, ``?`` one), every other character literal; moto turns the
pattern into a regular expression without escaping it, so the ``$`` of ``$default`` would end it.
Conditions are moto's (``StringEquals``, the one operator it evaluates; a statement with another
operator refuses the request, saying so) over the context keys the caller gives (``aws:SourceIp``,
``aws:username``...): a key the request lacks makes the condition false; an ``Allow`` whose
condition is false does not apply (moto would make it a deny: each statement is evaluated alone).
Not evaluated: resource policies, permissions boundaries, session policies and SCPs (the project
uses none for callers of its API).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Decision", "decide"]


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str
    """``explicit deny``, ``allow`` or ``implicit deny`` (no statement allows)."""


def decide(account_id: str, partition: str, access_key_id: str, action: str, resource: str,
           context: Mapping[str, str] | None = None, *, session_token: str | None = None) -> Decision:
    """IAM's decision for the owner of ``access_key_id`` to do ``action`` on ``resource``: a user of
    the local IAM (its access key), or a role (temporary credentials of a session of the local STS,
    ``session_token`` given: the role's inline and attached policies; a session policy is not
    evaluated)."""
    from moto.iam.access_control import (  # deferred: moto is slow to import
        AssumedRoleAccessKey,
        IAMPolicy,
        IAMUserAccessKey,
        PermissionResult,
    )

    key: Any
    if session_token is not None:
        key = AssumedRoleAccessKey(account_id, partition, access_key_id, {"X-Amz-Security-Token": session_token})
    else:
        key = IAMUserAccessKey(account_id, partition, access_key_id, {})
    values = dict(context or {})

    def applies(statement: dict[str, Any]) -> bool:  # moto's answer for the statement as an Allow
        document = {"Version": "2012-10-17", "Statement": [{**statement, "Effect": "Allow"}]}
        result = IAMPolicy(json.dumps(document)).is_action_permitted(action.lower(), resource,
                                                                    incoming_condition_values=values)
        return bool(result == PermissionResult.PERMITTED)

    allowed = False
    for policy in key.collect_policies():
        for statement in _as_iam_matches(_document(policy), resource):
            conditions = statement.pop("Condition", None) or {}
            if not applies(statement):
                continue  # not this action or not this resource
            unknown = sorted(set(conditions) - _CONDITION_OPERATORS)
            if unknown:
                return Decision(False, f"condition operator {unknown[0]} is not evaluated locally")
            if any(k not in values for keys in conditions.values() for k in keys):
                continue  # a key the request does not have: the condition is false
            if conditions and not applies({**statement, "Condition": conditions}):
                continue  # its condition is false: the statement does not apply (moto would deny)
            if statement.get("Effect") == "Deny":
                return Decision(False, "explicit deny")
            allowed = True
    return Decision(True, "allow") if allowed else Decision(False, "implicit deny")


_CONDITION_OPERATORS = {"StringEquals"}
"""The operators moto evaluates; moto ignores others (the statement would apply as if true), so a
statement with one is refused here rather than decided wrongly."""


def _document(policy: Any) -> dict[str, Any]:
    """The policy document of what moto's ``collect_policies`` returns: a user's inline policy (a
    dict with its ``policy_document`` text), a role's (the document, text or a dict as moto's
    CloudFormation keeps it) or a managed policy (its default version's)."""
    if isinstance(policy, str) or (isinstance(policy, dict) and "policy_document" not in policy):
        text = policy
    elif isinstance(policy, dict):
        text = policy["policy_document"]
    else:
        text = next(version.document for version in policy.versions if version.is_default)
    document = json.loads(text) if isinstance(text, str) else text
    return dict(document)


def _pattern(value: str, *, lower: bool = False) -> str:
    """An IAM wildcard pattern as moto's matcher reads it (it replaces ``*`` by ``.*`` and takes the
    rest as a regular expression): every character escaped but ``*``; ``?`` one character."""
    text = value.lower() if lower else value
    return "".join("*" if c == "*" else "." if c == "?" else re.escape(c) for c in text)


def _as_iam_matches(document: dict[str, Any], resource: str) -> list[dict[str, Any]]:
    """The document's statements with IAM's matching (see the module); a ``NotResource`` statement is decided
    here (moto reads no ``NotResource``: it would apply to everything): it applies to ``resource``
    when no pattern matches it (then as ``Resource: "*"``), else it is left out."""
    statements = document.get("Statement", [])
    listed = statements if isinstance(statements, list) else [statements]
    converted = []
    for original in listed:
        statement = dict(original)
        if "NotResource" in statement:
            excluded = statement.pop("NotResource")
            patterns = excluded if isinstance(excluded, list) else [excluded]
            if any(re.fullmatch(_pattern(p).replace("*", ".*"), resource) for p in patterns):
                continue
            statement["Resource"] = "*"
        for element in ("Action", "NotAction", "Resource"):
            if element in statement:
                values = statement[element]
                lower = element.endswith("Action")
                statement[element] = ([_pattern(v, lower=lower) for v in values] if isinstance(values, list)
                                      else _pattern(values, lower=lower))
        converted.append(statement)
    return converted
