"""What ``reconciler validate`` prints: findings, the expanded model, a one-line summary.

``desired_data`` is the one plain-data view of a ``DesiredSite``; the YAML of ``--show`` and
the ``desired`` object of JSON output both come from it, so the two never disagree. It is
written for people reading what their defaults and teams expanded into: user references as
the text written, overrides as sorted flag lists (or null for no override), the team a
workspace or group came from, every declared user with its defaults filled in, the whole
policy, and where each was declared.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import yaml

from reconciler import codec
from reconciler.findings import count, plural, render_text, tally
from reconciler.manifest import ManifestResult
from reconciler.model import DesiredSite, Source, UserRef

OutputFormat = Literal["text", "json"]


class _Inline(list[Any]):
    """A list shown on one line: ``users: [alice, bob]``."""


class _ShowDumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True  # a reader wants values, not &id001 anchors


_ShowDumper.add_representer(
    _Inline, lambda dumper, data: dumper.represent_sequence("tag:yaml.org,2002:seq", data, True)
)


_shown = codec.converter.copy()
_shown.register_unstructure_hook(UserRef, lambda ref: ref.text)  # as written
_shown.register_unstructure_hook(Source, str)  # file:line:column (path)


def desired_data(desired: DesiredSite) -> dict[str, Any]:
    """The desired site as plain data (JSON- and YAML-ready), by the model's codec: every
    field of the model is shown, each object's ``source`` as ``declared_at``, last."""
    data: dict[str, Any] = _shown.unstructure(desired)
    for table in ("workspaces", "groups", "users"):
        data[table] = [
            {**_without(item, "source"), "declared_at": item["source"]} for item in data[table]
        ]
    first = {key: data.pop(key) for key in _FIRST if key in data}
    shown: dict[str, Any] = _inline({**first, **data})
    return shown


_FIRST = ("files", "site_url", "state", "users", "workspaces", "groups")
"""Where the manifest came from before what it declares; any other field follows."""


def _without(item: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k != key}


def _inline(value: Any) -> Any:
    """Lists of plain values shown on one line (``users: [alice, bob]``), everywhere."""
    if isinstance(value, dict):
        return {key: _inline(item) for key, item in value.items()}
    if isinstance(value, list):
        items = [_inline(item) for item in value]
        return items if any(isinstance(i, dict | list) for i in items) else _Inline(items)
    return value


def show_yaml(desired: DesiredSite) -> str:
    return yaml.dump(
        desired_data(desired),
        Dumper=_ShowDumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )


def summary(result: ManifestResult, label: str) -> str:
    """``site.yaml: valid (8 workspaces, 6 groups) with 1 warning`` or ``...: invalid (...)``;
    users are counted only when the manifest declares some."""
    if result.desired is None:
        return f"{label}: invalid ({tally(result.findings)})"
    desired = result.desired
    counted = [plural(len(desired.workspaces), "workspace"), plural(len(desired.groups), "group")]
    if desired.users:
        counted.append(plural(len(desired.users), "user"))
    sizes = ", ".join(counted)
    warnings = count(result.findings, "warning")
    return f"{label}: valid ({sizes})" + (
        f" with {plural(warnings, 'warning')}" if warnings else ""
    )


def render_report(
    result: ManifestResult, *, output_format: OutputFormat, show: bool, label: str
) -> str:
    """The whole output of ``validate``."""
    if output_format == "json":
        findings = [finding.to_dict() for finding in result.findings]
        if not show:
            return json.dumps(findings, indent=2, ensure_ascii=False)
        desired = None if result.desired is None else desired_data(result.desired)
        return json.dumps({"findings": findings, "desired": desired}, indent=2, ensure_ascii=False)
    parts = [render_text(result.findings)] if result.findings else []
    if show and result.desired is not None:
        parts.append(show_yaml(result.desired).rstrip("\n"))
    parts.append(summary(result, label))
    return "\n".join(parts)
