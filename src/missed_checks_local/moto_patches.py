"""Every change the emulator makes to moto's behaviour, in one place.

Checked against **moto 5.2.1** (``pyproject.toml`` allows ``>=5.1,<6``). Each patch says why it
exists and whether it is a candidate to send upstream (a fix moto would want) or local (it serves
how the emulator runs the stack, e.g. the simulated clock, and belongs here only).

Process-wide, installed once (:func:`install`, when a stack is first provisioned):

1. :func:`_atomic_dynamodb_writes`: ``DynamoDBBackend.put_item``/``update_item``/``delete_item``/
   ``transact_write_items`` under one lock. DynamoDB checks a write's condition and applies it
   atomically; moto does not, so two requests served at once could both pass a condition.
   *Upstream candidate* (a backend-level lock around conditional writes).
2. ``LayerVersion.physical_resource_id``: moto's CloudFormation model has none, so ``Ref`` of
   an ``AWS::Lambda::LayerVersion`` is empty. *Upstream candidate.*
3. ``LambdaFunction.create_from_cloudformation_json``: moto's model drops ``Layers`` and
   ``DeadLetterConfig`` (the latter is noted on the function as ``dead_letter_config``, which
   :mod:`missed_checks_local.awslambda.async_invoke` sends a failed asynchronous event to).
   *Upstream candidate.*
4. ``Role.create_from_cloudformation_json``: moto's model drops ``ManagedPolicyArns``.
   *Upstream candidate.*
5. ``EventBridgeSchedulerBackend.create_schedule``: in a missing group moto raises a bare
   ``KeyError`` (HTTP 500, which SDK clients retry for minutes); AWS answers
   ``ResourceNotFoundException``. *Upstream candidate.*
5b. :func:`_partition_queries`: ``Table.query`` on the table's own key (no index) reads only the
   queried partition. moto sorts *every* item of the table (``Table.all_items``) for each Query
   and then keeps the partition's: with a fleet of 100,000 assignments and their checks, each
   equipment batch's Query cost seconds (34 Queries were half of a 2,000-equipment evaluation's
   server time). The partition's items come sorted by their range keys' values, each cast once:
   ``Table.query`` sorts them again by range key with ``DynamoType`` comparisons (two casts
   each), which on sorted input is one pass instead of n log n. A Query on an index reads
   every item of the table, as moto does, but unsorted: moto sorts the index's matches by their
   full key (index keys, then the table's), so sorting the whole table first cost seconds for a
   ``checklist list`` beside 10,000 assignments. Same items, same order. *Upstream candidate* (a speed fix).
5g. :func:`_the_range_and_its_neighbours`: a ``Table.query`` on the table's key with a range
   condition is given only the items meeting it, in range-key order, and the nearest item on
   either side. moto sizes every item of the partition (``Item.size()``, for the 1 MB page
   limit) before testing its range key: 44 % of the Query time of a fanned-out evaluation, whose
   batches each ask for a ``BETWEEN`` of a few thousand assignments in a partition of 100,000.
   Same items, pages and ``LastEvaluatedKey`` (the neighbours are where moto ends a full page).
   Checked against moto 5.2.5. *Upstream candidate* (size only the items that match).
5c. :func:`_stream_records_as_json`: ``dynamodbstreams:GetRecords`` answers with ``json.dumps``
   of moto's own records (as ``DynamoHandler`` answers ``dynamodb`` calls) instead of moto's
   model-driven serializer, which looks up every attribute of every record through its alias
   pickers: about 1.5 ms a record, so the stream poller of ``local serve`` reading the records of
   10,000 assignments or 5,000 missed checks held the one GIL for seconds at a time and a CLI
   read waited behind it. Same document (timestamps as epoch seconds). *Upstream candidate*.
5d. :func:`_item_reads_as_json`: the answers of ``GetItem``, ``BatchGetItem``, ``Query`` and
   ``Scan`` (items and keys only) are written with ``json.dumps`` too, not through that
   serializer: the evaluation's Queries of thousands of assignments and performed checks spent
   most of their server time there. Same document. *Upstream candidate*.

5e. :func:`_backend_per_host_once`: ``DomainDispatcherApplication.get_backend_for_host`` keeps
   the backend it found for each host. moto's server picks the backend of every request under
   one process-wide lock, and for a host such as ``dynamodb.us-east-1.amazonaws.com`` it lists
   moto's package directory (an ``isdir`` per entry, about 170 system calls) and tries every
   service's URL patterns. Each system call gives up the GIL and waits to get it back, so under
   load every request (a CLI read too) queued on that lock behind the evaluation's. The answer
   for a host never changes while moto runs. *Upstream candidate.*

5f. :func:`managed_policies_parsed_once`: ``IAMBackend._init_aws_policies`` builds each
   backend's AWS managed policies from data parsed once per process. moto parses its 1 MB of
   managed policies again for every IAM backend it creates (six per fresh moto, about a second
   of CPU each on this machine: the largest part of provisioning a stack for a ``local run``).
   The policy objects are built once per account and Region too (``AWSManagedPolicy.from_data``
   serialises each document again and draws a random id, about 0.15 s a backend: 40 s of CPU in
   a run of the test suite); each backend gets copies with their own attachment count, versions
   and tags. Checked against moto 5.2.5. *Upstream candidate* (parse ``aws_managed_policies_data``
   once, at module level).

5h. :func:`_one_write_per_answer`: moto's server (werkzeug's ``WSGIRequestHandler`` under
   ``MotoRequestHandler``) writes each answer's status line and headers with one ``sendall`` and
   its body with another (socketserver's unbuffered writer). Each system call gives up the GIL
   and waits to get it back behind the threads serving other requests: in the profile of a
   fanned-out evaluation these writes were 17 to 23 % of the server threads' samples. The answer
   is now sent with one ``sendall`` at werkzeug's ``flush``. Same bytes. Checked against moto
   5.2.5 and Werkzeug 3.1. *Upstream candidate* (for werkzeug: buffer the headers until the body).

5j. :func:`_json_templates_as_json` (with :func:`install`): ``Stack.parse_template`` reads a JSON
   template body with ``json.loads``. moto reads every body with PyYAML's pure-Python loader first
   (JSON is YAML) and only then tries JSON: the stack the emulator creates (the transformed
   template, as JSON) took 0.3 s of CPU to parse, on every provisioning. Same dictionary.
   *Upstream candidate* (try JSON first).
5i. :func:`one_data_loader_per_process` (applied when ``missed_checks_local`` is imported, before
   moto is): every botocore session of the process uses its one data loader
   (:func:`missed_checks.aws.clients.shared_loader`). moto opens a new ``boto3.Session()`` to
   list a service's regions at import (``moto.ec2``, 0.3 s) and for every backend it creates, and
   botocore parsed its endpoint file and the service's model again for each. The loader's search
   paths are kept distinct (boto3 appends its data path for each session). Checked against
   botocore 1.44. *Local* (moto would do better with one session of its own).

While a runtime runs (context managers, undone on exit):

6. :func:`simulated_time`: ``moto.scheduler.models.utcnow`` reads the simulated clock (schedule
   creation dates, ``StartDate`` checks) and the ``time`` module of moto's Step Functions Retry
   waits no real time (``IntervalSeconds`` of simulated time pass at once). *Local*: moto has no
   notion of a clock other than the wall clock (freezegun is its answer).
7. :func:`parse_each_definition_once`: ``AmazonStateLanguageParser.parse`` keeps the parse tree
   per definition text (moto parses again, about 50 ms, for every execution). *Upstream
   candidate* (a cache in moto's Step Functions backend).
8. :func:`lambda_invoke`: ``LambdaFunction.invoke`` (after moto's IAM check) hands the stack's
   functions to the local Lambda runtime instead of Docker. *Local* (moto's own answer is its
   Docker-based runner).
9. :func:`state_machine_clients`: ``boto_client_for`` in moto's Step Functions task modules gives
   the state machine's tasks the state machine role's credentials (moto uses fixed dummy keys, so
   the tasks would escape IAM). *Upstream candidate* (tasks acting with the machine's role).
10. :func:`iam_enforcement`: five attributes of moto's IAM: ``IAMRequestBase.check_signature``
    off (signatures are not under test; moto miscomputes some, e.g. Scheduler's DELETE: *upstream
    candidate*), ``IAMPolicy.__init__`` accepts an inline policy as moto's CloudFormation stores
    it (a dict: *upstream candidate*), ``ActionAuthenticatorMixin._authenticate_and_authorize_action``
    checks only role (temporary) credentials and answers JSON-protocol services with
    ``AccessDeniedException`` (moto answers XML everywhere: *upstream candidate* for the shape,
    *local* for the operator exemption), ``IAMPolicyStatement._check_element_matches`` lets a
    statement's ``Resource`` match when moto does not know the request's resource and maps
    moto's action names to IAM's (*upstream candidate*: moto should know resources),
    ``settings.INITIAL_NO_AUTH_ACTION_COUNT`` 0 (*local*: enforcement from the first request).
11. :func:`_rule_lambda_targets` (process-wide, with :func:`install`) and
    :func:`event_rule_lambda_targets` (while a runtime runs): ``Rule.send_to_targets`` hands a
    matching event's Lambda targets to Lambda's asynchronous invocation
    (:mod:`missed_checks_local.awslambda.async_invoke`); moto raises ``NotImplementedError`` for
    them (the notifier, #18). With no runtime running the functions, the event is dropped.
    *Upstream candidate* for the delivery, *local* for running it on the local runtime.

Not a change of behaviour, so not here: :mod:`missed_checks_local.testing.metering` wraps a few
backend methods to count request units (test and benchmark tooling), and ``embedded.MOTO_CONFIG``
is moto's own configuration.
"""

from __future__ import annotations

import base64
import calendar
import contextvars
import copy
import functools
import importlib
import io
import json
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from typing import Any
from unittest import mock

__all__ = [
    "IAM_ACTION_NAMES",
    "MOTO_VERSION_CHECKED",
    "MotoChanged",
    "iam_enforcement",
    "install",
    "install_data_plane",
    "lambda_invoke",
    "managed_policies_parsed_once",
    "one_data_loader_per_process",
    "parse_each_definition_once",
    "simulated_time",
    "state_machine_clients",
]

MOTO_VERSION_CHECKED = "5.2.1"
# moto names an action after the API operation; where IAM's name differs, IAM's is checked.
IAM_ACTION_NAMES = {"lambda:Invoke": "lambda:InvokeFunction"}
# Services whose errors are XML documents on AWS too: their AccessDenied stays moto's.
_XML_SERVICES = {"sqs", "iam", "sts", "s3", "cloudformation"}
_INTERPRETER_CLIENT_USERS = (
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.lambda_eval_utils",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sqs",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_dynamodb",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_events",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sns",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_aws_sdk",
)

_INSTALL_LOCK = threading.Lock()
_installed = False
_DYNAMODB_WRITES = threading.RLock()


class MotoChanged(RuntimeError):
    """moto no longer has what a patch replaces: the emulator would silently lose a behaviour."""


# -- process-wide (1-5) ------------------------------------------------------------------------
def _atomic_dynamodb_writes() -> None:
    from moto.dynamodb.models import DynamoDBBackend  # deferred: moto is a dev dependency and slow to import

    def atomic(write: Any) -> Any:
        @functools.wraps(write)
        def locked(*args: Any, **kwargs: Any) -> Any:
            with _DYNAMODB_WRITES:
                return write(*args, **kwargs)
        return locked

    for name in ("put_item", "update_item", "delete_item", "transact_write_items"):
        setattr(DynamoDBBackend, name, atomic(getattr(DynamoDBBackend, name)))


_QUERIED_PARTITION: contextvars.ContextVar[Any] = contextvars.ContextVar("queried_partition", default=None)
_EVERY_ITEM_UNSORTED = object()


def _partition_queries() -> None:
    from moto.dynamodb.models.table import Table  # deferred: moto is a dev dependency and slow to import

    query, all_items = Table.query, Table.all_items
    index_position = 6  # index_name, after hash_key and six more positional parameters (moto 5.2.1)

    @functools.wraps(query)
    def query_one_partition(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        index_name = kwargs.get("index_name", args[index_position] if len(args) > index_position else None)
        if hash_key is None and not index_name:
            return query(self, hash_key, *args, **kwargs)
        comparison = kwargs.get("range_comparison", args[0] if args else None)
        values = kwargs.get("range_objs", args[1] if len(args) > 1 else None)
        filtered = bool(set(kwargs) - _QUERY_KEYWORDS)  # the legacy KeyConditions' non-key filters
        token = _QUERIED_PARTITION.set(
            _EVERY_ITEM_UNSORTED if index_name else (hash_key, None if filtered else comparison, values)
        )
        try:
            return query(self, hash_key, *args, **kwargs)
        finally:
            _QUERIED_PARTITION.reset(token)

    @functools.wraps(all_items)
    def items_of_the_queried_partition(self: Any) -> Any:
        queried = _QUERIED_PARTITION.get()
        if queried is None:
            return all_items(self)
        if queried is _EVERY_ITEM_UNSORTED:
            if not self.range_key_attr:
                return list(self.items.values())
            return [item for partition in self.items.values() for item in partition.values()]
        hash_key, comparison, values = queried
        partition = self.items.get(hash_key)
        if partition is None:
            return []
        if not self.range_key_attr:
            return [partition]
        if comparison:
            return _the_range_and_its_neighbours(partition.values(), comparison, values)
        # In range-key order, each key cast once: moto's Table.query sorts the partition again by
        # range key (two casts per comparison), which on sorted input is one pass, not n log n.
        return sorted(partition.values(), key=lambda item: item.range_key.cast_value)

    Table.query = query_one_partition  # type: ignore[method-assign]
    Table.all_items = items_of_the_queried_partition  # type: ignore[method-assign]


_QUERY_KEYWORDS = frozenset({
    "range_comparison", "range_objs", "limit", "exclusive_start_key", "scan_index_forward",
    "projection_expressions", "index_name", "consistent_read", "filter_expression", "hash_key_conditions",
    "range_key_conditions",
})


def _the_range_and_its_neighbours(items: Any, comparison: str, values: Any) -> list[Any]:
    """The items whose range key meets the key condition, in range-key order, with the nearest
    item on either side of that run (patch 5g).

    moto's ``Table.query`` walks every candidate it is given, computing each one's ``size()``
    (for the 1 MB page limit) before it even tests the range condition, then deep-copies the
    matches: with a partition of 100,000 assignments and a batch's ``BETWEEN`` of 6,000, each
    Query sized 94,000 items it would never return. Items before the run cannot change its answer
    (nothing is kept yet, and no item reaches 1 MB); the first item after it is where moto stops
    a page that is full (``LastEvaluatedKey``), so it is kept, on both sides for a backward
    Query. The condition is moto's own comparison of the cast values."""
    from moto.dynamodb.comparisons import get_comparison_func  # deferred: moto is slow to import

    meets = get_comparison_func(comparison)
    bounds = [value.cast_value for value in values]
    run: list[tuple[Any, Any]] = []
    others: list[tuple[Any, Any]] = []
    for item in items:
        key = item.range_key.cast_value
        (run if meets(key, *bounds) else others).append((key, item))
    if not run:
        return []
    run.sort(key=lambda keyed: keyed[0])
    low, high = run[0][0], run[-1][0]
    before = max((keyed for keyed in others if keyed[0] < low), key=lambda keyed: keyed[0], default=None)
    after = min((keyed for keyed in others if keyed[0] > high), key=lambda keyed: keyed[0], default=None)
    return [item for _, item in ([before] if before else []) + run + ([after] if after else [])]


def _stream_records_as_json() -> None:
    from moto.dynamodbstreams.responses import DynamoDBStreamsHandler  # deferred: moto is slow to import

    original = DynamoDBStreamsHandler.get_records

    @functools.wraps(original)
    def get_records(self: Any) -> str:
        limit = self._get_param("Limit")
        result = self.backend.get_records(self._get_param("ShardIterator"), 1000 if limit is None else limit)
        return json.dumps(result, default=_json_value)

    DynamoDBStreamsHandler.get_records = get_records  # type: ignore[assignment]


class _OneWritePerAnswer(io.BufferedIOBase):
    """A request handler's ``wfile`` that sends what was written at each ``flush`` in one
    ``sendall`` (patch 5h); an interim ``100 Continue`` goes at once, as the client waits for it."""

    def __init__(self, connection: Any) -> None:
        super().__init__()
        self._connection = connection
        self._parts: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self._parts.append(chunk)
        if chunk.startswith(b"HTTP/1.1 100 "):
            self.flush()
        return len(chunk)

    def flush(self) -> None:
        if self._parts:
            data, self._parts = b"".join(self._parts), []
            self._connection.sendall(data)


def _one_write_per_answer() -> None:
    from moto.moto_server.werkzeug_app import MotoRequestHandler  # deferred: moto is slow to import

    original = MotoRequestHandler.setup

    @functools.wraps(original)
    def setup(self: Any) -> None:
        original(self)
        if self.wbufsize == 0:  # socketserver's unbuffered writer: one system call per write
            self.wfile = _OneWritePerAnswer(self.connection)

    MotoRequestHandler.setup = setup  # type: ignore[method-assign]


def _backend_per_host_once() -> None:
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication  # deferred: moto is slow to import

    original = DomainDispatcherApplication.get_backend_for_host
    found: dict[str, Any] = {}

    @functools.wraps(original)
    def get_backend_for_host(self: Any, host: str | None) -> Any:
        if host is None:
            return None
        backend = found.get(host)
        if backend is None:
            backend = original(self, host)
            if backend is not None:  # an unknown host keeps being told so
                found[host] = backend
        return backend

    DomainDispatcherApplication.get_backend_for_host = get_backend_for_host  # type: ignore[method-assign]


_ITEM_READS = frozenset({"GetItem", "BatchGetItem", "Query", "Scan"})


def _item_reads_as_json() -> None:
    from moto.dynamodb.responses import DynamoResult  # deferred: moto is slow to import

    original = DynamoResult.execute_result

    @functools.wraps(original)
    def execute_result(self: Any, context: Any) -> Any:
        if context.operation_model.name not in _ITEM_READS or not isinstance(self.result, dict):
            return original(self, context)
        answer = {name: value for name, value in self.result.items() if value is not None}
        content_type = f"application/x-amz-json-{context.service_model.metadata.get('jsonVersion', '1.0')}"
        return 200, {"Content-Type": content_type}, json.dumps(answer, default=_json_value)

    DynamoResult.execute_result = execute_result  # type: ignore[method-assign]


def _json_value(value: Any) -> float | int | str:
    """What moto's serializer writes for the values of its stream records that JSON lacks: a
    naive UTC datetime (the records' stamps) as epoch seconds, milliseconds kept when there are
    any; bytes (binary attributes) in base64."""
    if isinstance(value, datetime):
        seconds = calendar.timegm(value.timetuple())
        return seconds + (value.microsecond // 1000) / 1000.0 if value.microsecond else seconds
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


_data_plane_installed = False


def install_data_plane() -> None:
    """The process-wide patches of DynamoDB, its stream and moto's server (1, 5b-5e, 5g, 5h), once:
    all that the tests of these patches need, without importing moto's CloudFormation (about 5 s,
    for the EC2 models it pulls in) as :func:`install` does."""
    global _data_plane_installed  # noqa: PLW0603 - moto's classes are process-wide
    with _INSTALL_LOCK:
        if _data_plane_installed:
            return
        _atomic_dynamodb_writes()
        _partition_queries()
        _stream_records_as_json()
        _item_reads_as_json()
        _backend_per_host_once()
        _one_write_per_answer()
        _data_plane_installed = True


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
    """Patch 5f (also called before tests that start moto without provisioning a stack)."""
    from moto.iam import models  # deferred: moto is a dev dependency and slow to import
    from moto.settings import load_iam_aws_managed_policies

    with _INSTALL_LOCK:
        if _MANAGED_POLICIES:
            return
        if not hasattr(models.IAMBackend, "_init_aws_policies") or not hasattr(models, "aws_managed_policies_data"):
            raise MotoChanged("moto.iam.models: IAMBackend._init_aws_policies or aws_managed_policies_data is gone")
        _MANAGED_POLICIES.update(json.loads(models.aws_managed_policies_data))

    def init_aws_policies(backend: Any) -> list[Any]:
        if not load_iam_aws_managed_policies():
            return []
        key = (backend.account_id, backend.region_name)
        with _INSTALL_LOCK:
            built = _MANAGED_POLICY_OBJECTS.get(key)
            if built is None:
                built = _MANAGED_POLICY_OBJECTS[key] = [
                    models.AWSManagedPolicy.from_data(name, backend.account_id, backend.region_name, data)
                    for name, data in _MANAGED_POLICIES.items()
                ]
        return [_own_copy(policy) for policy in built]

    models.IAMBackend._init_aws_policies = init_aws_policies  # type: ignore[method-assign]


def install() -> None:
    """The process-wide patches (1-5h, 11), once."""
    install_data_plane()
    managed_policies_parsed_once()
    global _installed  # noqa: PLW0603 - moto's classes are process-wide
    with _INSTALL_LOCK:
        if _installed:
            return
        from moto.awslambda.models import (  # deferred: moto is a dev dependency and slow to import
            LambdaFunction,
            LayerVersion,
        )
        from moto.cloudformation import parsing
        from moto.cloudformation.models import Stack
        from moto.iam.models import Role, iam_backends
        from moto.scheduler.exceptions import ScheduleGroupNotFound
        from moto.scheduler.models import EventBridgeSchedulerBackend
        from moto.utilities.utils import get_partition

        _rule_lambda_targets()
        LayerVersion.physical_resource_id = property(lambda self: self.arn)  # type: ignore[attr-defined]
        create_function = LambdaFunction.create_from_cloudformation_json.__func__  # type: ignore[attr-defined]

        def create_with_layers(cls: Any, name: str, cloudformation_json: Any, *args: Any, **kwargs: Any) -> Any:
            function = create_function(cls, name, cloudformation_json, *args, **kwargs)
            properties = cloudformation_json.get("Properties") or {}
            layers = properties.get("Layers") or []
            if layers:
                function.layers = function._get_layers_data(layers)
            # moto keeps no DeadLetterConfig (5.2.1): the emulator's asynchronous invocations read it here
            function.dead_letter_config = dict(properties.get("DeadLetterConfig") or {})
            return function

        LambdaFunction.create_from_cloudformation_json = classmethod(create_with_layers)  # type: ignore[assignment]
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

        Role.create_from_cloudformation_json = classmethod(create_with_managed_policies)  # type: ignore[assignment]
        create_schedule = EventBridgeSchedulerBackend.create_schedule

        def create_schedule_in_existing_group(self: Any, *args: Any, **kwargs: Any) -> Any:
            group = kwargs.get("group_name")
            if group and group not in self.schedule_groups:
                raise ScheduleGroupNotFound(group)
            return create_schedule(self, *args, **kwargs)

        EventBridgeSchedulerBackend.create_schedule = create_schedule_in_existing_group  # type: ignore[method-assign]
        Stack.parse_template = staticmethod(_json_templates_as_json(Stack.parse_template))  # type: ignore[method-assign]
        for cached in (parsing.get_model_list, parsing.get_model_map, parsing.get_name_type_map):
            cached.cache_clear()
        _installed = True


def _json_templates_as_json(parse_template: Callable[[str], Any]) -> Callable[[str], Any]:
    """Patch 5j: a template body that is a JSON object is read with ``json.loads``; anything else
    (YAML, short-form tags) goes to moto's parser as before."""

    @functools.wraps(parse_template)
    def parse(template: str) -> Any:
        if isinstance(template, str) and template.lstrip().startswith("{"):
            try:
                parsed = json.loads(template)
            except ValueError:
                return parse_template(template)
            if isinstance(parsed, dict):
                return parsed
        return parse_template(template)

    parse.moto_parse_template = parse_template  # type: ignore[attr-defined]
    return parse


# -- while a runtime runs (6-10) ---------------------------------------------------------------
class _NoWait:
    """Stands in for the ``time`` module of moto's Retry implementation: no real waiting."""

    def __init__(self) -> None:
        self.waited_s = 0.0

    def sleep(self, seconds: float) -> None:
        self.waited_s += seconds

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


@contextmanager
def simulated_time(now: Callable[[], datetime]) -> Iterator[None]:
    """moto's Scheduler reads ``now()``; its Step Functions Retry waits no real time (6)."""
    from moto.scheduler import models as scheduler_models  # deferred: moto is a dev dependency and slow to import
    from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl

    def simulated_utcnow() -> datetime:
        return now().astimezone(UTC).replace(tzinfo=None)

    with (
        mock.patch.object(scheduler_models, "utcnow", simulated_utcnow),
        mock.patch.object(retrier_decl, "time", _NoWait()),
    ):
        yield


@contextmanager
def parse_each_definition_once() -> Iterator[None]:
    """Keep moto's parse tree per definition text; each execution still gets fresh evaluation
    components from it (7)."""
    from moto.stepfunctions.parser.asl.parse.asl_parser import (
        AmazonStateLanguageParser,  # deferred: moto is a dev dependency and slow to import
    )
    from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor

    original = AmazonStateLanguageParser.parse
    trees: dict[str, Any] = {}
    lock = threading.Lock()

    def parse(definition: str) -> tuple[Any, Any]:
        with lock:
            tree = trees.get(definition)
        if tree is None:
            program, tree = original(definition)
            with lock:
                trees[definition] = tree
            return program, tree
        return Preprocessor().visit(tree), tree

    with mock.patch.object(AmazonStateLanguageParser, "parse", staticmethod(parse)):
        yield


@contextmanager
def lambda_invoke(serve: Callable[[str, Any, Any], bytes | None]) -> Iterator[None]:
    """moto's ``lambda:Invoke`` (after its IAM check) asks ``serve(function_arn, body,
    response_headers)`` first; ``None`` means not ours, and moto runs it as it would (8)."""
    from moto.awslambda.models import LambdaFunction  # deferred: moto is a dev dependency and slow to import

    original = LambdaFunction.invoke

    def invoke(function: Any, body: Any, request_headers: Any, response_headers: Any) -> Any:
        answer = serve(function.function_arn, body, response_headers)
        if answer is None:
            return original(function, body, request_headers, response_headers)
        return answer

    with mock.patch.object(LambdaFunction, "invoke", invoke):
        yield


@contextmanager
def state_machine_clients(client_for: Callable[..., Any]) -> Iterator[None]:
    """The state machine's tasks get their boto3 clients from ``client_for(region, service,
    state_credentials=None)`` (9)."""
    with ExitStack() as patches:
        for name in _INTERPRETER_CLIENT_USERS:
            module = importlib.import_module(name)
            if not hasattr(module, "boto_client_for"):  # moto changed: the tasks would escape IAM
                raise MotoChanged(f"{name} has no boto_client_for: the state machine's role cannot be applied")
            patches.enter_context(mock.patch.object(module, "boto_client_for", client_for))
        yield


def iam_enforcement(
    is_checked: Callable[[str], bool],
    decided: Callable[[Any, str, bool], None],
) -> list[Any]:
    """The patches (not yet started) that make moto check each request whose access key id
    ``is_checked`` against the caller's policies, and tell ``decided(request, access_key_id,
    denied)`` (10)."""
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


def _rule_lambda_targets() -> None:
    """11: ``Rule.send_to_targets`` hands a matching event's Lambda targets to the runtime that runs
    the functions, and moto keeps the other targets (it raises NotImplementedError for Lambda)."""
    from moto.events.models import Rule  # deferred: moto is a dev dependency and slow to import

    original = Rule.send_to_targets

    def send_to_targets(self: Any, original_event: Any, transform_input: bool = True) -> None:
        if not self.event_pattern.matches_event(original_event):
            return
        ours = [target for target in self.targets if ":lambda:" in str(target.get("Arn"))]
        for target in ours:
            for deliver in list(_RULE_LAMBDA_DELIVERERS[-1:]):
                deliver(str(target["Arn"]), json.loads(json.dumps(original_event, default=str)))
        if len(ours) < len(self.targets):
            others = copy.copy(self)
            others.targets = [target for target in self.targets if target not in ours]
            original(others, original_event, transform_input)

    Rule.send_to_targets = send_to_targets  # type: ignore[method-assign]


@contextmanager
def event_rule_lambda_targets(deliver: Callable[[str, Any], bool]) -> Iterator[None]:
    """While the block runs, ``deliver(function_arn, event)`` gets each event a rule matches for a
    Lambda target (Lambda's asynchronous invocation, :mod:`missed_checks_local.awslambda.async_invoke`).
    Outside any such block nothing runs the functions: the event is dropped."""
    _RULE_LAMBDA_DELIVERERS.append(deliver)
    try:
        yield
    finally:
        _RULE_LAMBDA_DELIVERERS.remove(deliver)


# -- the process's one botocore data loader (5i) -------------------------------------------------
class _DistinctPaths(list[str]):
    """A data loader's search paths: boto3 appends its own data path for every new session."""

    def append(self, path: str) -> None:
        if path not in self:
            super().append(path)


def one_data_loader_per_process() -> None:
    """Patch 5i: every botocore session of this process uses its one data loader
    (:func:`missed_checks.aws.clients.shared_loader`), moto's own sessions included."""
    import botocore.session  # deferred like the rest: only the emulator's processes need it

    from missed_checks.aws.clients import shared_loader

    with _INSTALL_LOCK:
        session_class = botocore.session.Session
        if getattr(session_class._register_data_loader, "one_per_process", False):
            return
        loader = shared_loader()
        if not isinstance(getattr(loader, "_search_paths", None), list):
            raise MotoChanged("botocore.loaders.Loader: _search_paths is gone")
        loader._search_paths = _DistinctPaths(loader._search_paths)

        def register_data_loader(self: Any) -> None:
            self._components.lazy_register_component("data_loader", shared_loader)

        register_data_loader.one_per_process = True  # type: ignore[attr-defined]
        session_class._register_data_loader = register_data_loader  # type: ignore[method-assign]
