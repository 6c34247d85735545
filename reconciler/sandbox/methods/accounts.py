"""``user_add`` and ``user_delete``: creating and deleting the site's users.

The published page of ``user_add`` gives its parameters and their rules (unique username of
letters, digits, ``-``, ``_``, ``.`` and ``@``; digits-only phone numbers; ``active`` 1 and
``admin`` 0 by default) but not its answer or its errors; those are sandbox decisions, listed
in the README. Checks run before anything is written, in this order: required fields, the
form of each value (the password against the site's policy, a switchable sandbox default),
then uniqueness -- so a refused call creates nothing.

The password is read only to know whether one was given: it is never stored, not even as a
hash, because nothing in the sandbox logs in with it. Its one visible effect is the
published one: without a password the site sets a temporary one that must be changed, which
``user_info`` shows as ``resetPassword`` 1.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from reconciler.sandbox.errors import ApiError
from reconciler.sandbox.methods.base import Call
from reconciler.sandbox.params import (
    has_control_characters,
    no_such,
    one_id,
    required,
    required_text,
    zero_or_one,
)
from reconciler.sandbox.rows import DEFAULT_USER_PERMISSIONS, NewUserRow

_USERNAME = re.compile(r"[A-Za-z0-9_.@-]+")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+")
_DIGITS = re.compile(r"[0-9]+")


def user_add(call: Call) -> dict[str, Any]:
    params = call.params
    first_name = required_text(params, "first_name")
    last_name = required_text(params, "last_name")
    email = required_text(params, "email")
    username = required(params, "user_name")
    if not _USERNAME.fullmatch(username):
        raise ApiError(
            400,
            "user_name may contain only letters (A-Z, a-z), digits, '-', '_', '.' and '@'; "
            f"got {username!r}.",
        )
    if not _EMAIL.fullmatch(email) or has_control_characters(email):
        raise ApiError(400, f"email must be an e-mail address (name@domain); got {email!r}.")
    organization = params.get("organization", "").strip()
    for name, text in (
        ("first_name", first_name), ("last_name", last_name), ("organization", organization)
    ):  # fmt: skip
        if has_control_characters(text):
            raise ApiError(400, f"{name} must not contain control characters.")
    user = NewUserRow(
        id=None,
        username=username,
        email=email,
        first_name=first_name,
        last_name=last_name,
        organization=organization or None,
        phone=_digits(params, "phone"),
        phone_ext=_digits(params, "phone_ext") or None,
        active=zero_or_one(params, "active", True),
        admin=zero_or_one(params, "admin", False),
        reset_password=_password(call) == "",
        permissions=DEFAULT_USER_PERMISSIONS,
        notifications=frozenset(),
        api_key=None,
        signing_key=None,
    )
    _require_free(call, username, email)
    return {"userId": call.store.add_user(user, call.now)}


def user_delete(call: Call) -> dict[str, Any]:
    user_id = one_id(call.params, "user_id")
    if user_id == call.caller.id:
        raise ApiError(
            400,
            f"User {user_id} is the user whose credentials sign this call, and a user cannot "
            "delete themselves. Sign the call with another administrator's credentials.",
        )
    if call.store.user(user_id) is None:
        raise no_such("user", [user_id])
    if call.settings.refuse_user_delete_of_members:
        workspaces = [ws_id for ws_id, _, _ in call.store.workspace_names(member=user_id)]
        groups = call.store.group_ids_of(user_id)
        if workspaces or groups:
            raise ApiError(
                400,
                f"User {user_id} still belongs to workspaces {workspaces or 'none'} and user "
                f"groups {groups or 'none'}; remove them from each before deleting them.",
            )
    call.store.delete_user(user_id, call.now)
    return {"userId": user_id}


_CHARACTER_CLASSES = (str.islower, str.isupper, str.isdigit)


def _password(call: Call) -> str:
    """The given password (``""`` when absent), refused unless it meets the site's policy.

    The refusal describes the policy and never repeats the password: an error message ends
    up in logs and CI output.
    """
    password = call.params.get("password", "")
    if password == "":
        return password
    settings = call.settings
    classes = sum(any(test(char) for char in password) for test in _CHARACTER_CLASSES)
    classes += any(not char.isalnum() for char in password)
    if len(password) < settings.password_min_length or classes < settings.password_classes:
        raise ApiError(
            400,
            "The password does not meet the site's password policy: at least "
            f"{settings.password_min_length} characters, using at least "
            f"{settings.password_classes} of lower-case letters, upper-case letters, digits "
            "and other characters.",
        )
    return password


def _digits(params: Mapping[str, str], name: str) -> str:
    """An optional digits-only value (``""`` when absent), as the published page requires."""
    value = params.get(name, "")
    if value and not _DIGITS.fullmatch(value):
        raise ApiError(400, f"{name} may contain only digits (0-9); got {value!r}.")
    return value


def _require_free(call: Call, username: str, email: str) -> None:
    """Refuse a username or e-mail address another user holds, whatever its case."""
    by_name, by_email = call.store.holder_of(username=username, email=email)
    if by_name is not None:
        raise ApiError(
            400,
            f"The username {username!r} is already taken by user {by_name.id} "
            f"({by_name.username!r}); usernames are compared regardless of case.",
        )
    if by_email is not None:
        raise ApiError(
            400,
            f"The e-mail address {email!r} is already used by user {by_email.id} "
            f"({by_email.username!r}).",
        )
