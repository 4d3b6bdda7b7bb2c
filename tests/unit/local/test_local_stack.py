"""Deploying the built template into moto (SAM transform + moto's CloudFormation): every
resource as the template declares it, and the functions as sam build packaged them."""

from __future__ import annotations

import json

import pytest

from missed_checks_local.cloudformation.deploy import DeployError, load_sam_template
from missed_checks_local.stack import EmbeddedStack, project_root

TEMPLATE = load_sam_template(project_root() / "template.yaml")
RESOURCES = TEMPLATE["Resources"]


def _sorted(items, key):
    return sorted(items, key=lambda item: item[key])


def test_table_matches_the_template(local_stack: EmbeddedStack) -> None:
    declared = RESOURCES["ChecklistsTable"]["Properties"]
    table = local_stack.client("dynamodb").describe_table(TableName=local_stack.table_name)["Table"]
    assert table["KeySchema"] == declared["KeySchema"]
    assert _sorted(table["AttributeDefinitions"], "AttributeName") == _sorted(
        declared["AttributeDefinitions"], "AttributeName"
    )
    indexes = {index["IndexName"]: index for index in table["GlobalSecondaryIndexes"]}
    for index in declared["GlobalSecondaryIndexes"]:
        assert indexes[index["IndexName"]]["KeySchema"] == index["KeySchema"]
        assert indexes[index["IndexName"]]["Projection"] == index["Projection"]
    assert table["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert table["LatestStreamArn"] == local_stack.outputs["TableStreamArn"]
    assert str(table["DeletionProtectionEnabled"]).lower() == "true"  # the parameter's default (moto keeps the string)


def test_queues_keep_their_attributes(local_stack: EmbeddedStack) -> None:
    queues = {lid for lid, r in RESOURCES.items() if r["Type"] == "AWS::SQS::Queue"}
    assert set(local_stack.queue_urls) == queues
    sqs = local_stack.client("sqs")
    for logical_id, url in local_stack.queue_urls.items():
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        declared = RESOURCES[logical_id]["Properties"]
        assert attributes["MessageRetentionPeriod"] == str(declared["MessageRetentionPeriod"])
        assert attributes["SqsManagedSseEnabled"] == "true"
        assert attributes["QueueArn"] == local_stack.queue_arns[logical_id]


def test_schedule_group_and_outputs(local_stack: EmbeddedStack) -> None:
    # Named by CloudFormation (the ScheduleGroupName parameter is empty): it fits Scheduler's 64 characters.
    assert local_stack.schedule_group.startswith(f"{local_stack.stack_name}-ScheduleGroup-")
    assert len(local_stack.schedule_group) <= 64
    groups = local_stack.client("scheduler").list_schedule_groups()["ScheduleGroups"]
    assert local_stack.schedule_group in {group["Name"] for group in groups}
    assert set(local_stack.outputs) == set(TEMPLATE["Outputs"])
    assert local_stack.outputs["ScheduleGroupName"] == local_stack.schedule_group
    assert local_stack.outputs["StateMachineArn"] == local_stack.state_machine_arn
    assert local_stack.outputs["EvaluationDeadLetterQueueUrl"] == local_stack.queue_urls["EvaluationDeadLetterQueue"]
    role = local_stack.client("iam").get_role(RoleName=local_stack.resources["SchedulerRole"]["Ref"])["Role"]
    assert role["Arn"] == local_stack.outputs["SchedulerRoleArn"]


def test_state_machine_definition_has_its_substitutions_resolved(local_stack: EmbeddedStack) -> None:
    described = local_stack.client("stepfunctions").describe_state_machine(
        stateMachineArn=local_stack.state_machine_arn
    )
    definition = described["definition"]
    assert "${" not in definition
    states = json.loads(definition)["States"]
    plan = states["PlanEvaluation"]["Parameters"]["FunctionName"]
    assert plan == local_stack.functions["PlanEvaluationFunction"].arn
    dlq = states["SendToDeadLetterQueue"]["Parameters"]["QueueUrl"]
    assert dlq == local_stack.queue_urls["EvaluationDeadLetterQueue"]


def test_functions_get_globals_and_their_own_environment(local_stack: EmbeddedStack) -> None:
    sync = local_stack.functions["ScheduleSyncFunction"]
    assert sync.handler == "app.handler"
    assert (sync.code_dir / "app.py").read_text() == (project_root() / "functions/schedule_sync/app.py").read_text()
    (layer,) = sync.layer_dirs  # the DomainLayer, as sam build made it
    assert (layer / "python" / "missed_checks" / "checklists" / "recurrence" / "__init__.py").is_file()
    assert not (layer / "python" / "botocore").exists()
    assert not (layer / "python" / "missed_checks_local").exists()
    assert sync.role_arn == local_stack.resources["ScheduleSyncRole"]["Arn"]
    assert sync.environment["TABLE_NAME"] == local_stack.table_name  # from Globals
    assert sync.environment["POWERTOOLS_LOG_LEVEL"] == "INFO"
    assert sync.environment["SCHEDULE_GROUP_NAME"] == local_stack.schedule_group
    assert sync.environment["STATE_MACHINE_ARN"] == local_stack.state_machine_arn
    assert sync.environment["SCHEDULER_DLQ_ARN"] == local_stack.queue_arns["SchedulerDeadLetterQueue"]
    assert sync.environment["SYNC_DLQ_URL"] == local_stack.queue_urls["ScheduleSyncDeadLetterQueue"]
    assert sync.timeout_s == 60 and sync.memory_mb == 512
    record = local_stack.functions["RecordMissedChecksFunction"]
    assert record.memory_mb == 512 and record.timeout_s == 300  # its own Timeout beats Globals
    assert "SCHEDULE_GROUP_NAME" not in record.environment


def test_stream_mapping_keeps_filter_batch_and_destination(local_stack: EmbeddedStack) -> None:
    mappings = {mapping.function: mapping for mapping in local_stack.stream_mappings}
    assert sorted(mappings) == ["AuditFunction", "ReadinessFunction", "ScheduleSyncFunction"]  # #31's, #33's too
    for function, event, queue in (("ScheduleSyncFunction", "ChecklistChanges", "ScheduleSyncDeadLetterQueue"),
                                   ("AuditFunction", "ManagedChanges", "AuditDeadLetterQueue"),
                                   ("ReadinessFunction", "ReadinessChanges", "ReadinessDeadLetterQueue")):
        mapping = mappings[function]
        declared = RESOURCES[function]["Properties"]["Events"][event]["Properties"]
        assert mapping.stream_arn == local_stack.outputs["TableStreamArn"]
        assert mapping.batch_size == declared["BatchSize"]
        assert mapping.maximum_retry_attempts == declared["MaximumRetryAttempts"]
        assert mapping.report_batch_item_failures
        assert mapping.filter_patterns == tuple(json.loads(f["Pattern"]) for f in declared["FilterCriteria"]["Filters"])
        assert mapping.on_failure_arn == local_stack.queue_arns[queue]


def test_alarms_watch_the_deployed_resources_and_notify_the_topic(local_stack: EmbeddedStack) -> None:
    topic = local_stack.outputs["AlarmTopicArn"]
    alarms = local_stack.client("cloudwatch").describe_alarms()["MetricAlarms"]
    watched = {(a["Namespace"], a["MetricName"], d["Name"], d["Value"]) for a in alarms for d in a["Dimensions"]}
    queues = {("AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", local_stack.resources[q]["QueueName"])
              for q in local_stack.queue_urls}
    assert watched == queues | {
        ("AWS/States", "ExecutionsFailed", "StateMachineArn", local_stack.state_machine_arn),
        ("AWS/States", "ExecutionsTimedOut", "StateMachineArn", local_stack.state_machine_arn),
        ("AWS/Lambda", "IteratorAge", "FunctionName", local_stack.functions["ScheduleSyncFunction"].name),
        ("AWS/Lambda", "IteratorAge", "FunctionName", local_stack.functions["ReadinessFunction"].name),  # #33
    }
    assert all(a["AlarmActions"] == a["OKActions"] == [topic] for a in alarms)
    sns = local_stack.client("sns")
    assert sns.get_topic_attributes(TopicArn=topic)["Attributes"]["KmsMasterKeyId"] == (
        local_stack.resources["AlarmTopicKey"]["Ref"])
    assert sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"] == []  # no AlarmEmail given


def test_the_state_machine_logs_errors_to_its_log_group(local_stack: EmbeddedStack) -> None:
    machine = local_stack.client("stepfunctions").describe_state_machine(stateMachineArn=local_stack.state_machine_arn)
    (destination,) = machine["loggingConfiguration"]["destinations"]
    name = local_stack.outputs["EvaluationLogGroupName"]
    (group,) = local_stack.client("logs").describe_log_groups(logGroupNamePrefix=name)["logGroups"]
    assert machine["loggingConfiguration"]["level"] == "ERROR"
    assert destination["cloudWatchLogsLogGroup"]["logGroupArn"].removesuffix(":*") == group["arn"].removesuffix(":*")
    assert group["retentionInDays"] == int(TEMPLATE["Parameters"]["LogRetentionInDays"]["Default"])


def test_an_alarm_email_is_subscribed_to_the_topic(embedded: None) -> None:
    stack = EmbeddedStack.provision(parameters={"AlarmEmail": "on-call@example.com"})
    topic = stack.outputs["AlarmTopicArn"]
    (subscription,) = stack.client("sns").list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"]
    assert (subscription["Protocol"], subscription["Endpoint"]) == ("email", "on-call@example.com")


def test_parameters_override_defaults(embedded: None) -> None:
    stack = EmbeddedStack.provision(stack_name="other", parameters={"MaxWindowsPerRun": "3", "LogLevel": "DEBUG",
                                                                     "ScheduleGroupName": "other-checklists"})
    plan = stack.functions["PlanEvaluationFunction"]
    assert plan.environment["MAX_WINDOWS_PER_RUN"] == "3"
    assert plan.environment["POWERTOOLS_LOG_LEVEL"] == "DEBUG"
    assert stack.schedule_group == "other-checklists"


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        ({"Nope": "1"}, "do not exist in the template"),
        ({"LogLevel": "LOUD"}, "must be one of AllowedValues"),
        ({"MaxWindowsPerRun": "51"}, "not greater than 50"),
        ({"AlarmEmail": "on-call"}, "must match pattern"),
    ],
)
def test_bad_parameters_are_refused(embedded: None, parameters: dict[str, str], message: str) -> None:
    with pytest.raises(DeployError, match=message):
        EmbeddedStack.provision(parameters=parameters)


def test_a_resource_the_embedded_aws_cannot_create_fails_the_deployment(embedded: None, tmp_path) -> None:
    template = tmp_path / "template.yaml"
    template.write_text("Resources:\n  Budget:\n    Type: AWS::Budgets::Budget\n", encoding="utf-8")
    with pytest.raises(DeployError, match=r"cannot create: Budget \(AWS::Budgets::Budget\)"):
        EmbeddedStack.provision(template)


def test_a_missing_build_is_a_clear_error(embedded: None, tmp_path) -> None:
    template = tmp_path / "template.yaml"
    template.write_text(
        "Transform: AWS::Serverless-2016-10-31\nResources:\n  Fn:\n    Type: AWS::Serverless::Function\n"
        "    Properties: {CodeUri: missing/, Handler: app.handler, Runtime: python3.13}\n",
        encoding="utf-8",
    )
    with pytest.raises(DeployError, match="Fn: CodeUri .*missing is not a directory"):
        EmbeddedStack.provision(template)


def test_the_template_reads_as_aws_sam_translator_reads_it(tmp_path) -> None:
    """libyaml's parser with samtranslator's constructor for the short forms gives what samtranslator's
    own ``yaml_parse`` gives, for the source template and for ``sam build``'s; a second read is a copy
    (a caller changing it changes nothing for the next one) and an edited file is read again."""
    from samtranslator.yaml_helper import yaml_parse

    from missed_checks_local.cloudformation.deploy import parse_template_text

    root = project_root()
    for path in (root / "template.yaml", root / ".aws-sam" / "build" / "template.yaml"):
        text = path.read_text(encoding="utf-8")
        assert parse_template_text(text) == yaml_parse(text), path
    first = load_sam_template(root / "template.yaml")
    first["Resources"].clear()
    assert load_sam_template(root / "template.yaml")["Resources"], "a cached read was changed by its caller"
    edited = tmp_path / "template.yaml"
    edited.write_text("Resources:\n  Topic:\n    Type: AWS::SNS::Topic\n", encoding="utf-8")
    assert list(load_sam_template(edited)["Resources"]) == ["Topic"]
    edited.write_text("Resources:\n  Queue:\n    Type: AWS::SQS::Queue\n    Properties: {Name: !Ref X}\n",
                      encoding="utf-8")
    assert load_sam_template(edited)["Resources"] == {"Queue": {"Type": "AWS::SQS::Queue",
                                                                "Properties": {"Name": {"Ref": "X"}}}}
