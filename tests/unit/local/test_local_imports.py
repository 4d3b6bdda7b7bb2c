"""Importing the emulator patches nothing: every module of ``missed_checks_local`` imported in a fresh
process leaves botocore's sessions and moto's classes as they were. The patches are installed by the
entry points that start the embedded AWS (``missed_checks_local.patches.install``), and the same
check sees each of them change once they are."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

# Every attribute a process-wide patch replaces (missed_checks_local/*/patches.py), as module, class, attribute.
PATCHED = [
    ("botocore.session", "Session", "_register_data_loader"),
    ("moto.dynamodb.models", "DynamoDBBackend", "put_item"),
    ("moto.dynamodb.models", "DynamoDBBackend", "update_item"),
    ("moto.dynamodb.models", "DynamoDBBackend", "delete_item"),
    ("moto.dynamodb.models", "DynamoDBBackend", "transact_write_items"),
    ("moto.dynamodb.models.table", "Table", "query"),
    ("moto.dynamodb.models.table", "Table", "all_items"),
    ("moto.dynamodb.responses", "DynamoResult", "execute_result"),
    ("moto.dynamodbstreams.responses", "DynamoDBStreamsHandler", "get_records"),
    ("moto.moto_server.werkzeug_app", "DomainDispatcherApplication", "get_backend_for_host"),
    ("moto.moto_server.werkzeug_app", "MotoRequestHandler", "setup"),
    ("moto.iam.models", "IAMBackend", "_init_aws_policies"),
    ("moto.iam.models", "Role", "create_from_cloudformation_json"),
    ("moto.awslambda.models", "LambdaFunction", "create_from_cloudformation_json"),
    ("moto.awslambda.models", "LayerVersion", "physical_resource_id"),
    ("moto.scheduler.models", "EventBridgeSchedulerBackend", "create_schedule"),
    ("moto.cloudformation.models", "Stack", "parse_template"),
    ("moto.events.models", "Rule", "send_to_targets"),
]

SCRIPT = textwrap.dedent("""
    import importlib, inspect, json, pkgutil, sys

    patched = json.loads(sys.argv[1])
    missing = object()

    def attributes():
        found = {}
        for module, cls, name in patched:
            owner = getattr(importlib.import_module(module), cls)
            found[f"{module}.{cls}.{name}"] = id(inspect.getattr_static(owner, name, missing))
        return found

    before = attributes()
    import missed_checks_local
    modules = [info.name for info in pkgutil.walk_packages(missed_checks_local.__path__, "missed_checks_local.")]
    for name in modules:
        importlib.import_module(name)
    after_import = attributes()
    from missed_checks_local import patches
    patches.install()
    after_install = attributes()
    print(json.dumps({
        "modules": modules,
        "changed_by_import": sorted(key for key in before if before[key] != after_import[key]),
        "unchanged_by_install": sorted(key for key in before if before[key] == after_install[key]),
    }))
""")


@pytest.mark.slow
def test_importing_every_emulator_module_patches_nothing_and_install_patches_each() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(PATCHED)], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    assert "missed_checks_local.product.scenario" in found["modules"]
    assert "missed_checks_local.dynamodb.patches" in found["modules"]
    assert found["changed_by_import"] == []
    assert found["unchanged_by_install"] == []
