"""Lambda event filtering (``FilterCriteria``): EventBridge-style pattern matching.

A record is delivered if it matches any of the mapping's patterns. A pattern is a JSON object
whose leaves are lists of alternatives; nested objects match nested keys. Supported subset of
EventBridge's content filtering:

* exact values: strings, numbers, ``true``/``false``, ``null`` (``["CHECKLIST"]``);
* ``{"prefix": "..."}``, ``{"suffix": "..."}``, ``{"equals-ignore-case": "..."}``;
* ``{"anything-but": value | [values] | {"prefix": "..."}}``;
* ``{"exists": true | false}``;
* ``{"numeric": [">", 0, "<=", 5]}``;
* ``{"$or": [pattern, ...]}`` at any object level.

When the record holds a list where the pattern has alternatives, any element may match (as in
EventBridge). Anything else is refused with :class:`FilterPatternError` rather than guessed.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["FilterPatternError", "matches", "matches_any"]

_MISSING = object()
_NUMERIC = {"<": operator.lt, "<=": operator.le, "=": operator.eq, ">": operator.gt, ">=": operator.ge}


class FilterPatternError(ValueError):
    """A filter pattern this emulation does not understand."""


def matches_any(patterns: Sequence[Mapping[str, Any]], record: Mapping[str, Any]) -> bool:
    """True when there are no patterns (no filter) or one of them matches ``record``."""
    return not patterns or any(matches(pattern, record) for pattern in patterns)


def matches(pattern: Mapping[str, Any], record: Any) -> bool:
    """Whether ``record`` matches the EventBridge-style ``pattern``."""
    if not isinstance(pattern, Mapping):
        raise FilterPatternError(f"a pattern must be an object, got {pattern!r}")
    for key, expected in pattern.items():
        if key == "$or":
            if not isinstance(expected, list) or not expected:
                raise FilterPatternError("$or needs a non-empty list of patterns")
            if not any(matches(alternative, record) for alternative in expected):
                return False
            continue
        value = record.get(key, _MISSING) if isinstance(record, Mapping) else _MISSING
        if isinstance(expected, Mapping):
            if value is _MISSING or not isinstance(value, Mapping) or not matches(expected, value):
                return False
        elif isinstance(expected, list):
            if not _leaf_matches(expected, value):
                return False
        else:
            raise FilterPatternError(
                f"pattern value for {key!r} must be an object or a list of alternatives, got {expected!r}"
            )
    return True


def _leaf_matches(alternatives: list[Any], value: Any) -> bool:
    values = value if isinstance(value, list) else [value]
    return any(_one(alternative, item) for alternative in alternatives for item in values) or (
        # only "exists": false matches a key the record does not have
        value is _MISSING and any(_matches_missing(alternative) for alternative in alternatives)
    )


def _matches_missing(alternative: Any) -> bool:
    return isinstance(alternative, Mapping) and alternative.get("exists") is False


def _one(alternative: Any, value: Any) -> bool:
    if not isinstance(alternative, Mapping):
        if value is _MISSING:
            return False
        if isinstance(alternative, bool) or isinstance(value, bool) or alternative is None or value is None:
            return alternative is value or alternative == value and type(alternative) is type(value)
        if isinstance(alternative, int | float) and isinstance(value, int | float):
            return float(alternative) == float(value)
        return alternative == value
    if len(alternative) != 1:
        raise FilterPatternError(f"a content filter has exactly one operator, got {dict(alternative)!r}")
    ((name, argument),) = alternative.items()
    if name == "exists":
        return (value is not _MISSING) is bool(argument)
    if value is _MISSING:
        return False
    if name == "prefix":
        return isinstance(value, str) and value.startswith(_text(argument, name))
    if name == "suffix":
        return isinstance(value, str) and value.endswith(_text(argument, name))
    if name == "equals-ignore-case":
        return isinstance(value, str) and value.casefold() == _text(argument, name).casefold()
    if name == "anything-but":
        if isinstance(argument, Mapping):
            return not _one(argument, value)
        excluded = argument if isinstance(argument, list) else [argument]
        return not any(_one(item, value) for item in excluded)
    if name == "numeric":
        return _numeric(argument, value)
    raise FilterPatternError(f"content filter {name!r} is not supported by the local runtime")


def _text(argument: Any, name: str) -> str:
    if not isinstance(argument, str):
        raise FilterPatternError(f"{name} takes a string, got {argument!r}")
    return argument


def _numeric(argument: Any, value: Any) -> bool:
    if not isinstance(argument, list) or not argument or len(argument) % 2:
        raise FilterPatternError(f"numeric takes operator/number pairs, got {argument!r}")
    pairs = [(argument[i], argument[i + 1]) for i in range(0, len(argument), 2)]
    for op, bound in pairs:
        if op not in _NUMERIC or isinstance(bound, bool) or not isinstance(bound, int | float):
            raise FilterPatternError(f"bad numeric comparison {op!r} {bound!r}")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return all(_NUMERIC[op](value, bound) for op, bound in pairs)
