"""Seeds: the site a sandbox starts with, read from YAML and held to the site's own rules.

A seed is applied only to a new, empty database (``Store.is_new``), so restarting with
``--db`` keeps what the calls changed. Everything is checked before anything is written, and
each error names its place (``workspaces[2].users[0]: ...``), because a seed typo otherwise
surfaces much later as a puzzling test failure. Loading stays fast for benchmark-sized sites
(thousands of users): one pass to check, then ``executemany`` in one transaction.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from reconciler.identity import path_key, username_key
from reconciler.sandbox.auth import signing_key
from reconciler.sandbox.errors import SeedError
from reconciler.sandbox.params import has_control_characters
from reconciler.sandbox.rows import (
    DEFAULT_USER_PERMISSIONS,
    NewGroup,
    NewUserRow,
    NewWorkspace,
)
from reconciler.sandbox.rules import NO_PERMISSION_FLAG, name_problem, stored_overrides
from reconciler.sandbox.settings import SandboxSettings, SettingsError
from reconciler.sandbox.store import Store
from reconciler.spec import NOTIFICATION_KEYS, PERMISSION_KEYS, workspace_path

_TOP_KEYS = ("users", "workspaces", "groups", "settings")
_USER_KEYS = frozenset({
    "id", "username", "email", "first_name", "last_name", "organization", "phone", "phone_ext",
    "admin", "active", "api_key", "api_secret", "permissions", "notifications",
})  # fmt: skip
_WORKSPACE_KEYS = frozenset({"id", "name", "root_access", "users", "permissions", "notifications"})
_GROUP_KEYS = frozenset({"id", "name", "members"})
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: big seeds load in a blink


@dataclass(frozen=True, slots=True)
class Seed:
    """A checked seed, ready to insert: every user ID assigned, every reference resolved."""

    users: list[NewUserRow]
    workspaces: list[NewWorkspace]
    groups: list[NewGroup]
    settings: SandboxSettings


def load_seed_file(
    path: str | os.PathLike[str], *, allow_duplicate_workspace_names: bool | None = None
) -> dict[str, Any]:
    """The seed mapping in ``path``, checked; ``SeedError`` says what is wrong and where.

    ``allow_duplicate_workspace_names`` is the switch given beside the seed, if any: it
    overrides the seed's own setting, as it will when the app applies the seed.
    """
    where = os.fspath(path)
    try:
        with open(where, encoding="utf-8") as handle:
            data = yaml.load(handle, Loader=_Loader)
    except FileNotFoundError:
        raise SeedError(f"{where}: no such seed file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SeedError(f"{where}: cannot read the seed file: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise SeedError(f"{where}: not valid YAML{at}: {problem}") from None
    try:
        parse_seed(data, allow_duplicate_workspace_names=allow_duplicate_workspace_names)
    except SeedError as exc:
        raise SeedError(f"{where}: {exc}") from None
    return data  # type: ignore[no-any-return]


def parse_seed(data: object, *, allow_duplicate_workspace_names: bool | None = None) -> Seed:
    """Check a seed mapping against the site's rules and resolve its references.

    ``allow_duplicate_workspace_names`` None takes the seed's own setting; the app passes the
    effective one, since explicit settings override a seed's.
    """
    if not isinstance(data, Mapping):
        raise SeedError(
            "a seed must be a mapping with users: (and optionally workspaces:, groups:, settings:)"
        )
    unknown = sorted(map(str, set(data) - set(_TOP_KEYS)))
    if unknown:
        raise SeedError(
            f"unknown top-level key {', '.join(unknown)}; known: {', '.join(_TOP_KEYS)}"
        )
    try:
        settings = SandboxSettings.from_mapping(data.get("settings") or {})
    except SettingsError as exc:
        raise SeedError(f"settings: {exc}") from None
    if allow_duplicate_workspace_names is None:
        allow_duplicate_workspace_names = settings.allow_duplicate_workspace_names
    users = _users(_entries(data, "users", required=True))
    resolve = _resolver(users)
    workspaces = _workspaces(_entries(data, "workspaces"), resolve, allow_duplicate_workspace_names)
    groups = _groups(_entries(data, "groups"), resolve)
    return Seed(users, workspaces, groups, settings)


def apply_seed(store: Store, seed: Seed, now: int) -> bool:
    """Insert ``seed`` if the store is new; False (and nothing written) if it is not."""
    if not store.is_new():
        return False
    store.load(seed.users, seed.workspaces, seed.groups, now)
    return True


# ---- sections --------------------------------------------------------------------------


def _entries(
    data: Mapping[str, Any], key: str, *, required: bool = False
) -> list[Mapping[str, Any]]:
    value = data.get(key)
    if value is None:
        if required:
            raise SeedError(f"{key}: required (a list of {key})")
        return []
    if not isinstance(value, list):
        raise SeedError(f"{key}: must be a list")
    for index, entry in enumerate(value):
        if not isinstance(entry, Mapping):
            raise SeedError(f"{key}[{index}]: must be a mapping")
    return value


def _users(entries: list[Mapping[str, Any]]) -> list[NewUserRow]:
    explicit = [_id(entry, f"users[{i}]") for i, entry in enumerate(entries)]
    next_id = max((i for i in explicit if i is not None), default=0) + 1
    users: list[NewUserRow] = []
    seen: dict[str, dict[object, str]] = {"id": {}, "username": {}, "email": {}, "api_key": {}}
    for index, entry in enumerate(entries):
        where = f"users[{index}]"
        _known_keys(entry, _USER_KEYS, where)
        user_id = explicit[index]
        if user_id is None:
            user_id, next_id = next_id, next_id + 1
        api_key = _text(entry, "api_key", where, default=None)
        secret = _text(entry, "api_secret", where, default=None)
        if (api_key is None) != (secret is None):
            raise SeedError(f"{where}: api_key and api_secret go together (give both or neither)")
        user = NewUserRow(
            id=user_id,
            username=_text(entry, "username", where, required=True),
            email=_text(entry, "email", where, required=True),
            first_name=_text(entry, "first_name", where, default=""),
            last_name=_text(entry, "last_name", where, default=""),
            organization=_text(entry, "organization", where, default=None),
            phone=_text(entry, "phone", where, default=""),
            phone_ext=_text(entry, "phone_ext", where, default=None),
            admin=_bool(entry, "admin", where, default=False),
            active=_bool(entry, "active", where, default=True),
            reset_password=False,
            permissions=_flag_set(entry, "permissions", where, PERMISSION_KEYS)
            if entry.get("permissions") is not None
            else DEFAULT_USER_PERMISSIONS,
            notifications=_flag_set(entry, "notifications", where, NOTIFICATION_KEYS),
            api_key=api_key,
            signing_key=signing_key(secret) if secret is not None else None,
        )
        # usernames and e-mails are unique regardless of case, as user_add holds them
        for field, value, key in (
            ("id", user.id, user.id),
            ("username", user.username, username_key(user.username)),
            ("email", user.email, username_key(user.email)),
            ("api_key", api_key, api_key),
        ):
            if key is None:
                continue
            if key in seen[field]:
                raise SeedError(f"{where}.{field}: {value!r} is already used by {seen[field][key]}")
            seen[field][key] = where
        users.append(user)
    return users


def _resolver(users: list[NewUserRow]) -> Any:
    by_id = {user.id: user.id for user in users}
    by_name = {user.username: user.id for user in users}
    by_email = {username_key(user.email): user.id for user in users}

    def resolve(ref: object, where: str) -> int:
        found: int | None = None
        if isinstance(ref, int) and not isinstance(ref, bool):
            found = by_id.get(ref)
        elif isinstance(ref, str):
            found = by_name.get(ref) or by_email.get(username_key(ref))
            if found is None and ref.isdigit():
                found = by_id.get(int(ref))
        if found is None:
            raise SeedError(f"{where}: no user {ref!r} (give a username, an e-mail or an ID)")
        return found

    return resolve


def _members(entry: Mapping[str, Any], key: str, where: str, resolve: Any) -> tuple[int, ...]:
    refs = entry.get(key) or []
    if not isinstance(refs, list):
        raise SeedError(f"{where}.{key}: must be a list of usernames, e-mails or IDs")
    ids = (resolve(ref, f"{where}.{key}[{i}]") for i, ref in enumerate(refs))
    return tuple(dict.fromkeys(ids))


def _workspaces(
    entries: list[Mapping[str, Any]], resolve: Any, allow_duplicates: bool
) -> list[NewWorkspace]:
    workspaces: list[NewWorkspace] = []
    paths: dict[str, str] = {}
    ids: set[int] = set()
    for index, entry in enumerate(entries):
        where = f"workspaces[{index}]"
        _known_keys(entry, _WORKSPACE_KEYS, where)
        name = _text(entry, "name", where, required=True).strip()
        problem = name_problem(name)
        if problem:
            raise SeedError(f"{where}.name: {problem}")
        path = workspace_path(name)
        if path_key(path) in paths and not allow_duplicates:
            raise SeedError(
                f"{where}.name: {name!r} gives the path {path}, already used by "
                f"{paths[path_key(path)]} (compared without regard to case or width)"
            )
        paths[path_key(path)] = where
        workspace_id = _id(entry, where)
        if workspace_id is not None:
            if workspace_id in ids:
                raise SeedError(f"{where}.id: {workspace_id} is used twice")
            ids.add(workspace_id)
        override_permissions = entry.get("permissions") is not None
        permissions = _flag_set(entry, "permissions", where, PERMISSION_KEYS)
        if override_permissions and not permissions:
            raise SeedError(f"{where}.permissions: {NO_PERMISSION_FLAG} (or leave permissions out)")
        override_notifications = entry.get("notifications") is not None
        stored = stored_overrides(
            override_permissions,
            permissions,
            override_notifications,
            _flag_set(entry, "notifications", where, NOTIFICATION_KEYS),
        )
        workspaces.append(
            NewWorkspace(
                id=workspace_id,
                name=name,
                path=path,
                root_access=_bool(entry, "root_access", where, default=True),
                override_permissions=override_permissions,
                override_notifications=override_notifications,
                permissions=stored[0],
                notifications=stored[1],
                members=_members(entry, "users", where, resolve),
            )
        )
    return workspaces


def _groups(entries: list[Mapping[str, Any]], resolve: Any) -> list[NewGroup]:
    groups: list[NewGroup] = []
    ids: set[int] = set()
    for index, entry in enumerate(entries):
        where = f"groups[{index}]"
        _known_keys(entry, _GROUP_KEYS, where)
        group_id = _id(entry, where)
        if group_id is not None:
            if group_id in ids:
                raise SeedError(f"{where}.id: {group_id} is used twice")
            ids.add(group_id)
        name = _text(entry, "name", where, required=True).strip()
        groups.append(NewGroup(group_id, name, _members(entry, "members", where, resolve)))
    return groups


# ---- fields ----------------------------------------------------------------------------


def _known_keys(entry: Mapping[str, Any], known: frozenset[str], where: str) -> None:
    unknown = sorted(map(str, set(entry) - known))
    if unknown:
        raise SeedError(
            f"{where}: unknown key {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )


def _id(entry: Mapping[str, Any], where: str) -> int | None:
    value = entry.get("id")
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise SeedError(f"{where}.id: must be a whole number above 0; got {value!r}")
    return value


def _text(
    entry: Mapping[str, Any], key: str, where: str, *, required: bool = False, default: Any = ""
) -> Any:
    value = entry.get(key)
    if value is None:
        if required:
            raise SeedError(f"{where}.{key}: required")
        return default
    if not isinstance(value, str) or (required and not value.strip()):
        raise SeedError(f"{where}.{key}: must be a non-empty text; got {value!r}")
    if has_control_characters(value):
        raise SeedError(f"{where}.{key}: must not contain control characters")
    return value


def _bool(entry: Mapping[str, Any], key: str, where: str, *, default: bool) -> bool:
    value = entry.get(key, default)
    if not isinstance(value, bool):
        raise SeedError(f"{where}.{key}: must be true or false; got {value!r}")
    return value


def _flag_set(
    entry: Mapping[str, Any], key: str, where: str, allowed: frozenset[str]
) -> frozenset[str]:
    """The flags set to true in a mapping of manifest flag keys (false or null: off)."""
    value = entry.get(key)
    if value is None:
        return frozenset()
    if not isinstance(value, Mapping):
        raise SeedError(f"{where}.{key}: must be a mapping of flag names to true/false")
    unknown = sorted(map(str, set(value) - allowed))
    if unknown:
        raise SeedError(
            f"{where}.{key}: unknown flag {', '.join(unknown)}; known: {', '.join(sorted(allowed))}"
        )
    for flag_key, flag_value in value.items():
        if flag_value is not None and not isinstance(flag_value, bool):
            raise SeedError(
                f"{where}.{key}.{flag_key}: must be true, false or null; got {flag_value!r}"
            )
    return frozenset(k for k, v in value.items() if v)
