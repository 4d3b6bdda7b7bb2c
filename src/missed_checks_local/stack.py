"""The stack from ``template.yaml``, deployed into an embedded AWS (moto) as on AWS.

:meth:`EmbeddedStack.provision` packages the template (by default the one ``sam build`` wrote,
``.aws-sam/build/template.yaml``), transforms it with ``aws-sam-translator`` and creates it
with moto's CloudFormation (see :mod:`missed_checks_local.cloudformation.deploy`). It then reads back
what was deployed, as a tool reads a deployed stack: physical names and ARNs by logical id,
the Outputs, every function's configuration (with its deployment package and layers unzipped,
for the local Lambda runtime) and every DynamoDB stream event source mapping (for the stream
poller).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tempfile
import threading
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

from missed_checks_local import patches
from missed_checks_local.cloudformation.deploy import (
    DeployError,
    load_sam_template,
    missing_resources,
    package,
    transform,
    validate_parameters,
)
from missed_checks_local.endpoint import DEFAULT_REGION, LOCAL_CREDENTIALS, LOCAL_STACK_NAME

__all__ = [
    "DEFAULT_REGION",
    "LOCAL_CREDENTIALS",
    "DEFAULT_STACK_NAME",
    "DeployError",
    "EmbeddedStack",
    "FunctionSpec",
    "StreamMappingSpec",
    "default_template_path",
]

DEFAULT_STACK_NAME = LOCAL_STACK_NAME
"""The ops commands' ``--stack`` for a local stack: one name for both."""

ClientFactory = Callable[[str], Any]
_CLIENTS_LOCK = threading.Lock()
_UNZIP_LOCK = threading.Lock()


def project_root() -> Path:
    """The missed-checks checkout this package runs from (an editable install, or the cwd)."""
    here = Path(__file__).resolve()
    for candidate in [Path.cwd(), *here.parents]:
        if (candidate / "template.yaml").is_file() and (candidate / "functions").is_dir():
            return candidate
    raise DeployError("template.yaml not found: run from the missed-checks checkout (or pass a template)")


def default_template_path() -> Path:
    """The template ``sam build`` produced (``make build`` writes it)."""
    built = project_root() / ".aws-sam" / "build" / "template.yaml"
    if not built.is_file():
        raise DeployError(f"{built} does not exist: run 'make build' (local runs execute what sam build produced)")
    return built


LOCAL_NOTIFICATION_SENDER = "notifications@missed-checks.example"
"""The local stack's ``NotificationSender`` (notifications, #18), verified in the embedded SES."""


@dataclass(frozen=True)
class FunctionSpec:
    """A deployed Lambda function, as the local Lambda runtime runs it."""

    logical_id: str
    name: str
    arn: str
    handler: str
    """``module.function`` (``app.handler``), relative to :attr:`code_dir`."""
    environment: dict[str, str]
    memory_mb: int
    timeout_s: int
    runtime: str
    role_arn: str
    code_dir: Path
    """The function's deployment package, unzipped (Lambda's ``/var/task``)."""
    layer_dirs: tuple[Path, ...] = ()
    """Each layer's content, unzipped, in order (Lambda's ``/opt``)."""

    @property
    def module(self) -> str:
        return self.handler.rsplit(".", 1)[0]


@dataclass(frozen=True)
class StreamMappingSpec:
    """A DynamoDB stream event source mapping of a function, as deployed."""

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
    """The template deployed into an embedded AWS: names, ARNs and URLs by logical id.

    ``outputs`` are the stack's Outputs as CloudFormation resolved them, so tools find
    resources the same way they do for a deployed stack.
    """

    stack_name: str
    region: str
    account_id: str
    endpoint_url: str | None
    template_path: Path
    parameters: dict[str, str]
    resources: dict[str, dict[str, Any]] = field(default_factory=dict)
    """logical id -> {"Type", "Ref" (the physical id), and attributes such as "Arn"}."""
    functions: dict[str, FunctionSpec] = field(default_factory=dict)
    stream_mappings: list[StreamMappingSpec] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)
    _clients: dict[tuple[int, str], Any] = field(default_factory=dict, repr=False, compare=False)
    lambda_runtime: Any = field(default=None, repr=False, compare=False)
    """The :class:`~missed_checks_local.awslambda.runtime.LambdaRuntime` serving the functions, once
    one is installed (set by the caller)."""

    # -- lookups -------------------------------------------------------------------------
    def _of_type(self, resource_type: str) -> dict[str, dict[str, Any]]:
        return {lid: res for lid, res in self.resources.items() if res["Type"] == resource_type}

    def _single(self, resource_type: str, what: str, key: str = "Ref") -> str:
        values = [res[key] for res in self._of_type(resource_type).values()]
        if len(values) != 1:
            raise DeployError(f"expected one {what}, the stack has {len(values)}")
        return str(values[0])

    @property
    def table_names(self) -> dict[str, str]:
        return {lid: res["Ref"] for lid, res in self._of_type("AWS::DynamoDB::Table").items()}

    @property
    def table_name(self) -> str:
        """The (single) table's name."""
        return self._single("AWS::DynamoDB::Table", "DynamoDB table")

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
    def state_machine_arn(self) -> str:
        """The (single) state machine's ARN."""
        return self._single("AWS::StepFunctions::StateMachine", "state machine")

    @property
    def state_machine_role_arn(self) -> str:
        """The role the (single) state machine acts with."""
        return self._single("AWS::StepFunctions::StateMachine", "state machine", "RoleArn")

    @property
    def schedule_group(self) -> str:
        """The (single) schedule group's name."""
        return self._single("AWS::Scheduler::ScheduleGroup", "schedule group")

    def role_arn(self, logical_id: str) -> str:
        return str(self.resources[logical_id]["Arn"])

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
        """Deploy the template into the embedded AWS the clients reach, as ``sam deploy`` would.

        Call it inside ``moto.mock_aws(config=embedded.MOTO_CONFIG)`` (``endpoint_url=None``) or against a moto server
        running in this process (``endpoint_url="http://127.0.0.1:PORT"``). ``template_path``
        defaults to the template ``sam build`` wrote; a source template works too when its
        ``CodeUri`` directories hold everything the functions need. ``parameters`` override
        the template's parameter defaults.
        """
        path = Path(template_path) if template_path else default_template_path()
        patches.install()
        client = _client_factory(region, endpoint_url)
        account_id = client("sts").get_caller_identity()["Account"]
        sam = load_sam_template(path)
        overrides = {str(key): str(value) for key, value in (parameters or {}).items()}
        # notifications (#18): e-mail from a sender verified in the embedded SES, as docs/notifications.md
        # tells an operator to do before `sam deploy`; moto's SES keeps what is sent (run_result reads it)
        if "NotificationSender" in (sam.get("Parameters") or {}) and "NotificationSender" not in overrides:
            overrides["NotificationSender"] = LOCAL_NOTIFICATION_SENDER
        if overrides.get("NotificationSender"):
            client("ses").verify_email_identity(EmailAddress=overrides["NotificationSender"])
        validate_parameters(sam, overrides)
        cfn = transform(package(sam, path.parent, client("s3")), overrides, region)
        cloudformation = client("cloudformation")
        try:
            cloudformation.create_stack(
                StackName=stack_name,
                TemplateBody=json.dumps(cfn),
                Parameters=[{"ParameterKey": key, "ParameterValue": value} for key, value in overrides.items()],
                Capabilities=["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"],
            )
        except Exception as error:  # botocore ClientError, or moto's own validation
            raise DeployError(f"creating stack {stack_name} failed: {error}") from error
        description = cloudformation.describe_stacks(StackName=stack_name)["Stacks"][0]
        if description["StackStatus"] != "CREATE_COMPLETE":
            reason = description.get("StackStatusReason", "")
            raise DeployError(f"stack {stack_name}: {description['StackStatus']} {reason}")
        stack = cls(
            stack_name=stack_name,
            region=region,
            account_id=account_id,
            endpoint_url=endpoint_url,
            template_path=path,
            parameters={p["ParameterKey"]: str(p["ParameterValue"]) for p in description.get("Parameters") or []},
            outputs={item["OutputKey"]: str(item["OutputValue"]) for item in description.get("Outputs", [])},
        )
        _Reader(stack, client).run()
        missing = missing_resources(cfn, set(stack.resources))
        if missing:
            raise DeployError(f"the embedded AWS cannot create: {', '.join(missing)}")
        return stack


def _layer(backend: Any, arn: str) -> Any:
    """The layer version ``arn`` names, as moto keeps it (its package's bytes)."""
    found = backend.layers_versions_by_arn(arn)
    if found is None:
        raise DeployError(f"a function names layer {arn}, which the embedded AWS does not have")
    return found


# botocore sends calls that carry a DynamoDB Streams ARN to an account-id endpoint
# (<account>.streams-ddb.<region>...), which moto does not route: use the regional one.
_CLIENT_CONFIG = Config(account_id_endpoint_mode="disabled")


def local_session(region: str, **credentials: str) -> Any:
    """A boto3 session for the emulator (``credentials``: ``aws_access_key_id`` and the rest;
    :data:`LOCAL_CREDENTIALS` by default), sharing this process's botocore data loader once the
    patches are installed (:func:`missed_checks_local.core.patches.one_data_loader_per_process`: 30
    sessions and their clients cost about 5 s of CPU per local run without it)."""
    with _SESSION_LOCK:  # botocore's session set-up is not thread-safe
        return boto3.session.Session(region_name=region, **(credentials or LOCAL_CREDENTIALS))


_SESSION_LOCK = threading.Lock()


def _client_factory(region: str, endpoint_url: str | None) -> ClientFactory:
    """One client per service of one session (provisioning reads each role, function and queue:
    a new IAM client for each role was most of the reading)."""
    session = local_session(region)
    clients: dict[str, Any] = {}
    lock = threading.Lock()

    def client(service: str) -> Any:
        with lock:
            if service not in clients:
                clients[service] = session.client(service, endpoint_url=endpoint_url, config=_CLIENT_CONFIG)
            return clients[service]

    return client


def unzip_cache_root() -> Path:
    """Where deployment packages are unzipped for the local runtime (shared, content-addressed)."""
    return Path(os.environ.get("MISSED_CHECKS_LOCAL_CACHE") or Path(tempfile.gettempdir()) / "missed-checks-local")


def _unzipped(content: bytes) -> Path:
    """``content`` (a zip) unzipped into a directory named by its digest (made once, atomically)."""
    target = unzip_cache_root() / hashlib.sha256(content).hexdigest()[:32]
    complete = target / ".unzipped"  # written last: a directory without it is not trusted
    with _UNZIP_LOCK:
        if not complete.is_file():
            shutil.rmtree(target, ignore_errors=True)
            target.parent.mkdir(parents=True, exist_ok=True)
            scratch = Path(tempfile.mkdtemp(dir=target.parent, prefix=".unzip-"))
            with zipfile.ZipFile(io.BytesIO(content)) as archive:
                for member in archive.infolist():
                    path = Path(archive.extract(member, scratch))
                    mode = member.external_attr >> 16
                    if mode and not member.is_dir():  # keep execute bits, as Lambda does
                        path.chmod(mode & 0o777)
            (scratch / ".unzipped").write_text("ok\n")
            try:
                scratch.rename(target)
            except OSError:  # another process made it meanwhile
                shutil.rmtree(scratch, ignore_errors=True)
    return target


class _Reader:
    """Reads the deployed stack back through the service APIs (and the unzipped code)."""

    def __init__(self, stack: EmbeddedStack, client: ClientFactory) -> None:
        self.stack = stack
        self.client = client

    def run(self) -> None:
        summaries = []
        paginator = self.client("cloudformation").get_paginator("list_stack_resources")
        for page in paginator.paginate(StackName=self.stack.stack_name):
            summaries.extend(page["StackResourceSummaries"])
        readers = {
            "AWS::DynamoDB::Table": self._table,
            "AWS::SQS::Queue": self._queue,
            "AWS::IAM::Role": self._role,
            "AWS::StepFunctions::StateMachine": self._state_machine,
            "AWS::Scheduler::ScheduleGroup": self._schedule_group,
        }
        for summary in summaries:
            logical_id, kind, ref = summary["LogicalResourceId"], summary["ResourceType"], summary["PhysicalResourceId"]
            resource: dict[str, Any] = {"Type": kind, "Ref": ref}
            if kind in readers:
                resource.update(readers[kind](ref))
            self.stack.resources[logical_id] = resource
        for logical_id, resource in self.stack.resources.items():
            if resource["Type"] == "AWS::Lambda::Function":
                self._function(logical_id, resource)
        for logical_id, resource in self.stack.resources.items():
            if resource["Type"] == "AWS::Lambda::EventSourceMapping":
                self._event_source_mapping(logical_id, resource["Ref"])

    def _table(self, name: str) -> dict[str, Any]:
        table = self.client("dynamodb").describe_table(TableName=name)["Table"]
        return {"Arn": table["TableArn"], "StreamArn": table.get("LatestStreamArn")}

    def _queue(self, url: str) -> dict[str, Any]:
        attributes = self.client("sqs").get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]
        return {"Arn": attributes["QueueArn"], "QueueName": url.rsplit("/", 1)[-1], "QueueUrl": url}

    def _role(self, name: str) -> dict[str, Any]:
        role = self.client("iam").get_role(RoleName=name)["Role"]
        return {"Arn": role["Arn"], "RoleId": role["RoleId"]}

    def _state_machine(self, arn: str) -> dict[str, Any]:
        machine = self.client("stepfunctions").describe_state_machine(stateMachineArn=arn)
        return {"Arn": arn, "Name": machine["name"], "RoleArn": machine["roleArn"]}

    def _schedule_group(self, name: str) -> dict[str, Any]:
        return {"Arn": self.client("scheduler").get_schedule_group(Name=name)["Arn"]}

    def _function(self, logical_id: str, resource: dict[str, Any]) -> None:
        from moto.awslambda.models import lambda_backends  # the deployed packages live in moto

        backend = lambda_backends[self.stack.account_id][self.stack.region]
        config = self.client("lambda").get_function_configuration(FunctionName=resource["Ref"])
        resource["Arn"] = config["FunctionArn"]
        deployed = backend.get_function(resource["Ref"])
        layer_dirs = tuple(_unzipped(_layer(backend, layer["Arn"]).code_bytes) for layer in config.get("Layers") or [])
        variables = (config.get("Environment") or {}).get("Variables") or {}
        self.stack.functions[logical_id] = FunctionSpec(
            logical_id=logical_id,
            name=config["FunctionName"],
            arn=config["FunctionArn"],
            handler=config["Handler"],
            environment={key: _attr(value) for key, value in variables.items()},
            memory_mb=int(config["MemorySize"]),
            timeout_s=int(config["Timeout"]),
            runtime=str(config["Runtime"]),
            role_arn=config["Role"],
            code_dir=_unzipped(deployed.code_bytes),
            layer_dirs=layer_dirs,
        )

    def _event_source_mapping(self, logical_id: str, uuid: str) -> None:
        mapping = self.client("lambda").get_event_source_mapping(UUID=uuid)
        function = next(
            (spec.logical_id for spec in self.stack.functions.values() if spec.arn == mapping["FunctionArn"]), None
        )
        source = mapping["EventSourceArn"]
        tables = [
            name for lid, name in self.stack.table_names.items() if self.stack.resources[lid]["StreamArn"] == source
        ]
        if function is None or not tables:
            raise DeployError(f"{logical_id}: only DynamoDB stream mappings of this stack's functions are emulated")
        self._detach_synchronous_delivery(tables[0])
        self.stack.stream_mappings.append(
            StreamMappingSpec(
                logical_id=logical_id,
                function=function,
                stream_arn=source,
                table_name=tables[0],
                starting_position=str(mapping.get("StartingPosition", "TRIM_HORIZON")),
                batch_size=int(mapping.get("BatchSize", 100)),
                maximum_retry_attempts=int(mapping.get("MaximumRetryAttempts", -1)),
                maximum_record_age_s=int(mapping.get("MaximumRecordAgeInSeconds", -1)),
                bisect_on_error=bool(mapping.get("BisectBatchOnFunctionError", False)),
                report_batch_item_failures="ReportBatchItemFailures" in (mapping.get("FunctionResponseTypes") or []),
                filter_patterns=tuple(
                    json.loads(item["Pattern"]) for item in (mapping.get("FilterCriteria") or {}).get("Filters") or []
                ),
                on_failure_arn=((mapping.get("DestinationConfig") or {}).get("OnFailure") or {}).get("Destination"),
                uuid=uuid,
            )
        )

    def _detach_synchronous_delivery(self, table_name: str) -> None:
        """moto hands stream records to a mapped function synchronously, inside the write (and
        through Docker); the stream poller delivers them instead, as Lambda's poller does."""
        from moto.dynamodb.models import dynamodb_backends  # deferred: moto is a dev dependency and slow to import

        table = dynamodb_backends[self.stack.account_id][self.stack.region].get_table(table_name)
        table.lambda_event_source_mappings.clear()


def _attr(value: Any) -> str:
    """A value as the string an environment variable holds."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
