"""Resolving a defect (#33): a supervisor (``supervise`` at the defect's site) says, in a note, what
was done; the equipment is then no longer held back by it. Another site's defect is NotFound as a
missing one; a defect resolved already is Conflict; an edit made on a revision read earlier
(``If-Match``) is written only over that revision (PreconditionFailed with the current ETag), and
the write itself is conditional on the revision read."""

from __future__ import annotations

from datetime import datetime

from missed_checks.defects.defect import MAX_NOTE, Defect, ResolvedHow
from missed_checks.defects.listing import get_defect, what
from missed_checks.defects.ports import DefectStore
from missed_checks.errors import Conflict, InvalidInput, describe
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Action
from missed_checks.revisions import expected_revision


def validate_note(value: object, field: str = "note") -> str:
    """What was done, 1-:data:`MAX_NOTE` characters (stripped; several lines allowed)."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(field, f"is {describe(value)}: say what was done to resolve the defect (a non-empty text)")
    note = value.strip()
    if len(note) > MAX_NOTE:
        raise InvalidInput(field, f"is {len(note)} characters long; keep it to {MAX_NOTE}")
    return note


def resolve_defect(store: DefectStore, defect_id: object, note: object, *, caller: Caller, now: datetime,
                   if_match: int | None = None) -> Defect:
    """The defect resolved by ``caller`` with ``note`` at ``now`` (``resolved_how="supervisor"``)."""
    note_text = validate_note(note)
    defect = get_defect(store, caller, defect_id, action=Action.supervise)
    expected = expected_revision(what(defect.defect_id), defect, if_match=if_match)
    if not defect.is_open:
        raise Conflict(f"{what(defect.defect_id)} was resolved already, by {defect.resolved_by} "
                       f"({defect.resolution})")
    resolved = defect.resolved(by=caller.principal, at=now, note=note_text, how=ResolvedHow.SUPERVISOR)
    store.resolve_defect_item(resolved, expected=expected if expected is not None else defect.revision,
                              by=caller.principal)
    return resolved
