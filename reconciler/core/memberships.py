"""Users joining and leaving workspaces and groups: one call per user, naming every target.

Memberships are sets: sending a change again can never duplicate anything, so a change whose
answer was lost is checked where the site can tell (a workspace's members) and otherwise simply
sent again. Group members cannot be read back at all; what the tool applied is recorded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self

from reconciler.core.actions import (
    NO_RESULT,
    AfterApply,
    Result,
    Settlement,
    UserKey,
    WriteAction,
    bind_users,
)
from reconciler.core.records import Tables

if TYPE_CHECKING:
    from reconciler.api.client import SiteClient


@dataclass(frozen=True, slots=True)
class Place:
    """A workspace or group a membership change names: its ID, and its name for the records."""

    id: int
    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MembershipChange(WriteAction):
    """One user joins (``adds``) or leaves several workspaces or groups in one call."""

    kind: ClassVar[Literal["workspace", "group"]]
    adds: ClassVar[bool]

    user: UserKey
    user_label: str  # how reports name the user (the username, or #ID)
    targets: tuple[Place, ...]

    @property
    def key(self) -> str:
        return f"new:{self.user.username}" if isinstance(self.user, AfterApply) else str(self.user)

    def summary(self) -> str:
        verb = "joins" if self.adds else "leaves"
        names = ", ".join(f'"{t.name}"' for t in self.targets)
        return f"{self.user_label} {verb} {self.kind} {names}"

    def touches(self) -> Iterable[tuple[str, str]]:
        return ((self.kind, target.name) for target in self.targets)

    def named_users(self) -> Iterable[UserKey]:
        return [self.user]

    def removals(self) -> int:
        return 0 if self.adds else len(self.targets)

    def __post_init__(self) -> None:
        if not self.targets:
            raise ValueError(f"a {self.method} names no {self.kind}")

    def bind(self, new_ids: Mapping[str, int]) -> Self:
        (user,) = bind_users((self.user,), new_ids)
        return replace(self, user=user)

    def with_targets(self, targets: Iterable[Place]) -> Self | None:
        chosen = tuple(targets)
        return replace(self, targets=chosen) if chosen else None

    @property
    def user_id(self) -> int:
        if isinstance(self.user, AfterApply):
            raise ValueError(f'user "{self.user.username}" is not bound to an ID yet')
        return self.user

    async def call(self, client: SiteClient) -> Result:
        """The client method of the API method's name: ``client.add_to_workspace(user, ids)``."""
        send = getattr(client, self.method)
        await send(self.user_id, [target.id for target in self.targets])
        return NO_RESULT

    async def settle(self, client: SiteClient) -> Settlement:
        """Group members cannot be read: the change is simply sent again (it is a set)."""
        return Settlement(remaining=self)

    def fold(self, tables: Tables, result: Result) -> None:
        for target in self.targets:
            self._fold_one(tables, target)

    def _fold_one(self, tables: Tables, target: Place) -> None:
        raise NotImplementedError


def legacy_params(kind: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
    """A membership change as releases before the one codec wrote it (parallel lists of
    target IDs and names): journals and pending writes of an older release are still read."""
    ids, names = params.get(f"{kind}_ids"), params.get("names")
    if "targets" in params or not isinstance(ids, list) or not isinstance(names, list):
        return params
    if len(ids) != len(names):
        raise ValueError("the target IDs and names do not match")
    targets = [{"id": i, "name": n} for i, n in zip(ids, names, strict=True)]
    return {"user_id": params.get("user_id"), "user": params.get("user"), "targets": targets}
