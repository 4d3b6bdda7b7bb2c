"""Reading ``template.yaml`` and resolving its intrinsic functions to local values.

The template is read with cfn-lint's CloudFormation-aware YAML loader (``!Ref``, ``!GetAtt``,
``!Sub`` become their long forms), so the local runtime provisions exactly what the template
declares: nothing here restates a resource.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from missed_checks.errors import MissedChecksError

__all__ = [
    "NO_VALUE",
    "Resolver",
    "TemplateError",
    "default_template_path",
    "load_template",
    "references",
]

NO_VALUE = object()
"""What ``!Ref AWS::NoValue`` resolves to: the enclosing property is dropped."""

_SUB_VARIABLE = re.compile(r"\$\{([^}!][^}]*)\}")


class TemplateError(MissedChecksError):
    """The template uses something the local runtime cannot resolve or provision."""


def default_template_path() -> Path:
    """``template.yaml`` of the project checkout this package runs from.

    The local runtime runs the project's own template, state machine and handlers, so it needs
    the checkout (an editable install, or the current directory).
    """
    here = Path(__file__).resolve()
    for candidate in [Path.cwd(), *here.parents]:
        template = candidate / "template.yaml"
        if template.is_file() and (candidate / "functions").is_dir():
            return template
    raise TemplateError("template.yaml not found: run from the missed-checks checkout (or pass --template)")


def _plain(node: Any) -> Any:
    """cfn-lint's node classes (str/dict/list subclasses with line marks) as plain values."""
    if isinstance(node, Mapping):
        return {str(key): _plain(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_plain(value) for value in node]
    if isinstance(node, str):
        return str(node)
    return node


def load_template(path: str | Path) -> dict[str, Any]:
    """The template at ``path`` as plain dicts and lists, tags in their long form."""
    from cfnlint.decode import cfn_yaml  # deferred: cfn-lint is a heavy import

    path = Path(path)
    try:
        raw = cfn_yaml.load(str(path))
    except FileNotFoundError:
        raise TemplateError(f"{path}: no such template") from None
    except Exception as error:  # cfn-lint raises its own parse error types
        raise TemplateError(f"{path}: cannot read the template: {error}") from error
    template = _plain(raw)
    if not isinstance(template, dict) or not isinstance(template.get("Resources"), dict):
        raise TemplateError(f"{path}: not a CloudFormation template (no Resources)")
    return template


def references(node: Any) -> set[str]:
    """Logical ids (resources or parameters) that ``node`` refers to through Ref/GetAtt/Sub."""
    found: set[str] = set()
    if isinstance(node, list):
        for value in node:
            found |= references(value)
    elif isinstance(node, dict):
        if len(node) == 1:
            ((key, value),) = node.items()
            if key == "Ref" and isinstance(value, str):
                found.add(value)
            elif key == "Fn::GetAtt":
                target = value.split(".", 1)[0] if isinstance(value, str) else value[0]
                found.add(str(target))
            elif key == "Fn::Sub":
                text = value if isinstance(value, str) else value[0]
                own = set(value[1]) if isinstance(value, list) and len(value) > 1 else set()
                for name in _SUB_VARIABLE.findall(text):
                    base = name.split(".", 1)[0]
                    if base not in own:
                        found.add(base)
                if isinstance(value, list) and len(value) > 1:
                    found |= references(value[1])
        for value in node.values():
            found |= references(value)
    return {name for name in found if not name.startswith("AWS::")}


class Resolver:
    """Evaluates intrinsic functions against parameters, pseudo parameters and resources.

    ``ref(logical_id)`` and ``get_att(logical_id, attribute)`` are callbacks into the stack
    being provisioned; parameters and pseudo parameters are resolved here. Supported:
    ``Ref``, ``Fn::GetAtt``, ``Fn::Sub``, ``Fn::Join``, ``Fn::Select``, ``Fn::Split``,
    ``Fn::If`` (with the template's ``Conditions``), ``Fn::Equals``/``Not``/``And``/``Or``.
    """

    def __init__(
        self,
        template: Mapping[str, Any],
        *,
        parameters: Mapping[str, str],
        pseudo: Mapping[str, str],
        ref: Callable[[str], Any],
        get_att: Callable[[str, str], Any],
    ) -> None:
        self._template = template
        self._parameters = dict(parameters)
        self._pseudo = dict(pseudo)
        self._ref = ref
        self._get_att = get_att

    def resolve(self, node: Any, where: str = "") -> Any:
        """``node`` with every intrinsic function replaced by its value."""
        if isinstance(node, list):
            items = [self.resolve(value, where) for value in node]
            return [item for item in items if item is not NO_VALUE]
        if not isinstance(node, dict):
            return node
        if len(node) == 1:
            ((key, value),) = node.items()
            if key == "Ref" or key.startswith("Fn::"):
                return self._function(key, value, where)
            if key == "Condition" and isinstance(value, str) and where.endswith("Conditions"):
                return self.condition(value)
        resolved = {key: self.resolve(value, f"{where}.{key}") for key, value in node.items()}
        return {key: value for key, value in resolved.items() if value is not NO_VALUE}

    def condition(self, name: str) -> bool:
        conditions = self._template.get("Conditions") or {}
        if name not in conditions:
            raise TemplateError(f"condition {name!r} is not defined in Conditions")
        return bool(self.resolve(conditions[name], "Conditions"))

    def _function(self, key: str, value: Any, where: str) -> Any:  # noqa: C901 - one branch each
        if key == "Ref":
            return self._resolve_ref(value)
        if key == "Fn::GetAtt":
            target, attribute = value.split(".", 1) if isinstance(value, str) else value
            return self._get_att(str(target), str(self.resolve(attribute, where)))
        if key == "Fn::Sub":
            return self._sub(value, where)
        if key == "Fn::Join":
            separator, items = value
            return str(separator).join(str(item) for item in self.resolve(items, where))
        if key == "Fn::Select":
            index, items = value
            return self.resolve(items, where)[int(self.resolve(index, where))]
        if key == "Fn::Split":
            separator, text = value
            return str(self.resolve(text, where)).split(separator)
        if key == "Fn::If":
            name, when_true, when_false = value
            return self.resolve(when_true if self.condition(name) else when_false, where)
        if key == "Fn::Equals":
            left, right = (self.resolve(item, where) for item in value)
            return str(left) == str(right)
        if key == "Fn::Not":
            return not self._truth(value[0], where)
        if key == "Fn::And":
            return all(self._truth(item, where) for item in value)
        if key == "Fn::Or":
            return any(self._truth(item, where) for item in value)
        if key == "Fn::ToJsonString":
            return json.dumps(self.resolve(value, where), separators=(",", ":"))
        raise TemplateError(f"{where or 'template'}: intrinsic function {key} is not supported locally")

    def _truth(self, node: Any, where: str) -> bool:
        if isinstance(node, dict) and set(node) == {"Condition"}:
            return self.condition(node["Condition"])
        return bool(self.resolve(node, where))

    def _resolve_ref(self, name: str) -> Any:
        if name == "AWS::NoValue":
            return NO_VALUE
        if name in self._pseudo:
            return self._pseudo[name]
        if name in self._parameters:
            return self._parameters[name]
        return self._ref(name)

    def _sub(self, value: Any, where: str) -> str:
        if isinstance(value, str):
            text, variables = value, {}
        else:
            text, variables = value[0], self.resolve(value[1], where)

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in variables:
                return str(variables[name])
            if "." in name and not name.startswith("AWS::"):
                target, attribute = name.split(".", 1)
                return str(self._get_att(target, attribute))
            return str(self._resolve_ref(name))

        return _SUB_VARIABLE.sub(replace, text).replace("${!", "${")
