"""The rules of the ``users:`` section, checked on the joined manifest.

A declared user is created once and never updated (the API has no method for it), so what
``user_add`` would refuse or store differently must be caught before the first apply: a
username outside the documented character set, a padded name the site would strip, a phone
number YAML turned into another number. Two declarations of one login, by username or by
e-mail address (case does not count, as the site compares them), would make one of them
silently win. Passwords are refused by the loader wherever they are written (``source``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from reconciler.clock import BadDay, parse_day
from reconciler.findings import Finding, place
from reconciler.identity import username_key
from reconciler.kinds import user as kinds_user
from reconciler.manifest.merge import Entry, MergedManifest
from reconciler.manifest.names import email_problem, text_problem, username_problem
from reconciler.manifest.paths import child

_UNIQUE: tuple[tuple[str, str, Callable[[str], str | None]], ...] = (
    ("username", "username", username_problem),
    ("email", "e-mail address", email_problem),
)
_TEXTS = kinds_user.TEXTS
_PHONES = kinds_user.PHONES


def check_users(manifest: MergedManifest) -> Iterator[Finding]:
    """Findings for every declared user, in declaration order."""
    first: dict[str, dict[str, Entry]] = {key: {} for key, _, _ in _UNIQUE}
    logins: dict[str, tuple[Entry, str]] = {}  # either login, folded -> whose and which
    for entry in manifest.users:
        for key, label, problem_of in _UNIQUE:
            value = entry.get(key, str)
            if value is None:
                continue
            problem = problem_of(value)
            if problem is not None:
                yield Finding.error(
                    f"the {label} {value!r} {problem}",
                    entry.source(key),
                    f"write the {label} as the site will store it",
                )
                continue
            earlier = first[key].setdefault(username_key(value), entry)
            if earlier is not entry:
                yield _declared_twice(entry, earlier, key, label)
                continue
            other, other_key = logins.setdefault(username_key(value), (entry, key))
            if other is not entry and other_key != key:
                yield _one_login_two_people(entry, key, other, other_key)
        yield from _texts(entry)
        yield from _phones(entry)
        yield from _expiry(entry)


def _declared_twice(entry: Entry, earlier: Entry, key: str, label: str) -> Finding:
    here = entry.source(key)
    return Finding.error(
        f"the {label} {entry.value[key]!r} is already declared for another user "
        f"({place(earlier.source(key), here)}); the site compares them without regard to case",
        here,
        "declare each user once, with its own username and e-mail address",
    )


def _one_login_two_people(entry: Entry, key: str, other: Entry, other_key: str) -> Finding:
    """One user's username is another's e-mail address: a reference to it would name both
    people (``core/users.py``), so neither could be given access by it."""
    here = entry.source(key)
    labels = {"username": "username", "email": "e-mail address"}
    return Finding.error(
        f"the {labels[key]} {entry.value[key]!r} is the {labels[other_key]} of another declared "
        f"user ({place(other.source(other_key), here)}); the site compares them without regard "
        "to case, so a reference to it would name two people",
        here,
        "give each user a username that is no other user's e-mail address",
    )


def _texts(entry: Entry) -> Iterator[Finding]:
    for key in _TEXTS:
        value = entry.get(key, str)
        problem = text_problem(value) if value else None  # empty is the default
        if problem is not None:
            yield Finding.error(
                f"`{key}` {value!r} {problem}",
                entry.source(key),
                "write it without whitespace at either end or invisible characters, or leave "
                "it out",
            )


def _phones(entry: Entry) -> Iterator[Finding]:
    """A phone number YAML read as another number (``00417`` is octal 271) would be created
    with the wrong digits, and a user is never updated afterwards."""
    for key in _PHONES:
        written = entry.document.odd_numbers.get(child(entry.path, key))
        if written is not None and entry.usable(key):
            digits = written.isascii() and written.isdigit()
            yield Finding.error(
                f"the phone number {written} is read by YAML as the number {entry.value[key]}",
                entry.source(key),
                f"write it in quotes: '{written}'"
                if digits
                else "write it in quotes, digits only, e.g. '0041791234567'",
            )


def _expiry(entry: Entry) -> Iterator[Finding]:
    """``expires:`` is a day of the calendar (the schema checked it is written YYYY-MM-DD)."""
    written = entry.get("expires", str)
    if written is None:
        return
    try:
        parse_day(written)
    except BadDay as exc:
        yield Finding.error(
            f"the expiry date {exc}",
            entry.source("expires"),
            "write the day the account's access ends as YYYY-MM-DD, e.g. 2026-12-31",
        )
