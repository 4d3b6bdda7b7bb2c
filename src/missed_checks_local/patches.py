"""Every change the emulator makes to moto, werkzeug and botocore, installed by one call.

The patches live beside the service they change, moto's way (``<service>/patches.py``): each says
what it changes, why, and its upstream candidate (the pull request moto, werkzeug or botocore would
take, or "not upstreamable" and why).

=====================================  ==========================================================
``core/patches.py``                    moto's server: 5e one backend lookup per host, 5h one
                                       ``sendall`` per answer (werkzeug); botocore: 5i one data
                                       loader per process
``dynamodb/patches.py``                1 atomic conditional writes, 5b/5g a Query reads its
                                       partition (and range), 5c stream records and 5d item reads
                                       as ``json.dumps``
``awslambda/patches.py``               2/3 layers and ``DeadLetterConfig`` from CloudFormation;
                                       8 ``lambda:Invoke`` on the local runtime (while it runs)
``iam/patches.py``                     4 ``ManagedPolicyArns``, 5f managed policies parsed once,
                                       10 IAM enforcement (while a runtime runs)
``scheduler/patches.py``               5 a missing group is ``ResourceNotFoundException``,
                                       6 the simulated clock (while a runtime runs)
``stepfunctions/patches.py``           6 retries wait simulated time, 7 a definition parsed once,
                                       9 tasks act with the machine's role (while a runtime runs)
``cloudformation/patches.py``          5j JSON templates read as JSON
``events/patches.py``                  11 a rule's Lambda targets go to the local runtime
``cognitoidp/patches.py``              12 user pools and their app clients from CloudFormation
=====================================  ==========================================================

Importing any module of ``missed_checks_local`` patches nothing (``tests/unit/local/test_local_imports.py``
checks it in a fresh process): the entry points that start the embedded AWS install the patches
(:meth:`missed_checks_local.stack.EmbeddedStack.provision` calls :func:`install`, the emulator's
commands call :func:`missed_checks_local.core.patches.one_data_loader_per_process` first, before
moto is imported), and so do the tests' fixtures. The context managers (6-10) are entered by the
runtime while it runs and undone on exit.

Not a change of behaviour, so not here: :mod:`missed_checks_local.testing.metering` wraps a few
backend methods to count request units (test and benchmark tooling), and ``embedded.MOTO_CONFIG``
is moto's own configuration.
"""

from __future__ import annotations

from missed_checks_local.awslambda.patches import cloudformation_layers_and_dead_letters
from missed_checks_local.cloudformation.patches import json_templates_as_json, refresh_model_lists
from missed_checks_local.cognitoidp.patches import cloudformation_user_pools
from missed_checks_local.core.patches import (
    INSTALL_LOCK,
    backend_per_host_once,
    one_data_loader_per_process,
    one_write_per_answer,
)
from missed_checks_local.dynamodb.patches import (
    atomic_writes,
    item_reads_as_json,
    partition_queries,
    stream_records_as_json,
)
from missed_checks_local.events.patches import rule_lambda_targets
from missed_checks_local.iam.patches import (
    account_lookup_past_backends_being_built,
    cloudformation_managed_policy_arns,
    managed_policies_parsed_once,
)
from missed_checks_local.scheduler.patches import schedules_in_existing_groups

__all__ = ["install", "install_data_plane"]

_installed: set[str] = set()


def install_data_plane() -> None:
    """The process-wide patches of botocore, DynamoDB, its stream and moto's server (1, 5b-5e, 5g,
    5h, 5i), once: all that the tests of these patches need, without importing moto's
    CloudFormation (about 5 s, for the EC2 models it pulls in) as :func:`install` does."""
    one_data_loader_per_process()
    with INSTALL_LOCK:
        if "data plane" in _installed:
            return
        atomic_writes()
        partition_queries()
        stream_records_as_json()
        item_reads_as_json()
        backend_per_host_once()
        one_write_per_answer()
        _installed.add("data plane")


def install() -> None:
    """Every process-wide patch (1-5j, 11, 12), once."""
    install_data_plane()
    managed_policies_parsed_once()
    account_lookup_past_backends_being_built()
    with INSTALL_LOCK:
        if "control plane" in _installed:
            return
        rule_lambda_targets()
        cloudformation_layers_and_dead_letters()
        cloudformation_managed_policy_arns()
        schedules_in_existing_groups()
        json_templates_as_json()
        cloudformation_user_pools()
        refresh_model_lists()
        _installed.add("control plane")
