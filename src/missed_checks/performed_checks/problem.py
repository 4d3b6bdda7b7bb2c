"""Why a performed check is refused (:mod:`missed_checks.performed_checks.recording` and
:mod:`missed_checks.performed_checks.answers` name every problem before anything is written)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from missed_checks.errors import InvalidInput


class Refusal:
    """Kinds of :class:`Problem`: what a client must change."""

    INVALID = "invalid"
    """A value is malformed (an id outside its alphabet, an instant without an offset)."""
    IN_FUTURE = "in_future"
    UNKNOWN_CHECKLIST = "unknown_checklist"
    NOT_ASSIGNED = "not_assigned"
    BAD_ANSWER = "bad_answer"
    """An answer the checklist's items in force at ``performed_at`` do not take (#33): an unknown
    item, a missing required one, a value of the wrong kind or not one of the choices."""


@dataclass(frozen=True)
class Problem:
    """One reason a check is refused: the row (None for a single check), the field and what to do."""

    field: str
    detail: str
    kind: str = Refusal.INVALID
    row: str | None = None

    def __str__(self) -> str:
        return f"{self.row + ': ' if self.row else ''}{self.field}: {self.detail}"

    def to_dict(self) -> dict[str, Any]:
        return {"row": self.row, "field": self.field, "kind": self.kind, "detail": self.detail}


class ChecksRefused(InvalidInput):
    """Nothing was written: every problem of every row is in ``problems``."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        first = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(first.field if first.row is None else f"{first.row}.{first.field}",
                         f"{first.detail}{more}")
        self.problems = list(problems)
