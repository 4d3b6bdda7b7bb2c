"""The emulator's patches of moto's CloudFormation.

Each patch names its upstream candidate. Checked against moto 5.2.1. Nothing here runs at import.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

__all__ = ["json_templates_as_json", "refresh_model_lists"]


def json_templates_as_json() -> None:
    """Patch 5j: ``Stack.parse_template`` reads a JSON template body with ``json.loads``. moto reads
    every body with PyYAML's pure-Python loader first (JSON is YAML) and only then tries JSON: the
    transformed template, as JSON, took 0.3 s of CPU to parse, on every provisioning. Same dictionary.

    Upstream candidate (moto, ``cloudformation/models.py``): try JSON first."""
    from moto.cloudformation.models import Stack  # deferred: moto is a dev dependency and slow to import

    # moto declares parse_template a plain staticmethod returning dict[str, Any]; ours wraps it
    Stack.parse_template = staticmethod(_json_templates_as_json(Stack.parse_template))  # type: ignore[assignment]


def refresh_model_lists() -> None:
    """Forget moto's cached lists of CloudFormation models, so the models the other patches changed
    (and :mod:`missed_checks_local.cloudformation.http_api`'s) are the ones it finds. Not a change
    of behaviour: nothing to send upstream."""
    from moto.cloudformation import parsing  # deferred: moto is a dev dependency and slow to import

    for cached in (parsing.get_model_list, parsing.get_model_map, parsing.get_name_type_map):
        cached.cache_clear()


def _json_templates_as_json(parse_template: Callable[[str], Any]) -> Callable[[str], Any]:
    """Patch 5j: a template body that is a JSON object is read with ``json.loads``; anything else
    (YAML, short-form tags) goes to moto's parser as before."""

    @functools.wraps(parse_template)
    def parse(template: str) -> Any:
        if isinstance(template, str) and template.lstrip().startswith("{"):
            try:
                parsed = json.loads(template)
            except ValueError:
                return parse_template(template)
            if isinstance(parsed, dict):
                return parsed
        return parse_template(template)

    parse.moto_parse_template = parse_template  # type: ignore[attr-defined]
    return parse

