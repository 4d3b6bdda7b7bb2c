"""Provision ``template.yaml`` into an embedded AWS (moto), resource by resource.

moto's own CloudFormation skips ``AWS::Scheduler::ScheduleGroup`` and ignores a state
machine's ``DefinitionSubstitutions``, and SAM's serverless types need a transform first, so
this module walks the template itself: every resource is created through the service API
with the properties the template gives it (intrinsics resolved to local values), in
dependency order. Lambda functions are not created in moto (its invoke needs Docker): their
handler, environment and settings are kept as :class:`FunctionSpec` for the in-process
runtime, and their stream event sources as :class:`StreamMappingSpec`.

Supported resource types: ``AWS::DynamoDB::Table``, ``AWS::SQS::Queue``,
``AWS::Scheduler::ScheduleGroup``, ``AWS::IAM::Role``, ``AWS::Serverless::Function``,
``AWS::Serverless::StateMachine``, ``AWS::Serverless::LayerVersion`` (nothing to create: the
handlers import the installed package). Anything else is a :class:`TemplateError`, so a new
resource in the template cannot be silently missing locally.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from graphlib import CycleError, TopologicalSorter
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

from missed_checks_local.template import (
    Resolver,
    TemplateError,
    default_template_path,
    load_template,
    references,
)

__all__ = [
    "DEFAULT_REGION",
    "DEFAULT_STACK_NAME",
    "EmbeddedStack",
    "FunctionSpec",
    "StreamMappingSpec",
]

DEFAULT_STACK_NAME = "missed-checks-local"
DEFAULT_REGION = "us-east-1"
LOCAL_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}

ClientFactory = Callable[[str], Any]
_CLIENTS_LOCK = threading.Lock()

# Lambda's defaults where neither Globals nor the function set a value.
_LAMBDA_DEFAULTS = {"MemorySize": 128, "Timeout": 3, "Runtime": "python3.13"}

_SQS_ATTRIBUTES = (
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "DelaySeconds",
    "FifoQueue",
    "FifoThroughputLimit",
    "KmsDataKeyReusePeriodSeconds",
    "KmsMasterKeyId",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "ReceiveMessageWaitTimeSeconds",
    "SqsManagedSseEnabled",
    "VisibilityTimeout",
)
_GSI_KEYS = ("IndexName", "KeySchema", "Projection", "ProvisionedThroughput", "OnDemandThroughput")


@dataclass(frozen=True)
class FunctionSpec:
    """A ``AWS::Serverless::Function`` as the in-process Lambda runtime runs it."""

    logical_id: str
    name: str
    arn: str
    module: str
    """Import path of the handler module: CodeUri as a package + the Handler's module."""
    attribute: str
    """The handler function's name inside :attr:`module`."""
    environment: dict[str, str]
    memory_mb: int
    timeout_s: int
    runtime: str


@dataclass(frozen=True)
class StreamMappingSpec:
    """A DynamoDB stream event source of a function (its SAM ``Events`` entry of type DynamoDB)."""

    logical_id: str
    function: str
    """Logical id of the function the stream feeds."""
    stream_arn: str
    table_name: str
    starting_position: str
    batch_size: int
    maximum_retry_attempts: int
    """-1 means forever (AWS's default), as in the mapping."""
    maximum_record_age_s: int
    bisect_on_error: bool
    report_batch_item_failures: bool
    filter_patterns: tuple[dict[str, Any], ...]
    on_failure_arn: str | None
    uuid: str


@dataclass
class EmbeddedStack:
    """The template provisioned into an embedded AWS: names, ARNs and URLs by logical id.

    ``outputs`` are the template's Outputs resolved, so tools can find resources the same way
    they do for a deployed stack.
    """

    stack_name: str
    region: str
    account_id: str
    endpoint_url: str | None
    template_path: Path
    parameters: dict[str, str]
    resources: dict[str, dict[str, Any]] = field(default_factory=dict)
    """logical id -> {"Type", "Ref", and each attribute ``GetAtt`` can read}."""
    functions: dict[str, FunctionSpec] = field(default_factory=dict)
    stream_mappings: list[StreamMappingSpec] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)
    _clients: dict[tuple[int, str], Any] = field(default_factory=dict, repr=False, compare=False)
    lambda_runtime: Any = field(default=None, repr=False, compare=False)
    """The :class:`~missed_checks_local.lambda_runtime.LambdaRuntime` serving the functions, once
    one is installed (set by the caller)."""

    # -- lookups -------------------------------------------------------------------------
    def _of_type(self, resource_type: str) -> dict[str, dict[str, Any]]:
        return {lid: res for lid, res in self.resources.items() if res["Type"] == resource_type}

    @property
    def table_names(self) -> dict[str, str]:
        return {lid: res["Ref"] for lid, res in self._of_type("AWS::DynamoDB::Table").items()}

    @property
    def table_name(self) -> str:
        """The (single) table's name."""
        names = list(self.table_names.values())
        if len(names) != 1:
            raise TemplateError(f"expected one DynamoDB table, the template has {len(names)}")
        return names[0]

    @property
    def queue_urls(self) -> dict[str, str]:
        """Queue URL by logical id (``EvaluationDeadLetterQueue`` ...)."""
        return {lid: res["Ref"] for lid, res in self._of_type("AWS::SQS::Queue").items()}

    @property
    def queue_arns(self) -> dict[str, str]:
        return {lid: res["Arn"] for lid, res in self._of_type("AWS::SQS::Queue").items()}

    def queue_url_for_arn(self, arn: str) -> str:
        for lid, queue_arn in self.queue_arns.items():
            if queue_arn == arn:
                return self.queue_urls[lid]
        raise KeyError(f"no queue of this stack has ARN {arn}")

    def queue_logical_id(self, url_or_arn: str) -> str | None:
        for lid, res in self._of_type("AWS::SQS::Queue").items():
            if url_or_arn in (res["Ref"], res["Arn"]):
                return lid
        return None

    @property
    def state_machine_arns(self) -> dict[str, str]:
        return {lid: res["Ref"] for lid, res in self._of_type("AWS::Serverless::StateMachine").items()}

    @property
    def state_machine_arn(self) -> str:
        """The (single) state machine's ARN."""
        arns = list(self.state_machine_arns.values())
        if len(arns) != 1:
            raise TemplateError(f"expected one state machine, the template has {len(arns)}")
        return arns[0]

    @property
    def schedule_group(self) -> str:
        """The (single) schedule group's name."""
        names = [res["Ref"] for res in self._of_type("AWS::Scheduler::ScheduleGroup").values()]
        if len(names) != 1:
            raise TemplateError(f"expected one schedule group, the template has {len(names)}")
        return names[0]

    def function_by_name(self, name_or_arn: str) -> FunctionSpec | None:
        """The function a Lambda ``FunctionName`` (name, ARN, or ARN with a qualifier) means."""
        for spec in self.functions.values():
            if name_or_arn in (spec.name, spec.arn) or name_or_arn.startswith(spec.arn + ":"):
                return spec
        return None

    def client(self, service: str) -> Any:
        """A boto3 client bound to this stack's endpoint and region (one per service, reused)."""
        with _CLIENTS_LOCK:
            key = (id(self), service)
            if key not in self._clients:
                self._clients[key] = _client_factory(self.region, self.endpoint_url)(service)
            return self._clients[key]

    # -- provisioning --------------------------------------------------------------------
    @classmethod
    def provision(
        cls,
        template_path: str | Path | None = None,
        *,
        stack_name: str = DEFAULT_STACK_NAME,
        region: str = DEFAULT_REGION,
        parameters: Mapping[str, str] | None = None,
        endpoint_url: str | None = None,
    ) -> EmbeddedStack:
        """Create every resource of the template in the embedded AWS the clients reach.

        Call it inside ``moto.mock_aws(...)`` (``endpoint_url=None``) or against a running moto
        server (``endpoint_url="http://127.0.0.1:PORT"``). ``parameters`` override the
        template's parameter defaults.
        """
        path = Path(template_path) if template_path else default_template_path()
        template = load_template(path)
        client = _client_factory(region, endpoint_url)
        account_id = client("sts").get_caller_identity()["Account"]
        stack = cls(
            stack_name=stack_name,
            region=region,
            account_id=account_id,
            endpoint_url=endpoint_url,
            template_path=path,
            parameters=_parameters(template, parameters or {}),
        )
        _Provisioner(stack, template, client).run()
        return stack


# botocore sends calls that carry a DynamoDB Streams ARN to an account-id endpoint
# (<account>.streams-ddb.<region>...), which moto does not route: use the regional one.
_CLIENT_CONFIG = Config(account_id_endpoint_mode="disabled")


def _client_factory(region: str, endpoint_url: str | None) -> ClientFactory:
    session = boto3.session.Session(region_name=region, **LOCAL_CREDENTIALS)

    def client(service: str) -> Any:
        return session.client(service, endpoint_url=endpoint_url, config=_CLIENT_CONFIG)

    return client


def _parameters(template: Mapping[str, Any], overrides: Mapping[str, str]) -> dict[str, str]:
    declared = template.get("Parameters") or {}
    unknown = sorted(set(overrides) - set(declared))
    if unknown:
        raise TemplateError(f"unknown template parameter(s): {', '.join(unknown)}")
    values: dict[str, str] = {}
    for name, spec in declared.items():
        if name in overrides:
            value = str(overrides[name])
        elif "Default" in spec:
            value = str(spec["Default"])
        else:
            raise TemplateError(f"template parameter {name} has no default: give it a value")
        allowed = spec.get("AllowedValues")
        if allowed and value not in [str(item) for item in allowed]:
            raise TemplateError(f"parameter {name}={value!r} is not one of {allowed}")
        values[name] = value
    return values


def _physical_name(stack_name: str, logical_id: str, limit: int) -> str:
    """CloudFormation-style generated name ``<stack>-<LogicalId>``, shortened to ``limit``."""
    name = f"{stack_name}-{logical_id}"
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: limit - 9]}-{digest}"


def _merge_globals(globals_: Mapping[str, Any], props: Mapping[str, Any]) -> dict[str, Any]:
    """SAM's Globals merge: maps merge key by key (the resource wins), scalars and lists are
    replaced, except ``Layers`` which SAM appends."""
    merged: dict[str, Any] = dict(globals_)
    for key, value in props.items():
        if key in merged and isinstance(merged[key], dict) and isinstance(value, dict):
            merged[key] = _merge_globals(merged[key], value)
        elif key == "Layers" and isinstance(merged.get(key), list) and isinstance(value, list):
            merged[key] = [*merged[key], *value]
        else:
            merged[key] = value
    return merged


class _Provisioner:
    def __init__(self, stack: EmbeddedStack, template: dict[str, Any], client: ClientFactory) -> None:
        self.stack = stack
        self.template = template
        self.client = client
        self.resolver = Resolver(
            template,
            parameters=stack.parameters,
            pseudo={
                "AWS::StackName": stack.stack_name,
                "AWS::Region": stack.region,
                "AWS::AccountId": stack.account_id,
                "AWS::Partition": "aws",
                "AWS::URLSuffix": "amazonaws.com",
                "AWS::StackId": (
                    f"arn:aws:cloudformation:{stack.region}:{stack.account_id}:stack/"
                    f"{stack.stack_name}/00000000-0000-0000-0000-000000000000"
                ),
                "AWS::NotificationARNs": "",
            },
            ref=self._ref,
            get_att=self._get_att,
        )
        self.globals = (template.get("Globals") or {}).get("Function") or {}

    # intrinsic callbacks
    def _resource(self, logical_id: str) -> dict[str, Any]:
        if logical_id not in self.stack.resources:
            raise TemplateError(f"{logical_id} is referenced but not provisioned (or not in the template)")
        return self.stack.resources[logical_id]

    def _ref(self, logical_id: str) -> Any:
        return self._resource(logical_id)["Ref"]

    def _get_att(self, logical_id: str, attribute: str) -> Any:
        resource = self._resource(logical_id)
        if attribute not in resource:
            raise TemplateError(f"!GetAtt {logical_id}.{attribute} is not available locally")
        return resource[attribute]

    def run(self) -> None:
        resources = self.template["Resources"]
        handlers = {
            "AWS::DynamoDB::Table": self._table,
            "AWS::SQS::Queue": self._queue,
            "AWS::Scheduler::ScheduleGroup": self._schedule_group,
            "AWS::IAM::Role": self._role,
            "AWS::Serverless::Function": self._function,
            "AWS::Serverless::StateMachine": self._state_machine,
            "AWS::Serverless::LayerVersion": self._layer,
            "AWS::Logs::LogGroup": self._log_group,
        }
        graph: dict[str, set[str]] = {}
        for logical_id, resource in resources.items():
            if resource.get("Type") not in handlers:
                raise TemplateError(
                    f"{logical_id}: resource type {resource.get('Type')} is not supported by the "
                    "local runtime (add it to missed_checks_local.stack)"
                )
            deps = references(resource.get("Properties") or {})
            if resource.get("Type") == "AWS::Serverless::Function":
                deps |= references(self.globals)
            deps |= set(_as_list(resource.get("DependsOn")))
            graph[logical_id] = {dep for dep in deps if dep in resources and dep != logical_id}
        try:
            order = list(TopologicalSorter(graph).static_order())
        except CycleError as error:
            raise TemplateError(f"circular references between resources: {error.args[1]}") from None
        for logical_id in order:
            resource = resources[logical_id]
            condition = resource.get("Condition")
            if condition and not self.resolver.condition(condition):
                continue
            props = resource.get("Properties") or {}
            handlers[resource["Type"]](logical_id, props)
        for logical_id, output in (self.template.get("Outputs") or {}).items():
            condition = output.get("Condition")
            if condition and not self.resolver.condition(condition):
                continue
            self.stack.outputs[logical_id] = str(self.resolver.resolve(output["Value"], f"Outputs.{logical_id}"))

    def _resolve(self, logical_id: str, props: Any) -> Any:
        return self.resolver.resolve(props, logical_id)

    # -- resource types ------------------------------------------------------------------
    def _table(self, logical_id: str, props: Mapping[str, Any]) -> None:
        p = self._resolve(logical_id, props)
        name = p.get("TableName") or _physical_name(self.stack.stack_name, logical_id, 255)
        request: dict[str, Any] = {
            "TableName": name,
            "AttributeDefinitions": p["AttributeDefinitions"],
            "KeySchema": p["KeySchema"],
            "BillingMode": p.get("BillingMode", "PROVISIONED"),
        }
        if "ProvisionedThroughput" in p:
            request["ProvisionedThroughput"] = _ints(p["ProvisionedThroughput"])
        if p.get("GlobalSecondaryIndexes"):
            request["GlobalSecondaryIndexes"] = [
                {key: index[key] for key in _GSI_KEYS if key in index} for index in p["GlobalSecondaryIndexes"]
            ]
        if p.get("LocalSecondaryIndexes"):
            request["LocalSecondaryIndexes"] = [
                {key: index[key] for key in ("IndexName", "KeySchema", "Projection") if key in index}
                for index in p["LocalSecondaryIndexes"]
            ]
        stream = p.get("StreamSpecification")
        if stream:
            request["StreamSpecification"] = {
                "StreamEnabled": True,
                "StreamViewType": stream["StreamViewType"],
            }
        sse = p.get("SSESpecification")
        if sse:
            request["SSESpecification"] = {"Enabled": _bool(sse.get("SSEEnabled", False))}
        if "DeletionProtectionEnabled" in p:
            request["DeletionProtectionEnabled"] = _bool(p["DeletionProtectionEnabled"])
        if p.get("Tags"):
            request["Tags"] = p["Tags"]
        dynamodb = self.client("dynamodb")
        description = dynamodb.create_table(**request)["TableDescription"]
        pitr = p.get("PointInTimeRecoverySpecification")
        if pitr and _bool(pitr.get("PointInTimeRecoveryEnabled", False)):
            dynamodb.update_continuous_backups(
                TableName=name,
                PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True},
            )
        ttl = p.get("TimeToLiveSpecification")
        if ttl and _bool(ttl.get("Enabled", False)):
            dynamodb.update_time_to_live(
                TableName=name,
                TimeToLiveSpecification={"Enabled": True, "AttributeName": ttl["AttributeName"]},
            )
        self.stack.resources[logical_id] = {
            "Type": "AWS::DynamoDB::Table",
            "Ref": name,
            "Arn": description["TableArn"],
            "StreamArn": description.get("LatestStreamArn"),
        }

    def _queue(self, logical_id: str, props: Mapping[str, Any]) -> None:
        p = self._resolve(logical_id, props)
        fifo = _bool(p.get("FifoQueue", False))
        name = p.get("QueueName") or _physical_name(self.stack.stack_name, logical_id, 75 if fifo else 80)
        if fifo and not name.endswith(".fifo"):
            name += ".fifo"
        attributes = {key: _attr(p[key]) for key in _SQS_ATTRIBUTES if key in p}
        for key in ("RedrivePolicy", "RedriveAllowPolicy"):
            if key in p:
                attributes[key] = p[key] if isinstance(p[key], str) else json.dumps(p[key])
        request: dict[str, Any] = {"QueueName": name, "Attributes": attributes}
        if p.get("Tags"):
            request["tags"] = {tag["Key"]: tag["Value"] for tag in p["Tags"]}
        sqs = self.client("sqs")
        url = sqs.create_queue(**request)["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        self.stack.resources[logical_id] = {
            "Type": "AWS::SQS::Queue",
            "Ref": url,
            "Arn": arn,
            "QueueName": name,
            "QueueUrl": url,
        }

    def _schedule_group(self, logical_id: str, props: Mapping[str, Any]) -> None:
        p = self._resolve(logical_id, props)
        name = p.get("Name") or _physical_name(self.stack.stack_name, logical_id, 64)
        request: dict[str, Any] = {"Name": name}
        if p.get("Tags"):
            request["Tags"] = p["Tags"]
        arn = self.client("scheduler").create_schedule_group(**request)["ScheduleGroupArn"]
        self.stack.resources[logical_id] = {
            "Type": "AWS::Scheduler::ScheduleGroup",
            "Ref": name,
            "Arn": arn,
        }

    def _role(self, logical_id: str, props: Mapping[str, Any]) -> None:
        p = self._resolve(logical_id, props)
        name = p.get("RoleName") or _physical_name(self.stack.stack_name, logical_id, 64)
        self._create_role(
            logical_id,
            name,
            p["AssumeRolePolicyDocument"],
            description=p.get("Description"),
            inline_policies={policy["PolicyName"]: policy["PolicyDocument"] for policy in p.get("Policies", [])},
            managed_policy_arns=p.get("ManagedPolicyArns", []),
            path=p.get("Path", "/"),
        )

    def _create_role(
        self,
        logical_id: str,
        name: str,
        trust: Mapping[str, Any],
        *,
        description: str | None = None,
        inline_policies: Mapping[str, Any] | None = None,
        managed_policy_arns: list[str] | None = None,
        path: str = "/",
    ) -> str:
        iam = self.client("iam")
        request: dict[str, Any] = {
            "RoleName": name,
            "Path": path,
            "AssumeRolePolicyDocument": json.dumps(trust),
        }
        if description:
            request["Description"] = description
        role = iam.create_role(**request)["Role"]
        for policy_name, document in (inline_policies or {}).items():
            iam.put_role_policy(RoleName=name, PolicyName=policy_name, PolicyDocument=json.dumps(document))
        for arn in managed_policy_arns or []:
            iam.attach_role_policy(RoleName=name, PolicyArn=arn)
        self.stack.resources[logical_id] = {
            "Type": "AWS::IAM::Role",
            "Ref": name,
            "Arn": role["Arn"],
            "RoleId": role["RoleId"],
        }
        return str(role["Arn"])

    def _log_group(self, logical_id: str, props: Mapping[str, Any]) -> None:
        """A CloudWatch log group (the functions' logs go to the run's log file; the group exists so
        the roles and LoggingConfig that name it resolve as on AWS)."""
        p = self._resolve(logical_id, props)
        name = p.get("LogGroupName") or f"/aws/lambda/{_physical_name(self.stack.stack_name, logical_id, 200)}"
        logs = self.client("logs")
        logs.create_log_group(logGroupName=name)
        if p.get("RetentionInDays"):
            logs.put_retention_policy(logGroupName=name, retentionInDays=int(p["RetentionInDays"]))
        self.stack.resources[logical_id] = {
            "Type": "AWS::Logs::LogGroup",
            "Ref": name,
            "Arn": f"arn:aws:logs:{self.stack.region}:{self.stack.account_id}:log-group:{name}:*",
        }

    def _layer(self, logical_id: str, props: Mapping[str, Any]) -> None:
        name = props.get("LayerName") or _physical_name(self.stack.stack_name, logical_id, 64)
        arn = f"arn:aws:lambda:{self.stack.region}:{self.stack.account_id}:layer:{name}:1"
        self.stack.resources[logical_id] = {"Type": "AWS::Serverless::LayerVersion", "Ref": arn, "Arn": arn}

    def _function(self, logical_id: str, props: Mapping[str, Any]) -> None:
        # Events are resolved separately: a function's stream mapping does not change its spec.
        merged = _merge_globals(self.globals, {k: v for k, v in props.items() if k != "Events"})
        p = self._resolve(logical_id, merged)
        name = p.get("FunctionName") or _physical_name(self.stack.stack_name, logical_id, 64)
        arn = f"arn:aws:lambda:{self.stack.region}:{self.stack.account_id}:function:{name}"
        self.stack.resources[logical_id] = {"Type": "AWS::Serverless::Function", "Ref": name, "Arn": arn}
        code_uri, handler = p.get("CodeUri"), p.get("Handler")
        if not isinstance(code_uri, str) or not isinstance(handler, str) or "." not in handler:
            raise TemplateError(f"{logical_id}: needs a local CodeUri directory and a module.function Handler")
        package = ".".join(part for part in Path(code_uri).parts if part not in (".", ""))
        module, attribute = handler.rsplit(".", 1)
        variables = (p.get("Environment") or {}).get("Variables") or {}
        self.stack.functions[logical_id] = FunctionSpec(
            logical_id=logical_id,
            name=name,
            arn=arn,
            module=f"{package}.{module}" if package else module,
            attribute=attribute,
            environment={key: _attr(value) for key, value in variables.items()},
            memory_mb=int(p.get("MemorySize", _LAMBDA_DEFAULTS["MemorySize"])),
            timeout_s=int(p.get("Timeout", _LAMBDA_DEFAULTS["Timeout"])),
            runtime=str(p.get("Runtime", _LAMBDA_DEFAULTS["Runtime"])),
        )
        for event_id, event in (props.get("Events") or {}).items():
            if event.get("Type") == "DynamoDB":
                self._stream_mapping(logical_id, event_id, self._resolve(f"{logical_id}.Events", event["Properties"]))
            else:
                raise TemplateError(
                    f"{logical_id}.Events.{event_id}: event type {event.get('Type')} is not supported locally"
                )

    def _stream_mapping(self, function: str, event_id: str, p: Mapping[str, Any]) -> None:
        stream_arn = p["Stream"]
        tables = [
            res["Ref"]
            for res in self.stack.resources.values()
            if res["Type"] == "AWS::DynamoDB::Table" and res.get("StreamArn") == stream_arn
        ]
        if not tables:
            raise TemplateError(f"{function}.Events.{event_id}: stream {stream_arn} is not a stream of this stack")
        patterns = []
        for item in (p.get("FilterCriteria") or {}).get("Filters") or []:
            pattern = item["Pattern"]
            patterns.append(json.loads(pattern) if isinstance(pattern, str) else pattern)
        on_failure = ((p.get("DestinationConfig") or {}).get("OnFailure") or {}).get("Destination")
        uuid = hashlib.sha256(f"{self.stack.stack_name}/{function}/{event_id}".encode()).hexdigest()
        self.stack.stream_mappings.append(
            StreamMappingSpec(
                logical_id=f"{function}{event_id}",
                function=function,
                stream_arn=stream_arn,
                table_name=tables[0],
                starting_position=str(p.get("StartingPosition", "TRIM_HORIZON")),
                batch_size=int(p.get("BatchSize", 100)),
                maximum_retry_attempts=int(p.get("MaximumRetryAttempts", -1)),
                maximum_record_age_s=int(p.get("MaximumRecordAgeInSeconds", -1)),
                bisect_on_error=_bool(p.get("BisectBatchOnFunctionError", False)),
                report_batch_item_failures="ReportBatchItemFailures" in (p.get("FunctionResponseTypes") or []),
                filter_patterns=tuple(patterns),
                on_failure_arn=on_failure,
                uuid=f"{uuid[:8]}-{uuid[8:12]}-{uuid[12:16]}-{uuid[16:20]}-{uuid[20:32]}",
            )
        )

    def _state_machine(self, logical_id: str, props: Mapping[str, Any]) -> None:
        p = self._resolve(logical_id, props)
        if "Definition" in p:
            definition = json.dumps(p["Definition"])
        elif isinstance(p.get("DefinitionUri"), str):
            uri = self.stack.template_path.parent / p["DefinitionUri"]
            try:
                definition = uri.read_text(encoding="utf-8")
            except FileNotFoundError:
                raise TemplateError(f"{logical_id}: DefinitionUri {uri} does not exist") from None
        else:
            raise TemplateError(f"{logical_id}: needs Definition or a local DefinitionUri file")
        for key, value in (p.get("DefinitionSubstitutions") or {}).items():
            definition = definition.replace("${" + key + "}", str(value))
        try:
            json.loads(definition)
        except ValueError as error:
            raise TemplateError(f"{logical_id}: the state machine definition is not JSON: {error}") from None
        name = p.get("Name") or _physical_name(self.stack.stack_name, logical_id, 80)
        role_arn = p.get("Role")
        if not role_arn:
            # SAM creates <LogicalId>Role for a state machine with Policies.
            role_arn = self._create_role(
                f"{logical_id}Role",
                _physical_name(self.stack.stack_name, f"{logical_id}Role", 64),
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"Service": "states.amazonaws.com"},
                            "Action": "sts:AssumeRole",
                        }
                    ],
                },
            )
        request: dict[str, Any] = {
            "name": name,
            "definition": definition,
            "roleArn": role_arn,
            "type": p.get("Type", "STANDARD"),
        }
        arn = self.client("stepfunctions").create_state_machine(**request)["stateMachineArn"]
        self.stack.resources[logical_id] = {
            "Type": "AWS::Serverless::StateMachine",
            "Ref": arn,
            "Arn": arn,
            "Name": name,
        }


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).lower() == "true"


def _attr(value: Any) -> str:
    """A property value as the string an API attribute or environment variable takes."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _ints(mapping: Mapping[str, Any]) -> dict[str, int]:
    return {key: int(value) for key, value in mapping.items()}
