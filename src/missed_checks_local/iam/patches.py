"""The emulator's patches of moto's IAM.

Each patch names its upstream candidate. Checked against moto 5.2.1 (5f: 5.2.5). Nothing here runs
at import: :func:`missed_checks_local.patches.install` installs the process-wide ones;
:func:`iam_enforcement` returns patches the IAM enforcement starts while a runtime runs.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from typing import Any
from unittest import mock

from missed_checks_local.core.patches import INSTALL_LOCK, MotoChanged

__all__ = ["IAM_ACTION_NAMES", "access_key_id_of", "account_lookup_past_backends_being_built",
           "cloudformation_managed_policy_arns", "iam_enforcement",
           "managed_policies_parsed_once", "service_of"]

# moto names an action after the API operation; where IAM's name differs, IAM's is checked.
IAM_ACTION_NAMES = {"lambda:Invoke": "lambda:InvokeFunction"}
# DynamoDB's transactions have no IAM action of their own: each member is checked as the operation
# it is (the DynamoDB Developer Guide, "Using IAM with DynamoDB transactions").
TRANSACTION_MEMBER_ACTIONS = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem",
                              "ConditionCheck": "ConditionCheckItem", "Get": "GetItem"}
_TRANSACTIONS = {"TransactWriteItems", "TransactGetItems"}
# Services whose errors are XML documents on AWS too: their AccessDenied stays moto's.
_XML_SERVICES = {"sqs", "iam", "sts", "s3", "cloudformation"}


def cloudformation_managed_policy_arns() -> None:
    """Patch 4: ``Role.create_from_cloudformation_json`` attaches the role's ``ManagedPolicyArns``
    (moto's model drops them).

    Upstream candidate (moto, ``iam/models.py``): read ``ManagedPolicyArns`` in the role's CloudFormation model."""
    from moto.iam.models import Role, iam_backends  # deferred: moto is a dev dependency and slow to import
    from moto.utilities.utils import get_partition

    create_role = Role.create_from_cloudformation_json.__func__  # type: ignore[attr-defined]

    def create_with_managed_policies(cls: Any, name: str, cloudformation_json: Any, account_id: str,
                                     region_name: str, **kwargs: Any) -> Any:
        role = create_role(cls, name, cloudformation_json, account_id, region_name, **kwargs)
        backend = iam_backends[account_id][get_partition(region_name)]
        for arn in (cloudformation_json.get("Properties") or {}).get("ManagedPolicyArns") or []:
            if arn not in {policy.arn for policy in backend.managed_policies.values()}:
                # AWS managed policies exist only with moto's iam.load_aws_managed_policies
                # (embedded.MOTO_CONFIG sets it): without them the role gets none, and says so.
                warnings.warn(f"{role.name}: managed policy {arn} is unknown to moto: not attached", stacklevel=2)
                continue
            backend.attach_role_policy(arn, role.name)
        return role

    # moto's signature names cls's type; ours takes it as Any (it is moto's Role)
    Role.create_from_cloudformation_json = classmethod(create_with_managed_policies)  # type: ignore[arg-type, assignment]


_MANAGED_POLICIES: dict[str, Any] = {}
_MANAGED_POLICY_OBJECTS: dict[tuple[str, str], list[Any]] = {}


def _own_copy(policy: Any) -> Any:
    """A backend's own AWS managed policy: a copy of the one built first, with its own mutable
    parts (attachments count on it, versions and tags can change), sharing the immutable ones
    (the document text, dates and id, which AWS gives every account alike)."""
    mine = _plain_copy(policy)
    mine.tags = {key: dict(tag) for key, tag in policy.tags.items()}
    mine.versions = [_plain_copy(version) for version in policy.versions]
    return mine


def _plain_copy(instance: Any) -> Any:
    """A shallow copy of an instance that keeps its attributes in ``__dict__`` (as ``copy.copy``
    does, without its generic ``__reduce_ex__`` protocol: a tenth of the time)."""
    copied = object.__new__(type(instance))
    copied.__dict__.update(instance.__dict__)
    return copied


def managed_policies_parsed_once() -> None:
    """Patch 5f: ``IAMBackend._init_aws_policies`` builds each backend's AWS managed policies from
    data parsed once per process. moto parses its 1 MB of managed policies again for every IAM
    backend it creates (six per fresh moto, about a second of CPU each: the largest part of
    provisioning a stack for a ``local run``). The policy objects are built once per account and
    Region too (``AWSManagedPolicy.from_data``, about 0.15 s a backend); each backend gets copies
    with their own attachment count, versions and tags. Also called before tests that start moto
    without provisioning a stack.

    Upstream candidate (moto, ``iam/models.py``): parse ``aws_managed_policies_data`` once, at module level."""
    from moto.iam import models  # deferred: moto is a dev dependency and slow to import
    from moto.settings import load_iam_aws_managed_policies

    with INSTALL_LOCK:
        if _MANAGED_POLICIES:
            return
        if not hasattr(models.IAMBackend, "_init_aws_policies") or not hasattr(models, "aws_managed_policies_data"):
            raise MotoChanged("moto.iam.models: IAMBackend._init_aws_policies or aws_managed_policies_data is gone")
        _MANAGED_POLICIES.update(json.loads(models.aws_managed_policies_data))

    def init_aws_policies(backend: Any) -> list[Any]:
        if not load_iam_aws_managed_policies():
            return []
        key = (backend.account_id, backend.region_name)
        with INSTALL_LOCK:
            built = _MANAGED_POLICY_OBJECTS.get(key)
            if built is None:
                built = _MANAGED_POLICY_OBJECTS[key] = [
                    models.AWSManagedPolicy.from_data(name, backend.account_id, backend.region_name, data)
                    for name, data in _MANAGED_POLICIES.items()
                ]
        return [_own_copy(policy) for policy in built]

    # a function of the backend, as moto's method: moto types its result list[ManagedPolicy]
    models.IAMBackend._init_aws_policies = init_aws_policies  # type: ignore[method-assign, assignment]


def account_lookup_past_backends_being_built() -> None:
    """Patch 5k: moto's ``get_account_id_from`` (which account an access key belongs to, asked by
    every request) reads ``access_keys`` of every IAM backend of every partition, and a backend
    another thread is still building has none yet: the request failed with AttributeError and a
    traceback (seen when ``local run`` was interrupted while its functions called in). A backend
    being built holds no key yet, so it is passed over, as it would be a moment later.

    Upstream candidate (moto, ``iam/models.py``): ``getattr(backend, "access_keys", {})``."""
    import moto.iam.models as iam_models  # deferred: moto is a dev dependency and slow to import
    from moto.core.models import DEFAULT_ACCOUNT_ID
    from moto.utilities.utils import PARTITION_NAMES

    def get_account_id_from(access_key: str) -> str:
        for account_id, account in list(iam_models.iam_backends.items()):
            for partition in PARTITION_NAMES:
                if access_key in getattr(account[partition], "access_keys", {}):
                    return account_id
        return str(DEFAULT_ACCOUNT_ID)

    iam_models.get_account_id_from = get_account_id_from


def _actions_checked(request: Any) -> list[str | None]:
    """The actions IAM checks for a request: its own (None), or for a DynamoDB transaction each of
    its members' operations (``PutItem``, ``UpdateItem``, ``DeleteItem``, ``ConditionCheckItem``,
    ``GetItem``), once each; moto would check ``dynamodb:TransactWriteItems``, which is no IAM action."""
    if service_of(request.headers) != "dynamodb" or request._get_action() not in _TRANSACTIONS:
        return [None]
    try:
        members = json.loads(request.raw_body or b"{}").get("TransactItems") or []
    except (TypeError, ValueError, AttributeError):
        return [None]
    actions = sorted({TRANSACTION_MEMBER_ACTIONS[kind] for member in members if isinstance(member, dict)
                      for kind in member if kind in TRANSACTION_MEMBER_ACTIONS})
    return list(actions) or [None]


def iam_enforcement(
    is_checked: Callable[[str], bool],
    decided: Callable[[Any, str, bool], None],
) -> list[Any]:
    """The patches (not yet started) that make moto check each request whose access key id
    ``is_checked`` against the caller's policies, and tell ``decided(request, access_key_id,
    denied)`` (10): five attributes of moto's IAM.

    - ``IAMRequestBase.check_signature`` off: signatures are not under test, and moto miscomputes
      some (Scheduler's DELETE). Upstream candidate (moto, ``iam/access_control.py``): the signature fix.
    - ``IAMPolicy.__init__`` accepts an inline policy as moto's CloudFormation stores it (a dict).
      Upstream candidate (moto, ``iam/access_control.py``).
    - ``ActionAuthenticatorMixin._authenticate_and_authorize_action`` checks only the credentials
      ``is_checked`` and answers JSON-protocol services with ``AccessDeniedException``. Upstream
      candidate for the shape (moto answers XML everywhere); not upstreamable for the exemption:
      the operator's own credentials are product-specific.
    - ``IAMPolicyStatement._check_element_matches`` lets ``Resource`` match when moto does not know
      the request's resource, and maps moto's action names to IAM's (:data:`IAM_ACTION_NAMES`).
      Upstream candidate (moto should know each request's resource and IAM's action names).
    - ``settings.INITIAL_NO_AUTH_ACTION_COUNT`` 0: not upstreamable, moto's own setting (enforcement
      from the first request)."""
    from moto import settings  # deferred: moto is a dev dependency and slow to import
    from moto.core.authorization import ActionAuthenticatorMixin
    from moto.core.exceptions import JsonRESTError
    from moto.iam.access_control import IAMPolicy, IAMPolicyStatement, IAMRequestBase

    original_policy_init = IAMPolicy.__init__
    original_authorize = ActionAuthenticatorMixin._authenticate_and_authorize_action
    original_matches = IAMPolicyStatement._check_element_matches

    def authorize(self: Any, iam_request_cls: type, resource: str = "*") -> None:
        access_key_id = access_key_id_of(self.headers)
        if not is_checked(access_key_id):
            return  # the operator's own credentials: not restricted
        try:
            for action in _actions_checked(self):
                if action is None:
                    original_authorize(self, iam_request_cls, resource)
                    continue
                with mock.patch.object(self, "_get_action", lambda action=action: action):
                    original_authorize(self, iam_request_cls, resource)
        except Exception as error:
            if "AccessDenied" not in type(error).__name__:
                raise
            decided(self, access_key_id, True)
            if service_of(self.headers) in _XML_SERVICES:
                raise
            # moto answers in XML for every service; JSON-protocol services answer like this on AWS,
            # so clients (and the state machine's Retry/Catch) see AccessDeniedException.
            raise JsonRESTError("AccessDeniedException", str(getattr(error, "message", error))) from None
        decided(self, access_key_id, False)

    def matches(self: Any, statement_element: Any, value: str) -> bool:
        if statement_element in ("Action", "NotAction"):
            value = IAM_ACTION_NAMES.get(value, value)
        if statement_element == "Resource" and value == "*":
            return True  # moto does not know this request's resource: decide by action
        return bool(original_matches(self, statement_element, value))

    def policy_init(self: Any, policy: Any) -> None:
        if isinstance(policy, dict) and "policy_document" not in policy:
            policy = json.dumps(policy)  # a role's inline policy as moto's CloudFormation stores it
        original_policy_init(self, policy)

    return [
        mock.patch.object(IAMRequestBase, "check_signature", lambda self: None),
        mock.patch.object(IAMPolicy, "__init__", policy_init),
        mock.patch.object(ActionAuthenticatorMixin, "_authenticate_and_authorize_action", authorize),
        mock.patch.object(IAMPolicyStatement, "_check_element_matches", matches),
        mock.patch.object(settings, "INITIAL_NO_AUTH_ACTION_COUNT", 0),
    ]


def access_key_id_of(headers: Any) -> str:
    """The access key id a SigV4 request was signed with (``""`` when unsigned)."""
    authorization = str(headers.get("Authorization") or "")
    marker = "Credential="
    if marker not in authorization:
        return ""
    return authorization.split(marker, 1)[1].split("/", 1)[0]


def service_of(headers: Any) -> str:
    """The service a SigV4 request was signed for (its credential scope)."""
    scope = str(headers.get("Authorization") or "").split("Credential=", 1)[1].split(",", 1)[0]
    return scope.split("/")[3]


_RULE_LAMBDA_DELIVERERS: list[Callable[[str, Any], bool]] = []
"""Who runs an EventBridge rule's Lambda targets now (:func:`event_rule_lambda_targets`); none: dropped."""
