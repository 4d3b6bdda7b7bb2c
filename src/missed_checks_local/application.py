"""What the application the embedded AWS runs tells the kernel: the seam between "a SAM application
on moto" (everything of ``missed_checks_local`` but :mod:`missed_checks_local.product`) and this
product.

The kernel knows nothing of the code it runs in the functions; an application that also runs its
own code in this process (a scenario player writing through the product's adapters, ``local
serve``'s product pages) registers with :func:`register` what the kernel calls:

- ``follow_clock(now)`` when a simulated clock starts ruling the process (``None`` when it stops),
  so the application's own "now" follows it;
- ``backend_changed()`` when the AWS the process talks to changes (moto started or stopped, an
  endpoint), so the application drops the clients it keeps;
- ``describe_firing(firing)``: what ``local serve`` says of a schedule's firing;
- ``now``: the application's own clock, which the kernel (and so the functions) reads while no
  simulated clock rules the process (a test that sets the application's clock directly);
- ``functions_clock``: the module of the functions' code whose ``set_source(now)`` the Lambda
  runtime points at the simulated clock during each invocation (none: the functions read the wall
  clock);
- ``serve_started(stack, now)`` once ``local serve``'s stack is up: the application's own start-up
  in it (this product's sites), answering the people its user pool starts with (none: nobody).

Nothing is registered at import: the product's entry points do it
(:func:`missed_checks_local.product.application.install`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from missed_checks_local.cognitoidp.users import LocalPeople
    from missed_checks_local.scheduler.simulated import Firing
    from missed_checks_local.stack import EmbeddedStack

__all__ = ["Application", "register", "registered"]


def _nothing_follows(_now: Callable[[], datetime] | None) -> None:
    return None


def _nothing_kept() -> None:
    return None


def _nobody(_stack: EmbeddedStack, _now: datetime) -> LocalPeople | None:
    return None


def plain_firing_line(firing: Firing) -> str:
    """A firing as the kernel says it: when, the schedule, and whether it reached its target."""
    when = f"{firing.scheduled_time:%Y-%m-%dT%H:%M:%SZ}"
    reason = f"{firing.error_code}: {firing.error_message}" if firing.error_message else str(firing.error_code)
    return f"{when}  {firing.schedule}: " + ("fired" if firing.ok else f"FAILED ({reason})")


@dataclass(frozen=True)
class Application:
    """The application's hooks (each does nothing unless given)."""

    follow_clock: Callable[[Callable[[], datetime] | None], None] = _nothing_follows
    backend_changed: Callable[[], None] = _nothing_kept
    describe_firing: Callable[[Firing], str] = plain_firing_line
    functions_clock: str | None = None
    now: Callable[[], datetime] | None = None
    serve_started: Callable[[EmbeddedStack, datetime], LocalPeople | None] = _nobody


_registered = Application()


def register(application: Application) -> None:
    """Make ``application`` the one the kernel calls (the last one registered wins)."""
    global _registered  # noqa: PLW0603 - one application per process, registered by its entry point
    _registered = application


def registered() -> Application:
    """The application the kernel calls now (one that does nothing until one is registered)."""
    return _registered
