"""The plan's way reads in one direction (issues 35, 43): following the manifest and every
value built from it (the names a read looks for, the scope, the settled identities, the
comparison, what the kinds planned) through ``make_plan`` -- select, resolve names, read,
settle identities, compare, plan -- enters no module more than 3 times, and the read never
sees the manifest (docs/architecture.md, "The plan's way").

Followed for real: ``make_plan`` runs against an in-process sandbox while a profile hook notes
every call from one package module into another that is handed one of those values (a method
asked of the value itself is its own class's business), by call site.
"""

from __future__ import annotations

import asyncio
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from reconciler.core.planning import Planned, PlanOptions
from reconciler.core.users import Resolution
from reconciler.engine.planning.diff import Comparison
from reconciler.engine.read.identities import Identities
from reconciler.engine.read.scope import Scope
from reconciler.engine.read.wanted import Wanted
from reconciler.engine.workflow import LoadedManifest, make_plan
from reconciler.manifest import load_manifest
from reconciler.model import DesiredSite
from reconciler.sandbox.seed import load_seed_file
from tests.support.engine_site import engine_site
from tests.support.loopback import EXAMPLE_SEED, EXAMPLE_SITE, REPO

PACKAGE = str(REPO / "reconciler") + "/"
FROM_THE_MANIFEST = (DesiredSite, Wanted, Scope, Identities, Resolution, Comparison, Planned)
"""The manifest and every value the plan's way builds from it, step by step: the names a read
looks for, the scope, the settled identities and resolved references, the comparison, what
the kinds planned."""
STEPS = (
    "engine.read.targets",
    "engine.read.wanted",
    "engine.read.identities",
    "engine.planning.diff",
)
"""The modules of select, resolve names, settle identities and compare, in the plan's order."""


def _module(path: str) -> str | None:
    if not path.startswith(PACKAGE) or "/sandbox/" in path:
        return None
    return path[len(PACKAGE) : -len(".py")].replace("/", ".").removesuffix(".__init__")


class ManifestTrail:
    """Call sites through which the manifest, or a value built from it, enters a module
    (``entries``), those through which the manifest itself does (``desired``), and the order
    in which modules are first entered."""

    def __init__(self) -> None:
        self.entries: dict[str, set[str]] = defaultdict(set)
        self.desired: dict[str, set[str]] = defaultdict(set)
        self.order: list[str] = []

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or frame.f_back is None:
            return
        callee, caller = _module(frame.f_code.co_filename), _module(frame.f_back.f_code.co_filename)
        if callee is None or caller is None or callee == caller:
            return
        code = frame.f_code
        names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        # a value handed on, not one asking its own methods (``self``): those are its class's
        handed = [frame.f_locals.get(name) for name in names if name != "self"]
        site = f"{caller}:{frame.f_back.f_lineno} -> {code.co_name}"
        if any(isinstance(value, FROM_THE_MANIFEST) for value in handed):
            self.entries[callee].add(site)
            if callee not in self.order:
                self.order.append(callee)
        if any(isinstance(value, DesiredSite) for value in handed):
            self.desired[callee].add(site)


def _one_changed(desired: DesiredSite) -> DesiredSite:
    """The example with one workspace's root access changed: a one-object ``--changed``."""
    first = desired.workspaces[0]
    changed = replace(first, root_access=not first.root_access)
    return replace(desired, workspaces=(changed, *desired.workspaces[1:]))


async def _trail(tmp_path: Path, options: PlanOptions) -> ManifestTrail:
    loaded = load_manifest([str(EXAMPLE_SITE)])
    assert loaded.desired is not None
    async with engine_site(load_seed_file(str(EXAMPLE_SEED)), tmp_path) as site:
        outcome = await site.apply(loaded.desired)
        assert outcome.complete
        trail = ManifestTrail()
        sys.setprofile(trail)
        try:
            await make_plan(LoadedManifest(_one_changed(loaded.desired)), site.site, options)
        finally:
            sys.setprofile(None)
    return trail


@pytest.mark.parametrize(
    "options",
    [PlanOptions(), PlanOptions(changed=True), PlanOptions(targets=("workspace:*",))],
    ids=["full", "changed", "targeted"],
)
def test_the_manifest_and_what_is_built_from_it_enter_no_module_more_than_3_times(
    tmp_path: Path, options: PlanOptions
) -> None:
    trail = asyncio.run(_trail(tmp_path, options))
    often = {module: sites for module, sites in trail.entries.items() if len(sites) > 3}
    assert often == {}, "modules the manifest, or a value built from it, enters more than 3 times"
    assert [m for m in trail.order if m in STEPS] == list(STEPS), trail.order
    assert "engine.read.site_read" not in trail.desired  # the read works from a Wanted
    assert "engine.read.live" not in trail.entries  # and the live read from names alone
