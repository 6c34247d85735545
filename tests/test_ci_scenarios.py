"""A team's week with the shipped CI templates, on both forges: onboarding an empty site, two
pull requests racing, a rename and its later clean-up, an offboarding (by the manifest, and by
hand first), a missing secret.

Every job is the template's own, run unedited on a fresh runner (tests/support/ci_github.py,
ci_gitlab.py): the tool installed by the job's install step from the wheel directory named by
``RECONCILER_INSTALL``, the records in a real PostgreSQL (pull requests plan as a read-only
role), the site a sandbox on loopback answering as the published pages show, the secrets set
per environment as docs/ci.md says. Nothing is adapted: when a scenario fails, a team copying
the templates fails the same way.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import yaml

from reconciler.errors import EXIT_ERROR, EXIT_OK, EXIT_REFUSED
from reconciler.sandbox.settings import SandboxSettings, profile_settings
from tests.support.ci_pipelines import FORGES, Team, TeamFactory, ci_tool, make_team
from tests.support.loopback import EXAMPLE_SEED, REPO

__all__ = ["ci_tool", "make_team"]  # fixtures
pytestmark = [pytest.mark.e2e, pytest.mark.slow]
BOTH = pytest.mark.parametrize("forge", FORGES)
"""Where the templates' own steps decide (the onboard job, an apply gated on the plan's exit
code, each forge's secrets): every forge."""


def one(forge: str) -> pytest.MarkDecorator:
    """Where the tool decides, through the plan and apply jobs every forge runs alike (those
    jobs run on both forges in test_ci_templates.py): one forge, alternating, to keep CI short."""
    return pytest.mark.parametrize("forge", [forge])


def _empty_site() -> tuple[dict[str, Any], SandboxSettings]:
    """The example's users and nothing else, on a site that does not list user groups."""
    seed = yaml.safe_load(EXAMPLE_SEED.read_text(encoding="utf-8"))
    del seed["workspaces"], seed["groups"]
    settings = profile_settings("published")
    return seed, dataclasses.replace(settings, omit_groups_in_location_access=True)


@BOTH
def test_onboarding_an_empty_site_takes_the_onboard_job_and_nothing_else(
    make_team: TeamFactory, forge: str
) -> None:
    seed, settings = _empty_site()
    team = make_team(forge, seed=seed, sandbox=settings, records_ready=False)
    first = team.merge()  # the manifest lands on main: the first job creates the tables
    assert first.plan.exit_code == EXIT_OK, first.plan.log
    assert first.apply.exit_code == EXIT_REFUSED, first.apply.log
    assert "--assume-no-groups" in first.apply.log
    assert team.site.workspaces() == {} and team.site.groups() == {}

    onboard = team.operate("onboard")
    assert onboard.exit_code == EXIT_OK, onboard.log
    assert len(team.site.workspaces()) == 8 and len(team.site.groups()) == 6

    again = team.merge()
    assert again.plan.exit_code == EXIT_OK, again.plan.log
    assert not again.applied
    _in_sync(team)
    review = team.pull_request(1)  # the read-only role reads the records the writer made
    assert review.exit_code == EXIT_OK, review.log
    assert "No changes" in review.log


def _lands(team: Team) -> None:
    """A merge whose plan is applied."""
    merged = team.merge()
    assert merged.plan.exit_code == EXIT_OK, merged.plan.log
    assert merged.applied and merged.apply.exit_code == EXIT_OK, merged.apply.log


def _in_sync(team: Team) -> None:
    """The nightly drift finds nothing to report."""
    nightly = team.nightly()
    assert nightly.exit_code == EXIT_OK, nightly.log


def _with(manifest: dict[str, Any], **changes: Any) -> str:
    return yaml.safe_dump({**manifest, **changes}, sort_keys=False)


EXAMPLE = yaml.safe_load((REPO / "examples" / "site.yaml").read_text(encoding="utf-8"))


@one("github")
def test_two_pull_requests_racing_each_get_their_plan_and_both_land_once(
    make_team: TeamFactory, forge: str
) -> None:
    team = make_team(forge)
    research = {"name": "Research", "users": ["alice", "bob"]}
    support = {"name": "Support", "users": ["carol"]}
    first = _with(EXAMPLE, workspaces=[*EXAMPLE["workspaces"], research])
    second = _with(EXAMPLE, workspaces=[*EXAMPLE["workspaces"], support])
    both = _with(EXAMPLE, workspaces=[*EXAMPLE["workspaces"], research, support])
    for number, text in ((1, first), (2, second)):  # each branch from the same main
        team.manifest.write_text(text, encoding="utf-8")
        review = team.pull_request(number)
        assert review.exit_code == EXIT_OK, review.log
    (one,), (two,) = team.forge_api.comments[1], team.forge_api.comments[2]
    assert "Research" in one["body"] and "Support" not in one["body"]
    assert "Support" in two["body"] and "Research" not in two["body"]

    # both merge; the second merge's pipeline plans before the first one's apply ran
    team.manifest.write_text(first, encoding="utf-8")
    early = team.start_merge()
    assert early.plan().exit_code == EXIT_OK
    team.manifest.write_text(both, encoding="utf-8")
    late = team.start_merge()
    assert late.plan().exit_code == EXIT_OK
    assert early.apply().exit_code == EXIT_OK
    stale = late.apply()  # its plan also created Research, which is there now: refused
    assert stale.exit_code == EXIT_REFUSED, stale.log
    assert "stale" in stale.log and "plan again" in stale.log
    again = team.merge()  # the re-run the message asks for
    assert again.apply.exit_code == EXIT_OK, again.apply.log
    names = [ws["name"] for ws in team.site.state()["workspaces"]]
    assert names.count("Research") == 1 and names.count("Support") == 1


@BOTH
def test_a_rename_is_saved_on_merge_and_dropping_previously_later_deletes_nothing(
    make_team: TeamFactory, forge: str
) -> None:
    policy = {**EXAMPLE["policy"], "prune": True}
    team = make_team(forge, manifest=_with(EXAMPLE, policy=policy))
    _lands(team)
    legal = team.site.workspaces()["Legal"]["id"]

    def renamed_to_counsel(**entry: Any) -> str:
        workspaces = [
            {**ws, "name": "Counsel", **entry} if ws["name"] == "Legal" else ws
            for ws in EXAMPLE["workspaces"]
        ]
        return _with(EXAMPLE, policy=policy, workspaces=workspaces)

    team.manifest.write_text(renamed_to_counsel(previously=["Legal"]), encoding="utf-8")
    review = team.pull_request(3)
    assert review.exit_code == EXIT_OK, review.log
    _lands(team)  # only the records change: that is a change, and apply saves it

    team.manifest.write_text(renamed_to_counsel(), encoding="utf-8")  # the clean-up, later
    team.site.control("calls/reset", {})
    cleaned = team.merge()
    assert cleaned.plan.exit_code == EXIT_OK, cleaned.plan.log
    calls = team.site.control("calls")["methods"]
    assert "workspace_delete" not in calls and "workspace_add" not in calls
    assert team.site.workspaces()["Legal"]["id"] == legal  # the files are still there
    assert "Counsel" not in team.site.workspaces()


def _with_users(**policy: Any) -> dict[str, Any]:
    """The example, with two users it declares (and so creates) and may retire."""
    users = [
        {"username": "nina", "email": "nina@acme.example", "first_name": "Nina", "last_name": "N"},
        {"username": "omar", "email": "omar@acme.example", "first_name": "Omar", "last_name": "O"},
    ]
    retiring = {"prune_users": True, "max_user_removal_fraction": 0.5, **policy}
    return {**EXAMPLE, "users": users, "policy": {**EXAMPLE["policy"], **retiring}}


def _team_with_users(make_team: TeamFactory, forge: str) -> tuple[Team, str]:
    """A team whose manifest has created nina and omar, and may retire them; and the
    manifest without nina."""
    manifest = _with_users()
    team = make_team(forge, manifest=yaml.safe_dump(manifest, sort_keys=False))
    _lands(team)
    assert {"nina", "omar"} <= _site_usernames(team)
    return team, _with(manifest, users=manifest["users"][1:])


def _site_usernames(team: Team) -> set[str]:
    return {user["username"] for user in team.site.state()["users"]}


@one("gitlab")
def test_offboarding_a_user_by_the_manifest_deletes_the_account_and_drift_is_clean(
    make_team: TeamFactory, forge: str
) -> None:
    team, without_nina = _team_with_users(make_team, forge)
    team.manifest.write_text(without_nina, encoding="utf-8")
    review = team.pull_request(4)
    assert review.exit_code == EXIT_OK, review.log
    assert "nina" in team.forge_api.comments[4][0]["body"]
    gone = team.merge()
    assert gone.applied and gone.apply.exit_code == EXIT_OK, gone.apply.log
    assert "nina" not in _site_usernames(team) and "omar" in _site_usernames(team)
    _in_sync(team)


@one("github")
def test_a_user_deleted_by_hand_then_removed_from_the_manifest_converges_without_forget(
    make_team: TeamFactory, forge: str
) -> None:
    team, without_nina = _team_with_users(make_team, forge)
    nina = next(u["id"] for u in team.site.state()["users"] if u["username"] == "nina")
    team.site.api(lambda client: client.user_delete(nina))  # offboarded in the web app
    team.manifest.write_text(without_nina, encoding="utf-8")
    _lands(team)  # the record of a user who is gone is a change, which apply saves
    _in_sync(team)
    _in_sync(team)  # and stays so, night after night


@BOTH
def test_a_missing_records_secret_fails_every_job_naming_it_and_creates_nothing(
    make_team: TeamFactory, forge: str
) -> None:
    team = make_team(forge)
    team.unset("RECONCILER_STATE")  # the secret was never set in the CI's settings
    review = team.pull_request(5)
    assert review.exit_code == EXIT_ERROR, review.log
    assert "RECONCILER_STATE" in review.log
    merged = team.merge()
    assert merged.plan.exit_code == EXIT_ERROR and "RECONCILER_STATE" in merged.plan.log
    assert not merged.applied
    onboard = team.operate("onboard")
    assert onboard.exit_code == EXIT_ERROR and "RECONCILER_STATE" in onboard.log
    assert set(team.site.workspaces()) == {"Legacy Scans"}  # nothing created
    assert not list(team.root.glob("run-*/runners/*/work/**/.reconciler"))


@one("gitlab")
def test_a_missing_plan_key_fails_the_merged_plan_naming_it(
    make_team: TeamFactory, forge: str
) -> None:
    team = make_team(forge)
    team.unset("RECONCILER_PLAN_KEY")
    merged = team.merge()
    assert merged.plan.exit_code == EXIT_ERROR, merged.plan.log
    assert "RECONCILER_PLAN_KEY" in merged.plan.log
    assert not merged.applied
    review = team.pull_request(6)  # a plan for review needs no key
    assert review.exit_code == EXIT_OK, review.log
    assert set(team.site.workspaces()) == {"Legacy Scans"}
