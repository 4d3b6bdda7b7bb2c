"""The embedded AWS: the stack of ``template.yaml`` on moto, with a local Lambda runtime, Scheduler,
stream poller and clock (README, "Run it locally").

Laid out like moto, one folder per AWS service the emulator extends (``apigateway/``,
``awslambda/``, ``cloudformation/``, ``dynamodb/``, ``events/``, ``iam/``, ``scheduler/``,
``stepfunctions/``, ``streams/``; ``core/`` for moto's server and botocore), each with its moto
patches in ``patches.py`` (:mod:`missed_checks_local.patches` installs them all). That is the kernel,
"a SAM application on moto", which imports nothing of ``missed_checks``, ``missed_checks_ops`` or
:mod:`missed_checks_local.product`, this product's part (scenarios, views, faults); the ``missed-checks
local`` commands are the operator's (``missed_checks_ops.cli.local``), which call into both.

Importing any module of the package patches nothing: the entry points that start the embedded AWS
install the patches (:mod:`missed_checks_local.patches`).
"""

GC_THRESHOLDS = (50_000, 50, 50)
"""Python's garbage-collector thresholds in the emulator's processes (``local run``, ``serve``,
``demo``, ``chaos``) and the test suite's: the stack keeps millions of long-lived small objects
(moto's models, botocore's parsed data), and with the default (700, 10, 10) the collector ran
about 2,200 times in a two-file test run and took about an eighth of its CPU (19.0 against 16.7
CPU s, three runs each, 2026-11-26). Cycles are still collected, in larger batches."""


def collect_less() -> None:
    """Set :data:`GC_THRESHOLDS` for this process."""
    import gc

    gc.set_threshold(*GC_THRESHOLDS)
