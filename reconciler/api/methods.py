"""The API methods the client calls, one table row each: name, verb, success key(s), decoder.

Each method's facts are written once, here, and read by the client's one ``_call`` path:
which key its success answer sits under (``user_group_delete`` answers ``userGroupDeleted``,
not the camel case of its name), whether it writes -- which is all the retry policy and the
boundary need to know of it -- and which pure decoder turns its answer into a typed answer. The
parameters each method sends are built by the helpers below the table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from reconciler import spec
from reconciler.api import answers, decode
from reconciler.api.decode import Payload

T = TypeVar("T")
Decoded = TypeVar("Decoded", covariant=True)


@dataclass(frozen=True, slots=True)
class ApiMethod(Generic[Decoded]):
    """An API method: its name, verb, the key(s) of its success answer and its decoder."""

    name: str
    verb: Literal["GET", "POST"]
    keys: tuple[str, ...]
    decoder: Callable[[Payload], Decoded]

    @property
    def is_write(self) -> bool:
        return self.verb == "POST"


def _row(
    name: str, verb: Literal["GET", "POST"], decoder: Callable[[Payload], T], *other_keys: str
) -> ApiMethod[T]:
    """A row whose first success key is the camel case of the name, as for most methods."""
    return ApiMethod(name, verb, (spec.camel_case(name), *other_keys), decoder)


USER_INFO = _row("user_info", "GET", decode.user_info)
USER_LIST = _row("user_list", "GET", decode.user_list)
USERS_LOCATION_ACCESS = _row("users_location_access", "GET", decode.users_location_access)
USER_LOCATION_ACCESS = _row(
    "user_location_access", "GET", decode.users_location_access, "usersLocationAccess"
)
"""The FileGenius-era name of ``users_location_access``, for sites that still use it."""
USER_PERMISSIONS_LOCATION = _row(
    "user_permissions_location", "GET", decode.user_permissions_location
)
WORKSPACE_LIST = _row("workspace_list", "GET", decode.workspace_list)
WORKSPACE_INFO = _row("workspace_info", "GET", decode.workspace_info)
WORKSPACE_ADD = _row("workspace_add", "POST", decode.workspace_add)
WORKSPACE_DELETE = _row("workspace_delete", "POST", decode.workspace_delete)
USER_ADD = _row("user_add", "POST", decode.user_add, "userAdded")
USER_DELETE = _row("user_delete", "POST", decode.user_delete, "userDeleted")
USER_GROUP_ADD = _row("user_group_add", "POST", decode.user_group_add)
USER_GROUP_DELETE = ApiMethod(
    "user_group_delete", "POST", ("userGroupDeleted", "userGroupDelete"), decode.user_group_delete
)
ADD_TO_USER_GROUP = _row("add_to_user_group", "POST", decode.group_membership)
REMOVE_FROM_USER_GROUP = _row("remove_from_user_group", "POST", decode.group_membership)
ADD_TO_WORKSPACE = _row("add_to_workspace", "POST", decode.workspace_membership)
REMOVE_FROM_WORKSPACE = _row("remove_from_workspace", "POST", decode.workspace_membership)


# --- parameters ---------------------------------------------------------------------------


def workspace_add_params(
    names: Sequence[str], settings: answers.WorkspaceSettings
) -> dict[str, str]:
    """The documented ``workspace_add`` parameters for ``names`` sharing ``settings``.

    A comma inside a name would silently create two workspaces, so it is refused here even
    though the manifest validation refuses it first.
    """
    if not names or any(spec.NAME_LIST_SEPARATOR in name or not name for name in names):
        raise ValueError("workspace_add needs names, none empty and none containing a comma")
    wanted = settings.spec
    params = {
        "name": spec.NAME_LIST_SEPARATOR.join(names),
        "root_access": bit(wanted.root_access),
    }
    if settings.user_ids:
        params["workspace_users"] = id_list(settings.user_ids)
    params |= _override(spec.OVERRIDE_PERMISSIONS_PARAM, spec.PERMISSION_FLAGS, wanted.permissions)
    params |= _override(
        spec.OVERRIDE_NOTIFICATIONS_PARAM, spec.NOTIFICATION_FLAGS, wanted.notifications
    )
    return params


def _override(
    switch: str, flags: tuple[spec.Flag, ...], on: frozenset[str] | None
) -> dict[str, str]:
    """The switch, and each flag's 0/1 only when the override is on (else they have no effect)."""
    if on is None:
        return {switch: "0"}
    unknown = on - {flag.key for flag in flags}
    if unknown:
        raise ValueError(f"unknown flags for {switch}: {', '.join(sorted(unknown))}")
    return {switch: "1", **{flag.param: bit(flag.key in on) for flag in flags}}


def user_add_params(user: answers.NewUser) -> dict[str, str]:
    """The published ``user_add`` parameters; optional ones only when given. Never
    ``password``: without one the site sets a temporary password and e-mails the login."""
    optional = {
        "organization": user.organization,
        "phone": user.phone,
        "phone_ext": user.phone_ext,
    }
    return {
        "user_name": user.username,
        "email": user.email,
        "first_name": user.first_name,
        "last_name": user.last_name,
        **{name: value for name, value in optional.items() if value},
        "active": bit(user.active),
        "admin": bit(user.admin),
    }


def bit(value: bool) -> str:
    return "1" if value else "0"


def id_list(ids: Sequence[int]) -> str:
    """IDs as the API takes them: comma-separated."""
    return spec.NAME_LIST_SEPARATOR.join(str(number) for number in ids)
