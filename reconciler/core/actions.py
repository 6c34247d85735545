"""What every write of a plan is: one API call, typed, and everything the engine does with it.

A write kind is one class. It knows its API call (``call``), how its result changes the
records (``fold``), how to find out from the site what happened when no answer came back
(``settle``), what it destroys or removes (for the guards and the check made at the moment it
runs). Its dataclass fields are its parameters: plan files, journal lines and pending writes
hold them as the model's one codec writes them (``reconciler.codec``), and the registry in
``reconciler.kinds.registry`` reads them back by method name. Each kind's writes are in its
package (``kinds/<kind>/actions.py``), emitted by its plan.

Users the same apply creates are "known after apply": an action names them by
``AfterApply(username)`` and the executor binds the real ID once ``user_add`` answered.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, Self, TypeVar

from reconciler import codec
from reconciler.access.model import AccessChange, Cause, Effect
from reconciler.core.records import AccessEnd, Event, Records, Tables

if TYPE_CHECKING:
    from reconciler.api.client import SiteClient
    from reconciler.core.changes import Change
    from reconciler.model import LiveSite

T = TypeVar("T")


class Phase(enum.Enum):
    """The order apply runs writes in; the writes of one phase are independent."""

    CREATE_USERS = "create_users"  # user_add: everything else may name the new users
    CREATE_GROUPS = "create_groups"  # user_group_add, with the members
    ADD_TO_GROUPS = "add_to_groups"  # add_to_user_group, one call per user
    REPLACE_WORKSPACES = "replace_workspaces"  # workspace_delete named with --replace
    CREATE_WORKSPACES = "create_workspaces"  # workspace_add, identical settings share a call
    WORKSPACE_MEMBERS = "workspace_members"  # add_to/remove_from_workspace, one call per user
    REMOVE_FROM_GROUPS = "remove_from_groups"  # remove_from_user_group, one call per user
    DELETE = "delete"  # workspace_delete / user_group_delete (prune): only if all else worked
    DELETE_USERS = "delete_users"  # user_delete (prune_users): last of all

    @property
    def destructive(self) -> bool:
        """Phases that run only when every action before them completed."""
        return self in (Phase.DELETE, Phase.DELETE_USERS)


PHASES = tuple(Phase)


@dataclass(frozen=True, slots=True)
class AfterApply:
    """A user this apply creates: its ID is known only once ``user_add`` answered."""

    username: str


UserKey = int | AfterApply
"""A user an action names: an ID, or a user created earlier in the same apply."""


def _user_key_from(value: Any) -> UserKey:
    if isinstance(value, dict) and isinstance(value.get("new_user"), str):
        return AfterApply(value["new_user"])
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"not a user ID: {value!r:.40}")
    return value


# In files a new user is {"new_user": name}, beside plain IDs.
codec.hook(AfterApply, lambda user: {"new_user": user.username}, _user_key_from)
codec.hook(UserKey, lambda key: codec.to_data(key), _user_key_from)


def bind_users(users: tuple[UserKey, ...], new_ids: Mapping[str, int]) -> tuple[UserKey, ...]:
    """``users`` with every user created in this apply replaced by its new ID."""
    bound: list[UserKey] = []
    for user in users:
        if isinstance(user, AfterApply):
            if user.username not in new_ids:
                raise Unbound(user.username)
            bound.append(new_ids[user.username])
        else:
            bound.append(user)
    return tuple(bound)


def user_ids(users: Iterable[UserKey]) -> frozenset[int]:
    """The users that have IDs (a bound action has only those)."""
    return frozenset(user for user in users if isinstance(user, int))


class MalformedAction(ValueError):
    """Data that does not describe a write the tool knows: a damaged plan, journal or record."""


class Unbound(Exception):
    """An action names a new user whose creation did not succeed: it cannot be sent."""

    def __init__(self, username: str) -> None:
        super().__init__(f'user "{username}" was not created')
        self.username = username


@dataclass(frozen=True, slots=True)
class Result:
    """What recording needs of an answer: the IDs a creation returned (in name order)."""

    ids: tuple[int, ...] = ()
    note: str = field(default="", compare=False)  # what the answer said otherwise; not recorded

    def to_data(self) -> dict[str, Any]:
        return {"ids": list(self.ids)}

    @classmethod
    def from_data(cls, data: Mapping[str, Any] | None) -> Result:
        return codec.from_data({"ids": (data or {}).get("ids", [])}, Result)


NO_RESULT = Result()


@dataclass(frozen=True, slots=True)
class Settlement:
    """What a read of the site says about a write that got no answer.

    ``applied`` is the part the site shows as done (with its ``result``, to be recorded);
    ``remaining`` the part that certainly did not happen (safe to send again); when the site
    cannot tell, ``cannot_tell`` with the ``reason``, and nothing is sent again.
    """

    applied: WriteAction | None = None
    result: Result = NO_RESULT
    remaining: WriteAction | None = None
    cannot_tell: bool = False
    reason: str = ""


@dataclass(frozen=True, slots=True)
class KnownIds:
    """The user IDs known before this apply wrote anything, and those it has been given since:
    an answer naming one of them as a *new* user is not believed (see ``WriteAction.doubt``).
    The group IDs known before: none of them can be a group this apply creates
    (``WriteAction.as_sent``)."""

    user_ids: frozenset[int] = frozenset()  # on the site when it was read for this apply
    recorded: Mapping[int, str] = field(default_factory=dict)  # ID -> username the records hold
    created: Mapping[str, int] = field(default_factory=dict)  # this apply's new users
    group_ids: frozenset[int] = frozenset()  # listed by the site or recorded, before any write


@dataclass(frozen=True, slots=True)
class Deletion:
    """What a destructive action destroys, for the guards and the check when it runs."""

    kind: Literal["workspace", "group", "user"]
    name: str
    id: int
    reason: Literal["prune", "replace"] = "prune"


class AccessView(Protocol):
    """What a write's access effects are judged against (``core/access.py`` makes it): the
    site as read, the records, and the whole plan -- its other writes and its changes."""

    @property
    def actions(self) -> Sequence[WriteAction]:
        """Every write of the plan."""

    @property
    def changes(self) -> Sequence[Change]:
        """Every change of the plan (a replacement's settings before and after)."""

    def admin(self, user: UserKey) -> bool:
        """Whether ``user`` is an administrator after the apply (reaching every workspace)."""

    def admins(self) -> list[int]:
        """The administrators on the site who stay so after the apply."""

    def members(self, workspace_id: int) -> list[int]:
        """Who is a member of a workspace now: as read, else as recorded."""

    def memberships(self, user_id: int) -> tuple[frozenset[int], bool]:
        """The workspaces a user belongs to, and whether that is all of them (``user_info``
        read: True) or only those whose members the plan read (False)."""

    def workspace_name(self, workspace_id: int) -> str | None:
        """The workspace's name on the site, or None: not listed."""

    def memo(self, key: str, build: Callable[[], T]) -> T:
        """``build()``, made once a plan under ``key``: the plan's writes indexed, not searched."""

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
        """One access change, naming the person and the workspace as reports do."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteAction(ABC):
    """One API call of a plan. Subclasses are frozen dataclasses of typed fields."""

    method: ClassVar[str]
    default_phase: ClassVar[Phase]
    late_landing_matters: ClassVar[bool] = False
    """Whether this write landing after a read would leave the records wrong: a creation
    would leave an object no record names (or one made twice), a deletion a record of an
    object that is gone, whose name the next plan would then not create again. A read waits
    for these (``pending.wait_for_landing``); memberships are simply planned again."""

    depends_on: tuple[str, ...] = field(default=(), compare=False)

    # --- identity and display -----------------------------------------------------------

    @property
    @abstractmethod
    def key(self) -> str:
        """What tells this action apart from the others of its method in one plan."""

    @property
    def id(self) -> str:
        return f"{self.method}:{self.key}"

    @property
    def phase(self) -> Phase:
        return self.default_phase

    @abstractmethod
    def summary(self) -> str:
        """One sentence for people: what this call does."""

    def touches(self) -> Iterable[tuple[str, str]]:
        """``(kind, name)`` of every object this action changes."""
        return ()

    def named_users(self) -> Iterable[UserKey]:
        """Every user this action names."""
        return ()

    def creates(self) -> Iterable[tuple[str, str]]:
        """``(kind, name)`` of every object this action creates: a later action of the same
        apply that names one (a user ``AfterApply``) waits for it."""
        return ()

    def removals(self) -> int:
        """Memberships this action removes (the member-removal guard counts them)."""
        return 0

    def ended_access(self) -> Iterable[AccessEnd]:
        """The accesses this action ends once done (recorded with the plan's run, so that
        ``review close`` can name the apply that carried out a revocation)."""
        return ()

    def access_effects(self, view: AccessView) -> Iterable[AccessChange]:
        """Whom this write gives or takes access to a workspace, and why (the plan's "who
        gains or loses access"): most writes change nobody's access."""
        return ()

    def administrators_made(self) -> Iterable[str]:
        """Usernames of the administrators this write creates (they reach every workspace)."""
        return ()

    def users_removed(self) -> Iterable[int]:
        """IDs of the users this write deletes (they gain nothing the plan creates)."""
        return ()

    def deletion(self) -> Deletion | None:
        """What this action destroys, if anything."""
        return None

    # --- plan file ----------------------------------------------------------------------

    def params(self) -> dict[str, Any]:
        """The action's fields as JSON-able data (IDs, names, settings), by the codec."""
        data: dict[str, Any] = codec.to_data(self)
        data.pop("depends_on", None)  # absent when a kind leaves out its defaults
        return data

    @classmethod
    def from_params(cls, params: Mapping[str, Any], depends_on: tuple[str, ...]) -> Self:
        """The action a plan file describes; ``codec.DecodeError`` if malformed."""
        return codec.from_data({**params, "depends_on": list(depends_on)}, cls)

    def to_data(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "phase": self.phase.value,
            "method": self.method,
            "params": self.params(),
            "summary": self.summary(),
            "depends_on": list(self.depends_on),
        }

    def after(self, *action_ids: str) -> Self:
        """This action, waiting for ``action_ids`` too."""
        return replace(self, depends_on=tuple(dict.fromkeys((*self.depends_on, *action_ids))))

    # --- running it ---------------------------------------------------------------------

    def bind(self, new_ids: Mapping[str, int]) -> Self:
        """This action with every ``AfterApply`` user replaced by the ID the site gave it."""
        return self

    def as_sent(self, known: KnownIds) -> Self:
        """This action as it is sent and journaled, with what settling it later will need to
        know of the site before it was sent (most kinds need nothing)."""
        return self

    @abstractmethod
    async def call(self, client: SiteClient) -> Result:
        """Send the call; the client raises ``SiteError`` subclasses on failure."""

    @abstractmethod
    async def settle(self, client: SiteClient) -> Settlement:
        """Read the site to learn what happened to this call, which got no answer."""

    def settle_from_live(self, live: LiveSite, records: Records) -> tuple[list[str], list[Event]]:
        """After a crash: what a fresh read says this pending write did.

        Returns sentences on what was learnt and the events that record it. Most writes need
        nothing here: the next read observes their effect directly, or the next plan sends
        them again (memberships are sets).
        """
        return [], []

    def doubt(self, result: Result, known: KnownIds) -> str | None:
        """Why the site's answer cannot be believed (the write's outcome is then unknown and
        settled by reading the site), or None. Most answers carry nothing to doubt."""
        return None

    async def confirm(self, client: SiteClient, result: Result) -> str | None:
        """Why the site, asked again, contradicts an answer ``doubt`` let through (the outcome
        is then unknown and settled by reading the site), or None. Most answers need no
        second look."""
        return None

    def new_user_ids(self, result: Result) -> dict[str, int]:
        """Users this action created, by username: later actions of the apply bind to them."""
        return {}

    @abstractmethod
    def fold(self, tables: Tables, result: Result) -> None:
        """Record this action's effect, which the site reported as done. Idempotent."""

    def fold_unknown(self, tables: Tables) -> None:  # noqa: B027 - most kinds need nothing
        """Record what must be remembered of this action while its outcome is unknown."""


@dataclass(frozen=True, slots=True)
class Done(Event):
    """A write the site reported as done, with its result: the journal's main event."""

    action: WriteAction
    result: Result = NO_RESULT

    def fold(self, tables: Tables) -> None:
        self.action.fold(tables, self.result)


@dataclass(frozen=True, slots=True)
class Unsettled(Event):
    """A write whose outcome is still unknown after a read: remember what must be."""

    action: WriteAction

    def fold(self, tables: Tables) -> None:
        self.action.fold_unknown(tables)


@dataclass(frozen=True, slots=True)
class Pending(Event):
    """A write whose outcome is unknown: settled against the next read of the site."""

    action: WriteAction
    until: float | None = None  # it may still land on the site until then (Unix time)

    def fold(self, tables: Tables) -> None:
        # Kept once as stored: ``==`` leaves depends_on out, so the data decides (as it always
        # has), compared only for equal actions.
        data = self.action.to_data()
        if not any(kept == self.action and kept.to_data() == data for kept in tables.pending):
            tables.pending.append(self.action)
        if self.until is not None:
            tables.pending_until = max(tables.pending_until or 0.0, self.until)
        self.action.fold_unknown(tables)
