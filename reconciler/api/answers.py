"""Typed answers the client returns, one per kind of API answer (the tool's own records are
``core.records``: a different thing).

Records use manifest flag keys (``reconciler.spec``) for permission and notification
flags, so the engine never sees the API's camel case. Optional fields the site may leave out
are ``None`` rather than missing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reconciler.kinds.change import spread
from reconciler.kinds.workspace import WorkspaceSpec


@dataclass(frozen=True, slots=True)
class WorkspaceRef:
    """A workspace as it appears inside another answer (``userInfo.workspaces``)."""

    id: int
    name: str


@dataclass(frozen=True, slots=True)
class UserSummary:
    """An entry of ``user_list``."""

    id: int
    username: str
    email: str
    first_name: str | None = None
    last_name: str | None = None
    admin: bool | None = None
    active: bool | None = None  # None: the site did not say


@dataclass(frozen=True, slots=True)
class UserInfo:
    """The answer of ``user_info``."""

    id: int
    username: str
    email: str
    first_name: str | None
    last_name: str | None
    admin: bool
    permissions: frozenset[str]  # base-level permission flags that are on
    notifications: frozenset[str]  # base-level notification flags that are on
    workspaces: tuple[WorkspaceRef, ...]

    def summary(self) -> UserSummary:
        """The user as ``user_list`` would list it (``user_info`` does not say ``active``)."""
        return UserSummary(
            self.id, self.username, self.email, self.first_name, self.last_name, self.admin
        )


@dataclass(frozen=True, slots=True)
class LocationEntry:
    """An entry of ``users_location_access``: a user (``is_group`` False) or a user group."""

    id: int
    name: str  # the ``username`` field; for a group, the group's name
    email: str | None
    is_group: bool
    admin: bool


@dataclass(frozen=True, slots=True)
class LocationPermissions:
    """The answer of ``user_permissions_location``; flags are ``None`` for an administrator."""

    user_id: int
    admin: bool | None
    flags: dict[str, bool | None]


@dataclass(frozen=True, slots=True)
class WorkspaceEntry:
    """An entry of ``workspace_list``."""

    id: int
    name: str
    path: str
    listed: bool | None = None


@dataclass(frozen=True, slots=True)
class WorkspaceMember:
    """A user joined to a workspace, as ``workspace_info`` lists it."""

    id: int
    username: str | None
    email: str | None


@dataclass(frozen=True, slots=True)
class WorkspaceInfo:
    """The answer of ``workspace_info``.

    The API reports the override flags but not whether each override is switched on, nor
    the settings that are not overrides: the engine records those itself.
    """

    id: int
    name: str
    path: str
    users: tuple[WorkspaceMember, ...]
    permissions: frozenset[str]  # override permission flags reported as 1
    notifications: frozenset[str]  # override notification flags reported as 1


@spread(WorkspaceSpec, "spec")
@dataclass(frozen=True, slots=True)
class WorkspaceSettings:
    """Everything ``workspace_add`` sets besides the names; shared by every name in one call.
    ``spec``'s fields may be given as keywords of their own."""

    spec: WorkspaceSpec = field(default_factory=WorkspaceSpec)
    user_ids: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class GroupCreated:
    """The answer of ``user_group_add``."""

    id: int
    member_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class MembershipAnswer:
    """The answer of add/remove_to/from_user_group and add/remove_to/from_workspace."""

    user_id: int
    target_ids: tuple[int, ...]  # group IDs or workspace IDs


@dataclass(frozen=True, slots=True)
class NewUser:
    """A user for ``user_add``. There is deliberately no password: the tool never handles one,
    and without it the site e-mails the new user their login."""

    username: str  # the site's ``user_name``: unique; letters, digits, - _ . @
    email: str
    first_name: str
    last_name: str
    organization: str | None = None
    phone: str | None = None  # digits only
    phone_ext: str | None = None  # digits only
    active: bool = True  # False: created without notification or log-in
    admin: bool = False
