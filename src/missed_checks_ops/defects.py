"""Defects (#33): what a check's failed critical items found, listed, shown and resolved by the
operator or the person ``--as`` names (``defect list``, ``defect show``, ``defect resolve``), through
the use cases the API and the web app call (:mod:`missed_checks.defects.listing`,
:mod:`missed_checks.defects.resolving`): every role at the defect's site reads it, a supervisor, a
site manager or an admin resolves it."""

from __future__ import annotations

from datetime import datetime

from missed_checks.aws.table import ManagementTable
from missed_checks.defects import listing, resolving
from missed_checks.defects.defect import Defect, DefectStatus
from missed_checks.paging import MAX_PAGE
from missed_checks.permissions.caller import Caller
from missed_checks_ops.target import StackTarget

__all__ = ["get_defect", "list_defects", "resolve_defect", "store_of"]


def store_of(target: StackTarget) -> ManagementTable:
    """The stack's table, every kind of item a person manages (defects and readiness among them)."""
    return ManagementTable(target.output("TableName"), target.client("dynamodb"))


def list_defects(target: StackTarget, caller: Caller, *, site_id: str | None = None, equipment_id: str | None = None,
                 status: DefectStatus | None = None) -> list[Defect]:
    """Every defect at the caller's sites (or one site, one piece of equipment, one status), oldest
    found first: the API's pages, followed to the last."""
    store = store_of(target)
    found: list[Defect] = []
    position: str | None = None
    while True:
        page = listing.list_defects(store, caller, site_id=site_id, equipment_id=equipment_id, status=status,
                                    position=position, limit=MAX_PAGE)
        found += page.items
        position = page.next_position
        if position is None:
            return found


def get_defect(target: StackTarget, caller: Caller, defect_id: str) -> Defect:
    return listing.get_defect(store_of(target), caller, defect_id)


def resolve_defect(target: StackTarget, caller: Caller, defect_id: str, note: str, *, now: datetime,
                   if_match: int | None = None) -> Defect:
    """Resolve the open defect with ``note`` as ``caller`` (``supervise`` at its site)."""
    return resolving.resolve_defect(store_of(target), defect_id, note, caller=caller, now=now, if_match=if_match)
