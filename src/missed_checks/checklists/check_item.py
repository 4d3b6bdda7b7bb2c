"""Items on a checklist (#33): the questions a check answers, each with a kind and a ``critical``
flag, revised like closure calendars.

A checklist may list up to :data:`MAX_ITEMS` items. Each is a pass/fail question, a number (with a
unit and bounds: an answer outside them *fails* the item, it is not refused), a choice (some
choices may fail the item) or free text. The list is revised as a whole: every put that changes
it raises the checklist's ``items_revision`` by one and keeps the earlier revision on record
(:class:`ItemList`), so a check is validated against, and reads by, the revision in force at its
``performed_at`` (:func:`in_force`) whatever was edited since. Pure domain: the table adapter
(:mod:`missed_checks.aws.table.checklists`) keeps the revisions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import Any

from missed_checks import identifiers
from missed_checks.errors import InvalidInput, describe, shorten
from missed_checks.timefmt import to_utc_iso

MAX_ITEMS = 50
"""Items per checklist: a long pre-use check has 20-30; 50 keeps the item well under 400 KB."""
MAX_LABEL = 200
MAX_UNIT = 20
MIN_CHOICES = 2
MAX_CHOICES = 20
MAX_CHOICE = 100
"""Characters of one choice."""

ITEM_FIELDS = ("id", "label", "kind", "critical", "unit", "minimum", "maximum", "choices", "failing_choices",
               "required")


class ItemKind(StrEnum):
    PASS_FAIL = "pass_fail"
    NUMBER = "number"
    CHOICE = "choice"
    TEXT = "text"


def validate_item_id(value: object, field: str = "id") -> str:
    return identifiers.KINDS["item id"].validate(value, field)


@dataclass(frozen=True)
class CheckItem:
    """One question of a checklist. ``unit``, ``minimum`` and ``maximum`` only for a number,
    ``choices`` and ``failing_choices`` only for a choice."""

    item_id: str
    label: str
    kind: ItemKind
    critical: bool = False
    unit: str | None = None
    minimum: Decimal | None = None
    maximum: Decimal | None = None
    choices: tuple[str, ...] = ()
    failing_choices: tuple[str, ...] = ()
    required: bool = True

    def to_dict(self) -> dict[str, Any]:
        """The item's document (the API, the CLI's checklist file, the table): ``id``, ``label`` and
        ``kind`` always, the rest only when set (``required`` only when False); bounds as JSON numbers."""
        document: dict[str, Any] = {"id": self.item_id, "label": self.label, "kind": self.kind.value}
        if self.critical:
            document["critical"] = True
        if self.unit is not None:
            document["unit"] = self.unit
        for name in ("minimum", "maximum"):
            bound = getattr(self, name)
            if bound is not None:
                document[name] = _number(bound)
        if self.choices:
            document["choices"] = list(self.choices)
        if self.failing_choices:
            document["failing_choices"] = list(self.failing_choices)
        if not self.required:
            document["required"] = False
        return document

    def expected(self) -> str:
        """What a passing answer is, in words: "pass", "between 2 and 3 bar", "not one of: leaking",
        "any answer"."""
        if self.kind is ItemKind.PASS_FAIL:
            return "pass"
        if self.kind is ItemKind.CHOICE:
            return f"not one of: {', '.join(self.failing_choices)}" if self.failing_choices else "any choice"
        if self.kind is ItemKind.NUMBER:
            unit = f" {self.unit}" if self.unit else ""
            if self.minimum is not None and self.maximum is not None:
                return f"between {_shown(self.minimum)} and {_shown(self.maximum)}{unit}"
            if self.minimum is not None:
                return f"at least {_shown(self.minimum)}{unit}"
            if self.maximum is not None:
                return f"at most {_shown(self.maximum)}{unit}"
            return "any number"
        return "any text"


def _shown(value: Decimal) -> str:
    return format(value.normalize(), "f") if value == value.to_integral_value() else str(value)


def _number(value: Decimal) -> int | float:
    """A bound as a JSON number: a whole one as an int, else a float."""
    return int(value) if value == value.to_integral_value() else float(value)


def to_decimal(value: object) -> Decimal | None:
    """A finite number (an int, a float, a Decimal, or a string holding one), else None. Booleans are
    not numbers here."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(str(value)) if math.isfinite(value) else None
    if isinstance(value, Decimal):
        return value if value.is_finite() else None
    if isinstance(value, str) and value.strip() and len(value) <= 100:
        try:
            parsed = Decimal(value.strip())
        except InvalidOperation:
            return None
        return parsed if parsed.is_finite() else None
    return None


@dataclass(frozen=True)
class ItemList:
    """One revision of a checklist's items, in force from ``effective_from`` (the put's instant)
    until the next revision's."""

    revision: int
    effective_from: datetime
    items: tuple[CheckItem, ...]

    def item(self, item_id: str) -> CheckItem | None:
        return next((item for item in self.items if item.item_id == item_id), None)

    def to_dict(self) -> dict[str, Any]:
        return {"revision": self.revision, "effective_from": to_utc_iso(self.effective_from),
                "items": [item.to_dict() for item in self.items]}


def in_force(revisions: Sequence[ItemList], at: datetime) -> ItemList | None:
    """The revision with the latest ``effective_from`` at or before ``at`` (None: the checklist had
    no items then, so a check then needs no answers). A revision with no items is returned as such."""
    found: ItemList | None = None
    for revision in revisions:
        if revision.effective_from <= at and (found is None or (revision.effective_from, revision.revision)
                                              >= (found.effective_from, found.revision)):
            found = revision
    return found


class ItemsRefused(InvalidInput):
    """Every problem of an item list: the first names its field (``items[2].minimum``), ``problems``
    holds them all."""

    def __init__(self, problems: Sequence[InvalidInput]) -> None:
        first = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(first.field, f"{first.message}{more}")
        self.problems = list(problems)


def parse_items(values: object, field: str = "items") -> tuple[CheckItem, ...]:
    """A list of item documents: every problem of every item at once (:class:`ItemsRefused`, whose
    field names the first, such as ``items[2].minimum``); None is no items."""
    if values is None:
        return ()
    if isinstance(values, str) or not isinstance(values, list | tuple):
        raise InvalidInput(field, f"is {describe(values)}, not a list of items such as "
                                  '[{"id": "brakes", "label": "Brakes work", "kind": "pass_fail", "critical": true}]')
    if len(values) > MAX_ITEMS:
        raise InvalidInput(field, f"has {len(values)} items; a checklist has at most {MAX_ITEMS}")
    problems: list[InvalidInput] = []
    items: list[CheckItem] = []
    seen: dict[str, int] = {}
    for index, value in enumerate(values):
        where = f"{field}[{index}]"
        found: list[InvalidInput] = []
        item = _parse_item(value, where, found)
        problems.extend(found)
        if item is None:
            continue
        if item.item_id in seen:
            problems.append(InvalidInput(f"{where}.id", f"{item.item_id!r} repeats {field}[{seen[item.item_id]}].id"))
            continue
        seen[item.item_id] = index
        items.append(item)
    if problems:
        raise ItemsRefused(problems)
    return tuple(items)


def _parse_item(value: object, where: str, problems: list[InvalidInput]) -> CheckItem | None:
    if not isinstance(value, Mapping):
        problems.append(InvalidInput(where, f"is {describe(value)}, not an item (a map with id, label and kind)"))
        return None
    count = len(problems)
    for key in value:
        if key not in ITEM_FIELDS:
            problems.append(InvalidInput(f"{where}.{key}" if isinstance(key, str) and key else where,
                                         f"is not a field of an item; use {', '.join(ITEM_FIELDS)}"))

    def check(name: str, parse: Any) -> Any:
        try:
            return parse(value.get(name), f"{where}.{name}")
        except InvalidInput as error:
            problems.append(error)
            return None

    item_id = check("id", validate_item_id)
    label = check("label", _label)
    kind = check("kind", _kind)
    critical = check("critical", _flag(False))
    required = check("required", _flag(True))
    unit = check("unit", _unit)
    minimum = check("minimum", _bound)
    maximum = check("maximum", _bound)
    choices = check("choices", _choices)
    failing = check("failing_choices", _text_list)
    if kind is not None:
        problems.extend(_fields_of_other_kinds(value, kind, where))
    if minimum is not None and maximum is not None and minimum > maximum:
        problems.append(InvalidInput(f"{where}.minimum", f"{_shown(minimum)} is above maximum {_shown(maximum)}"))
    for index, choice in enumerate(failing or ()):
        if choices is not None and choice not in choices:
            problems.append(InvalidInput(f"{where}.failing_choices[{index}]",
                                         f"{shorten(choice)} is not one of choices"))
    if len(problems) > count or item_id is None or label is None or kind is None:
        return None
    return CheckItem(item_id, label, kind, critical=bool(critical), unit=unit, minimum=minimum, maximum=maximum,
                     choices=tuple(choices or ()), failing_choices=tuple(dict.fromkeys(failing or ())),
                     required=bool(required))


def _fields_of_other_kinds(value: Mapping[Any, Any], kind: ItemKind, where: str) -> list[InvalidInput]:
    """A number's fields on another kind of item, a choice's likewise, a choice item without choices."""
    problems = []
    for name in ("unit", "minimum", "maximum"):
        if kind is not ItemKind.NUMBER and value.get(name) is not None:
            problems.append(InvalidInput(f"{where}.{name}", f"is for a number item, not a {kind.value} item"))
    for name in ("choices", "failing_choices"):
        if kind is not ItemKind.CHOICE and value.get(name) not in (None, [], ()):
            problems.append(InvalidInput(f"{where}.{name}", f"is for a choice item, not a {kind.value} item"))
    if kind is ItemKind.CHOICE and value.get("choices") is None:
        problems.append(InvalidInput(f"{where}.choices", f"is missing: a choice item lists {MIN_CHOICES}-"
                                                         f"{MAX_CHOICES} choices"))
    return problems


def _label(value: object, field: str) -> str:
    return identifiers.one_line(value, field, "the question in words, such as 'Brakes work'", MAX_LABEL)


def _kind(value: object, field: str) -> ItemKind:
    if isinstance(value, str) and value in ItemKind.__members__.values():
        return ItemKind(value)
    raise InvalidInput(field, f"is {describe(value)}; use one of {', '.join(kind.value for kind in ItemKind)}")


def _flag(default: bool) -> Any:
    def parse(value: object, field: str) -> bool:
        if value is None:
            return default
        if not isinstance(value, bool):
            raise InvalidInput(field, f"is {describe(value)}, not true or false")
        return value
    return parse


def _unit(value: object, field: str) -> str | None:
    if value is None:
        return None
    return identifiers.one_line(value, field, "a unit such as bar or mm", MAX_UNIT)


def _bound(value: object, field: str) -> Decimal | None:
    if value is None:
        return None
    parsed = to_decimal(value) if not isinstance(value, str) else None
    if parsed is None:
        raise InvalidInput(field, f"is {describe(value)}, not a finite number")
    return parsed


def _text_list(value: object, field: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise InvalidInput(field, f"is {describe(value)}, not a list of choices such as [\"ok\", \"leaking\"]")
    texts: dict[str, int] = {}
    for index, text in enumerate(value):
        choice = identifiers.one_line(text, f"{field}[{index}]", "a choice in words", MAX_CHOICE)
        if choice != text:
            raise InvalidInput(f"{field}[{index}]", f"{shorten(text)} has spaces around it; give {choice!r}")
        if choice in texts:
            raise InvalidInput(f"{field}[{index}]", f"{choice!r} repeats {field}[{texts[choice]}]")
        texts[choice] = index
    return tuple(texts)


def _choices(value: object, field: str) -> tuple[str, ...] | None:
    choices = _text_list(value, field)
    if choices is not None and not MIN_CHOICES <= len(choices) <= MAX_CHOICES:
        raise InvalidInput(field, f"has {len(choices)} choices; give {MIN_CHOICES}-{MAX_CHOICES}")
    return choices


def item_of(document: Mapping[str, Any]) -> CheckItem:
    """An item as stored (the table's document, numbers as Decimal): parsed as a user's would be."""
    return parse_items([dict(document)], "item")[0]
