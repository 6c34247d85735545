"""Pure functions from the site's answers to records and errors.

Fetching and parsing are apart (STYLE.md): the client hands over status, headers and bytes;
everything here is a plain function that table tests drive directly. Two jobs:

* **Telling success from failure by the body's shape.** ``{"error": {title, message}}`` is a
  refusal whatever the HTTP status (some sites answer errors with 200); the operation's key is a
  success; anything else is a ``ProtocolError`` -- unless the status is 429 or 5xx, where a
  proxy or load balancer answered with its own page and the status is the only fact there is.
* **Tolerating every published quirk** (``site-api-notes.md``): integers as strings, ID lists as
  a comma string, a list or a single integer, entries wrapped in ``{"workspace": {...}}`` or
  not, the bare-list ``workspaceList``, stray quotes in titles, missing optional fields. A
  success body that still cannot be read raises ``ProtocolError`` naming the method and the
  field; no ``KeyError`` or ``TypeError`` escapes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from reconciler.api import records, spec
from reconciler.api.errors import (
    AuthenticationError,
    InvalidRequest,
    NotFound,
    PermissionDenied,
    ProtocolError,
    RateLimited,
    ServerError,
    SiteRefusal,
)
from reconciler.api.xmlcodec import PROTOCOL_HINT, load_document

T = TypeVar("T")

# --- documents and error bodies -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Answer:
    """What the client received, reduced to what decoding needs."""

    method: str
    status: int
    content: bytes
    retry_after: float | None = None


def success_payload(answer: Answer, keys: tuple[str, ...]) -> Any:
    """The value under the operation's key, or the classified error the body or status says."""
    try:
        document = load_document(answer.content, method=answer.method)
    except ProtocolError:
        if _status_is_telling(answer.status):
            raise status_refusal(answer) from None
        raise
    error = error_fields(document)
    if error is not None:
        raise refusal(answer, *error)
    for key in keys:
        if key in document:
            return document[key]
    if _status_is_telling(answer.status):
        raise status_refusal(answer)
    found = ", ".join(sorted(map(str, document))[:5]) or "nothing"
    raise _protocol(answer.method, f"neither {keys[0]!r} nor an error (found {found})")


def _status_is_telling(status: int) -> bool:
    return status == 429 or status >= 500


def error_fields(document: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(title, message)`` when the document has the error shape, else ``None``."""
    if "error" not in document:
        return None
    error = document["error"]
    if isinstance(error, Mapping):
        return clean_text(error.get("title")), clean_text(error.get("message"))
    return clean_text(error), ""


def clean_text(value: object) -> str:
    """A title or message without stray quotes and whitespace (``'User Group Add Failed``)."""
    if value is None:
        return ""
    return str(value).strip().strip("'\"`").strip()


# --- classifying refusals -----------------------------------------------------------------

_STATUS_CLASSES: dict[int, type[SiteRefusal]] = {
    400: InvalidRequest,
    401: AuthenticationError,
    403: PermissionDenied,
    404: NotFound,
    422: InvalidRequest,
    429: RateLimited,
}

_TEXT_CLASSES: tuple[tuple[type[SiteRefusal], tuple[str, ...]], ...] = (
    (RateLimited, ("rate limit", "too many")),
    (ServerError, ("internal server error", "service unavailable", "try again")),
    (AuthenticationError, ("signature", "api key", "api_key", "timestamp", "authenticat")),
    (PermissionDenied, ("must be an administrator", "access privileges", "not allow")),
    (NotFound, ("does not exist", "not found", "unknown", "there is no", "no such")),
    (InvalidRequest, ("invalid",)),
)
"""Checked in order, on the title first and then the message, when the status says nothing
(200 or an unusual code): "Invalid Request: signature must be last" is an invalid request."""

_CLOCK_WORDS = ("timestamp", "clock", "expired", "stale")

HINTS: dict[type[SiteRefusal], str] = {
    AuthenticationError: "Check SITE_API_KEY and SITE_API_SECRET (or the credentials file): "
    "the key must exist on this site and the secret must be the one issued with it.",
    PermissionDenied: "Use the API key of a site administrator.",
    NotFound: "The object may have been changed on the site since it was read: "
    "run plan again to see the site as it is now.",
    InvalidRequest: "The site did not accept a value that was sent; check the manifest value "
    "it names (this may also be a bug in the reconciler, please report it).",
    RateLimited: "Lower --rate-limit or --concurrency, or try again later.",
    ServerError: "The site failed; try again later. If it persists, contact the site's support.",
}
CLOCK_HINT = (
    "Check this machine's clock (e.g. enable NTP): the site refuses timestamps more than a few "
    "minutes off."
)


def classify(status: int, title: str, message: str) -> type[SiteRefusal]:
    """The refusal class: by status when it is informative, else by the words of the body."""
    if status in _STATUS_CLASSES:
        return _STATUS_CLASSES[status]
    if status >= 500:
        return ServerError
    for text in (title.lower(), message.lower()):
        for cls, needles in _TEXT_CLASSES:
            if any(needle in text for needle in needles):
                return cls
    return InvalidRequest


def refusal(answer: Answer, title: str, message: str) -> SiteRefusal:
    """The error for an error body, quoting the site's words and saying what to do."""
    cls = classify(answer.status, title, message)
    said = ": ".join(part for part in (title, message) if part) or "no reason given"
    text = f"{answer.method}: the site refused the call (HTTP {answer.status}): {said}"
    return _build(cls, answer, text, _hint(cls, f"{title} {message}"), title or None)


def status_refusal(answer: Answer) -> SiteRefusal:
    """The error for a 429 or 5xx whose body is not the API's (a proxy or balancer answered)."""
    cls = classify(answer.status, "", "")
    text = f"{answer.method}: the site answered HTTP {answer.status} without an API error body"
    return _build(cls, answer, text, HINTS[cls], None)


def _hint(cls: type[SiteRefusal], words: str) -> str:
    if cls is AuthenticationError and any(word in words.lower() for word in _CLOCK_WORDS):
        return CLOCK_HINT
    if cls is PermissionDenied and "location" in words.lower():
        return "Use the API key of a site administrator, or of a user with access to that location."
    return HINTS[cls]


def _build(
    cls: type[SiteRefusal], answer: Answer, text: str, hint: str, title: str | None
) -> SiteRefusal:
    error = cls(text, method=answer.method, hint=hint, status=answer.status, title=title)
    if isinstance(error, RateLimited):
        error.retry_after = answer.retry_after
    return error


def _protocol(method: str, what: str) -> ProtocolError:
    return ProtocolError(f"{method}: the site answered {what}.", method=method, hint=PROTOCOL_HINT)


# --- reading fields -----------------------------------------------------------------------


class Fields:
    """One object of an answer, read with the tolerance the notes ask for.

    Every failure names the method and where in the answer it happened, so a ``ProtocolError``
    points at the field rather than at a ``KeyError`` deep in a decoder.
    """

    def __init__(self, value: object, *, method: str, where: str, wrapper: str | None = None):
        if wrapper is not None and isinstance(value, Mapping) and set(value) == {wrapper}:
            value = value[wrapper]  # JSON wraps entries: {"workspace": {...}}
        if not isinstance(value, Mapping):
            raise _protocol(method, f"{where} as {_kind(value)} instead of an object")
        self._data: Mapping[str, Any] = value
        self.method = method
        self.where = where

    def get(self, key: str) -> Any:
        return self._data.get(key)

    def _read(self, key: str, convert: Callable[[object], T | None], expected: str) -> T:
        result = convert(self._data.get(key))
        if result is None:
            value = self._data.get(key)
            got = "nothing" if value is None else f"{_kind(value)} {str(value)[:40]!r}"
            where = f"{self.where}.{key}"
            raise _protocol(self.method, f"{where} as {got} where {expected} was expected")
        return result

    def integer(self, key: str) -> int:
        return self._read(key, to_int, "an integer")

    def id_list(self, key: str) -> tuple[int, ...]:
        return self._read(key, to_id_list, "a list of IDs")

    def text(self, key: str, *fallbacks: str) -> str:
        """A required text; the first of ``key`` and ``fallbacks`` that is present."""
        for name in (key, *fallbacks):
            if self._data.get(name) not in (None, ""):
                return self._read(name, _to_text, "a text")
        return self._read(key, _to_text, "a text")

    def optional_text(self, key: str) -> str | None:
        """A text; ``None`` when missing, null or empty."""
        return None if self._data.get(key) in (None, "") else self._read(key, _to_text, "a text")

    def flag(self, key: str) -> bool | None:
        """A 0/1 flag; ``None`` when missing or null (admins get null permission flags)."""
        return None if self._data.get(key) in (None, "") else self._read(key, to_flag, "0 or 1")

    def entries(self, key: str, wrapper: str, read: Callable[[Fields], T]) -> tuple[T, ...]:
        """A list of sub-objects; missing, null or empty means none."""
        return read_entries(self._data.get(key), f"{self.where}.{key}", wrapper, read, self.method)

    def flags_on(self, flags: tuple[spec.Flag, ...]) -> frozenset[str]:
        """Manifest keys of the flags reported as 1."""
        return frozenset(flag.key for flag in flags if self.flag(flag.field))


def read_entries(
    value: object, where: str, wrapper: str, read: Callable[[Fields], T], method: str
) -> tuple[T, ...]:
    """Each entry of a list read by ``read``; missing, null or empty means no entries."""
    if value is None or value == "" or value == {}:
        return ()
    if isinstance(value, Mapping):  # a single entry where a list was expected
        value = [value]
    if not isinstance(value, list):
        raise _protocol(method, f"{where} as {_kind(value)} instead of a list")
    return tuple(
        read(Fields(entry, method=method, where=f"{where}[{index}]", wrapper=wrapper))
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


def _root(payload: object, method: str, key: str) -> Fields:
    return Fields(payload, method=method, where=key)


def _workspace_ref(fields: Fields) -> records.WorkspaceRef:
    return records.WorkspaceRef(id=fields.integer("id"), name=fields.text("name", "workspaceName"))


def decode_user_info(payload: object) -> records.UserInfo:
    """``userInfo`` → ``UserInfo``; flags become sets of manifest keys."""
    fields = _root(payload, "user_info", "userInfo")
    return records.UserInfo(
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


def _user_summary(fields: Fields) -> records.UserSummary:
    return records.UserSummary(
        id=fields.integer("id"),
        username=fields.text("username"),
        email=fields.optional_text("email") or "",
        first_name=fields.optional_text("firstName"),
        last_name=fields.optional_text("lastName"),
        admin=fields.flag("admin"),
    )


def decode_user_list(payload: object) -> tuple[records.UserSummary, ...]:
    """One page of ``userList``: ``{"users": [...]}``, or the list itself."""
    if isinstance(payload, Mapping) and "users" in payload:
        payload = payload["users"]
    return read_entries(payload, "userList.users", "user", _user_summary, "user_list")


def _location_entry(fields: Fields) -> records.LocationEntry:
    user_type = fields.flag("uType")
    return records.LocationEntry(
        id=fields.integer("id"),
        name=fields.text("username", "name"),
        email=fields.optional_text("email"),
        is_group=user_type is False,
        admin=bool(fields.flag("admin")),
    )


def decode_users_location_access(payload: object) -> tuple[records.LocationEntry, ...]:
    """``usersLocationAccess``: a list of users (``uType`` 1) and groups (``uType`` 0)."""
    if isinstance(payload, Mapping) and set(payload) <= {"user", "users"} and payload:
        payload = next(iter(payload.values()))  # an extra container level
    where = "usersLocationAccess"
    return read_entries(payload, where, "user", _location_entry, "users_location_access")


def decode_user_permissions_location(payload: object) -> records.LocationPermissions:
    """``userPermissionsLocation``; every flag stays ``None`` where the site says null."""
    fields = _root(payload, "user_permissions_location", "userPermissionsLocation")
    return records.LocationPermissions(
        user_id=fields.integer("userId"),
        admin=fields.flag("admin"),
        flags={flag.key: fields.flag(flag.field) for flag in spec.PERMISSION_FLAGS},
    )


def _workspace_entry(fields: Fields) -> records.WorkspaceEntry:
    name = fields.text("workspaceName", "name")
    path = fields.optional_text("workspacePath") or fields.optional_text("path")
    return records.WorkspaceEntry(
        id=fields.integer("id"),
        name=name,
        path=path or spec.workspace_path(name),
        listed=fields.flag("listed"),
    )


def decode_workspace_list(payload: object) -> tuple[records.WorkspaceEntry, ...]:
    """``workspaceList``: ``{workspaces, totalWorkspaces}`` or the legacy bare list."""
    if isinstance(payload, Mapping) and ("workspaces" in payload or "totalWorkspaces" in payload):
        payload = payload.get("workspaces")
    where = "workspaceList.workspaces"
    return read_entries(payload, where, "workspace", _workspace_entry, "workspace_list")


def _workspace_member(fields: Fields) -> records.WorkspaceMember:
    return records.WorkspaceMember(
        id=fields.integer("id"),
        username=fields.optional_text("username"),
        email=fields.optional_text("email"),
    )


def _override_flags(fields: Fields, key: str, flags: tuple[spec.Flag, ...]) -> frozenset[str]:
    value = fields.get(key)
    if value is None or value in ("", [], {}):
        return frozenset()
    return Fields(value, method=fields.method, where=f"{fields.where}.{key}").flags_on(flags)


def decode_workspace_info(payload: object) -> records.WorkspaceInfo:
    """``workspaceInfo``: members and the override flags the site reports as 1."""
    fields = _root(payload, "workspace_info", "workspaceInfo")
    name = fields.text("name", "workspaceName")
    path = fields.optional_text("path") or fields.optional_text("workspacePath")
    return records.WorkspaceInfo(
        id=fields.integer("id"),
        name=name,
        path=path or spec.workspace_path(name),
        users=fields.entries("users", "user", _workspace_member),
        permissions=_override_flags(fields, "workspaceOverridePermissions", spec.PERMISSION_FLAGS),
        notifications=_override_flags(
            fields, "workspaceOverrideNotifications", spec.NOTIFICATION_FLAGS
        ),
    )


def decode_workspace_add(payload: object) -> tuple[int, ...]:
    """``workspaceAdd.workspaceId``: one integer, or a list in the order of the names."""
    return _root(payload, "workspace_add", "workspaceAdd").id_list("workspaceId")


def decode_workspace_delete(payload: object) -> int:
    """``workspaceDelete.workspaceId``: the deleted workspace."""
    return _root(payload, "workspace_delete", "workspaceDelete").integer("workspaceId")


def decode_user_group_add(payload: object) -> records.GroupCreated:
    """``userGroupAdd``: the new group's ID and its members (any ID-list spelling)."""
    fields = _root(payload, "user_group_add", "userGroupAdd")
    return records.GroupCreated(
        id=fields.integer("userGroupId"), member_ids=fields.id_list("userGroupMembers")
    )


def decode_user_group_delete(payload: object) -> int:
    """``userGroupDeleted.userGroupId`` (the key is not the method's camel case)."""
    return _root(payload, "user_group_delete", "userGroupDeleted").integer("userGroupId")


def membership_decoder(method: str, key: str) -> Callable[[object], records.MembershipChange]:
    """The decoder of a membership method (``add_to_user_group``, ...); they differ in names."""
    ids_field = "userGroupIds" if method.endswith("user_group") else "userWorkspaceIds"

    def decode(payload: object) -> records.MembershipChange:
        fields = _root(payload, method, key)
        return records.MembershipChange(
            user_id=fields.integer("userId"), target_ids=fields.id_list(ids_field)
        )

    return decode


def camel_case(method: str) -> str:
    """``add_to_user_group`` → ``addToUserGroup``: the key of most success answers."""
    head, *rest = method.split("_")
    return head + "".join(part.title() for part in rest)
