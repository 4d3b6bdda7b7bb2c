"""The table's item size limit, checked on people's text before anything is written.

Every kind of item shares it, so it lives beside them rather than in one: the operator's commands
(a checklist file, a dismissal, an out-of-service period) and the scenario player refuse text that
would make its item too large with an error naming the field, instead of the table's bare
``ValidationException`` after the fact.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from missed_checks.errors import InvalidInput

MAX_ITEM_BYTES = 400 * 1024
"""DynamoDB's item size limit (attribute names and values together)."""
_ITEM_OVERHEAD_BYTES = 2 * 1024  # keys, timestamps, revision and schedule fields the table adds


def within_item_size(values: Mapping[str, Any], where: str = "") -> None:
    """Refuse text that would make its DynamoDB item larger than 400 KB, naming the largest field
    (``where`` prefixes it), instead of the table's bare ``ValidationException`` after the fact."""
    sizes = {name: len(name.encode()) + len(str(value).encode()) for name, value in values.items() if value is not None}
    if sizes and sum(sizes.values()) + _ITEM_OVERHEAD_BYTES > MAX_ITEM_BYTES:
        field = max(sizes, key=lambda name: sizes[name])
        raise InvalidInput(f"{where}{field}", f"is {sizes[field] / 1024:.0f} KB: one item of the table holds at most "
                                              f"{MAX_ITEM_BYTES // 1024} KB, all its fields together")
