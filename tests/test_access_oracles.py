"""Two oracles that must agree: what a plan predicts of access, and what a report observes.

Issue 42, item 2. A plan's access section is read by reviewers as what the apply will do to
who can reach what; ``access --since`` is read by auditors as what was done. Each is computed
its own way -- the plan from its actions, the read and the records (``access/changes.py``),
the report from two reads of the site keyed by identity (``access/since.py``) -- so each holds
the other honest.

A stateful property test (hypothesis) drives the real command, in this process, against the
embedded sandbox: it changes the manifest (members join and leave, workspaces are declared,
dropped and replaced, users declared and dropped, some as administrators) and edits the site
by hand in between (members added and removed, workspaces deleted and made by hand, a
declared workspace's name taken by hand). After every manifest change it takes an access
report, saves a plan, applies exactly that plan, and takes a report ``--since`` the first:
the access the plan said each person gains or loses, pair for pair (user ID, workspace ID),
is what the report saw gained and lost. Both are the tool's own reads, so a third party judges
them: the sandbox's database itself, read before the plan and after the apply (members, and
administrators reaching every workspace). What it changed is what both said; the report after
the apply lists exactly the access the database holds.

The fast tier runs a few examples; ``pytest -m soak tests/test_access_oracles.py`` many.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from reconciler.errors import EXIT_OK
from reconciler.sandbox.rows import NewWorkspace
from reconciler.sandbox.store import Store
from reconciler.spec import workspace_path
from tests.support.cli_runner import CliOutcome, run_reconciler

WORKSPACES = ("Alpha", "Beta", "Gamma")
PEOPLE = {"alice": 1001, "bob": 1002, "carol": 1003, "dave": 1004, "erin": 1005}
NEW_PEOPLE = ("nina", "omar")
POLICY = {
    "prune": True,
    "prune_users": True,
    "max_deletes": 100,
    "max_delete_fraction": 1.0,
    "max_user_removal_fraction": 1.0,
}

Pair = tuple[str, int, int]  # (gains | loses, user ID, workspace ID)


class AccessOracles(RuleBasedStateMachine):
    """The manifest as this machine wants it, and the site it edits by hand."""

    def __init__(self) -> None:
        super().__init__()
        self.directory = Path(tempfile.mkdtemp(prefix="oracles-"))
        self.workspaces: dict[str, dict[str, Any]] = {}
        self.users: dict[str, bool] = {}  # declared new users -> administrator
        self.replace: set[str] = set()
        self.hand_made = 0
        self.compared = 0

    def teardown(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)

    # --- the steps ------------------------------------------------------------------------

    @initialize(data=st.data())
    def a_site_under_management(self, data: st.DataObject) -> None:
        """Every workspace declared with some people, the new users declared (some as
        administrators), applied: each step then starts from a site worth changing."""
        for name in WORKSPACES:
            members = data.draw(st.sets(st.sampled_from(sorted(PEOPLE)), max_size=3))
            self.workspaces[name] = {"users": set(members), "root_access": False}
        for name in NEW_PEOPLE:
            self.users[name] = data.draw(st.booleans())
            self.workspaces[data.draw(st.sampled_from(WORKSPACES))]["users"].add(name)
        self.apply_and_compare()

    @rule(data=st.data())
    def step(self, data: st.DataObject) -> None:
        """A few hand edits on the site, a few changes to the manifest, one plan applied."""
        for _ in range(data.draw(st.integers(0, 2))):
            data.draw(st.sampled_from(HAND_EDITS))(self, data)
        for _ in range(data.draw(st.integers(1, 3))):
            data.draw(st.sampled_from(MANIFEST_EDITS))(self, data)
        self.apply_and_compare()

    # --- changes to the manifest ---------------------------------------------------------

    def people(self) -> list[str]:
        return [*PEOPLE, *self.users]

    def declare_workspace(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(WORKSPACES))
        self.workspaces.setdefault(name, {"users": set(), "root_access": False})
        self.workspaces[name]["users"] |= data.draw(st.sets(st.sampled_from(self.people())))

    def join_or_leave(self, data: st.DataObject) -> None:
        if self.workspaces:
            name = data.draw(st.sampled_from(sorted(self.workspaces)))
            self.workspaces[name]["users"] ^= {data.draw(st.sampled_from(self.people()))}

    def drop_workspace(self, data: st.DataObject) -> None:
        if self.workspaces:
            del self.workspaces[data.draw(st.sampled_from(sorted(self.workspaces)))]

    def replace_workspace(self, data: st.DataObject) -> None:
        """``root_access`` switched: only a replacement (``--replace``) can change it."""
        if self.workspaces:
            name = data.draw(st.sampled_from(sorted(self.workspaces)))
            self.workspaces[name]["root_access"] = not self.workspaces[name]["root_access"]
            self.replace.add(name)

    def declare_user(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(NEW_PEOPLE))
        self.users.setdefault(name, data.draw(st.booleans()))
        if self.workspaces and data.draw(st.booleans()):
            self.workspaces[data.draw(st.sampled_from(sorted(self.workspaces)))]["users"].add(name)

    def drop_user(self, data: st.DataObject) -> None:
        if self.users:
            name = data.draw(st.sampled_from(sorted(self.users)))
            del self.users[name]
            for ws in self.workspaces.values():
                ws["users"].discard(name)

    # --- edits on the site, by hand ------------------------------------------------------

    def hand_join_or_leave(self, data: st.DataObject) -> None:
        """Someone joins or leaves a workspace in the web app: one of the seed's people, or
        a user the tool created (whose deletion must then say what they lose there)."""
        with self.store() as store:
            ids = [ws.id for ws in store.workspaces()]
            created = [u.id for u in store.users() if u.username in NEW_PEOPLE]
            if not ids:
                return
            person = data.draw(st.sampled_from(sorted(PEOPLE.values()) + created))
            workspace = data.draw(st.sampled_from(ids))
            if person in store.workspace_member_ids().get(workspace, []):
                store.leave_workspaces(person, [workspace], 0)
            else:
                store.join_workspaces(person, [workspace], 0)

    def hand_grant_outside_the_manifest(self, data: st.DataObject) -> None:
        """A user the tool created is given, by hand, a workspace the manifest does not
        declare (the seed's Legacy Scans, one made by hand): no membership change of the
        tool's own touches it, so only the user's deletion can say it is lost."""
        declared = {name.casefold() for name in self.workspaces}
        with self.store() as store:
            created = [u.id for u in store.users() if u.username in NEW_PEOPLE]
            elsewhere = [ws.id for ws in store.workspaces() if ws.name.casefold() not in declared]
            if created and elsewhere:
                person = data.draw(st.sampled_from(created))
                store.join_workspaces(person, [data.draw(st.sampled_from(elsewhere))], 0)

    def hand_delete_workspace(self, data: st.DataObject) -> None:
        with self.store() as store:
            ids = [ws.id for ws in store.workspaces()]
            if ids:
                store.delete_workspace(data.draw(st.sampled_from(ids)))

    def hand_make_workspace(self, data: st.DataObject) -> None:
        """A workspace made in the web app: under a new name, or a declared one's name the
        manifest has not created yet (which the next plan then takes for the declared one)."""
        self.hand_made += 1
        name = data.draw(st.sampled_from([*WORKSPACES, f"Hand {self.hand_made}"]))
        members = data.draw(st.sets(st.sampled_from(sorted(PEOPLE.values())), max_size=2))
        with self.store() as store:
            if any(ws.name.casefold() == name.casefold() for ws in store.workspaces()):
                return
            store.add_workspaces(
                [
                    NewWorkspace(
                        None, name, workspace_path(name), True, False, False,
                        frozenset(), frozenset(), tuple(sorted(members)),
                    )
                ],
                0,
            )  # fmt: skip

    # --- the two oracles -----------------------------------------------------------------

    def apply_and_compare(self) -> None:
        self.write_manifest()
        report = self.run("access", "--format", "json", "-o", "before.json")
        assert report.exit_code == EXIT_OK, report.output
        truth_before = self.access_on_the_site()
        replace = [option for name in sorted(self.replace) for option in ("--replace", name)]
        planned = self.run("plan", "--format", "json", "-o", "plan.json", "--force", *replace)
        assert planned.exit_code == EXIT_OK, planned.output
        predicted = json.loads(planned.stdout)["access"]
        applied = run_reconciler(
            "apply", "plan.json", "site.yaml", "--sandbox", "--auto-approve", "--force",
            cwd=self.directory,
        )  # fmt: skip
        assert applied.exit_code == EXIT_OK, applied.output
        self.replace.clear()
        since = self.run("access", "--format", "json", "--since", "before.json")
        assert since.exit_code == EXIT_OK, since.output
        before = json.loads((self.directory / "before.json").read_text(encoding="utf-8"))
        after = json.loads(since.stdout)
        expected = _predicted_pairs(predicted, before, after)
        seen = _observed_pairs(after["since"])
        assert expected == seen, _explain(expected, seen, predicted, after["since"])
        truth_after = self.access_on_the_site()
        happened = {("gains", *pair) for pair in truth_after - truth_before}
        happened |= {("loses", *pair) for pair in truth_before - truth_after}
        assert seen == happened, _explain(happened, seen, predicted, after["since"])
        reported = {(entry["user_id"], entry["workspace_id"]) for entry in after["entries"]}
        assert reported == truth_after, (reported ^ truth_after, after["entries"])
        self.compared += 1

    def access_on_the_site(self) -> set[tuple[int, int]]:
        """(user ID, workspace ID) of every access the site's database holds: each member,
        and each administrator in every workspace -- not read through the tool."""
        with self.store() as store:
            workspaces = [ws.id for ws in store.workspaces()]
            members = store.workspace_member_ids()
            admins = [user.id for user in store.users() if user.admin]
        pairs = {(user, ws) for ws, users in members.items() for user in users}
        return pairs | {(admin, ws) for admin in admins for ws in workspaces}

    def write_manifest(self) -> None:
        document = {
            "version": 1,
            "workspaces": [
                {"name": name, "root_access": ws["root_access"], "users": sorted(ws["users"])}
                for name, ws in sorted(self.workspaces.items())
            ],
            "users": [
                {
                    "username": name,
                    "email": f"{name}@acme.example",
                    "first_name": name.title(),
                    "last_name": "New",
                    "admin": admin,
                }
                for name, admin in sorted(self.users.items())
            ],
            "policy": POLICY,
        }
        text = yaml.safe_dump(document, sort_keys=False)
        (self.directory / "site.yaml").write_text(text, encoding="utf-8")

    def run(self, command: str, *args: str) -> CliOutcome:
        return run_reconciler(command, "site.yaml", "--sandbox", *args, cwd=self.directory)

    def store(self) -> _OpenStore:
        if not (self.directory / "site.yaml").exists():
            self.write_manifest()
            assert self.run("plan").exit_code == EXIT_OK  # the embedded sandbox, seeded
        return _OpenStore(self.directory / ".reconciler" / "sandbox" / "site.db")


MANIFEST_EDITS = (
    AccessOracles.declare_workspace,
    AccessOracles.join_or_leave,
    AccessOracles.join_or_leave,
    AccessOracles.drop_workspace,
    AccessOracles.replace_workspace,
    AccessOracles.declare_user,
    AccessOracles.drop_user,
)
HAND_EDITS = (
    AccessOracles.hand_join_or_leave,
    AccessOracles.hand_grant_outside_the_manifest,
    AccessOracles.hand_delete_workspace,
    AccessOracles.hand_make_workspace,
)


class _OpenStore:
    """The embedded sandbox's database, opened for one hand edit."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> Store:
        self.opened = Store(str(self.path))
        return self.opened

    def __exit__(self, *exc: object) -> None:
        self.opened.close()


def _predicted_pairs(
    predicted: list[dict[str, Any]], before: dict[str, Any], after: dict[str, Any]
) -> set[Pair]:
    """The plan's ``access`` changes of access itself, each as (effect, user ID, workspace
    ID): a user or workspace the apply creates named by the ID it then has, and "every
    workspace" as each workspace there is (gained: after; lost: before)."""
    user_ids = {p["username"]: p["id"] for p in after["people"]}
    created = {w["name"]: w["id"] for w in after["workspaces"]}
    pairs: set[Pair] = set()
    for change in predicted:
        if change["what"] != "access":
            continue
        if change["workspace"] is None:
            report = after if change["effect"] == "gains" else before
            places = [w["id"] for w in report["workspaces"]]
        else:
            places = [change.get("workspace_id") or created[change["workspace"]]]
        user = change.get("user_id")
        if user is None and places:  # a new user: in the report once they reach a workspace
            user = user_ids[change["person"].removesuffix(" (new user)")]
        pairs |= {(change["effect"], user, place) for place in places}
    return pairs


def _observed_pairs(since: dict[str, Any]) -> set[Pair]:
    gained = {("gains", e["user_id"], e["workspace_id"]) for e in since["gained"]}
    return gained | {("loses", e["user_id"], e["workspace_id"]) for e in since["lost"]}


def _explain(
    expected: set[Pair], seen: set[Pair], predicted: list[dict[str, Any]], since: dict[str, Any]
) -> str:
    return (
        f"predicted only: {sorted(expected - seen)}\nobserved only: {sorted(seen - expected)}\n"
        f"the plan said: {json.dumps(predicted, indent=1)}\n"
        f"the report saw: {json.dumps({k: since[k] for k in ('gained', 'lost')}, indent=1)}"
    )


_SETTINGS = {
    "deadline": None,
    "derandomize": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.filter_too_much],
}

AccessOracles.TestCase.settings = settings(max_examples=25, stateful_step_count=6, **_SETTINGS)
test_a_plan_predicts_what_a_later_report_observes = AccessOracles.TestCase


class SoakedAccessOracles(AccessOracles):
    """The same machine, many more runs and longer ones (``pytest -m soak``)."""


SoakedAccessOracles.TestCase.settings = settings(
    max_examples=200, stateful_step_count=10, **{**_SETTINGS, "derandomize": False}
)
test_soak_a_plan_predicts_what_a_later_report_observes = pytest.mark.soak(
    SoakedAccessOracles.TestCase
)
