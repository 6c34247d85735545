"""Who gains and who loses access with a plan: each write's own access effect, joined.

Each write kind says what it does to access (``WriteAction.access_effects``; a workspace's
writes in ``kinds/workspace/access.py``, a user's in ``kinds/user/actions.py``; a group's
give no access: the API gives user groups none to workspaces). They are judged against the
plan as a whole (its other writes, its changes: a replacement's settings before and after),
the live read (who is a member now, who is an administrator, which workspaces a user the plan
deletes belongs to) and the records (the members of a workspace the read did not list): the
``PlanView`` here. An administrator reaches every workspace, so a membership added or
removed for one changes nothing and is not listed; a workspace created or deleted is gained
or lost by every administrator too.

Each change names the workspace and the person by the identities an access report keys them
by (``access/since.py``): the workspace's ID where it exists before the apply, the user's ID
where the user exists. ``tests/test_access_oracles.py`` holds what a plan predicts to what a
report observes after its apply.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal, TypeVar

from reconciler.access.identity import person_key, workspace_key
from reconciler.access.model import AccessChange, Cause, Effect
from reconciler.core.actions import AfterApply, UserKey, WriteAction
from reconciler.core.changes import Change, site_spelling
from reconciler.core.expiry import NO_EXPIRIES, Expiries
from reconciler.core.records import RecordedWorkspace, Records
from reconciler.core.users import UserDirectory
from reconciler.model import LiveSite, LiveWorkspace

T = TypeVar("T")

EFFECT_ORDER = {"loses": 0, "gains": 1, "changes": 2}


@dataclass(frozen=True, slots=True)
class PlanView:
    """The ``AccessView`` of one plan (``core/actions.py``). Its lookups by ID are indexed
    once a plan (``of``), never searched for each write: a plan of 10,000 writes on a site of
    10,000 workspaces would otherwise take 100 million steps."""

    actions: Sequence[WriteAction]
    changes: Sequence[Change]
    live: LiveSite
    directory: UserDirectory
    records: Records
    new_admins: frozenset[str]  # usernames this plan creates as administrators
    deleted: frozenset[int]  # users this plan deletes: they gain nothing
    workspaces: Mapping[int, LiveWorkspace] = field(default_factory=dict)  # by ID, as read
    recorded: Mapping[int, RecordedWorkspace] = field(default_factory=dict)  # by ID
    admin_ids: tuple[int, ...] = ()  # the site's administrators who stay so, sorted
    expiries: Expiries = NO_EXPIRIES  # the entries that expired: a removal they explain
    _memos: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        actions: Sequence[WriteAction],
        changes: Sequence[Change],
        live: LiveSite,
        directory: UserDirectory,
        records: Records,
        expiries: Expiries = NO_EXPIRIES,
    ) -> PlanView:
        deleted = frozenset(user for action in actions for user in action.users_removed())
        recorded: dict[int, RecordedWorkspace] = {}
        for record in records.workspaces.values():
            recorded.setdefault(record.id, record)  # the first of an ID, as a search finds it
        workspaces: dict[int, LiveWorkspace] = {}
        for workspace in live.workspaces:
            workspaces.setdefault(workspace.id, workspace)
        return cls(
            actions,
            changes,
            live,
            directory,
            records,
            frozenset(name for action in actions for name in action.administrators_made()),
            deleted,
            workspaces,
            recorded,
            tuple(sorted(u.id for u in live.users if u.admin and u.id not in deleted)),
            expiries,
        )

    def memo(self, key: str, build: Callable[[], T]) -> T:
        """``build()``, made once for the whole plan under ``key``: what a write looks up in
        the plan's other writes (``WorkspaceCreate``'s replacements) is indexed once."""
        if key not in self._memos:
            self._memos[key] = build()
        made: T = self._memos[key]
        return made

    def admin(self, user: UserKey) -> bool:
        if isinstance(user, AfterApply):
            return user.username in self.new_admins
        found = self.directory.by_id.get(user)
        return bool(found and found.admin)

    def admins(self) -> list[int]:
        return list(self.admin_ids)

    def members(self, workspace_id: int) -> list[int]:
        ws = self.workspaces.get(workspace_id)
        if ws is not None and ws.users is not None:
            return sorted(ws.users)
        recorded = self.recorded.get(workspace_id)
        return sorted(recorded.members) if recorded is not None else []

    def memberships(self, user_id: int) -> tuple[frozenset[int], bool]:
        listed = self.live.memberships.get(user_id)
        if listed is not None:
            return listed, True
        return self.memo("workspaces by member", self._workspaces_by_member).get(
            user_id, frozenset()
        ), False

    def _workspaces_by_member(self) -> dict[int, frozenset[int]]:
        found: dict[int, set[int]] = {}
        for ws in self.live.workspaces:
            for user in ws.users or ():
                found.setdefault(user, set()).add(ws.id)
        return {user: frozenset(ids) for user, ids in found.items()}

    def workspace_name(self, workspace_id: int) -> str | None:
        ws = self.workspaces.get(workspace_id)
        return None if ws is None else ws.name

    def change(
        self,
        user: UserKey,
        name: str | None,
        workspace_id: int | None,
        effect: Effect,
        cause: Cause,
        *,
        what: str = "access",
        via: Literal["member", "administrator"] = "member",
        detail: str | None = None,
    ) -> AccessChange:
        on_site = self.workspace_name(workspace_id) if workspace_id is not None else None
        expires = self._expired(user, name, cause)
        if expires is not None:
            cause = "expired"
        return AccessChange(
            self.directory.label(user),
            name,
            effect,
            what,
            via,
            cause,
            detail,
            workspace_id=workspace_id,
            user_id=None if isinstance(user, AfterApply) else user,
            site_name=site_spelling(name, on_site) if on_site is not None and name else None,
            expires=expires,
        )

    def _expired(self, user: UserKey, name: str | None, cause: Cause) -> date | None:
        """The day the manifest's entry behind a removal expired: a member who leaves, a
        declared account deleted, because its ``expires:`` came (``core/expiry.py``)."""
        if cause == "member removed" and name is not None:
            return self.expiries.member("workspace", name, user)
        if cause == "user deleted":
            return self.expiries.account(user)
        return None


def plan_access(
    actions: Sequence[WriteAction],
    changes: Iterable[Change],
    live: LiveSite,
    directory: UserDirectory,
    records: Records,
    expiries: Expiries = NO_EXPIRIES,
) -> tuple[AccessChange, ...]:
    """Every access the plan gives or takes, once each, sorted by person, then workspace
    (a removal an expired entry explains says so: cause ``expired``)."""
    view = PlanView.of(actions, tuple(changes), live, directory, records, expiries)
    found: dict[tuple[Any, ...], AccessChange] = {}
    for action in actions:
        for change in action.access_effects(view):
            key = (change.person, change.workspace_id, change.workspace, change.effect, change.what)
            found.setdefault(key, change)
    return tuple(sorted(found.values(), key=_order))


def _order(change: AccessChange) -> tuple[Any, ...]:
    place = "" if change.workspace is None else workspace_key(change.workspace)
    return (person_key(change.person), place, EFFECT_ORDER[change.effect], change.what)
