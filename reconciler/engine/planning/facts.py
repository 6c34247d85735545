"""The live facts a plan's actions depend on, object by object, and how they changed.

A plan saves a fingerprint of every object its actions depend on, kind by kind (each kind's
``Fingerprint``: ``kinds/<kind>/facts.py``). When a saved plan turns out stale, the same
fingerprints are taken again from a fresh read and the refusal says, in the domain's words,
what changed ("user group "finance-team" was created on the site since the plan was made").
A change to an object the plan does not touch is not mentioned.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from reconciler.core.actions import WriteAction
from reconciler.core.kind import Kind
from reconciler.core.records import Records
from reconciler.kinds import registry
from reconciler.model import LiveSite


def sections() -> tuple[Kind, ...]:
    """The kinds in the order plan files have always listed their facts (workspaces, groups,
    users): a plan's ``expects`` keeps its bytes, and its checksum."""
    return tuple(reversed(registry.KINDS))


def fingerprints(
    live: LiveSite, records: Records, actions: Iterable[WriteAction]
) -> dict[str, Any]:
    """The facts of every object ``actions`` depend on, as JSON-able data (``None``: absent)."""
    chosen = tuple(actions)
    return {
        kind.section: kind.fingerprint.facts(live, records, kind.fingerprint.keys(chosen))
        for kind in sections()
    }


def refreshed(live: LiveSite, records: Records, expects: Mapping[str, Any]) -> dict[str, Any]:
    """The facts of the objects a saved plan fingerprinted, read again now."""
    return {
        kind.section: kind.fingerprint.facts(live, records, expects.get(kind.section, {}))
        for kind in sections()
    }


def describe_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """Plain sentences, one per object whose facts differ between two fingerprints."""
    differing = _differing(before, after)
    return [
        kind.fingerprint.changed(key, before[kind.section][key], after[kind.section][key])
        for kind in sections()
        for key in differing[kind.section]
    ]


def _differing(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, list[str]]:
    """The objects, by section, whose facts differ (deepdiff finds where): only objects the
    plan fingerprinted, which both fingerprints name."""
    from deepdiff import DeepDiff  # only a stale plan needs it

    found: dict[str, set[str]] = {kind.section: set() for kind in sections()}
    tree = DeepDiff(dict(before), dict(after), view="tree")
    for items in tree.values():
        for item in items:
            path = [str(part) for part in item.path(output_format="list")]
            if len(path) >= 2 and path[0] in found:
                section, name = path[0], path[1]
                if name in before.get(section, {}) and name in after.get(section, {}):
                    found[section].add(name)
    return {section: sorted(names) for section, names in found.items()}
