"""The plan's way reads in one direction (issue 35): following the manifest through
``make_plan`` -- select, resolve names, read, settle identities, compare -- enters no module
more than twice, and the read never sees the manifest (docs/architecture.md, "The plan's way").

Followed for real: ``make_plan`` runs against an in-process sandbox while a profile hook notes
every call from one package module into another that carries the manifest (the
``DesiredSite``, whole or scoped) among its arguments, by call site.
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

from reconciler.core.planning import PlanOptions
from reconciler.engine.workflow import LoadedManifest, make_plan
from reconciler.manifest import load_manifest
from reconciler.model import DesiredSite
from reconciler.sandbox.seed import load_seed_file
from tests.support.engine_site import engine_site
from tests.support.loopback import EXAMPLE_SEED, EXAMPLE_SITE, REPO

PACKAGE = str(REPO / "reconciler") + "/"
STEPS = ("engine.targets", "engine.wanted", "engine.identities", "engine.diff")
"""The modules of select, resolve names, settle identities and compare, in the plan's order."""


def _module(path: str) -> str | None:
    if not path.startswith(PACKAGE) or "/sandbox/" in path:
        return None
    return path[len(PACKAGE) : -len(".py")].replace("/", ".").removesuffix(".__init__")


class ManifestTrail:
    """Call sites through which the manifest enters a module, in the order first seen."""

    def __init__(self) -> None:
        self.entries: dict[str, set[str]] = defaultdict(set)
        self.order: list[str] = []

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or frame.f_back is None:
            return
        callee, caller = _module(frame.f_code.co_filename), _module(frame.f_back.f_code.co_filename)
        if callee is None or caller is None or callee == caller:
            return
        code = frame.f_code
        names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        if any(isinstance(frame.f_locals.get(name), DesiredSite) for name in names):
            self.entries[callee].add(f"{caller}:{frame.f_back.f_lineno} -> {code.co_name}")
            if callee not in self.order:
                self.order.append(callee)


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
def test_the_manifest_enters_no_module_more_than_twice(
    tmp_path: Path, options: PlanOptions
) -> None:
    trail = asyncio.run(_trail(tmp_path, options))
    twice = {module: sites for module, sites in trail.entries.items() if len(sites) > 2}
    assert twice == {}, "modules the manifest enters more than twice"
    assert [m for m in trail.order if m in STEPS] == list(STEPS), trail.order
    assert "engine.site_read" not in trail.entries  # the read works from a Wanted
    assert "engine.live" not in trail.entries
