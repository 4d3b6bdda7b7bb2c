"""Who the operator's commands act as, when no ``--as``/``--by`` names someone: ``cli:<login name>``.

Every write a command makes through the product's use cases carries it (``changed_by`` of the audit
trail, docs/audit.md; the author a performed check or a calendar revision keeps)."""

from __future__ import annotations

import getpass


def cli_principal() -> str:
    """``cli:<login name>`` of whoever runs the command (``cli:unknown`` without one: a container
    with no passwd entry or USER)."""
    try:
        return f"cli:{getpass.getuser()}"
    except (OSError, KeyError):
        return "cli:unknown"
