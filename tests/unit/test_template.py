"""Static checks of template.yaml and the state machine definition: what cfn-lint cannot see."""

from __future__ import annotations

import importlib
import json
import re
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cfnlint.decode import decode

from missed_checks.aws.table import keys
from tools.lint_policies import main as lint_policies
from tools.lint_policies import transformed_template

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE, _ = decode(str(ROOT / "template.yaml"))
RESOURCES = TEMPLATE["Resources"]
ASL_PATH = ROOT / RESOURCES["EvaluationStateMachine"]["Properties"]["DefinitionUri"]
ASL = json.loads(ASL_PATH.read_text())
LAMBDA_TRANSIENT_ERRORS = {
    "Lambda.ServiceException", "Lambda.AWSLambdaException", "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException", "Lambda.ClientExecutionTimeoutException",
}


def functions():
    return {name: r for name, r in RESOURCES.items() if r["Type"] == "AWS::Serverless::Function"}


def all_states(states, parents=()):
    for name, state in states.items():
        yield name, state, parents
        if state["Type"] == "Map":
            yield from all_states(state["ItemProcessor"]["States"], (*parents, state))


@pytest.fixture(scope="module")
def cloudformation(monkeypatch_module):
    """The SAM template transformed to plain CloudFormation, offline, as `sam deploy` would."""
    return transformed_template(ROOT / "template.yaml")


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AWS_DEFAULT_REGION", "us-east-1")
        yield patch


def test_every_substitution_in_the_definition_is_provided_and_used():
    used = set(re.findall(r"\$\{(\w+)\}", ASL_PATH.read_text()))
    provided = set(RESOURCES["EvaluationStateMachine"]["Properties"]["DefinitionSubstitutions"])
    assert used == provided


def test_every_lambda_task_retries_transient_lambda_errors_and_every_failure_reaches_a_dead_letter_queue():
    lambda_tasks = 0
    for name, state, parents in all_states(ASL["States"]):
        if state["Type"] != "Task":
            continue
        caught = bool(state.get("Catch")) or any(p.get("Catch") for p in parents)
        if state["Resource"] == "arn:aws:states:::lambda:invoke":
            lambda_tasks += 1
            retried = {e for rule in state["Retry"] for e in rule["ErrorEquals"]}
            assert LAMBDA_TRANSIENT_ERRORS <= retried, name
            assert "TransientError" in retried, name
            assert caught, f"{name} has no Catch (nor does an enclosing Map)"
        else:
            assert state["Resource"] == "arn:aws:states:::sqs:sendMessage", name
            assert state["Next"] in ("EvaluationFailed", "WindowFailed")
    assert lambda_tasks == 3


def reads(value, path):
    """Whether a Parameters template reads ``path`` anywhere."""
    if isinstance(value, dict):
        return any(reads(v, path) for v in value.values())
    return value == path


def transitions(state):
    """(next state, the Choice rule taken or None) for every way out of ``state``."""
    yield from ((state[key], None) for key in ("Next", "Default") if key in state)
    yield from ((rule["Next"], rule) for rule in state.get("Choices", []))
    yield from ((catch["Next"], None) for catch in state.get("Catch", []))


def test_a_dead_letter_reads_the_errors_cause_only_where_it_is_sure_to_be_there():
    """A caught error may have no Cause (a task's States.Timeout): reading a missing $.error.Cause fails
    the execution with States.Runtime, which no Catch catches, and the dead letter is never sent. Each
    state reading it is entered only from a Choice that found it, or a Pass that set it."""
    readers = 0
    for scope in [ASL["States"], *(s["ItemProcessor"]["States"] for _, s, _ in all_states(ASL["States"])
                                   if s["Type"] == "Map")]:
        for name, state in scope.items():
            if not reads(state.get("Parameters", {}), "$.error.Cause"):
                continue
            readers += 1
            for other_name, other in scope.items():
                for target, rule in transitions(other):
                    if target != name:
                        continue
                    sets_it = other["Type"] == "Pass" and other.get("ResultPath") == "$.error.Cause"
                    found_it = rule is not None and rule == {"Variable": "$.error.Cause", "IsPresent": True,
                                                             "Next": name}
                    assert sets_it or found_it, f"{other_name} enters {name} without a sure $.error.Cause"
    assert readers == 2  # SendWindowToDeadLetterQueue, SendToDeadLetterQueue


def test_dead_letter_messages_carry_checklist_window_or_instant_and_execution():
    for name, state, _ in all_states(ASL["States"]):
        if state.get("Resource") == "arn:aws:states:::sqs:sendMessage":
            body = state["Parameters"]["MessageBody"]
            assert "execution.$" in body, name
            if name == "RejectInput":  # the input itself is what is wrong: keep all of it
                assert body["input.$"] == "$"
                continue
            assert {"checklist_id.$", "error.$", "cause.$"} <= set(body), name
            assert "window.$" in body or "instant.$" in body, name


def test_every_state_has_a_comment_and_the_windows_map_runs_oldest_first_one_at_a_time():
    for name, state, _ in all_states(ASL["States"]):
        assert state.get("Comment"), f"{name} has no Comment for the console"
    assert ASL["States"]["JudgeDueWindows"]["MaxConcurrency"] == 1


def test_handlers_named_by_the_template_exist_and_are_callable(monkeypatch):
    # Import as Lambda does, with the Globals' plain-string settings (Powertools reads them at import).
    for key, value in TEMPLATE["Globals"]["Function"]["Environment"]["Variables"].items():
        if isinstance(value, str):
            monkeypatch.setenv(key, value)
    for name, resource in functions().items():
        props = resource["Properties"]
        module_path = props["CodeUri"].strip("/").replace("/", ".")
        module_name, attribute = props["Handler"].rsplit(".", 1)
        module = importlib.import_module(f"{module_path}.{module_name}")
        assert callable(getattr(module, attribute)), name


def test_every_setting_a_function_reads_is_set_on_it_by_the_template():
    """Settings have no defaults in code (missed_checks.aws.settings): the template sets each one
    a handler reads, from a parameter whose default is the only one."""
    shared = set(TEMPLATE["Globals"]["Function"]["Environment"]["Variables"])
    for name, resource in functions().items():
        props = resource["Properties"]
        source = (ROOT / props["CodeUri"] / "app.py").read_text()
        webapp = ROOT / "src" / "missed_checks" / "webapp"  # the web app's pages and what they share (#32)
        pages = r"^from missed_checks\.webapp\.pages import (\([\w,\s]+\)|[\w, ]+$)"
        for listed in re.findall(pages, source, flags=re.M):
            modules = [name.strip() for name in listed.strip("()").split(",") if name.strip()]
            source += "".join((webapp / "pages" / f"{module}.py").read_text() for module in modules)
            source += (webapp / "context.py").read_text()
        routes = ROOT / "src" / "missed_checks" / "api" / "routes"  # the management function's routers (#31)
        imports = r"^from missed_checks\.api\.routes import (\([\w,\s]+\)|[\w, ]+$)"
        for listed in re.findall(imports, source, flags=re.M):
            modules = [name.strip() for name in listed.strip("()").split(",") if name.strip()]
            source += "".join((routes / f"{module}.py").read_text() for module in [*modules, "context"])
        read = set(re.findall(r"settings\.(?:required|required_int|optional)\(\"([A-Z_]+)\"\)", source))
        assert read, name
        given = shared | set(props.get("Environment", {}).get("Variables", {}))
        assert read <= given, (name, read - given)


def test_table_keys_and_indexes_match_the_code():
    props = RESOURCES["ChecklistsTable"]["Properties"]
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    assert props["StreamSpecification"]["StreamViewType"] == "NEW_AND_OLD_IMAGES"
    assert props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert props["SSESpecification"]["SSEEnabled"] is True
    indexes = {i["IndexName"]: [k["AttributeName"] for k in i["KeySchema"]] for i in props["GlobalSecondaryIndexes"]}
    assert indexes == {keys.BY_EQUIPMENT_INDEX: ["gsi1pk", "gsi1sk"], keys.BY_PERIOD_INDEX: ["gsi2pk", "gsi2sk"]}


def test_the_web_apps_sessions_expire_by_the_tables_ttl_and_it_signs_in_at_the_stacks_pool_client() -> None:
    """#32: the session item's ``expires_at`` is the table's TTL attribute (aws/table/sessions.py writes
    it); the web app's function is given the pool's app client, empty when JwtIssuer replaces the pool."""
    from missed_checks.aws.table.sessions import session_item
    from missed_checks.webapp.session import Session

    ttl = RESOURCES["ChecklistsTable"]["Properties"]["TimeToLiveSpecification"]
    assert ttl == {"AttributeName": "expires_at", "Enabled": True}
    now = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    item = session_item(Session("ab" * 32, "manager-north", "Manager", (), "token", now, now))
    assert item[ttl["AttributeName"]] == int((now + timedelta(minutes=30)).timestamp())
    variables = RESOURCES["WebAppFunction"]["Properties"]["Environment"]["Variables"]
    assert variables["USER_POOL_CLIENT_ID"] == {"Fn::If": ["CreateUserPool", {"Ref": "UserPoolClient"}, ""]}
    assert RESOURCES["WebAppFunction"]["Properties"]["Role"] == {"Fn::GetAtt": ["WebAppRole", "Arn"]}


def test_dead_letter_queues_are_encrypted_and_keep_messages_fourteen_days():
    queues = {n: r for n, r in RESOURCES.items() if r["Type"] == "AWS::SQS::Queue"}
    assert len(queues) == 6  # three, the notification DLQ (#18), the audit DLQ (#31) and readiness's (#33)
    for name, queue in queues.items():
        assert queue["Properties"]["SqsManagedSseEnabled"] is True, name
        assert queue["Properties"]["MessageRetentionPeriod"] == 14 * 24 * 3600, name


def test_stream_mapping_is_bounded_reports_partial_failures_and_has_a_failure_destination():
    for function, events, queue in (("ScheduleSyncFunction", "ChecklistChanges", "ScheduleSyncDeadLetterQueue"),
                                    ("AuditFunction", "ManagedChanges", "AuditDeadLetterQueue"),  # #31
                                    ("ReadinessFunction", "ReadinessChanges", "ReadinessDeadLetterQueue")):  # #33
        event = RESOURCES[function]["Properties"]["Events"][events]["Properties"]
        assert event["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
        assert event["BisectBatchOnFunctionError"] is True
        assert 0 <= event["MaximumRetryAttempts"] <= 10
        destination = event["DestinationConfig"]["OnFailure"]["Destination"]
        assert destination == {"Fn::GetAtt": [queue, "Arn"]}


def _matches(pattern, record):
    """Just enough of EventBridge pattern matching for the filter in the template: nested keys with
    lists of allowed exact values."""
    for key, allowed in pattern.items():
        if key not in record:
            return False
        if isinstance(allowed, dict):
            if not isinstance(record[key], dict) or not _matches(allowed, record[key]):
                return False
        elif record[key] not in allowed:
            return False
    return True


@pytest.mark.parametrize(("sk", "reaches_sync"), [
    ("CHECKLIST", True),
    ("EQUIPMENT#03#fl-01", False),
    ("2026-03-02T05:10:00Z#fl-01", False),  # performed and missed checks
    ("CALENDAR", True),  # closure calendars: their checklists are re-synced
    ("REVISION#000000000001", False),  # a calendar's revision records
    ("CHECKLIST#EVALUATED_UNTIL", False),
])
def test_stream_filter_lets_only_checklist_items_reach_schedule_sync(sk, reaches_sync):
    event = RESOURCES["ScheduleSyncFunction"]["Properties"]["Events"]["ChecklistChanges"]["Properties"]
    (filter_,) = event["FilterCriteria"]["Filters"]
    record = {"dynamodb": {"Keys": {"pk": {"S": "CHECKLIST#x"}, "sk": {"S": sk}}}}
    assert _matches(json.loads(filter_["Pattern"]), record) is reaches_sync


DISMISSAL = {"M": {"reason": {"S": "broken"}, "by": {"S": "sup"}, "at": {"S": "2026-03-02T08:00:00Z"}}}


@pytest.mark.parametrize(("pk", "sk", "new_image", "audited"), [
    ("CHECKLIST#x", "CHECKLIST", {}, True),
    ("CALENDAR#x", "CALENDAR", {}, True),
    ("SUBSCRIPTION#x", "SUBSCRIPTION", {}, True),
    ("SITE#north", "SITE", {}, True),
    ("REGISTERED#fl-01", "REGISTERED", {}, True),
    ("GRANT#alice", "GRANT", {}, True),
    ("DEFECT#D-3f9a0c1b2d4e5f60", "DEFECT", {}, True),  # #33
    ("CHECKLIST#x", "ITEMS#000000000001", {}, False),  # a revision of a checklist's items (#33)
    ("CHECKLIST#x", "EQUIPMENT#03#fl-01", {}, True),  # an assignment
    ("OUT_OF_SERVICE", "2026-03-02T05:10:00Z#fl-01", {}, True),
    ("MISSED#x#007", "2026-03-02T05:00:00Z#fl-01", {"dismissal": DISMISSAL}, True),
    ("MISSED#x#007", "2026-03-02T05:00:00Z#fl-01", {"judged_at": {"S": "2026-03-02T06:00:00Z"}}, False),
    ("CHECKLIST#x", "CHECKLIST#EVALUATED_UNTIL", {}, False),  # the evaluation's watermark
    ("CHECKLIST#x", "WINDOW#2026-03-02T05:00:00Z", {}, False),
    ("CALENDAR#x", "REVISION#000000000001", {}, False),
    ("PERFORMED#x#007", "2026-03-02T05:10:00Z#fl-01", {}, False),
    ("NOTIFICATION#n", "NOTIFICATION", {}, False),
    ("REQUEST#caller#key", "REQUEST", {}, False),
    ("AUDIT#checklist#x", "2026-03-02T05:10:00.000000Z#0001#e", {}, False),  # its own entries
])
def test_stream_filter_lets_only_managed_items_reach_the_audit_function(pk, sk, new_image, audited):
    """#31: every item a person manages (and a missed check's dismissal), nothing the evaluation,
    the notifier or the audit function itself writes; by the local runtime's Lambda filter matcher."""
    from missed_checks_local.streams.filters import matches_any

    event = RESOURCES["AuditFunction"]["Properties"]["Events"]["ManagedChanges"]["Properties"]
    patterns = [json.loads(f["Pattern"]) for f in event["FilterCriteria"]["Filters"]]
    record = {"eventName": "MODIFY", "dynamodb": {"Keys": {"pk": {"S": pk}, "sk": {"S": sk}}, "NewImage": new_image}}
    assert matches_any(patterns, record) is audited


# CloudWatch Logs' log-delivery actions (Step Functions logging) have no resource-level permissions.
LOG_DELIVERY_ACTIONS = {
    "logs:CreateLogDelivery", "logs:GetLogDelivery", "logs:UpdateLogDelivery", "logs:DeleteLogDelivery",
    "logs:ListLogDeliveries", "logs:PutResourcePolicy", "logs:DescribeResourcePolicies", "logs:DescribeLogGroups",
}


def test_transforms_to_cloudformation_with_no_wildcard_resources(cloudformation):
    """Every statement names its resources; the only "*" are X-Ray's, the state machine's log
    delivery and dynamodb:ListStreams, which have no resource-level permissions. Functions have their own roles, so SAM
    attaches no managed policies to them."""
    roles = {n: r for n, r in cloudformation["Resources"].items() if r["Type"] == "AWS::IAM::Role"}
    function_roles = {r["Properties"]["Role"]["Fn::GetAtt"][0] for r in cloudformation["Resources"].values()
                      if r["Type"] == "AWS::Lambda::Function"}
    assert function_roles == {f"{name.removesuffix('Function')}Role" for name in functions()}
    for role_name, role in roles.items():
        for policy in role["Properties"].get("Policies", []):
            for statement in policy["PolicyDocument"]["Statement"]:
                resources = statement["Resource"]
                resources = resources if isinstance(resources, list) else [resources]
                actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
                if "*" in resources:
                    logs = role_name == "EvaluationStateMachineRole" and set(actions) == LOG_DELIVERY_ACTIONS
                    streams = actions == ["dynamodb:ListStreams"]
                    assert logs or streams or all(a.startswith("xray:") for a in actions), (role_name, actions)
        managed = {arn.rsplit("/", 1)[-1] for arn in role["Properties"].get("ManagedPolicyArns", [])}
        if role_name in function_roles:
            assert managed == set(), (role_name, managed)
        else:  # the state machine's role: SAM adds X-Ray's write policy for Tracing
            assert managed <= {"AWSXrayWriteOnlyAccess"}, (role_name, managed)


def test_every_policy_passes_the_policy_linter_or_its_finding_is_allowed_with_a_reason(monkeypatch_module, tmp_path,
                                                                                       capsys):
    """tools/lint_policies.py (parliament, run by make lint) on every policy of the transformed
    template: clean but for tools/policy-lint-allow.json's findings, each with its reason."""
    assert lint_policies([]) == 0, capsys.readouterr().out
    allowed = json.loads((ROOT / "tools" / "policy-lint-allow.json").read_text())["allowed"]
    assert all(len(entry["reason"]) > 40 for entry in allowed)
    (tmp_path / "none.json").write_text('{"allowed": []}')
    assert lint_policies(["--allow", str(tmp_path / "none.json")]) == 1  # without the list it fails
    assert "NOT ALLOWED" in capsys.readouterr().out


def statements_with(cloudformation, action):
    return [(name, statement) for name, r in cloudformation["Resources"].items() if r["Type"] == "AWS::IAM::Role"
            for policy in r["Properties"].get("Policies", []) for statement in policy["PolicyDocument"]["Statement"]
            if action in (statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]])]


def test_list_streams_is_granted_on_star_alone_as_it_has_no_resource_level_permissions(cloudformation):
    """A statement scoping dynamodb:ListStreams to a table or stream grants nothing."""
    listing = statements_with(cloudformation, "dynamodb:ListStreams")
    assert sorted(role for role, _ in listing) == ["AuditRole", "ReadinessRole", "ScheduleSyncRole"]  # stream readers
    for _, statement in listing:
        assert (statement["Action"], statement["Resource"]) == (["dynamodb:ListStreams"], "*")
    for _, stream_reads in statements_with(cloudformation, "dynamodb:GetRecords"):
        assert stream_reads["Resource"] == {"Fn::GetAtt": ["ChecklistsTable", "StreamArn"]}  # the rest stays scoped


# The longest names AWS allows for what the template names after the stack.
NAME_LIMITS = {("AWS::Scheduler::ScheduleGroup", "Name"): 64, ("AWS::CloudWatch::Alarm", "AlarmName"): 255,
               ("AWS::Logs::LogGroup", "LogGroupName"): 512, ("AWS::Cognito::UserPool", "UserPoolName"): 128}
LONGEST_STACK_NAME = "s" * 128  # CloudFormation's limit


def test_no_name_built_from_the_stack_name_can_exceed_its_limit():
    """A stack name over 53 characters made "<stack>-checklists" longer than a schedule group's
    64: every name the template builds from the stack's name fits even the longest stack name."""
    named = 0
    for name, resource in RESOURCES.items():
        for prop, value in resource.get("Properties", {}).items():
            if not (prop.endswith("Name") and isinstance(value, dict) and "Fn::Sub" in value):
                continue
            text = value["Fn::Sub"] if isinstance(value["Fn::Sub"], str) else value["Fn::Sub"][0]
            if "${AWS::StackName}" not in text:
                continue
            named += 1
            limit = NAME_LIMITS[(resource["Type"], prop)]  # a new kind of name: add its limit
            assert len(text.replace("${AWS::StackName}", LONGEST_STACK_NAME)) <= limit, (name, prop)
    assert named >= 8  # the alarms and the state machine's log group


def test_the_schedule_group_is_named_by_cloudformation_unless_a_name_is_given():
    name = RESOURCES["ScheduleGroup"]["Properties"]["Name"]
    assert name == {"Fn::If": ["ScheduleGroupNamed", {"Ref": "ScheduleGroupName"}, {"Ref": "AWS::NoValue"}]}
    assert TEMPLATE["Conditions"]["ScheduleGroupNamed"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "ScheduleGroupName"},
                                                                                          ""]}]}
    parameter = TEMPLATE["Parameters"]["ScheduleGroupName"]
    assert parameter["Default"] == ""
    # CloudFormation refuses a longer name before it creates anything, with the constraint's words.
    for value, allowed in (("", True), ("missed-checks-checklists", True), ("g" * 64, True), ("g" * 65, False),
                           ("has space", False), ("a/b", False)):
        assert bool(re.fullmatch(parameter["AllowedPattern"], value)) is allowed, value
    assert "64" in parameter["ConstraintDescription"]


def test_the_event_bus_is_one_that_exists_already():
    """The stack creates no bus: the parameter names one that must exist, by default the bus every
    account has."""
    assert not [n for n, r in RESOURCES.items() if r["Type"] == "AWS::Events::EventBus"]
    parameter = TEMPLATE["Parameters"]["EventBusName"]
    assert parameter["Default"] == "default"
    assert "must already exist" in parameter["Description"]
    for value, allowed in (("default", True), ("missed-checks", True), ("", False), ("a b", False)):
        assert bool(re.fullmatch(parameter["AllowedPattern"], value)) is allowed, value


@pytest.mark.stack  # needs tools/node_modules (npm ci, run by make lint)
def test_state_machine_definition_passes_the_offline_asl_validator():
    validator = ROOT / "tools" / "node_modules" / ".bin" / "asl-validator"
    if not validator.exists():
        node = shutil.which("npm")
        pytest.fail(f"asl-validator is not installed: run `make test` (it runs `npm ci` in tools/; npm at {node})")
    result = subprocess.run([str(validator), "--json-path", str(ASL_PATH)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


# --- alarms and logs: every failure reaches the on-call -----------------------------------------
def alarms():
    return {name: r["Properties"] for name, r in RESOURCES.items() if r["Type"] == "AWS::CloudWatch::Alarm"}


def alarm_on(namespace, metric):
    return {name: a for name, a in alarms().items() if (a["Namespace"], a["MetricName"]) == (namespace, metric)}


def dimension(alarm):
    (only,) = alarm["Dimensions"]
    return only["Name"], only["Value"]


def test_every_dead_letter_queue_has_an_alarm_on_its_visible_messages():
    queues = {n for n, r in RESOURCES.items() if r["Type"] == "AWS::SQS::Queue"}
    watched = {}
    for name, alarm in alarm_on("AWS/SQS", "ApproximateNumberOfMessagesVisible").items():
        kind, value = dimension(alarm)
        queue, attribute = value["Fn::GetAtt"]
        assert (kind, attribute) == ("QueueName", "QueueName"), name
        assert (alarm["Statistic"], alarm["ComparisonOperator"], alarm["Threshold"]) == (
            "Maximum", "GreaterThanThreshold", 0), name  # one message is enough
        watched[queue] = name
    assert set(watched) == queues


def test_failed_and_timed_out_evaluations_raise_alarms():
    for metric in ("ExecutionsFailed", "ExecutionsTimedOut"):
        (alarm,) = alarm_on("AWS/States", metric).values()
        assert dimension(alarm) == ("StateMachineArn", {"Ref": "EvaluationStateMachine"}), metric
        assert (alarm["Statistic"], alarm["ComparisonOperator"], alarm["Threshold"]) == (
            "Sum", "GreaterThanThreshold", 0), metric


def test_the_iterator_age_alarms_watch_schedule_sync_and_readiness():
    """Readiness (#33) is the stream's third reader: its lag is watched as schedule-sync's is."""
    found = {dimension(alarm)[1]["Ref"]: alarm for alarm in alarm_on("AWS/Lambda", "IteratorAge").values()}
    assert set(found) == {"ScheduleSyncFunction", "ReadinessFunction"}
    for function, events in (("ScheduleSyncFunction", "ChecklistChanges"), ("ReadinessFunction", "ReadinessChanges")):
        alarm = found[function]
        assert dimension(alarm)[0] == "FunctionName"
        assert alarm["Statistic"] == "Maximum" and alarm["Threshold"] > 0
        # Long before the stream mapping gives a record up (its maximum record age, in seconds).
        event = RESOURCES[function]["Properties"]["Events"][events]["Properties"]
        assert alarm["Threshold"] < event["MaximumRecordAgeInSeconds"] * 1000


def test_every_alarm_notifies_the_topic_and_tells_the_on_call_what_to_do():
    assert len(alarms()) == 10  # six, the notification DLQ's (#18), the audit DLQ's (#31), readiness's two (#33)
    for name, alarm in alarms().items():
        assert alarm["AlarmActions"] == [{"Ref": "AlarmTopic"}], name
        assert alarm["OKActions"] == [{"Ref": "AlarmTopic"}], name
        assert alarm["TreatMissingData"] == "notBreaching", name
        description = alarm["AlarmDescription"]["Fn::Sub"]
        assert "missed-checks " in description and "--stack ${AWS::StackName}" in description, name
        assert len(description) < 1024, name


def test_the_alarm_topic_is_encrypted_with_a_key_cloudwatch_may_use():
    topic = RESOURCES["AlarmTopic"]["Properties"]
    assert topic["KmsMasterKeyId"] == {"Ref": "AlarmTopicKey"}
    key = RESOURCES["AlarmTopicKey"]["Properties"]
    assert key["EnableKeyRotation"] is True
    (cloudwatch,) = [s for s in key["KeyPolicy"]["Statement"] if s["Principal"].get("Service")]
    assert cloudwatch["Principal"]["Service"] == "cloudwatch.amazonaws.com"
    assert set(cloudwatch["Action"]) == {"kms:Decrypt", "kms:GenerateDataKey*"}
    assert cloudwatch["Condition"] == {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}}
    assert TEMPLATE["Outputs"]["AlarmTopicArn"]["Value"] == {"Ref": "AlarmTopic"}


def test_the_email_subscription_exists_only_when_an_address_is_given():
    subscriptions = {n: r for n, r in RESOURCES.items() if r["Type"] == "AWS::SNS::Subscription"}
    assert set(subscriptions) == {"AlarmEmailSubscription"}
    subscription = subscriptions["AlarmEmailSubscription"]
    assert subscription["Condition"] == "AlarmEmailGiven"
    assert TEMPLATE["Conditions"]["AlarmEmailGiven"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "AlarmEmail"}, ""]}]}
    assert subscription["Properties"] == {"TopicArn": {"Ref": "AlarmTopic"}, "Protocol": "email",
                                          "Endpoint": {"Ref": "AlarmEmail"}}
    parameter = TEMPLATE["Parameters"]["AlarmEmail"]
    assert parameter["Default"] == ""
    for value, allowed in (("", True), ("oncall@example.com", True), ("oncall", False), ("a@b", False)):
        assert bool(re.fullmatch(parameter["AllowedPattern"], value)) is allowed, value


def test_the_state_machine_logs_errors_to_a_log_group_with_a_retention():
    logging = RESOURCES["EvaluationStateMachine"]["Properties"]["Logging"]
    assert logging["Level"] == "ERROR" and logging["IncludeExecutionData"] is False
    (destination,) = logging["Destinations"]
    assert destination["CloudWatchLogsLogGroup"]["LogGroupArn"] == {"Fn::GetAtt": ["EvaluationLogGroup", "Arn"]}
    log_group = RESOURCES["EvaluationLogGroup"]["Properties"]
    assert log_group["RetentionInDays"] == {"Ref": "LogRetentionInDays"}
    assert log_group["LogGroupName"]["Fn::Sub"].startswith("/aws/vendedlogs/states/")
    statements = [s for p in RESOURCES["EvaluationStateMachine"]["Properties"]["Policies"] if "Statement" in p
                  for s in p["Statement"]]
    assert {a for s in statements for a in s["Action"]} == LOG_DELIVERY_ACTIONS
    every_log_group = {n for n, r in RESOURCES.items() if r["Type"] == "AWS::Logs::LogGroup"}
    assert all("RetentionInDays" in RESOURCES[n]["Properties"] for n in every_log_group)
