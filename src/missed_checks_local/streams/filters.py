"""Lambda event filtering (``FilterCriteria``): EventBridge-style pattern matching, by moto's own
matcher (``moto.events.models.EventPattern``, the one moto's EventBridge rules use).

A record is delivered if it matches any of the mapping's patterns. A pattern is a JSON object
whose leaves are lists of alternatives; nested objects match nested keys. Lambda's filter grammar
is a subset of EventBridge's:

* exact values: strings, numbers, ``true``/``false``, ``null`` (``["CHECKLIST"]``);
* ``{"prefix": "..."}``, ``{"suffix": "..."}``, ``{"equals-ignore-case": "..."}``;
* ``{"anything-but": value | [values] | {"prefix": "..."}}``;
* ``{"exists": true | false}``;
* ``{"numeric": [">", 0, "<=", 5]}``;
* ``{"$or": [pattern, ...]}`` at any object level.

When the record holds a list where the pattern has alternatives, any element may match (as in
EventBridge). What moto's matcher lacks is kept here:

- **the grammar is checked**: a leaf that is not a list, an operator Lambda does not have
  (``wildcard``, ``cidr``), two operators in one filter, a malformed ``numeric`` are refused with
  :class:`FilterPatternError` (moto would quietly not match, or match everything);
- **exact values keep their JSON type**: ``true`` does not match ``1`` (moto compares with
  Python's ``==``, where ``True == 1``): booleans are compared as tagged values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["FilterPatternError", "matches", "matches_any"]

_OPERATORS = {"prefix", "suffix", "equals-ignore-case", "anything-but", "exists", "numeric"}
_NUMERIC = {"<", "<=", "=", ">", ">="}
_TRUE, _FALSE = "\x00json:true", "\x00json:false"  # no JSON string a pattern can hold starts with NUL


class FilterPatternError(ValueError):
    """A filter pattern this emulation does not understand."""


def matches_any(patterns: Sequence[Mapping[str, Any]], record: Mapping[str, Any]) -> bool:
    """True when there are no patterns (no filter) or one of them matches ``record``."""
    return not patterns or any(matches(pattern, record) for pattern in patterns)


def matches(pattern: Mapping[str, Any], record: Any) -> bool:
    """Whether ``record`` matches the EventBridge-style ``pattern``."""
    from moto.events.models import EventPattern  # deferred: moto is a dev dependency and slow to import

    _check(pattern)
    if not isinstance(record, Mapping):
        return False
    return bool(EventPattern(None, _tagged_pattern(pattern)).matches_event(_tagged(record)))


# -- the grammar -----------------------------------------------------------------------------
def _check(pattern: Any) -> None:
    if not isinstance(pattern, Mapping):
        raise FilterPatternError(f"a pattern must be an object, got {pattern!r}")
    for key, expected in pattern.items():
        if key == "$or":
            if not isinstance(expected, list) or not expected:
                raise FilterPatternError("$or needs a non-empty list of patterns")
            for alternative in expected:
                _check(alternative)
        elif isinstance(expected, Mapping):
            _check(expected)
        elif isinstance(expected, list):
            for alternative in expected:
                if isinstance(alternative, Mapping):
                    _check_filter(alternative)
        else:
            raise FilterPatternError(
                f"pattern value for {key!r} must be an object or a list of alternatives, got {expected!r}"
            )


def _check_filter(alternative: Mapping[str, Any]) -> None:
    if len(alternative) != 1:
        raise FilterPatternError(f"a content filter has exactly one operator, got {dict(alternative)!r}")
    ((name, argument),) = alternative.items()
    if name not in _OPERATORS:
        raise FilterPatternError(f"content filter {name!r} is not supported by the local runtime")
    if name in ("prefix", "suffix", "equals-ignore-case") and not isinstance(argument, str):
        raise FilterPatternError(f"{name} takes a string, got {argument!r}")
    if name == "anything-but" and isinstance(argument, Mapping):
        _check_filter(argument)
    if name == "numeric":
        if not isinstance(argument, list) or not argument or len(argument) % 2:
            raise FilterPatternError(f"numeric takes operator/number pairs, got {argument!r}")
        for op, bound in zip(argument[::2], argument[1::2], strict=True):
            if op not in _NUMERIC or isinstance(bound, bool) or not isinstance(bound, int | float):
                raise FilterPatternError(f"bad numeric comparison {op!r} {bound!r}")


# -- JSON types kept apart (true is not 1) ---------------------------------------------------
def _tag(value: Any) -> Any:
    if value is True:
        return _TRUE
    if value is False:
        return _FALSE
    return value


def _tagged(record: Any) -> Any:
    if isinstance(record, Mapping):
        return {key: _tagged(value) for key, value in record.items()}
    if isinstance(record, list):
        return [_tagged(value) for value in record]
    return _tag(record)


def _tagged_pattern(pattern: Mapping[str, Any]) -> dict[str, Any]:
    tagged: dict[str, Any] = {}
    for key, expected in pattern.items():
        if key == "$or":
            tagged[key] = [_tagged_pattern(alternative) for alternative in expected]
        elif isinstance(expected, Mapping):
            tagged[key] = _tagged_pattern(expected)
        else:
            tagged[key] = [_tagged_alternative(alternative) for alternative in expected]
    return tagged


def _tagged_alternative(alternative: Any) -> Any:
    if not isinstance(alternative, Mapping):
        return _tag(alternative)
    ((name, argument),) = alternative.items()
    if name == "anything-but" and not isinstance(argument, Mapping):
        return {name: [_tag(item) for item in argument] if isinstance(argument, list) else _tag(argument)}
    return dict(alternative)
