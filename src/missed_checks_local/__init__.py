"""The embedded AWS: the stack of ``template.yaml`` on moto, with a local Lambda runtime, Scheduler,
stream poller and clock (README, "Run it locally").

Importing the package makes every botocore session of the process share one data loader
(:func:`missed_checks_local.moto_patches.one_data_loader_per_process`, patch 5i) before moto is
imported: moto opens a new boto3 session to list a service's regions at import and for every
backend it creates, and each parsed botocore's endpoint file and models again (importing moto's
CloudFormation took 1.23 s with them, 0.74 s without, 2026-11-25).
"""

from missed_checks_local.moto_patches import one_data_loader_per_process

one_data_loader_per_process()

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
