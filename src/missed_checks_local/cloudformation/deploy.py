"""Deploy a SAM template into the embedded AWS the way ``sam deploy`` does on AWS.

1. **Package** (what ``sam package`` does): every local ``CodeUri``/``ContentUri`` directory is
   zipped and uploaded to an artifacts bucket in the embedded S3, and a local state machine
   ``DefinitionUri`` is inlined as ``Definition``.
2. **Transform**: ``aws-sam-translator`` (the library behind CloudFormation's
   ``AWS::Serverless-2016-10-31`` transform) turns the SAM template into plain CloudFormation.
3. **Create the stack** with moto's CloudFormation: it resolves parameters, conditions,
   ``Ref``/``GetAtt``/``Sub``, orders the resources and creates each through its service.

moto's CloudFormation lacks seven things this template needs. Each is filled by a small shim
registered here, and nothing else is restated:

- ``AWS::Scheduler::ScheduleGroup``: moto has no CloudFormation model for it (it would be
  skipped, leaving its ``Ref`` empty). :class:`ScheduleGroupResource` creates it through moto's
  Scheduler backend.
- ``AWS::StepFunctions::StateMachine``: moto's model ignores ``DefinitionSubstitutions`` and
  ``LoggingConfiguration`` and creates the machine in the backend that does not execute
  definitions. :class:`StateMachineResource` applies the substitutions (CloudFormation's
  ``${Name}`` replacement), passes the logging configuration on and creates it in the executing
  backend.
- ``AWS::CloudWatch::Alarm``: moto has no CloudFormation model for it. :class:`AlarmResource`
  creates it through moto's CloudWatch backend (a single-metric alarm; nothing evaluates it).
- ``AWS::SQS::QueuePolicy``: no model either (the notification DLQ's, #18). :class:`QueuePolicyResource`
  sets each queue's ``Policy`` attribute through moto's SQS backend.
- ``AWS::SNS::Subscription``: no model either. :class:`SubscriptionResource` subscribes through
  moto's SNS backend.
- ``AWS::Lambda::LayerVersion``: moto gives it no physical id, so ``Ref`` (the layer version
  ARN, which functions list in ``Layers``) would be empty. :mod:`missed_checks_local.awslambda.patches` gives it one.
- ``AWS::Lambda::Function``: moto's model drops ``Layers``; :mod:`~missed_checks_local.awslambda.patches` attaches them.
- ``AWS::IAM::Role``: moto's model drops ``ManagedPolicyArns`` (SAM gives a function's generated
  role AWS managed policies such as ``AWSLambdaDynamoDBExecutionRole``); :mod:`~missed_checks_local.iam.patches`
  attaches them.
- ``AWS::ApiGatewayV2::Api`` and ``AWS::ApiGatewayV2::Stage`` (the HTTP API, issue #19): no model;
  :mod:`.http_api` creates them through moto's API Gateway v2 backend.

One service fix rides along: moto's Scheduler ``CreateSchedule`` in a missing group raises a bare
``KeyError`` (an HTTP 500 that SDK clients retry for minutes); AWS answers
``ResourceNotFoundException``, and so does the emulator (:mod:`~missed_checks_local.scheduler.patches`).

Two checks CloudFormation makes and moto does not are made here: parameter values against
``AllowedValues``/``AllowedPattern``/``MinValue``/``MaxValue`` (:func:`validate_parameters`), and a resource moto
cannot create fails the deployment instead of being skipped with a warning
(:func:`missing_resources`).
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import os
import re
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from moto.cloudwatch.models import cloudwatch_backends
from moto.core.common_models import CloudFormationModel
from moto.scheduler.models import scheduler_backends
from moto.sns.models import sns_backends
from moto.sqs.models import sqs_backends
from moto.stepfunctions.responses import get_backend as stepfunctions_backend

from missed_checks_local.cloudformation import http_api  # noqa: F401 - HTTP API shims (issue #19) register by import

__all__ = [
    "ARTIFACTS_BUCKET",
    "DeployError",
    "load_sam_template",
    "missing_resources",
    "package",
    "transform",
    "validate_parameters",
]

ARTIFACTS_BUCKET = "missed-checks-local-artifacts"

_ZIP_CACHE: dict[tuple[str, float, int], bytes] = {}


class DeployError(RuntimeError):
    """The template cannot be packaged, transformed or created in the embedded AWS."""


# -- 1. package --------------------------------------------------------------------------------
def load_sam_template(path: Path) -> dict[str, Any]:
    """The template as plain data (YAML short forms such as ``!Ref`` in their long form).

    Parsed as aws-sam-translator parses it (its constructor for the short forms), with libyaml's
    parser when PyYAML has it, and once per text in a process (each caller gets its own copy): the
    pure-Python parse of the built template was 0.5 s of each stack provisioned in a warm process."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DeployError(f"{path}: no such template") from None
    if text not in _PARSED:
        try:
            _PARSED[text] = parse_template_text(text)
        except Exception as error:  # yaml's own error types
            raise DeployError(f"{path}: cannot read the template: {error}") from error
    template = copy.deepcopy(_PARSED[text])
    if not isinstance(template, dict) or not isinstance(template.get("Resources"), dict):
        raise DeployError(f"{path}: not a CloudFormation template (no Resources)")
    return template


_PARSED: dict[str, Any] = {}


def parse_template_text(text: str) -> Any:
    """``samtranslator.yaml_helper.yaml_parse`` of ``text``, through libyaml when PyYAML was built
    with it (its ``CSafeLoader``: the same constructors, the scanner and parser in C)."""
    import yaml
    from samtranslator.yaml_helper import (  # deferred: samtranslator is a dev dependency, slow to import
        intrinsics_multi_constructor,
        yaml_parse,
    )

    if not getattr(yaml, "__with_libyaml__", False):
        return yaml_parse(text)

    class _IntrinsicsLoader(yaml.CSafeLoader):
        pass

    _IntrinsicsLoader.add_multi_constructor("!", intrinsics_multi_constructor)
    return yaml.load(text, Loader=_IntrinsicsLoader)  # noqa: S506 - a SafeLoader subclass


def _zip_directory(directory: Path) -> bytes:
    """A deployment package of ``directory`` (cached per process by path and modification time)."""
    files = sorted(path for path in directory.rglob("*") if path.is_file() and "__pycache__" not in path.parts)
    stamp = max((path.stat().st_mtime for path in files), default=0.0)
    key = (str(directory.resolve()), stamp, len(files))
    if key not in _ZIP_CACHE:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
            for path in files:
                archive.write(path, path.relative_to(directory).as_posix())
        _ZIP_CACHE[key] = buffer.getvalue()
    return _ZIP_CACHE[key]


def package(template: dict[str, Any], base_dir: Path, s3: Any) -> dict[str, Any]:
    """``template`` with local code uploaded to the artifacts bucket and definitions inlined."""
    packaged: dict[str, Any] = json.loads(json.dumps(template))
    s3.create_bucket(Bucket=ARTIFACTS_BUCKET)
    for logical_id, resource in packaged["Resources"].items():
        properties = resource.get("Properties") or {}
        kind = resource.get("Type")
        key = {"AWS::Serverless::Function": "CodeUri", "AWS::Serverless::LayerVersion": "ContentUri"}.get(kind)
        if key and isinstance(properties.get(key), str) and not properties[key].startswith("s3://"):
            directory = (base_dir / properties[key]).resolve()
            if not directory.is_dir():
                raise DeployError(f"{logical_id}: {key} {directory} is not a directory (run 'make build')")
            body = _zip_directory(directory)
            object_key = f"{logical_id}/{hashlib.sha256(body).hexdigest()}.zip"
            s3.put_object(Bucket=ARTIFACTS_BUCKET, Key=object_key, Body=body)
            properties[key] = f"s3://{ARTIFACTS_BUCKET}/{object_key}"
        if kind == "AWS::Serverless::StateMachine" and isinstance(properties.get("DefinitionUri"), str):
            path = (base_dir / properties.pop("DefinitionUri")).resolve()
            try:
                properties["Definition"] = json.loads(path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                raise DeployError(f"{logical_id}: DefinitionUri {path} does not exist") from None
            except ValueError as error:
                raise DeployError(f"{logical_id}: {path} is not JSON: {error}") from None
    return packaged


def validate_parameters(template: Mapping[str, Any], overrides: Mapping[str, str]) -> None:
    """Refuse what CloudFormation refuses: an undeclared parameter, a value outside
    ``AllowedValues`` or not matching ``AllowedPattern``, a Number outside ``MinValue``/``MaxValue``,
    a parameter with no value."""
    declared = template.get("Parameters") or {}
    unknown = sorted(set(overrides) - set(declared))
    if unknown:
        raise DeployError(f"Parameters: {unknown} do not exist in the template")
    for name, spec in declared.items():
        value = overrides.get(name, spec.get("Default"))
        if value is None:
            raise DeployError(f"Parameters: [{name}] must have values")
        value = str(value)
        allowed = [str(item) for item in spec.get("AllowedValues") or []]
        if allowed and value not in allowed:
            raise DeployError(f"Parameter '{name}' must be one of AllowedValues: {', '.join(allowed)} (got {value!r})")
        pattern = spec.get("AllowedPattern")
        if pattern is not None and not re.fullmatch(str(pattern), value):
            raise DeployError(f"Parameter '{name}' must match pattern {pattern} (got {value!r})")
        if spec.get("Type") == "Number":
            try:
                number = float(value)
            except ValueError:
                raise DeployError(f"Parameter '{name}' must be a number (got {value!r})") from None
            if "MinValue" in spec and number < float(spec["MinValue"]):
                raise DeployError(f"Parameter '{name}' must be a number not less than {spec['MinValue']}")
            if "MaxValue" in spec and number > float(spec["MaxValue"]):
                raise DeployError(f"Parameter '{name}' must be a number not greater than {spec['MaxValue']}")


def missing_resources(cfn: Mapping[str, Any], created: set[str]) -> list[str]:
    """``LogicalId (Type)`` of every resource of the CloudFormation template moto did not create
    (conditions aside: a resource whose Condition is false is not expected)."""
    return [
        f"{logical_id} ({resource.get('Type')})"
        for logical_id, resource in (cfn.get("Resources") or {}).items()
        if logical_id not in created and "Condition" not in resource
    ]


# -- 2. transform ------------------------------------------------------------------------------
class _NoManagedPolicies:
    """The translator asks for AWS managed policy ARNs only for ``Policies: [name]`` entries;
    our template names none, and none can be fetched offline."""

    def load(self) -> dict[str, str]:
        return {}


def transform(template: Mapping[str, Any], parameters: Mapping[str, str], region: str) -> dict[str, Any]:
    """The SAM template as plain CloudFormation, exactly as the serverless transform makes it."""
    from samtranslator.model.exceptions import InvalidDocumentException  # deferred: as above
    from samtranslator.translator.transform import transform as sam_transform

    previous = os.environ.get("AWS_DEFAULT_REGION")
    os.environ["AWS_DEFAULT_REGION"] = region  # the translator reads the region from boto3's session
    try:
        transformed: dict[str, Any] = sam_transform(dict(template), dict(parameters), _NoManagedPolicies())
        return transformed
    except InvalidDocumentException as error:
        causes = "; ".join(cause.message for cause in error.causes)
        raise DeployError(f"the SAM transform rejected the template: {causes}") from None
    finally:
        if previous is None:
            os.environ.pop("AWS_DEFAULT_REGION", None)
        else:
            os.environ["AWS_DEFAULT_REGION"] = previous


# -- 3. shims for moto's CloudFormation --------------------------------------------------------
# The resource models moto lacks (below) register themselves by being defined; the fixes to
# moto's own models (layers, managed policies, a missing schedule group) are
# missed_checks_local.patches (installed by EmbeddedStack.provision).
class ScheduleGroupResource(CloudFormationModel):
    """``AWS::Scheduler::ScheduleGroup`` through moto's Scheduler backend."""

    def __init__(self, group: Any) -> None:
        self.group = group

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::Scheduler::ScheduleGroup"

    @staticmethod
    def cloudformation_name_type() -> str:
        return "Name"

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return attr == "Arn"

    @property
    def physical_resource_id(self) -> str:
        return str(self.group.name)

    def get_cfn_attribute(self, attribute_name: str) -> Any:
        if attribute_name == "Arn":
            return self.group.arn
        raise DeployError(f"AWS::Scheduler::ScheduleGroup has no attribute {attribute_name}")

    @classmethod
    def create_from_cloudformation_json(
        cls, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str, **kwargs: Any
    ) -> ScheduleGroupResource:
        properties = cloudformation_json.get("Properties") or {}
        backend = scheduler_backends[account_id][region_name]
        group = backend.create_schedule_group(
            name=properties.get("Name", resource_name), tags=properties.get("Tags") or []
        )
        return cls(group)

    @classmethod
    def delete_from_cloudformation_json(
        cls, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str
    ) -> None:
        scheduler_backends[account_id][region_name].delete_schedule_group(resource_name)

class StateMachineResource(CloudFormationModel):
    """``AWS::StepFunctions::StateMachine`` with ``DefinitionSubstitutions``, executing."""

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::StepFunctions::StateMachine"

    @staticmethod
    def cloudformation_name_type() -> str:
        return "StateMachineName"

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return attr in ("Arn", "Name")

    @classmethod
    def create_from_cloudformation_json(
        cls, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str, **kwargs: Any
    ) -> Any:
        properties = cloudformation_json["Properties"]
        definition = properties.get("DefinitionString")
        if definition is None and "Definition" in properties:
            definition = json.dumps(properties["Definition"])
        if not isinstance(definition, str):
            raise DeployError(f"{kwargs.get('LogicalId')}: the state machine has no definition")
        for name, value in (properties.get("DefinitionSubstitutions") or {}).items():
            definition = definition.replace("${" + name + "}", str(value))
        tags = [{"key": tag["Key"], "value": tag["Value"]} for tag in properties.get("Tags") or []]
        backend = stepfunctions_backend(account_id, region_name)
        return backend.create_state_machine(
            properties.get("StateMachineName", resource_name), definition, properties["RoleArn"], tags=tags,
            loggingConfiguration=_logging_configuration(properties.get("LoggingConfiguration")),
        )


def _logging_configuration(logging: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """CloudFormation's ``LoggingConfiguration`` in the shape of the Step Functions API."""
    if not logging:
        return None
    return {
        "level": logging.get("Level", "OFF"),
        "includeExecutionData": str(logging.get("IncludeExecutionData", False)).lower() == "true",
        "destinations": [
            {"cloudWatchLogsLogGroup": {"logGroupArn": destination["CloudWatchLogsLogGroup"]["LogGroupArn"]}}
            for destination in logging.get("Destinations") or []
        ],
    }


class AlarmResource(CloudFormationModel):
    """``AWS::CloudWatch::Alarm`` (one metric, no metric math) through moto's CloudWatch backend."""

    def __init__(self, alarm: Any) -> None:
        self.alarm = alarm

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::CloudWatch::Alarm"

    @staticmethod
    def cloudformation_name_type() -> str:
        return "AlarmName"

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return attr == "Arn"

    @property
    def physical_resource_id(self) -> str:
        return str(self.alarm.name)

    def get_cfn_attribute(self, attribute_name: str) -> Any:
        if attribute_name == "Arn":
            return self.alarm.alarm_arn
        raise DeployError(f"AWS::CloudWatch::Alarm has no attribute {attribute_name}")

    @classmethod
    def create_from_cloudformation_json(
        cls, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str, **kwargs: Any
    ) -> AlarmResource:
        properties = cloudformation_json.get("Properties") or {}
        if properties.get("Metrics"):
            raise DeployError(f"{resource_name}: metric math alarms (Metrics) are not emulated")
        alarm = cloudwatch_backends[account_id][region_name].put_metric_alarm(
            name=properties.get("AlarmName", resource_name),
            namespace=properties["Namespace"],
            metric_name=properties["MetricName"],
            comparison_operator=properties["ComparisonOperator"],
            evaluation_periods=int(properties["EvaluationPeriods"]),
            datapoints_to_alarm=int(properties["DatapointsToAlarm"]) if "DatapointsToAlarm" in properties else None,
            period=int(properties["Period"]),
            threshold=float(properties["Threshold"]),
            statistic=properties.get("Statistic"),  # type: ignore[arg-type]  # moto annotates str; None when unset, as its own responses pass
            extended_statistic=properties.get("ExtendedStatistic"),
            description=properties.get("AlarmDescription", ""),
            dimensions=properties.get("Dimensions") or [],
            alarm_actions=properties.get("AlarmActions") or [],
            ok_actions=properties.get("OKActions") or [],
            insufficient_data_actions=properties.get("InsufficientDataActions") or [],
            unit=properties.get("Unit"),
            actions_enabled=str(properties.get("ActionsEnabled", True)).lower() == "true",
            treat_missing_data=properties.get("TreatMissingData"),
        )
        return cls(alarm)

    @classmethod
    def delete_from_cloudformation_json(
        cls, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str
    ) -> None:
        cloudwatch_backends[account_id][region_name].delete_alarms([resource_name])


class SubscriptionResource(CloudFormationModel):
    """``AWS::SNS::Subscription`` through moto's SNS backend."""

    def __init__(self, subscription: Any) -> None:
        self.subscription = subscription

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::SNS::Subscription"

    @staticmethod
    def cloudformation_name_type() -> str:
        return ""

    @property
    def physical_resource_id(self) -> str:
        return str(self.subscription.arn)

    @classmethod
    def create_from_cloudformation_json(
        cls, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str, **kwargs: Any
    ) -> SubscriptionResource:
        properties = cloudformation_json.get("Properties") or {}
        subscription = sns_backends[account_id][region_name].subscribe(
            properties["TopicArn"], properties["Endpoint"], properties["Protocol"]
        )
        return cls(subscription)

    @classmethod
    def delete_from_cloudformation_json(
        cls, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str
    ) -> None:
        sns_backends[account_id][region_name].unsubscribe(resource_name)


class QueuePolicyResource(CloudFormationModel):
    """``AWS::SQS::QueuePolicy`` through moto's SQS backend (the queues' ``Policy`` attribute)."""

    def __init__(self, name: str, queues: list[str]) -> None:
        self.name = name
        self.queues = queues

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::SQS::QueuePolicy"

    @staticmethod
    def cloudformation_name_type() -> str:
        return ""

    @property
    def physical_resource_id(self) -> str:
        return self.name

    @classmethod
    def create_from_cloudformation_json(
        cls, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str, **kwargs: Any
    ) -> QueuePolicyResource:
        properties = cloudformation_json.get("Properties") or {}
        queues = [str(url) for url in properties.get("Queues") or []]
        for url in queues:
            sqs_backends[account_id][region_name].set_queue_attributes(
                url.rsplit("/", 1)[-1], {"Policy": json.dumps(properties.get("PolicyDocument") or {})})
        return cls(resource_name, queues)
