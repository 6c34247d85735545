"""Server variants: the engine's core end-to-end scenario passes against every sandbox
profile of the notes (``site-api-notes.md`` §2), not only the default one, and against the
``published`` profile (every behaviour the published pages show, at once).

Each profile runs a real ``reconciler sandbox serve`` and the real ``reconciler`` command:

1. ``plan -o plan.json`` shows the example's 14 creations; ``apply plan.json`` applies it
   exactly, and a second ``apply plan.json`` is refused (applied once);
2. ``plan --detailed-exitcode`` says there is nothing left to change;
3. a user is added to a workspace directly through the API: ``drift`` reports it, ``apply``
   undoes it, and ``drift`` is clean again;
4. the site holds exactly the manifest plus its hand-made objects, untouched, with no
   duplicate and no membership the manifest does not ask for.

On fault profiles a step may fail and is repeated (``apply`` until it succeeds), as an
operator would.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from reconciler.errors import EXIT_CHANGES, EXIT_OK, EXIT_REFUSED
from reconciler.sandbox.settings import SandboxSettings, profile_settings
from tests.support.figures import tally
from tests.support.invariants import example_site_problems
from tests.support.loopback import EXAMPLE_SITE, LoopbackSite, loopback_site
from tests.support.sandbox_site import example_seed
from tests.support.site_strategies import Expectation, desired_from_file


@dataclass(frozen=True)
class Profile:
    settings: SandboxSettings
    options: tuple[str, ...] = ()  # the reconciler's own options for this site
    first_apply: tuple[str, ...] = ()  # what plan and apply need to be told the first time
    seed_workspaces: tuple[dict[str, Any], ...] = ()  # hand-made, beside the example seed's

    @property
    def faulty(self) -> bool:
        return bool(self.settings.fail_rate or self.settings.drop_after_commit_rate)


PROFILES: dict[str, Profile] = {
    "default": Profile(SandboxSettings()),
    "published": Profile(profile_settings("published")),
    "errors_as_200": Profile(SandboxSettings(errors_as_200=True)),
    "timestamp_window=5": Profile(SandboxSettings(timestamp_window=5)),
    "open_workspace_list": Profile(SandboxSettings(open_workspace_list=True)),
    "allow_duplicate_workspace_names": Profile(
        SandboxSettings(allow_duplicate_workspace_names=True),
        seed_workspaces=({"name": "Legacy Scans", "users": ["walter"]},),
    ),
    "partial_multi_add": Profile(SandboxSettings(partial_multi_add=True)),
    "omit_groups_in_location_access": Profile(
        SandboxSettings(omit_groups_in_location_access=True), first_apply=("--assume-no-groups",)
    ),
    "rate_limit=20": Profile(SandboxSettings(rate_limit=20)),
    "rate_limit=20 with --rate-limit 15": Profile(
        SandboxSettings(rate_limit=20), options=("--rate-limit", "15")
    ),
    "latency_ms=50": Profile(SandboxSettings(latency_ms=50)),
    "fail_rate and drop_after_commit_rate": Profile(
        SandboxSettings(fail_rate=0.1, drop_after_commit_rate=0.15, random_seed=5)
    ),
    "refuse_workspace_info": Profile(SandboxSettings(refuse_workspace_info=True)),
    "legacy_workspace_list": Profile(SandboxSettings(legacy_workspace_list=True)),
    "xml answers (--api-format xml)": Profile(SandboxSettings(), options=("--api-format", "xml")),
}


@contextmanager
def faults_paused(site: LoopbackSite, profile: Profile) -> Iterator[None]:
    """No injected faults while the test itself changes the site through the API."""
    if profile.faulty:
        site.faults(fail_rate=0.0, drop_after_commit_rate=0.0)
    try:
        yield
    finally:
        if profile.faulty:
            site.faults(
                fail_rate=profile.settings.fail_rate,
                drop_after_commit_rate=profile.settings.drop_after_commit_rate,
            )


def run_core_scenario(site: LoopbackSite, profile: Profile) -> None:
    def cli(command: str, *args: str) -> Any:
        return site.run(command, *args, *profile.options)

    initial = site.state()
    planned = cli("plan", "site.yaml", "-o", "plan.json", *profile.first_apply)
    assert planned.returncode == EXIT_OK, planned.stderr
    assert "Plan: 14 to create, 0 to change, 0 to delete." in planned.stdout
    saved = cli("apply", "plan.json", "--auto-approve")
    assert saved.returncode == EXIT_OK or profile.faulty, saved.stderr
    if saved.returncode != EXIT_OK:
        site.apply_until_ok("site.yaml", *profile.options, *profile.first_apply)
    again = cli("apply", "plan.json", "--auto-approve")  # never twice, finished or not
    refusal = "already been applied" if saved.returncode == EXIT_OK else "did not finish"
    assert again.returncode == EXIT_REFUSED and refusal in again.stderr, again.stderr
    assert cli("plan", "site.yaml", "--detailed-exitcode").returncode == EXIT_OK

    finance = site.workspaces()["Finance"]["id"]
    with faults_paused(site, profile):
        site.api(lambda client: client.add_to_workspace(1011, [finance]))  # mallory, by hand
    drift = cli("drift", "site.yaml", "--format", "json")
    assert drift.returncode == EXIT_CHANGES, drift.stderr
    report = json.loads(drift.stdout)
    assert [item["name"] for item in report["changed"]] == ["Finance"]
    assert "mallory" in report["changed"][0]["detail"]
    site.apply_until_ok("site.yaml", *profile.options)
    assert cli("drift", "site.yaml").returncode == EXIT_OK

    expectation = Expectation.of(desired_from_file(site.workdir / "site.yaml"), initial["users"])
    assert example_site_problems(initial, site.state(), expectation) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROFILES))
def test_the_core_scenario_passes_against_every_profile(name: str, tmp_path: Path) -> None:
    profile = PROFILES[name]
    shutil.copy(EXAMPLE_SITE, tmp_path / "site.yaml")
    seed = example_seed()
    seed["workspaces"] = [*seed["workspaces"], *profile.seed_workspaces]
    with loopback_site(tmp_path, seed, profile.settings) as site:
        run_core_scenario(site, profile)
        calls = site.control("calls")["total"]
    tally(
        "server profiles (CLI over loopback)",
        profiles=1,
        **{"API calls": calls, "CLI runs": len(site.transcript) // 2},
    )
