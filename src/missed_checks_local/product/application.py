"""This product registered with the embedded AWS's kernel (:mod:`missed_checks_local.application`):
the product's clock follows the emulator's, its cached boto3 clients go when the AWS changes,
``local serve`` says what each firing was and starts with the sites and people of :mod:`.people`.
:func:`install` is the entry points' one call (the ``local`` commands, the tests' conftest, the
benchmarks), with the emulator's first patch."""

from __future__ import annotations

from typing import TYPE_CHECKING

from missed_checks_local.application import Application, register
from missed_checks_local.core.patches import one_data_loader_per_process

if TYPE_CHECKING:
    from missed_checks_local.scheduler.simulated import Firing

__all__ = ["firing_line", "install"]


def install() -> None:
    """One botocore data loader for the process (patch 5i, before moto is imported), and this
    product registered with the kernel. Idempotent."""
    one_data_loader_per_process()
    from missed_checks import clock  # deferred: boto3, once the loader is shared
    from missed_checks.aws import clients
    from missed_checks_local.product.people import serve_started

    register(Application(follow_clock=clock.set_source, backend_changed=clients.reset, describe_firing=firing_line,
                         functions_clock=clock.__name__, now=clock.now, serve_started=serve_started))


def firing_line(firing: Firing) -> str:
    """What ``local serve`` prints of one firing, as what it is: a checklist's schedule starts an
    evaluation, a digest subscription's (``_d.<id>``) and a reminder's (``_r<n>.<id>``) invoke a
    function; only a firing that failed (after its retries) says FAILED, with its reason."""
    from missed_checks.notifications.digest import (
        SCHEDULE_PREFIX as DIGEST_PREFIX,  # deferred: only a firing needs them
    )
    from missed_checks.notifications.reminders import checklist_of_reminder

    when = f"{firing.scheduled_time:%Y-%m-%dT%H:%M:%SZ}"
    reason = f"{firing.error_code}: {firing.error_message}" if firing.error_message else str(firing.error_code)
    reminded = checklist_of_reminder(firing.schedule)
    if firing.schedule.startswith(DIGEST_PREFIX):
        what = f"digest of subscription {firing.schedule.removeprefix(DIGEST_PREFIX)}"
        done, failed = "handed to the digest function", "FAILED to reach the digest function"
    elif reminded is not None:
        what = f"reminder of checklist {reminded}"
        done, failed = "handed to the notifier", "FAILED to reach the notifier"
    else:
        what, done, failed = "evaluation", "started", "FAILED to start"
    status = done if firing.ok else f"{failed} ({reason})"
    return f"{when}  {firing.schedule}: {what} {status}"

