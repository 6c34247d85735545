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
from dataclasses import dataclass
from typing import Any

import yaml

from reconciler import codec
from reconciler.findings import count, plural, render_text, tally
from reconciler.manifest import ManifestResult
from reconciler.model import DesiredSite, Source, UserRef
from reconciler.render.formats import Format, Formats, View


class _Inline(list[Any]):
    """A list shown on one line: ``users: [alice, bob]``."""


class _ShowDumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True  # a reader wants values, not &id001 anchors


_ShowDumper.add_representer(
    _Inline, lambda dumper, data: dumper.represent_sequence("tag:yaml.org,2002:seq", data, True)
)


def _as_written(ref: UserRef) -> str | dict[str, str]:
    """A reference as the manifest writes it: its text, or ``{user, expires}``."""
    if ref.expires is None:
        return ref.text
    return {"user": ref.text, "expires": ref.expires.isoformat()}


_shown = codec.converter.copy()
_shown.register_unstructure_hook(UserRef, lambda ref: _as_written(ref))
_shown.register_unstructure_hook(Source, str)  # file:line:column (path)


def desired_data(desired: DesiredSite) -> dict[str, Any]:
    """The desired site as plain data (JSON- and YAML-ready), by the model's codec: every
    field of the model is shown, each object's ``source`` as ``declared_at``, last."""
    data: dict[str, Any] = _shown.unstructure(desired)
    for table in ("workspaces", "groups", "users"):
        data[table] = [
            {**_without(item, "source"), "declared_at": item["source"]} for item in data[table]
        ]
    if data.get("ownership") is None:  # shown where the manifest declares it
        data.pop("ownership", None)
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


@dataclass(frozen=True, slots=True)
class Validation:
    """What ``validate`` reports: the findings and model of the manifest called ``label``."""

    result: ManifestResult
    label: str
    show: bool = False  # the expanded model too


def _json(report: Validation, view: View) -> str:
    findings = [finding.to_dict() for finding in report.result.findings]
    if not report.show:
        return json.dumps(findings, indent=2, ensure_ascii=False)
    desired = report.result.desired
    shown = None if desired is None else desired_data(desired)
    return json.dumps({"findings": findings, "desired": shown}, indent=2, ensure_ascii=False)


def _text(report: Validation, view: View) -> str:
    result = report.result
    parts = [render_text(result.findings)] if result.findings else []
    if report.show and result.desired is not None:
        parts.append(show_yaml(result.desired).rstrip("\n"))
    parts.append(summary(result, report.label))
    return "\n".join(parts)


VALIDATION_FORMATS: Formats[Validation] = Formats(
    Format("text", "people", _text),
    Format(
        "json",
        "CI: a list of findings (severity, file, line, column, path, message, hint); "
        "with --show, {findings, desired}",
        _json,
    ),
)
