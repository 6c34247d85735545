"""Everything that stands between a plan and the destruction of what people need.

Two kinds of checks live here, and only here:

* **Guards** act on a plan as a whole (too many deletions, too many removed memberships, every
  object of a manifest file that is no longer there). They never block a dry run: ``plan``
  shows the whole plan and says why apply would refuse it; ``Plan.raise_if_unsafe`` refuses
  unless ``--force``.
* **The check at the moment it runs** (``RunCheck``): whatever a plan file says, a deletion
  runs only for an object the records say the tool manages (same ID, same name), that left the
  manifest with ``policy.prune`` on (or was named with ``--replace``), and that no protect
  pattern matches; a removal only from an object the manifest declares. A user deletion is
  judged by the site's user list read again just before it runs: never an ID the site now
  calls by another name, never below ``policy.min_admins`` active administrators, never a
  workspace or group that only a team's file declares unless the team may create
  (``ownership``; ``--force`` overrides the guards, never this).
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from reconciler.core.actions import Phase, WriteAction
from reconciler.core.guards import protecting, protecting_user
from reconciler.core.planning import PlanOptions
from reconciler.core.records import RecordedGroup, RecordedWorkspace, Records
from reconciler.engine.planning.manifest_snapshot import desired_from_data
from reconciler.engine.planning.plan import PlanContext
from reconciler.identity import NameSet, NameTable, name_key, same_name
from reconciler.model import DesiredSite, LiveUser, Policy
from reconciler.ownership.owners import creation_refusal

MIN_RECORDED_MEMBERSHIPS_FOR_REMOVAL_GUARD = 20


def same_file(a: str, b: str) -> bool:
    return os.path.normpath(a) == os.path.normpath(b)


def guard_problems(
    actions: Sequence[WriteAction],
    records: Records,
    policy: Policy,
    manifest_files: Sequence[str] = (),
    *,
    groups_listed: bool = True,
    assume_no_groups: bool = False,
    users: Sequence[LiveUser] = (),
    caller_id: int | None = None,
    declared: Collection[tuple[str, str]] | None = None,
) -> list[str]:
    """Plain sentences, one per guard the plan trips; empty when apply may go ahead.

    ``declared`` is what the whole manifest declares (``declared_objects``), so a vanished
    file is told from one whose objects moved; ``None`` (a plan file without its manifest)
    falls back to "the plan deletes every object of the file"."""
    problems = _delete_problems(actions, records, policy)
    problems += _user_deletion_problems(actions, records, policy, users, caller_id)
    problems += _vanished_file_problems(actions, records, manifest_files, declared)
    if not (groups_listed or records.groups or assume_no_groups):
        problems += _first_apply_problems(actions)
    recorded = records.recorded_memberships()
    removals = sum(action.removals() for action in actions)
    if recorded >= MIN_RECORDED_MEMBERSHIPS_FOR_REMOVAL_GUARD and removals > (
        policy.max_member_removal_fraction * recorded
    ):
        problems.append(
            f"it removes {removals} of the {recorded} recorded memberships "
            f"({removals / recorded:.0%}), more than policy.max_member_removal_fraction "
            f"({policy.max_member_removal_fraction:.0%}) allows"
        )
    return problems


def _delete_problems(actions: Sequence[WriteAction], records: Records, policy: Policy) -> list[str]:
    """Too many deletions: more than ``max_deletes`` (users count: an account is an object
    too), or (two or more) workspaces and groups over the fraction."""
    pruned = [d for a in actions if (d := a.deletion()) and d.reason == "prune"]
    problems = []
    if len(pruned) > policy.max_deletes:
        problems.append(
            f"it deletes {len(pruned)} objects, more than policy.max_deletes "
            f"({policy.max_deletes}) allows"
        )
    shared = [d for d in pruned if d.kind in ("workspace", "group")]
    managed = len(records.managed_workspaces()) + len(records.managed_groups())
    if len(shared) >= 2 and managed and len(shared) > policy.max_delete_fraction * managed:
        problems.append(
            f"it deletes {len(shared)} of the {managed} managed workspaces and groups "
            f"({len(shared) / managed:.0%}), more than policy.max_delete_fraction "
            f"({policy.max_delete_fraction:.0%}) allows"
        )
    return problems


def _user_deletion_problems(
    actions: Sequence[WriteAction],
    records: Records,
    policy: Policy,
    users: Sequence[LiveUser],
    caller_id: int | None,
) -> list[str]:
    """Never the caller, never below ``min_admins``, never too many at once."""
    deleted = {d.id: d.name for a in actions if (d := a.deletion()) and d.kind == "user"}
    if not deleted:
        return []
    problems = []
    if caller_id is None:
        problems.append(
            "it deletes users, and the site did not say which user the API key belongs to, so "
            "the tool cannot make sure it is not deleting the user it runs as"
        )
    elif caller_id in deleted:
        problems.append(
            f'it deletes user "{deleted[caller_id]}", whose API key this tool runs with '
            "(never done, not even with --force)"
        )
    maybe_admins = [u for u in users if u.id in deleted and u.admin is not False]
    remaining = len(active_admins(users) - deleted.keys())
    if maybe_admins and remaining < policy.min_admins:
        names = ", ".join(f'"{u.username}"' for u in maybe_admins)
        problems.append(
            f"it deletes the administrator(s) {names}, which would leave {remaining} "
            f"active administrator(s), fewer than policy.min_admins ({policy.min_admins}), "
            "which --force never overrides"
        )
    managed = sum(1 for u in records.users.values() if u.managed)
    if len(deleted) >= 2 and managed and len(deleted) > policy.max_user_removal_fraction * managed:
        problems.append(
            f"it deletes {len(deleted)} of the {managed} users the tool manages "
            f"({len(deleted) / managed:.0%}), more than policy.max_user_removal_fraction "
            f"({policy.max_user_removal_fraction:.0%}) allows"
        )
    return problems


def active_admins(users: Iterable[LiveUser]) -> set[int]:
    """IDs of the administrators who can log in: a deactivated administrator, or one the
    site did not say is active or an administrator, keeps no site running."""
    return {u.id for u in users if u.admin is True and u.active is True}


def _first_apply_problems(actions: Sequence[WriteAction]) -> list[str]:
    """No records, and a site that does not list groups: a declared group may exist already."""
    creates = [made for a in actions for made in a.creates() if made[0] == "group"]
    if not creates:
        return []
    return [
        "this site does not list user groups and the tool has no records of any, so the "
        f"{len(creates)} group(s) it would create may exist already; if this is the first "
        "apply to this site, run it with --assume-no-groups (or run `reconciler adopt` first)"
    ]


def declared_objects(desired: DesiredSite) -> frozenset[tuple[str, str]]:
    """``(kind, name)`` of every object ``desired`` declares, each name by its identity
    (``reconciler.identity``), as the site compares names."""
    return frozenset(
        [_key("workspace", ws.name) for ws in desired.workspaces]
        + [_key("group", g.name) for g in desired.groups]
        + [_key("user", u.username) for u in desired.users]
    )


def manifest_objects(context: PlanContext) -> frozenset[tuple[str, str]] | None:
    """What the plan's whole manifest declares (a scoped plan's too), or ``None`` when the
    plan carries no copy of it."""
    if context.desired_site is not None:
        return declared_objects(context.desired_site)
    if context.desired is None:
        return None
    return declared_objects(desired_from_data(context.desired))


def vanished_files(
    actions: Sequence[WriteAction],
    records: Records,
    manifest_files: Sequence[str],
    declared: Collection[tuple[str, str]] | None = None,
) -> dict[str, list[str]]:
    """Manifest files no longer given whose recorded objects this plan deletes, none of them
    declared anywhere else.

    A file that vanished (a broken link, a rename, a bad merge) looks exactly like a file
    whose objects were all removed on purpose; only a person can tell which. The objects a
    policy keeps (``prune_users`` off, a protect pattern, a user renamed on the site) do not
    hide the others: a file declaring workspaces and users whose users are kept still deletes
    its workspaces. Without ``declared``, a file counts only when every object is deleted.
    """
    if not manifest_files:
        return {}
    deleted = {_key(d.kind, d.name) for a in actions if (d := a.deletion()) and d.reason == "prune"}
    by_file: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for name, ws in records.managed_workspaces().items():
        if ws.source:
            by_file[ws.source].append(("workspace", name))
    for name, group in records.managed_groups().items():
        if group.source:
            by_file[group.source].append(("group", name))
    for name, user in records.users.items():
        if user.managed and user.source:
            by_file[user.source].append(("user", name))
    still = None if declared is None else {_key(kind, name) for kind, name in declared}
    gone = {}
    for file, objects in sorted(by_file.items()):
        if any(same_file(file, given) for given in manifest_files):
            continue
        keys = [_key(kind, name) for kind, name in objects]
        if still is None:
            vanished = all(obj in deleted for obj in keys)
        else:
            vanished = any(obj in deleted for obj in keys) and not any(k in still for k in keys)
        if vanished:
            gone[file] = [
                f'{kind} "{name}"' for kind, name in objects if _key(kind, name) in deleted
            ]
    return gone


def _key(kind: str, name: str) -> tuple[str, str]:
    """An object as the site tells objects apart: by the identity of its name."""
    return (kind, name_key(kind, name))


def _vanished_file_problems(
    actions: Sequence[WriteAction],
    records: Records,
    manifest_files: Sequence[str],
    declared: Collection[tuple[str, str]] | None,
) -> list[str]:
    return [
        f"it deletes every object declared in {file} that the policy lets it delete, and that "
        f"file is no longer part of the manifest ({', '.join(objects)})"
        for file, objects in vanished_files(actions, records, manifest_files, declared).items()
    ]


@dataclass(frozen=True, slots=True)
class RunCheck:
    """Checks each destructive action again at the moment it runs (see the module doc).

    ``users`` is the site's user list read just before the user deletions run (the executor
    reads it again then); a user deletion is judged by what that list says the ID is called
    *now*, never by the name a plan or the records remember. ``deleting`` remembers the users
    this apply has already let go, so ``policy.min_admins`` holds across them.
    """

    desired: DesiredSite
    options: PlanOptions
    caller_id: int | None = None
    users: Mapping[int, LiveUser] | None = None  # None: not read yet (no user deletion runs)
    deleting: set[int] = field(default_factory=set)

    def with_users(self, users: Iterable[LiveUser]) -> RunCheck:
        """The same check judging user deletions by a fresh read of the site's users."""
        return replace(self, users={user.id: user for user in users}, deleting=set())

    def refusal(self, action: WriteAction, records: Records) -> str | None:
        """Why ``action`` must not run now, or ``None`` when it may."""
        if action.phase in (Phase.CREATE_WORKSPACES, Phase.CREATE_GROUPS):
            for kind, name in action.touches():
                refusal = creation_refusal(kind, name, self.desired)
                if refusal is not None:
                    return refusal
        deletion = action.deletion()
        if deletion is not None:
            return self._deletion_refusal(action, records)
        if action.removals():
            declared = self._declared()
            for kind, name in action.touches():
                if _key(kind, name) not in declared:
                    return f'{kind} "{name}" is not declared in the manifest'
        return None

    def _declared(self) -> set[tuple[str, str]]:
        return {_key("workspace", ws.name) for ws in self.desired.workspaces} | {
            _key("group", g.name) for g in self.desired.groups
        }

    def _deletion_refusal(self, action: WriteAction, records: Records) -> str | None:
        deletion = action.deletion()
        assert deletion is not None
        policy = self.desired.policy
        if deletion.kind == "user":
            refusal = self._user_deletion_refusal(deletion.name, deletion.id, records)
            if refusal is None:
                self.deleting.add(deletion.id)
            return refusal
        if deletion.kind in ("workspace", "group"):
            pattern = protecting(deletion.kind, policy.protect, deletion.name)
            if pattern is not None:
                return f'it matches policy.protect "{pattern}"'
            if deletion.reason == "replace":
                if deletion.name not in NameSet("workspace", self.options.replace):
                    return f'"{deletion.name}" was not named with --replace'
                return None
            if not policy.prune:
                return "policy.prune is false"
            if _key(deletion.kind, deletion.name) in self._declared():
                return f'the manifest still declares {deletion.kind} "{deletion.name}"'
            table: Mapping[str, RecordedWorkspace | RecordedGroup] = (
                records.workspaces if deletion.kind == "workspace" else records.groups
            )
            record = NameTable(deletion.kind, table).get(deletion.name)
            if record is None or not record.managed or record.id != deletion.id:
                return (
                    f'the records do not say the tool manages {deletion.kind} "{deletion.name}" '
                    f"(ID {deletion.id})"
                )
        return None

    def _user_deletion_refusal(self, username: str, user_id: int, records: Records) -> str | None:
        policy = self.desired.policy
        if not policy.prune_users:
            return "policy.prune_users is false"
        if self.users is None:
            return "the site's users were not read just before the deletion"
        live = self.users.get(user_id)
        if live is None:
            return f"user #{user_id} is no longer on the site"
        names = (username, live.username)
        pattern = protecting_user(policy.protect_users, username, live)
        if pattern is not None:
            return f'it matches policy.protect_users "{pattern}"'
        if not same_name("user", live.username, username):
            return (
                f'user #{user_id} is now called "{live.username}" on the site (renamed on the '
                f'site); it is never deleted under its old name "{username}"'
            )
        if user_id == self.caller_id or self.caller_id is None:
            return "the tool cannot delete the user whose API key it runs with"
        declared = NameSet("user", (user.username for user in self.desired.users))
        if any(name in declared for name in names):
            return f'the manifest still declares user "{username}"'
        record = NameTable("user", records.users).get(username)
        if record is None or not record.managed or record.id != user_id:
            return f'the records do not say the tool manages user "{username}" (ID {user_id})'
        if live.admin is not False:
            left = len(active_admins(self.users.values()) - self.deleting - {user_id})
            if left < policy.min_admins:
                return (
                    f"it would leave {left} active administrator(s), fewer than "
                    f"policy.min_admins ({policy.min_admins}), which --force never overrides"
                )
        return None
