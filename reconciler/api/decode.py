"""Pure functions from a successful answer's payload to typed answers (``answers``).

Fetching and parsing are apart (STYLE.md): the boundary (``reconciler.api.boundary``) finds
the payload (or the refusal) in the bytes the client received and wraps it in a
:class:`Payload`; everything here turns that payload into records, as plain functions that
table tests drive directly. Which decoder serves which method is written once, in the method
table (``reconciler.api.methods``). They tolerate every published quirk
(``site-api-notes.md``): integers as strings, ID lists as a comma string, a list or a single
integer, entries wrapped in ``{"workspace": {...}}`` or not, the bare-list ``workspaceList``,
missing optional fields. A decoder also checks what it promises against what was asked (one
workspace ID per name sent). A success body that still cannot be read raises ``ProtocolError``
naming the method and the field; no ``KeyError`` or ``TypeError`` escapes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard, TypeVar

from reconciler import spec
from reconciler.api import answers
from reconciler.api.errors import protocol_error

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Payload:
    """The value under a method's success key, and what a decoder needs around it.

    ``key`` is the key the value was found under (messages name it); ``params`` are the
    request's parameters, credentials excluded, so a decoder can check the answer against
    what was asked.
    """

    value: object
    method: str
    key: str
    params: Mapping[str, str] = field(default_factory=dict)

    def fields(self) -> Fields:
        """The value as one object (the usual shape of an answer)."""
        return Fields(self.value, method=self.method, where=self.key)

    def entries(
        self, value: object, where: str, wrapper: str, read: Callable[[Fields], T]
    ) -> tuple[T, ...]:
        """``value`` (part of this payload) as a list of entries, each read by ``read``."""
        return read_entries(value, f"{self.key}{where}", wrapper, read, self.method)


# --- reading fields -----------------------------------------------------------------------


class Fields:
    """One object of an answer, read with the tolerance the notes ask for.

    Every failure names the method and where in the answer it happened, so a ``ProtocolError``
    points at the field rather than at a ``KeyError`` deep in a decoder.
    """

    __slots__ = ("_data", "_index", "_where", "method")

    def __init__(
        self,
        value: object,
        *,
        method: str,
        where: str,
        wrapper: str | None = None,
        index: int | None = None,
    ):
        if wrapper is not None and _is_mapping(value) and len(value) == 1:
            value = value.get(wrapper, value)  # JSON wraps entries: {"workspace": {...}}
        self._where, self._index = where, index
        self.method = method
        if not _is_mapping(value):
            raise protocol_error(method, f"{self.where} as {_kind(value)} instead of an object")
        self._data: Mapping[str, Any] = value

    @property
    def where(self) -> str:
        """The place in the answer, for messages; built only when a message needs it."""
        return self._where if self._index is None else f"{self._where}[{self._index}]"

    def get(self, key: str) -> Any:
        return self._data.get(key)

    def _read(self, key: str, convert: Callable[[object], T | None], expected: str) -> T:
        result = convert(self._data.get(key))
        if result is None:
            value = self._data.get(key)
            got = "nothing" if value is None else f"{_kind(value)} {str(value)[:40]!r}"
            where = f"{self.where}.{key}"
            raise protocol_error(self.method, f"{where} as {got} where {expected} was expected")
        return result

    # Each reader first takes the spelling nearly every answer uses (an int, a non-empty
    # text) as it is: a 1,000-workspace read decodes some 25,000 fields.

    def integer(self, key: str) -> int:
        value = self._data.get(key)
        if type(value) is int:
            return value
        return self._read(key, to_int, "an integer")

    def id_list(self, key: str) -> tuple[int, ...]:
        return self._read(key, to_id_list, "a list of IDs")

    def text(self, key: str, *fallbacks: str) -> str:
        """A required text; the first of ``key`` and ``fallbacks`` that is present."""
        value = self._data.get(key)
        if type(value) is str and value:
            return value
        for name in (key, *fallbacks):
            if self._data.get(name) not in (None, ""):
                return self._read(name, _to_text, "a text")
        return self._read(key, _to_text, "a text")

    def optional_text(self, key: str) -> str | None:
        """A text; ``None`` when missing, null or empty."""
        value = self._data.get(key)
        if type(value) is str:
            return value or None
        return None if value is None else self._read(key, _to_text, "a text")

    def flag(self, key: str) -> bool | None:
        """A 0/1 flag; ``None`` when missing or null (admins get null permission flags)."""
        value = self._data.get(key)
        if type(value) is int and 0 <= value <= 1:
            return value == 1
        return None if value in (None, "") else self._read(key, to_flag, "0 or 1")

    def entries(self, key: str, wrapper: str, read: Callable[[Fields], T]) -> tuple[T, ...]:
        """A list of sub-objects; missing, null or empty means none."""
        return read_entries(self._data.get(key), f"{self.where}.{key}", wrapper, read, self.method)

    def flags_on(self, flags: tuple[spec.Flag, ...]) -> frozenset[str]:
        """Manifest keys of the flags reported as 1."""
        return frozenset(flag.key for flag in flags if self.flag(flag.field))


def _is_mapping(value: object) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)``, the usual ``dict`` tested first: the ABC's own check
    costs more than reading an entry (a large read decodes some 25,000)."""
    return type(value) is dict or isinstance(value, Mapping)


def read_entries(
    value: object, where: str, wrapper: str, read: Callable[[Fields], T], method: str
) -> tuple[T, ...]:
    """Each entry of a list read by ``read``; missing, null or empty means no entries."""
    if value is None or value == "" or value == {}:
        return ()
    if isinstance(value, Mapping):  # a single entry where a list was expected
        value = [value]
    if not isinstance(value, list):
        raise protocol_error(method, f"{where} as {_kind(value)} instead of a list")
    return tuple(
        read(Fields(entry, method=method, where=where, wrapper=wrapper, index=index))
        for index, entry in enumerate(value)
    )


_MAX_ID_DIGITS = 18  # beyond any ID; also keeps int() away from its 4,300-digit limit


def to_int(value: object) -> int | None:
    """An integer given as int or digit string; ``None`` for anything else (bools included)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text.isascii() and text.isdigit() and len(text) <= _MAX_ID_DIGITS:
            return int(text)
    return None


def to_flag(value: object) -> bool | None:
    """0/1 in any of the spellings seen (int, string, bool); ``None`` when it is none of them."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower() if isinstance(value, int | str) else ""
    return {"1": True, "0": False, "true": True, "false": False}.get(text)


def to_id_list(value: object) -> tuple[int, ...] | None:
    """IDs from ``"4561,4567"``, ``[4561, "4567"]``, ``4561`` or nothing; ``None`` if unreadable."""
    if value is None or value == "":
        return ()
    if isinstance(value, Mapping) and len(value) == 1:  # XML: <ids><id>1</id><id>2</id></ids>
        return to_id_list(next(iter(value.values())))
    if isinstance(value, str):
        parts: list[object] = [
            part for part in value.split(spec.NAME_LIST_SEPARATOR) if part.strip()
        ]
    elif isinstance(value, list):
        parts = list(value)
    else:
        parts = [value]
    ids = [to_int(part) for part in parts]
    return None if any(number is None for number in ids) else tuple(n for n in ids if n is not None)


def _to_text(value: object) -> str | None:
    return str(value) if isinstance(value, str | int) and not isinstance(value, bool) else None


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


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


def user_list(payload: Payload) -> tuple[answers.UserSummary, ...]:
    """One page of ``userList``: ``{"users": [...]}``, or the list itself."""
    value = payload.value
    if isinstance(value, Mapping) and "users" in value:
        value = value["users"]
    return payload.entries(value, ".users", "user", _user_summary)


def _location_entry(fields: Fields) -> answers.LocationEntry:
    user_type = fields.flag("uType")
    return answers.LocationEntry(
        id=fields.integer("id"),
        name=fields.text("username", "name"),
        email=fields.optional_text("email"),
        is_group=user_type is False,
        admin=bool(fields.flag("admin")),
    )


def users_location_access(payload: Payload) -> tuple[answers.LocationEntry, ...]:
    """``usersLocationAccess``: a list of users (``uType`` 1) and groups (``uType`` 0)."""
    value = payload.value
    if isinstance(value, Mapping) and set(value) <= {"user", "users"} and value:
        value = next(iter(value.values()))  # an extra container level
    return payload.entries(value, "", "user", _location_entry)


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


def workspace_list(payload: Payload) -> tuple[answers.WorkspaceEntry, ...]:
    """``workspaceList``: ``{workspaces, totalWorkspaces}`` or the legacy bare list.

    Fewer entries than ``totalWorkspaces`` is a cut-off answer, not a smaller site: read as a
    smaller site, it would make managed workspaces look deleted by hand.
    """
    value, total = payload.value, None
    if isinstance(value, Mapping) and ("workspaces" in value or "totalWorkspaces" in value):
        total = value.get("totalWorkspaces")
        value = value.get("workspaces")
    entries = payload.entries(value, ".workspaces", "workspace", _workspace_entry)
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
        users=fields.entries("users", "user", _workspace_member),
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


def group_membership(payload: Payload) -> answers.MembershipChange:
    """``addToUserGroup`` / ``removeFromUserGroup``: the user and the group IDs."""
    fields = payload.fields()
    return answers.MembershipChange(fields.integer("userId"), fields.id_list("userGroupIds"))


def workspace_membership(payload: Payload) -> answers.MembershipChange:
    """``addToWorkspace`` / ``removeFromWorkspace``: the user and the workspace IDs."""
    fields = payload.fields()
    return answers.MembershipChange(fields.integer("userId"), fields.id_list("userWorkspaceIds"))


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
