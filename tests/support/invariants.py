"""What must hold on the site after an apply, checked on the sandbox's state dump.

The dump (``/_sandbox/state``, or ``dump_state`` in-process) shows what the site API hides:
group members, ``root_access`` and whether each override is switched on. Each function
returns sentences, one per problem, so a failing assertion says exactly what went wrong.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from typing import Any, Literal

from reconciler.identity import NameSet, name_key, same_name
from tests.support.site_strategies import Expectation, WantedWorkspace

Dump = Mapping[str, Any]
Kind = Literal["workspaces", "groups"]
KINDS: tuple[Kind, ...] = ("workspaces", "groups")


def objects(dump: Dump, kind: Kind) -> dict[int, dict[str, Any]]:
    """Objects by ID, members as sorted lists so that two dumps compare field by field."""
    return {int(item["id"]): {**item, "members": sorted(item["members"])} for item in dump[kind]}


def name_counts(dump: Dump, kind: Kind) -> Counter[str]:
    return Counter(str(item["name"]) for item in dump[kind])


def with_name(dump: Dump, kind: Kind, name: str) -> list[dict[str, Any]]:
    """The objects of ``name``, as the site compares names (``reconciler.identity``)."""
    return [
        item for item in objects(dump, kind).values() if same_name(kind[:-1], item["name"], name)
    ]


def duplicates_made(before: Dump, after: Dump) -> list[str]:
    """Names the apply multiplied: more objects of a name than before, and more than one
    (names compared as the site compares them)."""
    problems = []
    for kind in KINDS:
        was, now = _identity_counts(before, kind), _identity_counts(after, kind)
        problems += [
            f'{kind[:-1]} "{name}": {was[name]} before the apply, {count} after'
            for name, count in now.items()
            if count > max(was[name], 1)
        ]
    return problems


def _identity_counts(dump: Dump, kind: Kind) -> Counter[str]:
    return Counter(name_key(kind[:-1], str(item["name"])) for item in dump[kind])


def changed_objects(before: Dump, after: Dump, kind: Kind, ids: Iterable[int]) -> list[str]:
    """Objects among ``ids`` that are gone or differ in any field (name, members, settings)."""
    was, now = objects(before, kind), objects(after, kind)
    problems = []
    for object_id in ids:
        if now.get(object_id) != was[object_id]:
            problems.append(
                f"{kind[:-1]} {was[object_id]['name']!r} (ID {object_id}) was touched: "
                f"{was[object_id]} became {now.get(object_id, 'nothing (deleted)')}"
            )
    return problems


def workspace_settings(item: Mapping[str, Any]) -> WantedWorkspace:
    """A dumped workspace's settings in the manifest's terms (members included)."""
    return WantedWorkspace(
        users=frozenset(item["members"]),
        root_access=bool(item["root_access"]),
        permissions=frozenset(item["permissions"]) if item["override_permissions"] else None,
        notifications=frozenset(item["notifications"]) if item["override_notifications"] else None,
    )


def undeclared_objects(
    dump: Dump, expectation: Expectation, managed_ids: Mapping[Kind, Collection[int]]
) -> dict[Kind, set[int]]:
    """IDs of the objects a manifest neither declares nor manages: no apply may touch them."""
    declared = {
        "workspaces": NameSet("workspace", expectation.workspaces),
        "groups": NameSet("group", expectation.groups),
    }
    return {
        kind: {
            object_id
            for object_id, item in objects(dump, kind).items()
            if item["name"] not in declared[kind] and object_id not in managed_ids[kind]
        }
        for kind in KINDS
    }


def example_site_problems(before: Dump, after: Dump, expectation: Expectation) -> list[str]:
    """Everything wrong with a site that should hold exactly ``expectation`` plus the
    objects it had before, which the manifest does not name (the example seed's hand-made
    workspace and group), untouched. For fault runs, where nothing else is going on.
    """
    untouchable = undeclared_objects(before, expectation, {"workspaces": (), "groups": ()})
    problems = duplicates_made(before, after)
    for kind in KINDS:
        problems += changed_objects(before, after, kind, untouchable[kind])
        extra = set(objects(after, kind)) - set(objects(before, kind))
        declared = NameSet(
            kind[:-1], expectation.workspaces if kind == "workspaces" else expectation.groups
        )
        problems += [
            f"{kind[:-1]} {objects(after, kind)[i]['name']!r} (ID {i}) is not in the manifest"
            for i in sorted(extra)
            if objects(after, kind)[i]["name"] not in declared
        ]
    for name, wanted in expectation.workspaces.items():
        found = with_name(after, "workspaces", name)
        if len(found) != 1:
            problems.append(f'workspace "{name}": {len(found)} on the site, 1 wanted')
        elif workspace_settings(found[0]) != wanted:
            problems.append(f'workspace "{name}": {workspace_settings(found[0])}, not {wanted}')
    for name, members in expectation.groups.items():
        found = with_name(after, "groups", name)
        if len(found) != 1:
            problems.append(f'group "{name}": {len(found)} on the site, 1 wanted')
        elif set(found[0]["members"]) != members:
            problems.append(f'group "{name}": members {found[0]["members"]}, not {sorted(members)}')
    return problems
