"""Pure functions from a successful answer's payload to typed answers (``answers``).

Fetching and parsing are apart (STYLE.md): the boundary (``reconciler.api.boundary``) finds
the payload (or the refusal) in the bytes the client received and wraps it in a
:class:`Payload`; everything here turns that payload into typed answers, as plain functions that
table tests drive directly (reading one field is ``reconciler.api.payload``'s). Which decoder
serves which method is written once, in the method table (``reconciler.api.methods``). They
tolerate every published quirk (``site-api-notes.md``): integers as strings, ID lists as a
comma string, a list or a single integer, entries wrapped in ``{"workspace": {...}}`` or
not, the bare-list ``workspaceList``, missing optional fields. A decoder also checks what it
promises against what was asked (one workspace ID per name sent). A success body that still
cannot be read raises ``ProtocolError`` naming the method and the field; no ``KeyError`` or
``TypeError`` escapes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconciler import spec
from reconciler.api import answers
from reconciler.api.errors import protocol_error
from reconciler.api.payload import Fields, flag_of, plain_flag, plain_text, to_int
from reconciler.api.payload import Payload as Payload  # what every decoder takes

# --- one decoder per answer ---------------------------------------------------------------


def _workspace_ref(fields: Fields) -> answers.WorkspaceRef:
    return answers.WorkspaceRef(id=fields.integer("id"), name=fields.text("name", "workspaceName"))


def user_info(payload: Payload) -> answers.UserInfo:
    """``userInfo`` → ``UserInfo``; flags become sets of manifest keys."""
    fields = payload.fields()
    return answers.UserInfo(
        id=fields.integer("id"),
        username=fields.text("username"),
        email=fields.optional_text("email") or "",
        first_name=fields.optional_text("firstName"),
        last_name=fields.optional_text("lastName"),
        admin=bool(fields.flag("admin")),
        permissions=fields.flags_on(spec.PERMISSION_FLAGS),
        notifications=fields.flags_on(spec.NOTIFICATION_FLAGS),
        workspaces=fields.entries("workspaces", "workspace", _workspace_ref),
    )


def _user_summary(fields: Fields) -> answers.UserSummary:
    return answers.UserSummary(
        id=fields.integer("id"),
        username=fields.text("username"),
        email=fields.optional_text("email") or "",
        first_name=fields.optional_text("firstName"),
        last_name=fields.optional_text("lastName"),
        admin=fields.flag("admin"),
        active=fields.flag("active"),
    )


def _plain_user_summary(entry: dict[str, Any]) -> answers.UserSummary | None:
    """``_user_summary`` of an entry of ints and texts, without ``Fields`` (or None)."""
    get = entry.get
    number, username, email = get("id"), get("username"), get("email")
    first, last, admin, active = get("firstName"), get("lastName"), get("admin"), get("active")
    if not (
        type(number) is int
        and type(username) is str
        and username
        and plain_text(email)
        and plain_text(first)
        and plain_text(last)
        and plain_flag(admin)
        and plain_flag(active)
    ):
        return None
    return answers.UserSummary(
        number, username, email or "", first or None, last or None, flag_of(admin), flag_of(active)
    )


def user_list(payload: Payload) -> tuple[answers.UserSummary, ...]:
    """One page of ``userList``: ``{"users": [...]}``, or the list itself."""
    value = payload.value
    if isinstance(value, Mapping) and "users" in value:
        value = value["users"]
    return payload.entries(value, ".users", "user", _user_summary, _plain_user_summary)


def _location_entry(fields: Fields) -> answers.LocationEntry:
    user_type = fields.flag("uType")
    return answers.LocationEntry(
        id=fields.integer("id"),
        name=fields.text("username", "name"),
        email=fields.optional_text("email"),
        is_group=user_type is False,
        admin=bool(fields.flag("admin")),
    )


def _plain_location_entry(entry: dict[str, Any]) -> answers.LocationEntry | None:
    """``_location_entry`` of an entry of ints and texts, without ``Fields`` (or None)."""
    get = entry.get
    number, name, email, user_type, admin = (
        get("id"),
        get("username"),
        get("email"),
        get("uType"),
        get("admin"),
    )
    if not (
        type(number) is int
        and type(name) is str
        and name
        and plain_text(email)
        and plain_flag(user_type)
        and plain_flag(admin)
    ):
        return None
    return answers.LocationEntry(number, name, email or None, user_type == 0, admin == 1)


def users_location_access(payload: Payload) -> tuple[answers.LocationEntry, ...]:
    """``usersLocationAccess``: a list of users (``uType`` 1) and groups (``uType`` 0)."""
    value = payload.value
    if isinstance(value, Mapping) and set(value) <= {"user", "users"} and value:
        value = next(iter(value.values()))  # an extra container level
    return payload.entries(value, "", "user", _location_entry, _plain_location_entry)


def user_permissions_location(payload: Payload) -> answers.LocationPermissions:
    """``userPermissionsLocation``; every flag stays ``None`` where the site says null."""
    fields = payload.fields()
    return answers.LocationPermissions(
        user_id=fields.integer("userId"),
        admin=fields.flag("admin"),
        flags={flag.key: fields.flag(flag.field) for flag in spec.PERMISSION_FLAGS},
    )


def _workspace_entry(fields: Fields) -> answers.WorkspaceEntry:
    name = fields.text("workspaceName", "name")
    path = fields.optional_text("workspacePath") or fields.optional_text("path")
    return answers.WorkspaceEntry(
        id=fields.integer("id"),
        name=name,
        path=path or spec.workspace_path(name),
        listed=fields.flag("listed"),
    )


def _plain_workspace_entry(entry: dict[str, Any]) -> answers.WorkspaceEntry | None:
    """``_workspace_entry`` of an entry of ints and texts, without ``Fields`` (or None)."""
    get = entry.get
    number, name, listed = get("id"), get("workspaceName"), get("listed")
    path, other_path = get("workspacePath"), get("path")
    if not (
        type(number) is int
        and type(name) is str
        and name
        and plain_text(path)
        and plain_text(other_path)
        and plain_flag(listed)
    ):
        return None
    where = path or other_path or spec.workspace_path(name)
    return answers.WorkspaceEntry(number, name, where, flag_of(listed))


def workspace_list(payload: Payload) -> tuple[answers.WorkspaceEntry, ...]:
    """``workspaceList``: ``{workspaces, totalWorkspaces}`` or the legacy bare list.

    Fewer entries than ``totalWorkspaces`` is a cut-off answer, not a smaller site: read as a
    smaller site, it would make managed workspaces look deleted by hand.
    """
    value, total = payload.value, None
    if isinstance(value, Mapping) and ("workspaces" in value or "totalWorkspaces" in value):
        total = value.get("totalWorkspaces")
        value = value.get("workspaces")
    entries = payload.entries(
        value, ".workspaces", "workspace", _workspace_entry, _plain_workspace_entry
    )
    if isinstance(total, str) and total.strip().isdigit():
        total = int(total)
    if isinstance(total, int) and not isinstance(total, bool) and len(entries) < total:
        raise protocol_error(
            payload.method,
            f"{len(entries)} workspaces where totalWorkspaces says {total}: a cut-off list",
        )
    return entries


def _workspace_member(fields: Fields) -> answers.WorkspaceMember:
    return answers.WorkspaceMember(
        id=fields.integer("id"),
        username=fields.optional_text("username"),
        email=fields.optional_text("email"),
    )


def _plain_member(entry: dict[str, Any]) -> answers.WorkspaceMember | None:
    """``_workspace_member`` of an entry of ints and texts, without ``Fields`` (or None)."""
    number, username, email = entry.get("id"), entry.get("username"), entry.get("email")
    if type(number) is int and plain_text(username) and plain_text(email):
        return answers.WorkspaceMember(number, username or None, email or None)
    return None


def _override_flags(fields: Fields, key: str, flags: tuple[spec.Flag, ...]) -> frozenset[str]:
    value = fields.get(key)
    if value is None or value in ("", [], {}):
        return frozenset()
    return Fields(value, method=fields.method, where=f"{fields.where}.{key}").flags_on(flags)


def workspace_info(payload: Payload) -> answers.WorkspaceInfo:
    """``workspaceInfo``: members and the override flags the site reports as 1."""
    fields = payload.fields()
    name = fields.text("name", "workspaceName")
    path = fields.optional_text("path") or fields.optional_text("workspacePath")
    return answers.WorkspaceInfo(
        id=fields.integer("id"),
        name=name,
        path=path or spec.workspace_path(name),
        users=fields.entries("users", "user", _workspace_member, _plain_member),
        permissions=_override_flags(fields, "workspaceOverridePermissions", spec.PERMISSION_FLAGS),
        notifications=_override_flags(
            fields, "workspaceOverrideNotifications", spec.NOTIFICATION_FLAGS
        ),
    )


def workspace_add(payload: Payload) -> tuple[int, ...]:
    """``workspaceAdd.workspaceId``: one integer, or a list in the order of the names.

    One distinct ID per name sent, or the answer cannot say which workspace got which ID.
    """
    ids = payload.fields().id_list("workspaceId")
    names = payload.params.get("name")
    wanted = len(names.split(spec.NAME_LIST_SEPARATOR)) if names else len(ids)
    if len(ids) != wanted or len(set(ids)) != len(ids):
        what = f"{len(ids)} ID(s)" if len(set(ids)) == len(ids) else "repeated IDs"
        raise protocol_error(
            payload.method, f"{payload.key}.workspaceId with {what} for {wanted} name(s)"
        )
    return ids


def workspace_delete(payload: Payload) -> int:
    """``workspaceDelete.workspaceId``: the deleted workspace."""
    return payload.fields().integer("workspaceId")


def user_group_add(payload: Payload) -> answers.GroupCreated:
    """``userGroupAdd``: the new group's ID and its members (any ID-list spelling)."""
    fields = payload.fields()
    return answers.GroupCreated(
        id=fields.integer("userGroupId"), member_ids=fields.id_list("userGroupMembers")
    )


def user_group_delete(payload: Payload) -> int:
    """``userGroupDeleted.userGroupId`` (the key is not the method's camel case)."""
    return payload.fields().integer("userGroupId")


def group_membership(payload: Payload) -> answers.MembershipAnswer:
    """``addToUserGroup`` / ``removeFromUserGroup``: the user and the group IDs."""
    fields = payload.fields()
    return answers.MembershipAnswer(fields.integer("userId"), fields.id_list("userGroupIds"))


def workspace_membership(payload: Payload) -> answers.MembershipAnswer:
    """``addToWorkspace`` / ``removeFromWorkspace``: the user and the workspace IDs."""
    fields = payload.fields()
    return answers.MembershipAnswer(fields.integer("userId"), fields.id_list("userWorkspaceIds"))


def user_add(payload: Payload) -> int:
    """The new user's ID. The success shape is not published: ``{"userId": N}`` is the likely
    one (as ``userDelete`` answers); a bare ``N``, ``{"id": N}`` and ``{"user": {"id": N}}``
    (or ``userId`` inside) are accepted too, in JSON and XML alike."""
    bare = to_int(payload.value)
    if bare is not None:
        return bare
    fields = Fields(payload.value, method=payload.method, where=payload.key, wrapper="user")
    return fields.integer("userId" if fields.get("userId") is not None else "id")


def user_delete(payload: Payload) -> int:
    """``userDelete.userId``: the deleted user."""
    return payload.fields().integer("userId")
