"""One identity per kind of name (issue 32, item 1), property-based.

Hypothesis writes the names of workspaces, groups and users in other spellings -- another
case, fullwidth letters, ``SS`` for ``ß``, the Turkish dotted and dotless i, an ideographic
space -- and drives each spelling through every path that compares names: validation, the
records' look-ups, ``previously`` and its guard, ``--target``/``--exclude``, ``--replace``,
``protect``/``protect_users``, ``state mv``/``state forget``, the digests of drift news, user
references, the diff and the sandbox's own ``workspace_add``. Every spelling finds the same
object; a plan and an apply through the real engine against the sandbox delete and create
nothing. Usernames are ASCII on the site (``user_add``), so their spellings differ in case.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconciler.api.answers import WorkspaceSettings
from reconciler.api.errors import SiteError
from reconciler.core.guards import protecting
from reconciler.core.planning import PlanOptions
from reconciler.core.records import RecordedGroup, RecordedUser, RecordedWorkspace, Records
from reconciler.core.users import UserDirectory
from reconciler.engine import workflow
from reconciler.engine.drift import DriftItem
from reconciler.engine.drift_news import item_key
from reconciler.engine.planning.plan import Plan
from reconciler.engine.planning.renames import rename_guards
from reconciler.engine.planning.safety import RunCheck
from reconciler.engine.read.targets import Selection
from reconciler.engine.records import ledger
from reconciler.identity import NameSet, NameTable, name_key, name_matches, same_name
from reconciler.kinds.user.actions import UserDelete
from reconciler.kinds.workspace.actions import WorkspaceDelete
from reconciler.manifest import load_manifest
from reconciler.model import LiveUser, Source, UserRef
from reconciler.state.backend import Holder
from reconciler.state.directory import DirectoryRecords
from tests.support.engine_site import EngineSite, engine_site
from tests.support.models import desired_site
from tests.support.sandbox_site import example_seed
from tests.support.site_strategies import load_desired

WORKSPACE_NAMES = ("Legal", "Straße", "Diyarbak\u0131r Office", "Team A", "Finance 2024")
GROUP_NAMES = ("auditors", "Straße-crew", "izmir-ops", "Finance-Team")
USERNAMES = ("nina.k", "Quinn.Z", "ops-bot", "erin_2")
HERE = Source("site.yaml")
SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _forms(char: str, *, wide: bool) -> list[str]:
    """The ways a person or a keyboard may write ``char`` that the site takes for it."""
    forms = [char, char.upper(), char.lower()]
    if wide and char.isascii() and (char.isalnum() or char in "-_."):
        forms.append(chr(ord(char) + 0xFEE0))  # fullwidth
    if wide and char in "iI":
        forms += ["\u0130", "\u0131"]  # Turkish dotted capital I, dotless small i
    if wide and char == " ":
        forms.append("\u3000")  # ideographic space
    return forms


def spelling(name: str, *, wide: bool = True) -> st.SearchStrategy[str]:
    """Another spelling of ``name``: each character in one of its forms."""
    return st.tuples(*(st.sampled_from(_forms(c, wide=wide)) for c in name)).map("".join)


@st.composite
def named(draw: st.DrawFn) -> tuple[str, str, str]:
    """(kind, name, another spelling of it)."""
    kind = draw(st.sampled_from(["workspace", "group", "user"]))
    pool = {"workspace": WORKSPACE_NAMES, "group": GROUP_NAMES, "user": USERNAMES}[kind]
    name = draw(st.sampled_from(pool))
    return kind, name, draw(spelling(name, wide=kind != "user"))


# --- the identity and everything that compares names -------------------------------------


@SETTINGS
@given(named(), st.integers(1, 4), st.data())
def test_every_spelling_names_the_same_object(
    case: tuple[str, str, str], cut: int, data: st.DataObject
) -> None:
    kind, name, other = case
    assert same_name(kind, name, other) and name_key(kind, other) == name_key(kind, name)
    assert NameTable(kind, {name: 7}).find(other) == (name, 7)  # the records' look-ups
    assert other in NameSet(kind, [name])
    assert not same_name(kind, name, name + "x")  # the identity still tells names apart

    glob = data.draw(spelling(name[:cut], wide=kind != "user")) + "*"
    for pattern in (other, glob, f"{kind}:{other}"):  # --target / --exclude
        assert Selection((pattern,)).holds(kind, name), pattern
        assert not Selection((), (pattern,)).holds(kind, name), pattern
    for pattern in (other, glob):  # protect / protect_users
        assert name_matches(kind, name, pattern)
        assert protecting(kind, [pattern], name) == pattern

    item = DriftItem(kind, name, "left the manifest; still on the site", action="delete")
    spelt = dataclasses.replace(item, name=other)
    assert item_key("extra", spelt) == item_key("extra", item)  # drift news

    guards = rename_guards([(kind, "Renamed", (other,))], {(kind, name)}, {(kind, "Renamed")})
    assert len(guards) == 1 and f'{kind} "{name}" would be deleted' in guards[0]


@SETTINGS
@given(st.sampled_from(WORKSPACE_NAMES).flatmap(lambda n: st.tuples(st.just(n), spelling(n))))
def test_replace_and_protect_name_a_workspace_in_any_spelling(case: tuple[str, str]) -> None:
    """The check made as a deletion runs: ``--replace`` and ``protect`` written otherwise."""
    name, other = case
    records = Records("https://x.example", {name: RecordedWorkspace(5, managed=True)})
    replace = WorkspaceDelete(workspace_id=5, name=name, reason="replace")
    prune = WorkspaceDelete(workspace_id=5, name=name, reason="prune")
    desired = desired_site({"policy": {"prune": True}})
    assert (
        RunCheck(desired, PlanOptions(replace=frozenset({other}))).refusal(replace, records) is None
    )
    assert RunCheck(desired, PlanOptions()).refusal(replace, records) is not None
    assert RunCheck(desired, PlanOptions()).refusal(prune, records) is None
    protected = desired_site({"policy": {"prune": True, "protect": [other]}})
    refusal = RunCheck(protected, PlanOptions()).refusal(prune, records)
    assert refusal == f'it matches policy.protect "{other}"'
    declared = desired_site({"workspaces": [{"name": other}], "policy": {"prune": True}})
    assert "still declares" in (RunCheck(declared, PlanOptions()).refusal(prune, records) or "")


@SETTINGS
@given(st.sampled_from(USERNAMES).flatmap(lambda n: st.tuples(st.just(n), spelling(n, wide=False))))
def test_protect_users_and_references_name_a_user_in_any_spelling(case: tuple[str, str]) -> None:
    name, other = case
    records = Records("https://x.example", users={name: RecordedUser(1043)})
    delete = UserDelete(user_id=1043, username=name)
    site = [LiveUser(1, "admin", "admin@x.example", admin=True, active=True),
            LiveUser(1043, name, f"{name}@x.example", admin=False, active=True)]  # fmt: skip
    policy = {"prune_users": True}

    def refusal(**more: Any) -> str | None:
        desired = desired_site({"policy": {**policy, **more}})
        check = RunCheck(desired, PlanOptions(), caller_id=1).with_users(site)
        return check.refusal(delete, records)

    assert refusal() is None  # the deletion would run: protection is what stops it
    assert refusal(protect_users=[other]) == f'it matches policy.protect_users "{other}"'
    directory = UserDirectory.of(site)
    assert [u.id for u in directory.candidates(UserRef(other, HERE))] == [1043]
    assert [u.id for u in directory.candidates(UserRef(other.upper() + "@X.EXAMPLE", HERE))] == [
        1043
    ]


# --- validation ---------------------------------------------------------------------------


@SETTINGS
@given(case=named())
def test_validation_takes_every_spelling_for_the_same_name(
    case: tuple[str, str, str], tmp_path: Path
) -> None:
    kind, name, other = case
    path = tmp_path / "site.yaml"
    if kind == "user":
        users = [{"username": n, "email": f"{i}@x.example"} for i, n in enumerate((name, other))]
        twice, renamed = {"users": users}, {"users": [{**users[0], "previously": [other]}]}
    else:
        key = "workspaces" if kind == "workspace" else "groups"
        twice = {key: [{"name": name}, {"name": other}]}
        renamed = {key: [{"name": name}, {"name": "Renamed", "previously": [other]}]}
    for document, finding in ((twice, "already declared" if kind == "user" else "same name"),
                              (renamed, "still declares")):  # fmt: skip
        load_desired_or_findings = _findings({"version": 1, **document}, path)
        assert any(finding in f for f in load_desired_or_findings), load_desired_or_findings


def _findings(document: dict[str, Any], path: Path) -> list[str]:
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return [f.message for f in load_manifest([path]).findings if f.severity == "error"]


# --- state mv / state forget ----------------------------------------------------------------


@pytest.fixture(scope="module")
def workdirs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[], Path]]:
    base = tmp_path_factory.mktemp("identity")
    counter = itertools.count()
    yield lambda: base / f"example-{next(counter)}"


@settings(SETTINGS, max_examples=12)  # each example locks and saves records on disk
@given(case=named(), data=st.data())
def test_state_mv_and_forget_find_a_record_in_any_spelling(
    case: tuple[str, str, str], data: st.DataObject, workdirs: Callable[[], Path]
) -> None:
    kind, name, other = case
    record = {
        "workspace": RecordedWorkspace(5, managed=True),
        "group": RecordedGroup(5, managed=True),
        "user": RecordedUser(5),
    }[kind]
    holder = Holder.current("test")
    with DirectoryRecords(workdirs(), "https://x.example") as store:
        with ledger.locked(store, holder) as state:
            state.save(Records("https://x.example", **{f"{kind}s": {name: record}}), "test")
        workflow.move(store, holder, kind, other, "Renamed")  # type: ignore[arg-type]
        assert getattr(ledger.read(store).records, f"{kind}s") == {"Renamed": record}
        again = data.draw(spelling("Renamed", wide=kind != "user"))
        workflow.forget(store, holder, kind, again)  # type: ignore[arg-type]
        assert getattr(ledger.read(store).records, f"{kind}s") == {}


# --- through the engine, against the sandbox ------------------------------------------------


@st.composite
def renamings(draw: st.DrawFn) -> dict[str, Any]:
    """A workspace, a group and a new user, and the other spellings later runs write."""
    workspace = draw(st.sampled_from(WORKSPACE_NAMES))
    group = draw(st.sampled_from(GROUP_NAMES))
    user = draw(st.sampled_from(USERNAMES))

    def spelt() -> tuple[str, str, str]:
        return draw(spelling(workspace)), draw(spelling(group)), draw(spelling(user, wide=False))

    return {
        "names": (workspace, group, user),
        "respelt": spelt(),
        "previously": spelt(),
        "protect": (*spelt()[:2], draw(spelling(user, wide=False))),
        "refs": [draw(spelling(user, wide=False)) for _ in range(2)],
        "target": draw(spelling(workspace)),
    }


PRUNE = {"prune": True, "prune_users": True, "max_delete_fraction": 1.0}


def _document(
    workspace: str, group: str, user: str, refs: list[str], **extra: Any
) -> dict[str, Any]:
    person = {"username": user, "email": "nina@acme.example", "first_name": "N", "last_name": "K"}
    return {
        "version": 1,
        "workspaces": [{"name": workspace, "users": ["alice", refs[0]], **extra.get("on_ws", {})}],
        "groups": [{"name": group, "members": ["bob", refs[1]], **extra.get("on_group", {})}],
        "users": [{**person, **extra.get("on_user", {})}],
        "policy": {**PRUNE, **extra.get("policy", {})},
    }


def _writes(plan: Plan) -> list[str]:
    return [action.summary() for action in plan.actions]


def _destroys(plan: Plan) -> list[str]:
    return sorted(c.name for c in plan.changes if c.action in ("create", "delete", "replace"))


async def _run(case: dict[str, Any], directory: Path) -> None:
    (workspace, group, user), refs = case["names"], case["refs"]
    path = directory / "site.yaml"
    first = _document(workspace, group, user, [user, user])
    async with engine_site(example_seed(), directory / "records") as site:
        assert (await site.apply(load_desired(first, path))).complete
        before = _site_ids(site)

        # the manifest spells every name otherwise: the same objects, nothing to do
        respelt = _document(*case["respelt"], refs)
        assert _writes(await site.plan(load_desired(respelt, path))) == []
        assert (await site.apply(load_desired(respelt, path))).complete
        assert _site_ids(site) == before
        assert _recorded(site.records()) == dict(zip(KINDS, case["respelt"], strict=True))
        await _sandbox_agrees(site, workspace, case["respelt"][0])

        # --target / --exclude spelt otherwise
        joined = load_desired(
            _document(*case["respelt"], refs, on_ws={"users": [*refs, "carol"]}), path
        )
        target = case["target"]
        assert _writes(await site.plan(joined, PlanOptions(targets=(f"workspace:{target}",))))
        assert _writes(await site.plan(joined, PlanOptions(excludes=(target,)))) == []

        # protect / protect_users spelt otherwise: without them, all three would be deleted
        gone: dict[str, Any] = {"version": 1, "policy": PRUNE}
        assert _destroys(await site.plan(load_desired(gone, path))) == sorted(case["respelt"])
        ws_pattern, group_pattern, user_pattern = case["protect"]
        protect = {
            "protect": [ws_pattern, group_pattern[:3] + "*"],
            "protect_users": [user_pattern],
        }
        kept = await site.plan(load_desired({**gone, "policy": {**PRUNE, **protect}}, path))
        assert _destroys(kept) == []

        # a rename whose previously spells the old names otherwise: the records move
        old_ws, old_group, old_user = case["previously"]
        renamed = load_desired(_document(
            "Renamed ws", "renamed-group", "renamed.user", refs, on_ws={"previously": [old_ws]},
            on_group={"previously": [old_group]}, on_user={"previously": [old_user]},
        ), path)  # fmt: skip
        plan = await site.plan(renamed)
        assert _destroys(plan) == [] and _writes(plan) == []
        assert (await site.apply(renamed)).complete
        assert _site_ids(site) == before  # the site keeps every object, under its old name
        assert _recorded(site.records()) == dict(
            zip(KINDS, ("Renamed ws", "renamed-group", "renamed.user"), strict=True)
        )


KINDS = ("workspace", "group", "user")


def _site_ids(site: EngineSite) -> dict[str, set[int]]:
    dump = site.dump()
    return {kind: {item["id"] for item in dump[kind]} for kind in ("workspaces", "groups", "users")}


def _recorded(records: Records) -> dict[str, str]:
    """The one managed name of each kind the records hold."""
    found = {}
    for kind, table in (("workspace", records.workspaces), ("group", records.groups)):
        (found[kind],) = [name for name, record in table.items() if record.managed]
    (found["user"],) = list(records.users)
    return found


async def _sandbox_agrees(site: EngineSite, name: str, other: str) -> None:
    """The sandbox, like the site it stands for, takes the other spelling for a taken name."""
    with pytest.raises(SiteError, match="already exists"):
        await site.client.workspace_add([other], WorkspaceSettings())
    assert same_name("workspace", name, other)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(case=renamings())
def test_other_spellings_through_plan_and_apply_delete_and_create_nothing(
    case: dict[str, Any], workdirs: Callable[[], Path]
) -> None:
    directory = workdirs()
    directory.mkdir()
    asyncio.run(_run(case, directory))
