"""The user kind: its one spec, and everything that reads or compares a user's fields.

``UserSpec`` holds what the manifest declares of a site user besides the username, which is
what ``user_add`` sets: the desired user (``model.DesiredUser``) and ``UserAdd`` hold it or
its fields. No API method changes an existing user, so a field that differs on the site is
reported, never changed (``REQUIRES_REPLACEMENT`` is empty: nothing is ever replaced), and
only the fields the site reports are compared.

A new field is a field of ``UserSpec``, a line in ``from_manifest``, its parameter in
``api/methods.py`` (and ``answers.NewUser``), the schema and the sandbox.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from reconciler.kinds.change import FieldChange, Origin, fold

KIND = "user"


name_key = fold
"""The identity of a username, and of an e-mail address a reference names a user by (the
site compares both without regard to case): the fold itself, not a call around it -- a large
plan asks it some 25,000 times."""


@dataclass(frozen=True, slots=True)
class UserSpec:
    """A site user as declared, besides the username: what ``user_add`` creates it with."""

    email: str
    first_name: str = ""
    last_name: str = ""
    organization: str | None = None
    phone: str | None = None
    phone_ext: str | None = None
    admin: bool = False
    active: bool = True


@dataclass(frozen=True, slots=True)
class RecordedUser:
    """A site user the tool created or adopted (``users:`` in the manifest)."""

    id: int
    managed: bool = True
    origin: Origin | None = None
    source: str | None = None


REQUIRES_REPLACEMENT: frozenset[str] = frozenset()
"""Users are never replaced: a field that differs is drift, reported and never "fixed"."""

MEMBERS: str | None = None
"""A user belongs to workspaces and groups, and has no members of its own."""

TEXTS = ("first_name", "last_name", "organization")
"""The free-text fields: checked as the site will store them (``manifest/users.py``)."""

PHONES = ("phone", "phone_ext")
"""The fields that are digits only."""

REPORTED = ("admin", "first_name", "last_name", "active")
"""What a read of the site reports of a user besides its ID, username and e-mail address (in
``model.LiveUser``'s order): each may be ``None``, the site did not say."""

SHOWN_ON_CREATE = ("email", "admin", "active", "first_name", "last_name")
"""The fields a plan shows for a user it creates, in the order it shows them."""


class LiveView(Protocol):
    """What a read of the site shows of a user (``model.LiveUser``)."""

    @property
    def email(self) -> str: ...
    @property
    def admin(self) -> bool | None: ...
    @property
    def first_name(self) -> str | None: ...
    @property
    def last_name(self) -> str | None: ...


def from_manifest(given: Mapping[str, Any]) -> UserSpec:
    """The spec of a ``users:`` entry that passed every check; gaps get the defaults."""
    fallback = UserSpec("")
    return UserSpec(
        email=given["email"],
        first_name=given.get("first_name", fallback.first_name),
        last_name=given.get("last_name", fallback.last_name),
        organization=given.get("organization", fallback.organization),
        phone=_digits(given.get("phone")),
        phone_ext=_digits(given.get("phone_ext")),
        admin=given.get("admin", fallback.admin),
        active=given.get("active", fallback.active),
    )


def _digits(phone: str | int | None) -> str | None:
    """A phone number as text; a YAML number was checked to read exactly as written."""
    return None if phone is None else str(phone)


def shown(spec: UserSpec) -> dict[str, Any]:
    """The fields a plan shows for a user it creates."""
    return {name: getattr(spec, name) for name in SHOWN_ON_CREATE}


def differences(want: UserSpec, live: LiveView) -> tuple[FieldChange, ...]:
    """What the site shows otherwise than declared, for the facts the site reported. The
    e-mail address is compared without regard to case; a name the manifest leaves empty is
    not compared."""
    found: list[FieldChange] = []
    if live.email and name_key(live.email) != name_key(want.email):
        found.append(FieldChange.differing("email", live.email, want.email, "observed"))
    for name in ("first_name", "last_name"):
        wanted, seen = getattr(want, name), getattr(live, name)
        if seen is not None and wanted and seen != wanted:
            found.append(FieldChange.differing(name, seen, wanted, "observed"))
    if live.admin is not None and live.admin != want.admin:
        found.append(FieldChange.differing("admin", live.admin, want.admin, "observed"))
    return tuple(found)


def display_name(live: LiveView) -> str:
    """A person's name as an access report shows it: first and last, those the site gave."""
    return " ".join(part for part in (live.first_name, live.last_name) if part)


def exported(live: LiveView) -> dict[str, Any]:
    """The fields an exported manifest writes for a site user, in its order: the e-mail
    address always, a name only when the site gave one, ``admin`` only when true."""
    fields: dict[str, Any] = {"email": live.email}
    fields |= {name: getattr(live, name) for name in ("first_name", "last_name")}
    fields["admin"] = bool(live.admin)
    return {name: value for name, value in fields.items() if name == "email" or value}
